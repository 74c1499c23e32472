//===- sensitivity-bench.cpp - How much the headline figures rest on guesses -===//
//
// bench=sensitivity: compiles whole programs (the SigLIP MLP with its GELU
// and casts, attention with its softmax, the encoder block, one layer of
// the exported so400m tower: bench/sensitivity.sh writes them) through the
// compiler's own pipeline, packages and simulates them in this process,
// once on the ipu21 model and then with each cost constant of the
// TargetModel at 0.5x and 2x. A variant is a target name with the
// constant overridden (`ipu21+vertexCallCycles=50`, TargetModel::byName),
// so the planner, the scheduler, the package and the simulator all use the
// changed model. Rates are fractional fields, so half of a rate of 1 is
// 0.5; a whole-unit constant (cycles of one call, bytes) is rounded to a
// whole number and the row gives the factor applied when that differs
// (`appliedFactor=0.52`: 25 cycles halve to 13).
//
// One row per (constant, factor) gives each program's simulated device
// cycles, exchange cycles and the most vertex state and kernel code one
// tile keeps (`...StateAndCodeBytes`: what the memory-only constants move
// when no plan changes), their change, and whether the compiler produced
// another program (`...Recompiled=true`: another plan, layout or
// schedule). Every constant listed in a row moves some figure: a constant
// that moves none at either factor gets no row, and the `moves-nothing`
// line names it, marked `(recompiled)` when some program compiled
// differently to the same figures (unmarked, every package was the
// baseline's, byte for byte: these programs never exercise it). The
// `unscalable` line names a whole-unit constant that rounding would leave
// at its value (none: every preset value is at least 2). Constants given
// to --except (bench/sensitivity.sh passes those of ops no program holds)
// are not compiled at all and are named on a `not-varied` line with the
// reason. A program whose baseline does not compile is named on a
// `program-error` line and left out. The host link, which moves no device
// figure of these programs (their weights are resident), ends the table:
// the tower layer's images a second with each image's input and results
// over the link at the user's measured rate and at PCIe's 32 GB/s bound
// (hostLinkPcieBoundBytesPerSecond), and a 30.4 MB layer of f16 weights
// streamed at either.
//
// Each (variant, program) compiles and runs in a child process, --jobs at
// a time (2 by default: the machine's cores; run it under the build lock),
// each for at most --job-seconds (300): a variant that makes a compile
// that slow is a finding, reported as `...Status=error ...Error="timeout..."`.
// Progress goes to stderr, a line per job.
//
// Run time: a round (every program on one target) takes about 95 s of one
// core (mean jobs: MLP f16 18 s, MLP f8 8 s, attention 16 s, block 20 s,
// tower layer 31 s). The default varies the 7 assumption-marked constants
// these programs exercise: 15 rounds, 26 minutes with --jobs 1 beside
// another compile (export included), about half that with --jobs 2 on two
// idle cores. All 11 assumed constants would take 23 rounds, and --all
// (all 77 constants) 155 rounds, hours.
//
//   sensitivity-bench --program NAME:OPTIONS:FILE ... [--part NAME:PROGRAM:FIRST-LAST ...]
//                     [--all] [--jobs N] [--job-seconds S] [--constants A,B,...]
//                     [--except A,B,...:REASON]
//
// NAME names the program's figures, OPTIONS are --ipu-compile's options
// besides the target (`partials=any max-weight-replicas=1`, or empty),
// FILE its source. A part is a figure of its own from a program's ops on
// source lines FIRST to LAST (the block's attention half), by the per-op
// cycles of `ipu-run --ops`. Without --all only the constants marked as
// assumptions are varied (--all: every one); --constants picks constants
// by name; --except leaves those out of either.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Package/Package.h"
#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Run.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Storage/ReservedArea.h"
#include "IPU/Support/Escape.h"
#include "IPU/Target/TargetModel.h"
#include "IPU/Transforms/Passes.h"
#include "IPU/Translate/ToPackage.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ipu;

