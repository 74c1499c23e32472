//===- ipu-run.cpp - Load, validate, simulate, check and report ----------===//
//
// Runs a package on the cycle-level simulator and prints seed-style
// key=value report lines to stdout; progress goes to stderr. Exit status:
// 0 on success (numericalTest=PASS with --check), 2 when the numerical check
// fails, 1 on any error. `ipu-run --help` lists the options.
//
// Inputs come from --seed (uniform in [-1, 1), rounded to each argument's
// type) or from NumPy files (--inputs DIR; HostData.h says which); --outputs
// DIR writes the results as NumPy files before the check, so that a FAIL
// keeps the values it failed on. --check evaluates the package's reference
// ops on the host and compares every result element within its own
// tolerance (Reference.h; docs/Numerics.md): no PASS without a comparison.
// --ops prints the cycles per source op, and --compare OTHER sets a second
// package's run on the same seed beside this one (Run.h). --profile DIR
// writes a self-contained HTML report (Profile.h); --trace FILE a Chrome
// trace.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Reference/Check.h"
#include "IPU/Reference/Expect.h"
#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/Profile.h"
#include "IPU/Runtime/Run.h"
#include "IPU/Runtime/Trace.h"
#include "IPU/Support/Escape.h"
#include "IPU/Support/Log.h"

#include "llvm/Support/CommandLine.h"

#include <cblas.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

using namespace ipu;
namespace cl = llvm::cl;