namespace {

/// A figure of a program's own: its ops whose source lines lie within
/// [firstLine, lastLine] (the attention half of the block), by the
/// per-op cycles ipu-run --ops reports (cyclesByOp: each step, relayouts
/// with the op that reads them).
struct Part {
  std::string name;
  uint32_t firstLine = 0, lastLine = 0;
};

struct Program {
  std::string name, options, file;
  std::vector<Part> parts;
};

/// What one compile and run of a program gives.
struct Figures {
  bool ok = false;
  std::string error;
  uint64_t cycles = 0, computeCycles = 0, exchangeCycles = 0;
  /// The most vertex state and kernel code one tile keeps (ReservedArea,
  /// sized from the package with the variant's model): the figure the
  /// memory-only constants move when no plan changes.
  uint64_t stateAndCodeBytes = 0;
  /// FNV-1a of the package without the target's name and the compiler's
  /// estimates (metadata): another value means the compiler produced
  /// another program.
  uint64_t programHash = 0;
  /// Whether the package carries the weights (an export's frozen weights),
  /// so that a run's inputs over the host link are the image's alone.
  bool carriesWeights = false;
  double seconds = 0; ///< This job's wall clock.
  /// Per Program::parts entry, its cycles and exchange cycles.
  std::vector<std::pair<uint64_t, uint64_t>> parts;
  /// One run's images and its link figures (BatchRun).
  uint64_t images = 0, linkCycles = 0, linkCyclesPcieBound = 0, fanOutCycles = 0;
  uint64_t hostCyclesPcieBound = 0, hostCycles = 0;
};

uint64_t fnv1a(const std::vector<uint8_t> &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t byte : bytes)
    hash = (hash ^ byte) * 0x100000001b3ull;
  return hash;
}

/// Compiles `program` for `targetName`, packages, validates and simulates
/// it on inputs from seed 1, as ipu-opt, ipu-translate and ipu-run do.
Figures compileAndRunUntimed(const Program &program, const std::string &targetName) {
  Figures f;
  mlir::DialectRegistry registry;
  mlir::ipu_compiler::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  // A bench process per job: the cores are the jobs'.
  context.disableMultithreading();
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error && firstError.empty())
      firstError = diagnostic.str();
    return mlir::success();
  });
  auto fail = [&](const std::string &what) {
    f.error = what + (firstError.empty() ? "" : ": " + firstError);
    return f;
  };
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(program.file, &context);
  if (!module)
    return fail("cannot parse " + program.file);
  std::unique_ptr<mlir::ipu_compiler::CompilePipelineOptions> options =
      mlir::ipu_compiler::CompilePipelineOptions::createFromString(
          "target=" + targetName + (program.options.empty() ? "" : " " + program.options));
  if (!options)
    return fail("bad --ipu-compile options '" + program.options + "'");
  mlir::PassManager pm(&context);
  mlir::ipu_compiler::buildCompilePipeline(pm, *options);
  if (mlir::failed(pm.run(*module)))
    return fail("compile failed");
  mlir::FailureOr<Package> built = mlir::ipu_compiler::buildPackage(*module);
  if (mlir::failed(built))
    return fail("packaging failed");
  Package package = std::move(*built);
  std::string why;
  std::optional<TargetModel> target = TargetModel::byName(package.target, &why);
  if (!target)
    return fail(why);
  if (auto error = validatePackage(package, *target, PackageLimits::kDefaultMaxHostWork))
    return fail("invalid package: " + *error);
  {
    ReservedArea reserved(*target);
    if (auto error = tallyReservedArea(package, *target, reserved))
      return fail("invalid package: " + *error);
    for (uint32_t tile = 0; tile < reserved.perTile().size(); ++tile)
      f.stateAndCodeBytes = std::max(f.stateAndCodeBytes, reserved.vertexStateBytes(tile) +
                                                              reserved.kernelCodeBytes(tile));
  }
  {
    Package blank = package;
    blank.target.clear();
    blank.metadata.clear();
    f.programHash = fnv1a(serializePackage(blank));
    f.carriesWeights = !package.constants.empty();
  }
  CompiledKernels kernels;
  KernelCompileStats stats;
  if (auto error = kernels.load(package, defaultKernelCacheDirectory(), stats))
    return fail(*error);
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = prepareInputs(package, 1, "", inputs, generated))
    return fail(*error);
  std::vector<HostTensor> share;
  if (package.images > 1)
    imageInputs(package, inputs, 0, share);
  SimulationResult result;
  if (auto error = simulate(package, *target, package.images > 1 ? share : inputs, result))
    return fail("simulation failed: " + *error);
  BatchRun batch;
  addImage(package, *target, result, batch);
  const std::vector<OpCycles> ops = cyclesByOp(package, result);
  for (const Part &part : program.parts) {
    std::pair<uint64_t, uint64_t> sum{0, 0};
    for (const OpCycles &op : ops) {
      // "file:line:col"; an op without a location is no part's.
      const size_t last = op.location.rfind(':');
      const size_t line = last == std::string::npos || last == 0
                              ? std::string::npos
                              : op.location.rfind(':', last - 1);
      if (line == std::string::npos)
        continue;
      const unsigned long number =
          std::strtoul(op.location.c_str() + line + 1, nullptr, 10);
      if (number >= part.firstLine && number <= part.lastLine) {
        sum.first += op.cycles();
        sum.second += op.exchangeCycles;
      }
    }
    f.parts.push_back(sum);
  }
  f.ok = true;
  f.cycles = result.cycles;
  f.computeCycles = result.computeCycles;
  f.exchangeCycles = result.exchangeCycles;
  f.hostCycles = result.hostCycles;
  f.hostCyclesPcieBound = result.hostCyclesPcieBound;
  f.images = batch.images;
  f.linkCycles = batch.linkCycles;
  f.linkCyclesPcieBound = batch.linkCyclesPcieBound;
  f.fanOutCycles = batch.fanOutCycles;
  return f;
}

Figures compileAndRun(const Program &program, const std::string &targetName) {
  const auto start = std::chrono::steady_clock::now();
  Figures f = compileAndRunUntimed(program, targetName);
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f;
}

/// One line through the pipe from a child: the figures or the error.
std::string encode(const Figures &f) {
  if (!f.ok)
    return "error " + escapeText(f.error);
  std::ostringstream out;
  out << "ok " << f.cycles << ' ' << f.computeCycles << ' ' << f.exchangeCycles << ' '
      << f.programHash << ' ' << f.images << ' ' << f.linkCycles << ' '
      << f.linkCyclesPcieBound << ' ' << f.fanOutCycles << ' ' << f.hostCycles << ' '
      << f.hostCyclesPcieBound << ' ' << f.carriesWeights << ' ' << f.seconds << ' '
      << f.stateAndCodeBytes << ' ' << f.parts.size();
  for (const auto &[cycles, exchange] : f.parts)
    out << ' ' << cycles << ' ' << exchange;
  return out.str();
}

Figures decode(const std::string &line) {
  Figures f;
  if (line.rfind("ok ", 0) == 0) {
    std::istringstream in(line.substr(3));
    in >> f.cycles >> f.computeCycles >> f.exchangeCycles >> f.programHash >> f.images >>
        f.linkCycles >> f.linkCyclesPcieBound >> f.fanOutCycles >> f.hostCycles >>
        f.hostCyclesPcieBound >> f.carriesWeights >> f.seconds >> f.stateAndCodeBytes;
    size_t parts = 0;
    in >> parts;
    for (size_t i = 0; i < parts && !in.fail(); ++i) {
      std::pair<uint64_t, uint64_t> part;
      in >> part.first >> part.second;
      f.parts.push_back(part);
    }
    f.ok = !in.fail();
    if (!f.ok)
      f.error = "unreadable result '" + line + "'";
  } else if (line.rfind("error ", 0) == 0) {
    f.error = line.substr(6);
  } else {
    f.error = line.empty() ? "the job ended without a result" : line;
  }
  return f;
}

struct Job {
  const Program *program;
  std::string target;
  Figures figures;
};