namespace {

constexpr int kExitError = 1;
constexpr int kExitCheckFailed = 2;

cl::OptionCategory runCategory("ipu-run options");

cl::opt<std::string> packagePath(cl::Positional, cl::Required,
                                 cl::desc("<package.ipuexe>"), cl::cat(runCategory));
cl::opt<bool> check("check", cl::desc("Compare the results with the host reference"),
                    cl::cat(runCategory));
cl::opt<uint64_t> seed("seed", cl::desc("Input generator seed (default 1)"), cl::init(1),
                       cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string>
    inputsDir("inputs",
              cl::desc("Read the arguments from NumPy files: DIR/arg0.npy, ... by "
                       "argument index, each in the shape its function declares "
                       "('<f4' or '<f2'; an f8 argument's bits as uint8 in "
                       "DIR/argN.f8E4M3FN.npy); weights the package carries need none"),
              cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<std::string>
    expectDir("expect",
              cl::desc("Compare the function's results with NumPy files DIR/result0.npy, "
                       "... (a framework's own outputs, in the declared shapes and "
                       "types) within a tolerance per type: f32 1e-3 relative + 1e-3, "
                       "f16 1e-2 + 1e-2, f8 0.125 + 0.125"),
              cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<std::string>
    outputsDir("outputs",
               cl::desc("Write the results as NumPy files DIR/result0.npy, ... by "
                        "result index (f8 as DIR/resultN.f8E4M3FN.npy), creating DIR"),
               cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<std::string>
    corruptInput("corrupt-input",
                 cl::desc("Flip every bit of byte BYTE of input ARG in the device's "
                          "copy only (tests --check)"),
                 cl::value_desc("ARG:BYTE"), cl::cat(runCategory));
cl::opt<uint64_t> checkpointSamples(
    "checkpoints",
    cl::desc("With --check, compare N evenly spaced elements of each value a later "
             "op reads instead of all; results are always compared in full"),
    cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("Where compiled kernels are cached (default $IPU_KERNEL_CACHE, else "
             "~/.cache/ipu-run/kernels; 'none' compiles every time)"),
    cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<uint64_t> maxWork(
    "max-work",
    cl::desc("Refuse a package whose simulation asks for more host work units, about "
             "a nanosecond of host time each (default 600000000000, about 10 minutes)"),
    cl::init(PackageLimits::kDefaultMaxHostWork), cl::value_desc("N"),
    cl::cat(runCategory));
/// The bound before --max-work, in device cycles: refused with a pointer
/// to its replacement rather than silently ignored.
cl::opt<std::string> maxCycles("max-cycles", cl::Hidden, cl::value_desc("N"),
                               cl::cat(runCategory));
cl::opt<double> timeLimit("time-limit",
                          cl::desc("Stop once SECONDS of wall clock have passed since ipu-run "
                                   "started, kernel compilation and simulation included "
                                   "(default 600)"),
                          cl::init(600), cl::value_desc("SECONDS"), cl::cat(runCategory));
cl::opt<unsigned> threads("blas-threads", cl::desc("Host threads for the reference BLAS"),
                          cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string> tracePath("trace",
                               cl::desc("Write the run as a Chrome trace (Perfetto)"),
                               cl::value_desc("FILE"), cl::cat(runCategory));
cl::opt<bool> printOps("ops",
                       cl::desc("Print the cycles of each source op (the steps it "
                                "lowered to, tied to its location) and the planner's "
                                "finalists"),
                       cl::cat(runCategory));
cl::opt<std::string>
    comparePath("compare",
                cl::desc("Also run package OTHER (inputs from the same seed) and print "
                         "both runs' cycles per op side by side"),
                cl::value_desc("OTHER"), cl::cat(runCategory));
cl::opt<std::string>
    profileDir("profile",
               cl::desc("Write DIR/profile.html, a self-contained report: timeline, "
                        "tile heatmap, exchange phases, compute sets, memory"),
               cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<bool> quiet("quiet", cl::desc("No progress log on stderr"), cl::cat(runCategory));

/// The options as plain values: the kernel compiler's linker resets every
/// llvm::cl option when it runs.
struct RunOptions {
  std::string packagePath, inputsDir, outputsDir, expectDir, tracePath, comparePath,
      profileDir;
  std::string cacheDirectory; ///< "" for no kernel cache.
  bool check = false, printOps = false, corrupt = false;
  uint64_t seed = 1, checkpointSamples = 0, maxWork = 0;
  uint64_t corruptArgument = 0, corruptByte = 0;
  double timeLimit = 0;
  unsigned threads = 0;
};

/// Messages name what they refuse (a kernel, a stream, a file), and those
/// names come from input: one escaped line.
int fail(const std::string &message) {
  std::fprintf(stderr, "ipu-run: error: %s\n", escapeText(message).c_str());
  return kExitError;
}

bool parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 19)
    return false;
  value = std::stoull(text);
  return true;
}

/// What llvm::cl cannot say about the options' values.
std::optional<std::string> checkOptions(RunOptions &o) {
  const std::pair<const cl::opt<std::string> *, const char *> needValues[] = {
      {&inputsDir, "a directory"}, {&outputsDir, "a directory"},
      {&expectDir, "a directory"},
      {&tracePath, "a file name"}, {&comparePath, "a package"},
      {&profileDir, "a directory"}, {&kernelCache, "a directory or 'none'"}};
  for (const auto &[option, what] : needValues)
    if (option->getNumOccurrences() && option->empty())
      return "--" + option->ArgStr.str() + " expects " + what;
  if (!(timeLimit > 0 && std::isfinite(timeLimit)))
    return std::string("--time-limit expects a positive number of seconds");
  if (threads.getNumOccurrences() && (threads == 0 || threads > 1024))
    return std::string("--blas-threads expects an integer in [1, 1024]");
  if (checkpointSamples.getNumOccurrences() && checkpointSamples == 0)
    return std::string("--checkpoints expects a positive number of samples");
  if (maxCycles.getNumOccurrences())
    return std::string("--max-cycles is gone: the bound is now simulation work in host "
                       "work units (about a nanosecond of host time each), not device "
                       "cycles; use --max-work N");
  if (maxWork == 0)
    return std::string("--max-work expects a positive number of work units");
  if (seed.getNumOccurrences() && !inputsDir.empty())
    return std::string("--seed generates inputs, --inputs reads them: give one of them");
  if (corruptInput.getNumOccurrences()) {
    const size_t colon = corruptInput.find(':');
    if (colon == std::string::npos ||
        !parseUnsigned(corruptInput.substr(0, colon), o.corruptArgument) ||
        !parseUnsigned(corruptInput.substr(colon + 1), o.corruptByte))
      return std::string("--corrupt-input expects ARG:BYTE (unsigned integers)");
  }
  o.packagePath = packagePath;
  o.inputsDir = inputsDir;
  o.outputsDir = outputsDir;
  o.expectDir = expectDir;
  o.tracePath = tracePath;
  o.comparePath = comparePath;
  o.profileDir = profileDir;
  o.cacheDirectory = !kernelCache.getNumOccurrences() ? defaultKernelCacheDirectory()
                     : kernelCache == "none"          ? std::string()
                                                      : std::string(kernelCache);
  o.check = check;
  o.printOps = printOps;
  o.corrupt = corruptInput.getNumOccurrences() > 0;
  o.seed = seed;
  o.checkpointSamples = checkpointSamples;
  o.maxWork = maxWork;
  o.timeLimit = timeLimit;
  o.threads = threads;
  return std::nullopt;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void printLine(const std::string &line) { std::printf("%s\n", line.c_str()); }

/// --time-limit's clock: it starts with the run, before the package is read.
struct Deadline {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double limitSeconds = 0;
  double secondsLeft() const { return limitSeconds - millisecondsSince(start) / 1e3; }
  std::string limit() const {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", limitSeconds);
    return "the time limit of " + std::string(text) + " s";
  }
};

/// After a failed step, what the time limit was when it ran out.
std::string outOfTime(const Deadline &deadline) {
  if (deadline.secondsLeft() > 0)
    return "";
  return " (" + deadline.limit() + " from ipu-run's start, kernel compilation included; " +
         "--time-limit raises it)";
}

/// Runs `work`, which nothing can interrupt (LLVM compiling a package's
/// kernels), under a watchdog: should the deadline pass first, ipu-run
/// says so and exits, instead of compiling a hostile package's kernels for
/// as long as they take. A cache entry being written is a temporary file
/// then, renamed into place only once complete.
template <typename Work>
std::optional<std::string> underDeadline(const Deadline &deadline, const std::string &what,
                                         Work &&work) {
  const double left = deadline.secondsLeft();
  if (left <= 0)
    return deadline.limit() + " ran out before " + what + " (--time-limit raises it)";
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (finished.wait_for(lock, std::chrono::duration<double>(left), [&] { return done; }))
      return;
    std::fprintf(stderr, "ipu-run: error: %s ran out while %s (--time-limit raises it)\n",
                 escapeText(deadline.limit()).c_str(), escapeText(what).c_str());
    std::fflush(stderr);
    std::_Exit(kExitError);
  });
  std::optional<std::string> error = work();
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  finished.notify_one();
  watchdog.join();
  return error;
}

/// Compiles the package's kernel bodies to host code (a package carries no
/// code): before anything runs, within the time limit.
std::optional<std::string> compileKernels(Package &package,
                                          const std::string &cacheDirectory,
                                          const Deadline &deadline,
                                          CompiledKernels &kernels) {
  auto start = std::chrono::steady_clock::now();
  KernelCompileStats stats;
  if (auto error = underDeadline(
          deadline,
          "compiling the package's " + std::to_string(package.kernels.size()) + " kernels",
          [&] { return kernels.load(package, cacheDirectory, stats); }))
    return error;
  if (!stats.cacheWarning.empty())
    log().warn("{}", stats.cacheWarning);
  if (!package.kernels.empty())
    log().info("compiled kernels kernels={} objectBytes={} cached={} "
               "lowerSeconds={:.3f} compileSeconds={:.3f} linkSeconds={:.3f} "
               "targetCpu={} elapsed_ms={:.0f}",
               stats.kernels, stats.objectBytes, stats.cached ? "true" : "false",
               stats.lowerSeconds, stats.compileSeconds, stats.linkSeconds,
               kKernelTargetCpu, millisecondsSince(start));
  return std::nullopt;
}

/// The other side of --compare: loaded, compiled and run on inputs from the
/// same seed, within the same limits.
std::optional<std::string> simulateOther(const RunOptions &o, const Deadline &deadline,
                                         LoadedPackage &other, SimulationResult &result) {
  if (auto error = loadPackageFile(o.comparePath, o.maxWork, other))
    return "'" + o.comparePath + "': " + *error;
  CompiledKernels kernels;
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = compileKernels(other.package, o.cacheDirectory, deadline, kernels))
    return "'" + o.comparePath + "': " + *error;
  if (auto error = prepareInputs(other.package, o.seed, "", inputs, generated))
    return "'" + o.comparePath + "': " + *error;
  // A batch compares by its first image: the steps are the same for each.
  std::vector<HostTensor> first;
  if (other.package.images > 1)
    imageInputs(other.package, inputs, 0, first);
  if (deadline.secondsLeft() <= 0)
    return deadline.limit() + " ran out before its simulation (--time-limit raises it)";
  if (auto error = simulate(other.package, *other.target,
                            other.package.images > 1 ? first : inputs, result,
                            deadline.secondsLeft()))
    return "'" + o.comparePath + "': simulation failed: " + *error + outOfTime(deadline);
  return std::nullopt;
}

int run(const RunOptions &o) {
  auto start = std::chrono::steady_clock::now();
  Deadline deadline;
  deadline.limitSeconds = o.timeLimit;
  log().info("reading package path={}", reportValue(o.packagePath));
  LoadedPackage loaded;
  if (auto error = loadPackageFile(o.packagePath, o.maxWork, loaded))
    return fail(*error);
  Package &package = loaded.package;
  const TargetModel &target = *loaded.target;
  log().info("package read and validated tiles={} compiler={} bytes={} target={} "
             "readMs={:.0f} validateMs={:.0f}",
             package.tiles, reportValue(package.compiler), loaded.fileBytes, target.name,
             loaded.readSeconds * 1e3, loaded.validateSeconds * 1e3);
  CompiledKernels compiledKernels;
  if (auto error = compileKernels(package, o.cacheDirectory, deadline, compiledKernels))
    return fail(*error);
  // A PASS must mean every output was compared: refuse up front what would
  // leave one unchecked, naming the stream.
  if (o.check)
    if (auto error = checkableByReference(package))
      return fail("--check: " + *error);

  auto inputStart = std::chrono::steady_clock::now();
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = prepareInputs(package, o.seed, o.inputsDir, inputs, generated))
    return fail(*error);
  uint64_t inputBytes = 0;
  for (const HostTensor &input : inputs)
    inputBytes += input.bytes.size();
  log().info("{} inputs={} bytes={} elapsed_ms={:.0f}",
             o.inputsDir.empty() ? "prepared inputs seed=" + std::to_string(o.seed)
                               : "read inputs dir=" + reportValue(o.inputsDir),
             inputs.size(), inputBytes, millisecondsSince(inputStart));
  // Before the simulation, so that a bad directory fails fast.
  if (!o.outputsDir.empty())
    if (auto error = prepareOutputDirectory(o.outputsDir))
      return fail("--outputs: " + *error);

  // The reference sees the inputs as given, before any corruption.
  const std::vector<HostTensor> referenceInputs = o.check ? inputs : std::vector<HostTensor>();
  if (o.corrupt) {
    if (o.corruptArgument >= generated.size() || !generated[o.corruptArgument])
      return fail("--corrupt-input: argument " + std::to_string(o.corruptArgument) +
                  " is not an input of the package (" + std::to_string(inputs.size()) +
                  " arguments)");
    std::vector<uint8_t> &bytes = inputs[o.corruptArgument].bytes;
    if (o.corruptByte >= bytes.size())
      return fail("--corrupt-input: byte " + std::to_string(o.corruptByte) +
                  " is outside input " + std::to_string(o.corruptArgument) + " of " +
                  std::to_string(bytes.size()) + " bytes");
    bytes[o.corruptByte] ^= 0xFF;
    log().info("corrupted input argument={} byte={}", o.corruptArgument, o.corruptByte);
  }

  std::printf("package=%s target=%s tiles=%u streams=%zu computeSets=%zu "
              "phases=%zu steps=%zu loops=%zu\n",
              reportValue(o.packagePath).c_str(), reportValue(package.target).c_str(),
              package.tiles, package.streams.size(), package.computeSets.size(),
              package.phases.size(), package.program.size(), package.loops.size());
  std::fflush(stdout);

  auto simulateStart = std::chrono::steady_clock::now();
  // A batch runs the program once per image; the report's per-run figures
  // are the last image's, the results the whole batch's.
  SimulationResult result;
  BatchRun batch;
  std::vector<HostTensor> share;
  // With --check, a batch's images are each checked as soon as they ran, on
  // their own inputs as given (before any corruption), results and
  // checkpoints, which are then let go: the host never holds every image's
  // checkpoints. Their reports print after the summary, in image order.
  const bool batched = package.images > 1;
  std::vector<CheckReport> imageReports;
  std::vector<HostTensor> imageIn;
  if (o.check && o.threads)
    openblas_set_num_threads(int(o.threads));
  for (uint32_t image = 0; image < package.images; ++image) {
    if (package.images > 1)
      imageInputs(package, inputs, image, share);
    // --time-limit bounds the whole run, kernel compilation included: each
    // image has what the steps before it left.
    const double timeLimit = deadline.secondsLeft();
    if (timeLimit <= 0)
      return fail("simulation failed: " + deadline.limit() + " ran out " +
                  (image ? "after " + std::to_string(image) + " of " +
                               std::to_string(package.images) + " images"
                         : std::string("before the simulation started")) +
                  " (--time-limit raises it)");
    if (auto error = simulate(package, target, package.images > 1 ? share : inputs, result,
                              timeLimit))
      return fail("simulation failed" +
                  (package.images > 1 ? " on image " + std::to_string(image) : std::string()) +
                  ": " + *error + outOfTime(deadline));
    addImage(package, target, result, batch);
    if (package.images > 1) {
      appendImageResults(package, result, batch.outputs);
      if (o.check) {
        auto checkStart = std::chrono::steady_clock::now();
        imageInputs(package, referenceInputs, image, imageIn);
        imageReports.emplace_back();
        if (auto error = checkPackage(package, target, imageIn, generated, result.outputs,
                                      o.checkpointSamples, imageReports.back()))
          return fail("--check: image " + std::to_string(image) + ": " + *error);
        log().info("checked image by op image={} of={} elapsed_ms={:.0f}", image,
                   package.images, millisecondsSince(checkStart));
      }
      log().info("simulated image image={} of={} cycles={} elapsed_ms={:.0f}", image,
                 package.images, result.cycles, millisecondsSince(simulateStart));
    }
  }
  log().info("simulated package cycles={} steps={} elapsed_ms={:.0f}", result.cycles,
             result.steps.size(), millisecondsSince(simulateStart));
  // From here on the results are the batch's.
  if (batched)
    result.outputs = std::move(batch.outputs);
  if (!o.tracePath.empty()) {
    if (auto error = writeTrace(o.tracePath, package, target, result))
      return fail(*error);
    log().info("wrote trace path={} steps={}", reportValue(o.tracePath), result.steps.size());
  }
  const std::vector<OpCycles> ops = cyclesByOp(package, result);
  if (o.printOps) {
    for (const OpCycles &op : ops)
      printLine(opLine(op, result.cycles));
    for (const std::string &line : finalistLines(package))
      printLine(line);
  }
  LoadedPackage other;
  SimulationResult otherResult;
  std::vector<OpComparison> opComparison;
  if (!o.comparePath.empty()) {
    if (auto error = simulateOther(o, deadline, other, otherResult))
      return fail("--compare: " + *error);
    opComparison = compareOps(ops, cyclesByOp(other.package, otherResult));
    for (const std::string &line : comparisonLines(opComparison, o.packagePath, o.comparePath,
                                                   result.cycles, otherResult.cycles))
      printLine(line);
    std::fflush(stdout);
  }
  if (!o.profileDir.empty()) {
    ProfileComparison comparison{o.comparePath, &opComparison, otherResult.cycles};
    if (auto error = writeProfile(o.profileDir, package, target, result,
                                  o.comparePath.empty() ? nullptr : &comparison))
      return fail(*error);
    log().info("wrote profile dir={} steps={}", reportValue(o.profileDir),
               result.steps.size());
  }
  // Before the check: a FAIL keeps the values it failed on.
  if (!o.outputsDir.empty()) {
    size_t written = 0;
    if (auto error = writeOutputs(o.outputsDir, package, result, written))
      return fail(*error);
    log().info("wrote outputs dir={} results={}", reportValue(o.outputsDir), written);
  }
  std::vector<std::string> summary;
  if (auto error = summaryLines(package, target, result, summary))
    return fail(*error);
  summary.push_back(batchLine(package, target, batch));
  for (const std::string &line : summary)
    printLine(line);
  std::fflush(stdout);
  bool expectFailed = false;
  if (!o.expectDir.empty()) {
    ExpectReport expected;
    if (auto error = compareExpected(o.expectDir, package, result, expected))
      return fail("--expect: " + *error);
    for (const std::string &line : expected.lines)
      printLine(line);
    printLine(expectSummaryLine(o.expectDir, expected));
    std::fflush(stdout);
    expectFailed = !expected.passed();
  }
  if (!o.check)
    return expectFailed ? kExitCheckFailed : 0;

  auto referenceStart = std::chrono::steady_clock::now();
  CheckReport report;
  if (!batched) {
    if (o.threads)
      openblas_set_num_threads(int(o.threads));
    if (auto error = checkPackage(package, target, referenceInputs, generated,
                                  result.outputs, o.checkpointSamples, report,
                                  [](const CheckpointReport &checkpoint) {
                                    printLine(checkpointLine(checkpoint));
                                    std::fflush(stdout);
                                  }))
      return fail(*error);
  }
  // A batch: every image's checkpoints, and a FAIL of any image fails it.
  for (uint32_t image = 0; image < imageReports.size(); ++image) {
    for (const CheckpointReport &checkpoint : imageReports[image].checkpoints)
      printLine(checkpointLine(checkpoint) + " image=" + std::to_string(image));
    if (image == 0)
      report = std::move(imageReports[image]);
    else
      report.addImage(imageReports[image], image);
  }
  log().info("evaluated host reference ops={} elapsed_ms={:.0f}", package.reference.size(),
             millisecondsSince(referenceStart));
  // Nothing compared is no evidence: a FAIL, not a PASS.
  if (report.total.elementsCompared == 0)
    std::fprintf(stderr, "ipu-run: --check compared no elements: no reference op has a "
                         "result\n");
  printLine(checkSummaryLine(report));
  std::fflush(stdout);
  log().info("total elapsed_ms={:.0f}", millisecondsSince(start));
  return report.passed() && !expectFailed ? 0 : kExitCheckFailed;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(runCategory);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "Load, validate, simulate, check and report on an IPU "
                                   "package\n",
                                   &llvm::errs()))
    return kExitError;
  RunOptions options;
  if (auto error = checkOptions(options))
    return fail(*error);
  // Progress goes to stderr through the project logger (level from IPU_LOG),
  // so stdout holds only the report lines.
  if (quiet)
    log().set_level(spdlog::level::off);
  // The validator bounds what a package can make us allocate, but the host
  // may still have less; whatever happens, the tool reports and exits 1.
  try {
    return run(options);
  } catch (const std::bad_alloc &) {
    return fail("out of host memory running '" + options.packagePath + "'");
  } catch (const std::exception &e) {
    return fail("unexpected failure running '" + options.packagePath + "': " + e.what());
  } catch (...) {
    return fail("unexpected failure running '" + options.packagePath + "'");
  }
}