/// Runs every job, `parallel` at a time, each in a child process (a fresh
/// MLIR context and kernel mapping, and a crash costs one job); a job past
/// `limitSeconds` is killed and reported as such. A line on stderr per job
/// done says how far the run is.
void runJobs(std::vector<Job *> &jobs, unsigned parallel, double limitSeconds) {
  using Clock = std::chrono::steady_clock;
  struct Running {
    Job *job;
    int fd;
    Clock::time_point start;
    bool killed = false;
  };
  std::map<pid_t, Running> running;
  size_t next = 0, done = 0;
  auto finish = [&](pid_t pid, int status) {
    auto it = running.find(pid);
    if (it == running.end())
      return;
    Running &run = it->second;
    std::string line;
    char buffer[4096];
    ssize_t got;
    while ((got = read(run.fd, buffer, sizeof(buffer))) > 0)
      line.append(buffer, size_t(got));
    close(run.fd);
    while (!line.empty() && line.back() == '\n')
      line.pop_back();
    const double seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
    if (run.killed)
      line = "error timeout: killed after " + std::to_string(int(seconds)) +
             " s (--job-seconds)";
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      line = "error the job " +
             (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                  : "exited with " + std::to_string(WEXITSTATUS(status)));
    run.job->figures = decode(line);
    run.job->figures.seconds = seconds;
    std::fprintf(stderr, "sensitivity-bench: %zu/%zu %s on %s: %s, %.1f s\n", ++done,
                 jobs.size(), run.job->program->name.c_str(),
                 escapeText(run.job->target).c_str(),
                 run.job->figures.ok ? "ok" : escapeText(run.job->figures.error).c_str(),
                 seconds);
    running.erase(it);
  };
  while (next < jobs.size() || !running.empty()) {
    if (next < jobs.size() && running.size() < parallel) {
      Job *job = jobs[next++];
      int fds[2];
      if (pipe(fds) != 0) {
        job->figures.error = "pipe failed";
        continue;
      }
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        const std::string line = encode(compileAndRun(*job->program, job->target)) + "\n";
        size_t written = 0;
        while (written < line.size()) {
          ssize_t put = write(fds[1], line.data() + written, line.size() - written);
          if (put <= 0)
            _exit(3);
          written += size_t(put);
        }
        close(fds[1]);
        _exit(0);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        job->figures.error = "fork failed";
        continue;
      }
      running[pid] = {job, fds[0], Clock::now()};
      continue;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      finish(pid, status);
      continue;
    }
    for (auto &[child, run] : running)
      if (!run.killed &&
          std::chrono::duration<double>(Clock::now() - run.start).count() > limitSeconds) {
        kill(child, SIGKILL);
        run.killed = true;
      }
    usleep(100000);
  }
}

std::string percent(uint64_t value, uint64_t base) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.2f",
                base ? 100.0 * (double(value) - double(base)) / double(base) : 0.0);
  return text;
}

std::string spell(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator))
    if (!part.empty())
      parts.push_back(part);
  return parts;
}

} // namespace

int main(int argc, char **argv) {
  bool all = false;
  unsigned parallel = 2;
  // A compile and run of a program takes under a minute; one several times
  // longer is a finding of its own (the block with partials=any at
  // vertexParamBytes=4 was still scheduling an exchange after 17 minutes),
  // reported, not waited for.
  double jobSeconds = 300;
  std::vector<Program> programs;
  std::vector<std::string> chosen, excepted;
  std::string exceptReason;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sensitivity-bench: %s needs a value\n", arg.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (arg == "--all") {
      all = true;
    } else if (arg == "--jobs") {
      const std::string text = value();
      parallel = unsigned(std::strtoul(text.c_str(), nullptr, 10));
      if (parallel < 1 || parallel > 64) {
        std::fprintf(stderr, "sensitivity-bench: --jobs takes 1 to 64, got '%s'\n",
                     text.c_str());
        return 1;
      }
    } else if (arg == "--job-seconds") {
      const std::string text = value();
      jobSeconds = std::strtod(text.c_str(), nullptr);
      if (!(jobSeconds >= 1)) {
        std::fprintf(stderr, "sensitivity-bench: --job-seconds takes seconds >= 1, got '%s'\n",
                     text.c_str());
        return 1;
      }
    } else if (arg == "--constants") {
      chosen = split(value(), ',');
    } else if (arg == "--except") {
      // A,B:REASON: constants these programs cannot move (bench/sensitivity.sh
      // finds them), named on a line with the reason instead of compiled.
      const std::string text = value();
      const size_t colon = text.find(':');
      excepted = split(text.substr(0, colon), ',');
      exceptReason = colon == std::string::npos ? "" : text.substr(colon + 1);
    } else if (arg == "--program") {
      const std::string text = value();
      const size_t first = text.find(':');
      const size_t second = first == std::string::npos ? first : text.find(':', first + 1);
      if (second == std::string::npos || first == 0 || second + 1 == text.size()) {
        std::fprintf(stderr,
                     "sensitivity-bench: --program takes NAME:OPTIONS:FILE, got '%s'\n",
                     text.c_str());
        return 1;
      }
      programs.push_back({text.substr(0, first), text.substr(first + 1, second - first - 1),
                          text.substr(second + 1), {}});
    } else if (arg == "--part") {
      const std::string text = value();
      const std::vector<std::string> fields = split(text, ':');
      unsigned first = 0, last = 0;
      char extra = 0;
      auto owner = fields.size() == 3 ? std::find_if(programs.begin(), programs.end(),
                                                     [&](const Program &program) {
                                                       return program.name == fields[1];
                                                     })
                                      : programs.end();
      if (owner == programs.end() ||
          std::sscanf(fields[2].c_str(), "%u-%u%c", &first, &last, &extra) != 2 || first < 1 ||
          last < first) {
        std::fprintf(stderr,
                     "sensitivity-bench: --part takes NAME:PROGRAM:FIRST-LAST, lines of a "
                     "--program given before it, got '%s'\n",
                     text.c_str());
        return 1;
      }
      owner->parts.push_back({fields[0], first, last});
    } else {
      std::fprintf(stderr,
                   "sensitivity-bench: unknown option '%s' (known: --program, --part, --all, "
                   "--jobs, --job-seconds, --constants, --except)\n",
                   arg.c_str());
      return 1;
    }
  }
  if (programs.empty()) {
    std::fprintf(stderr, "sensitivity-bench: give at least one --program NAME:OPTIONS:FILE "
                         "(bench/run sensitivity writes them)\n");
    return 1;
  }
  for (const std::vector<std::string> *names : {&chosen, &excepted})
    for (const std::string &name : *names) {
      bool known = false;
      for (const TargetModel::Constant &constant : TargetModel::constants())
        known |= name == constant.name;
      if (!known) {
        std::fprintf(stderr, "sensitivity-bench: %s: no cost constant '%s'\n",
                     names == &chosen ? "--constants" : "--except", name.c_str());
        return 1;
      }
    }
  const auto start = std::chrono::steady_clock::now();
  const TargetModel ipu21 = TargetModel::ipu21();

  // The baselines first: a program that does not compile on ipu21 is named
  // and left out of the variants.
  std::vector<Job> baselines;
  for (const Program &program : programs)
    baselines.push_back({&program, ipu21.name, {}});
  {
    std::vector<Job *> jobs;
    for (Job &job : baselines)
      jobs.push_back(&job);
    runJobs(jobs, parallel, jobSeconds);
  }
  std::vector<size_t> live;
  for (size_t p = 0; p < programs.size(); ++p) {
    if (baselines[p].figures.ok) {
      live.push_back(p);
      continue;
    }
    std::printf("bench=sensitivity case=program-error program=%s options=%s error=%s\n",
                reportValue(programs[p].name).c_str(), reportValue(programs[p].options).c_str(),
                reportValue(baselines[p].figures.error).c_str());
  }
  {
    std::string line = "bench=sensitivity case=none-1 constant=none factor=1";
    for (size_t p : live) {
      const Figures &f = baselines[p].figures;
      line += " " + programs[p].name + "Cycles=" + std::to_string(f.cycles) + " " +
              programs[p].name + "ExchangeCycles=" + std::to_string(f.exchangeCycles) + " " +
              programs[p].name + "ComputeCycles=" + std::to_string(f.computeCycles) + " " +
              programs[p].name + "StateAndCodeBytes=" + std::to_string(f.stateAndCodeBytes);
      for (size_t q = 0; q < programs[p].parts.size() && q < f.parts.size(); ++q)
        line += " " + programs[p].parts[q].name + "Cycles=" + std::to_string(f.parts[q].first) +
                " " + programs[p].parts[q].name +
                "ExchangeCycles=" + std::to_string(f.parts[q].second);
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  // Each constant at x0.5 and x2, one target name per value.
  struct Variant {
    const TargetModel::Constant *constant;
    const char *factorName;
    double factor, value;
    std::vector<Job> jobs;
  };
  std::vector<Variant> variants;
  std::string unscalable, notVaried;
  for (const TargetModel::Constant &constant : TargetModel::constants()) {
    const bool picked = chosen.empty()
                            ? all || constant.assumption
                            : std::find(chosen.begin(), chosen.end(), constant.name) != chosen.end();
    if (!picked)
      continue;
    if (std::find(excepted.begin(), excepted.end(), constant.name) != excepted.end()) {
      notVaried += (notVaried.empty() ? "" : ",") + std::string(constant.name);
      continue;
    }
    for (double factor : {0.5, 2.0}) {
      const double base = constant.get(ipu21);
      double value = base * factor;
      if (!constant.fractional())
        value = std::round(value);
      if (value == base) {
        unscalable += (unscalable.empty() ? "" : ",") + std::string(constant.name);
        continue;
      }
      TargetModel scaled = ipu21;
      constant.set(scaled, value);
      Variant variant{&constant, factor < 1 ? "0.5" : "2", factor, value, {}};
      for (size_t p : live)
        variant.jobs.push_back({&programs[p], scaled.canonicalName(), {}});
      variants.push_back(std::move(variant));
    }
  }
  {
    std::vector<Job *> jobs;
    for (Variant &variant : variants)
      for (Job &job : variant.jobs)
        jobs.push_back(&job);
    runJobs(jobs, parallel, jobSeconds);
  }

  // A row per (constant, factor) of a constant that moves some figure.
  std::string movesNothing;
  for (size_t v = 0; v < variants.size();) {
    size_t end = v;
    while (end < variants.size() && variants[end].constant == variants[v].constant)
      ++end;
    bool moved = false, recompiled = false;
    for (size_t w = v; w < end; ++w)
      for (size_t j = 0; j < live.size(); ++j) {
        const Figures &f = variants[w].jobs[j].figures;
        const Figures &base = baselines[live[j]].figures;
        moved |= !f.ok || f.cycles != base.cycles || f.exchangeCycles != base.exchangeCycles ||
                 f.stateAndCodeBytes != base.stateAndCodeBytes || f.parts != base.parts;
        recompiled |= f.ok && f.programHash != base.programHash;
      }
    if (!moved) {
      movesNothing += std::string(movesNothing.empty() ? "" : ",") +
                      variants[v].constant->name + (recompiled ? "(recompiled)" : "");
      v = end;
      continue;
    }
    for (size_t w = v; w < end; ++w) {
      const Variant &variant = variants[w];
      const double base = variant.constant->get(ipu21);
      std::string line = "bench=sensitivity case=" + std::string(variant.constant->name) + "-" +
                         variant.factorName + " constant=" + variant.constant->name +
                         " factor=" + variant.factorName + " value=" + spell(variant.value) +
                         " baseValue=" + spell(base);
      if (variant.value != base * variant.factor)
        line += " appliedFactor=" + spell(variant.value / base);
      for (size_t j = 0; j < live.size(); ++j) {
        const std::string &name = programs[live[j]].name;
        const Figures &f = variant.jobs[j].figures;
        const Figures &b = baselines[live[j]].figures;
        if (!f.ok) {
          line += " " + name + "Status=error " + name + "Error=" + reportValue(f.error);
          continue;
        }
        line += " " + name + "Cycles=" + std::to_string(f.cycles) + " " + name +
                "ChangePercent=" + percent(f.cycles, b.cycles) + " " + name +
                "ExchangeCycles=" + std::to_string(f.exchangeCycles) + " " + name +
                "ExchangeChangePercent=" + percent(f.exchangeCycles, b.exchangeCycles) + " " +
                name + "StateAndCodeBytes=" + std::to_string(f.stateAndCodeBytes) + " " + name +
                "StateAndCodeChangePercent=" + percent(f.stateAndCodeBytes, b.stateAndCodeBytes) +
                " " + name + "Recompiled=" + (f.programHash != b.programHash ? "true" : "false");
        const std::vector<Part> &parts = programs[live[j]].parts;
        for (size_t q = 0; q < parts.size() && q < f.parts.size() && q < b.parts.size(); ++q)
          line += " " + parts[q].name + "Cycles=" + std::to_string(f.parts[q].first) + " " +
                  parts[q].name + "ChangePercent=" + percent(f.parts[q].first, b.parts[q].first) +
                  " " + parts[q].name + "ExchangeCycles=" + std::to_string(f.parts[q].second) +
                  " " + parts[q].name +
                  "ExchangeChangePercent=" + percent(f.parts[q].second, b.parts[q].second);
      }
      std::printf("%s\n", line.c_str());
    }
    v = end;
  }
  // "(recompiled)": the compiler decided otherwise, to the same cycles;
  // without it the programs never read the constant.
  std::printf("bench=sensitivity case=moves-nothing constants=%s\n",
              movesNothing.empty() ? "none" : movesNothing.c_str());
  std::printf("bench=sensitivity case=unscalable constants=%s\n",
              unscalable.empty() ? "none" : unscalable.c_str());
  if (!notVaried.empty())
    std::printf("bench=sensitivity case=not-varied constants=%s reason=%s\n", notVaried.c_str(),
                reportValue(exceptReason).c_str());

  // The host link: no device figure above moves with it (every weight is
  // resident), but a batch's images a second do. Each program's image
  // over the link at the user's measured rate and at PCIe's bound.
  const uint64_t layerBytes = 30400000;
  std::string link = "bench=sensitivity case=host-link constant=hostLinkBytesPerSecond "
                     "measuredBytesPerSecond=" +
                     spell(ipu21.hostLinkBytesPerSecond) +
                     " pcieBoundBytesPerSecond=" + spell(ipu21.hostLinkPcieBoundBytesPerSecond) +
                     " layerStreamCycles=" + std::to_string(ipu21.hostStreamCycles(layerBytes)) +
                     " layerStreamCyclesPcieBound=" +
                     std::to_string(ipu21.hostStreamCyclesPcieBound(layerBytes));
  for (size_t p : live) {
    const Figures &f = baselines[p].figures;
    const std::string &name = programs[p].name;
    // A generated program takes its weights as arguments: they are no
    // image's, and its images a second would be the weights' upload.
    if (!f.carriesWeights)
      continue;
    auto perSecond = [&](uint64_t cycles) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.1f",
                    cycles ? double(f.images) * ipu21.clockHz / double(cycles) : 0.0);
      return std::string(text);
    };
    const uint64_t measured = f.cycles + f.linkCycles + f.fanOutCycles;
    const uint64_t bound =
        f.cycles - f.hostCycles + f.hostCyclesPcieBound + f.linkCyclesPcieBound + f.fanOutCycles;
    link += " " + name + "ImageLinkCycles=" + std::to_string(f.linkCycles) + " " + name +
            "ImageLinkCyclesPcieBound=" + std::to_string(f.linkCyclesPcieBound) + " " + name +
            "ImagesPerSecond=" + perSecond(measured) + " " + name +
            "ImagesPerSecondPcieBound=" + perSecond(bound);
  }
  std::printf("%s\n", link.c_str());
  // How long it took: in all, and one job (compile, package, simulate) of
  // each program, its mean over the variants.
  std::string perProgram;
  size_t compiles = baselines.size(), constantsVaried = 0;
  for (size_t v = 0; v < variants.size(); ++v) {
    compiles += variants[v].jobs.size();
    constantsVaried += v == 0 || variants[v].constant != variants[v - 1].constant;
  }
  for (size_t j = 0; j < live.size(); ++j) {
    double seconds = baselines[live[j]].figures.seconds;
    for (const Variant &variant : variants)
      seconds += variant.jobs[j].figures.seconds;
    char text[64];
    std::snprintf(text, sizeof(text), " %sJobSeconds=%.1f", programs[live[j]].name.c_str(),
                  seconds / double(1 + variants.size()));
    perProgram += text;
  }
  std::printf("bench=sensitivity case=run constants=%zu variants=%zu compiles=%zu jobs=%u "
              "seconds=%.1f%s\n",
              constantsVaried, variants.size(), compiles, parallel,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              perProgram.c_str());
  return 0;
}
