//===- ipu-run.cpp - Load, validate, simulate, check and report ----------===//
//
// Usage: ipu-run PACKAGE [--check] [--seed N | --inputs DIR]
//                        [--outputs DIR] [--corrupt-input ARG:BYTE]
//                        [--corrupt-kernel BYTE] [--checkpoints N]
//                        [--threads N] [--trace FILE] [--profile DIR]
//                        [--ops] [--compare OTHER]
//                        [--quiet]
//
// Runs a package on the cycle-level simulator with deterministic inputs and
// prints seed-style key=value report lines to stdout; progress goes to stderr.
// Exit status: 0 on success (numericalTest=PASS with --check), 2 when the
// numerical check fails, 1 on any error.
//
// Inputs are generated from --seed (uniform in [-1, 1), rounded to each
// argument's type), or read with --inputs DIR from NumPy files, one per
// streamed argument by argument index: DIR/arg0.npy, DIR/arg1.npy, ... as
// f32 ('<f4') or f16 ('<f2'), and an f8 argument's bits as uint8 ('|u1')
// with its type in the name, DIR/arg2.f8E4M3FN.npy or DIR/arg2.f8E5M2.npy.
// Each file must have the argument's exact shape and dtype, in C order
// (NPY format 1.0 or 2.0); a missing file, another shape or dtype is an
// error naming the file, what was expected and what was found.
// --outputs DIR writes every result as the device streamed it out, by
// result index, to DIR/result0.npy, DIR/result1.npy, ... (an f8 result as
// DIR/result0.f8E4M3FN.npy of uint8), creating DIR if needed; it is
// written before the check, so a FAIL keeps the values it failed on.
//
// Numerical check (--check): every reference op of the package is evaluated
// on the host from the inputs (decoded to f32, OpenBLAS sgemm in
// f32, rounded to the result type; a batched matmul is one sgemm per batch,
// a transposed operand is passed to sgemm as such) and each result element
// must satisfy
//   |device - reference| <= atol + rtol * |reference|
// with K the matmul inner dimension and, by result type,
//   f32:       atol = 1e-4 * sqrt(K), rtol = 1e-3
//   f16:       atol = 1e-3 * sqrt(K), rtol = 2e-3
//   f8E4M3FN:  atol = 1e-2 * sqrt(K), rtol = 0.13  (one ulp is 2^-3 relative)
//   f8E5M2:    atol = 2e-2 * sqrt(K), rtol = 0.26  (one ulp is 2^-2 relative)
// The atol grows with sqrt(K) because f32 summation-order differences grow
// like a random walk over K terms; rtol allows one ulp of the result type,
// since device and host may round an f32 sum on opposite sides of a midpoint.
// A non-finite element passes only if the reference holds the same value.
// When the device accumulated in f16 partials (the reference op says so),
// each element also gets the rounding term of docs/Numerics.md:
//   8 * 2^-11 * sqrt(sum over r of s_r^2)
// where s_r is the exact partial sum after the r-th AMP pass of k (the
// device rounds its running sum to f16 there: K is summed in the
// reference op's innerBlocks balanced blocks, each from zero, a pass every
// grain terms of its block).
//
// No PASS without a comparison: --check refuses a package with an output
// stream that no reference op produces, reports per checkpoint and in total
// how many elements it compared and the worst one (furthest past, or
// closest to, its allowed error) with both values, and fails when it
// compared nothing.
//
// --profile DIR writes DIR/profile.html (creating DIR), a self-contained
// report of the run that loads nothing: the program's steps as a timeline,
// every tile's compute cycles as a heatmap, the exchange phases against
// their endpoint lower bounds, each compute set's slowest tile, mean and
// balance, and memory touched against the tile's regions, in cycles and
// microseconds at the target clock; the same figures as JSON in its
// <script type="application/json" id="profile-data">.
//
// --ops prints a line per source op: the steps its lowering made (named
// after it, `mm0.gather`, `mm0.partials`, ...) with its location, cycles
// by kind (loopCycles: the control overhead of its loops) and exchange
// bytes; the rows sum to the run's cycles. --compare
// OTHER runs a second package on inputs from the same seed and prints the
// two runs' cycles per op side by side (`compare op=...`), so that a
// change's effect shows op by op; --profile then adds the comparison to the
// report.
//
// The tool is free of LLVM: arguments are parsed by hand.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Package/Package.h"
#include "IPU/Reference/Reference.h"
#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/Npy.h"
#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Profile.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Runtime/Trace.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Support/Escape.h"
#include "IPU/Support/Log.h"
#include "IPU/Target/TargetModel.h"

#include <cblas.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace ipu;

namespace {

constexpr int kExitError = 1;
constexpr int kExitCheckFailed = 2;

const char *const kUsage =
    "usage: ipu-run PACKAGE [--check] [--seed N | --inputs DIR]\n"
    "                       [--outputs DIR] [--corrupt-input ARG:BYTE]\n"
    "                       [--kernel-cache DIR] [--checkpoints N]\n"
    "                       [--max-cycles N] [--time-limit SECONDS]\n"
    "                       [--threads N] [--trace FILE] [--profile DIR]\n"
    "                       [--ops] [--compare OTHER] [--quiet]\n"
    "  --check                   compare results with the host reference\n"
    "  --seed N                  input generator seed (default 1)\n"
    "  --inputs DIR              read the arguments from NumPy files instead:\n"
    "                            DIR/arg0.npy, DIR/arg1.npy, ... by argument\n"
    "                            index, f32 '<f4' or f16 '<f2' of the exact\n"
    "                            shape; an f8 argument's bits as uint8 in\n"
    "                            DIR/argN.f8E4M3FN.npy or DIR/argN.f8E5M2.npy\n"
    "  --outputs DIR             write the device's results as NumPy files,\n"
    "                            DIR/result0.npy, ... by result index (f8\n"
    "                            as DIR/resultN.f8E4M3FN.npy, uint8),\n"
    "                            creating DIR\n"
    "  --corrupt-input ARG:BYTE  flip every bit of byte BYTE of input ARG in\n"
    "                            the device's copy only (tests --check)\n"
    "  --checkpoints N           with --check, compare N evenly spaced\n"
    "                            elements of each diagnostic checkpoint (a\n"
    "                            value a later op reads) instead of all;\n"
    "                            results are always compared in full\n"
    "  --kernel-cache DIR        where compiled kernels are cached (default\n"
    "                            $IPU_KERNEL_CACHE, else ~/.cache/ipu-run/\n"
    "                            kernels; 'none' compiles every time)\n"
    "  --max-cycles N            refuse a package whose run asks for more\n"
    "                            simulated cycles (default 2^30)\n"
    "  --time-limit SECONDS      stop the simulation once SECONDS of wall\n"
    "                            clock have passed (default: no limit)\n"
    "  --threads N               host threads for the reference BLAS\n"
    "  --trace FILE              write the run as a Chrome trace (Perfetto)\n"
    "  --ops                     print the cycles of each source op (the\n"
    "                            steps it lowered to, tied to its location)\n"
    "  --compare OTHER           also run package OTHER (inputs from the same\n"
    "                            seed) and print both runs' cycles per op\n"
    "                            side by side; with --profile, the report\n"
    "                            shows them too\n"
    "  --profile DIR             write DIR/profile.html, a self-contained\n"
    "                            report: timeline, tile heatmap, exchange\n"
    "                            phases, compute sets, memory (creating DIR)\n"
    "  --quiet                   no progress log on stderr\n";

struct Options {
  std::string path;
  bool check = false;
  uint64_t seed = 1;
  bool seedGiven = false;
  std::string inputs;  ///< Directory of argN.npy files, if any.
  std::string outputs; ///< Directory for resultN.npy files, if any.
  bool corrupt = false;
  uint64_t corruptArgument = 0;
  uint64_t corruptByte = 0;
  uint64_t maxCycles = PackageLimits::kDefaultMaxSimulatedCycles;
  double timeLimit = 0; ///< Seconds of wall clock for the simulation; 0: none.
  /// Where compiled kernels are cached; "" for no cache.
  std::string kernelCache = defaultKernelCacheDirectory();
  /// Elements compared per diagnostic checkpoint; 0: every element.
  uint64_t checkpointSamples = 0;
  uint64_t threads = 0; ///< 0: library default.
  bool quiet = false;
  std::string trace; ///< Chrome trace-event file to write, if any.
  std::string profile; ///< Directory for profile.html, if any.
  bool ops = false;     ///< Print the cycles per source op.
  std::string compare;  ///< Another package to run and set beside this one.
};

/// Messages name what they refuse (a kernel, a stream, a file), and those
/// names come from input: one escaped line.
int fail(const std::string &message) {
  std::fprintf(stderr, "ipu-run: error: %s\n", escapeText(message).c_str());
  return kExitError;
}

bool parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  value = parsed;
  return true;
}

/// Parses the command line; returns an error message or nothing.
std::optional<std::string> parseOptions(int argc, char **argv, Options &options,
                                        bool &help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    // Accept both `--opt VALUE` and `--opt=VALUE`.
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      size_t equals = arg.find('=');
      if (equals != std::string::npos) {
        value = arg.substr(equals + 1);
        arg = arg.substr(0, equals);
        hasValue = true;
      }
    }
    auto takeValue = [&]() -> bool {
      if (hasValue)
        return true;
      if (i + 1 >= argc)
        return false;
      value = argv[++i];
      return true;
    };
    auto noValue = [&]() { return !hasValue; };

    if (arg == "-h" || arg == "--help") {
      help = true;
      return std::nullopt;
    }
    if (arg == "--check" && noValue()) {
      options.check = true;
    } else if (arg == "--quiet" && noValue()) {
      options.quiet = true;
    } else if (arg == "--trace") {
      if (!takeValue() || value.empty())
        return "--trace expects a file name";
      options.trace = value;
    } else if (arg == "--ops" && noValue()) {
      options.ops = true;
    } else if (arg == "--compare") {
      if (!takeValue() || value.empty())
        return "--compare expects a package";
      options.compare = value;
    } else if (arg == "--profile") {
      if (!takeValue() || value.empty())
        return "--profile expects a directory";
      options.profile = value;
    } else if (arg == "--seed") {
      if (!takeValue() || !parseUnsigned(value, options.seed))
        return "--seed expects an unsigned integer";
      options.seedGiven = true;
    } else if (arg == "--inputs") {
      if (!takeValue() || value.empty())
        return "--inputs expects a directory";
      options.inputs = value;
    } else if (arg == "--outputs") {
      if (!takeValue() || value.empty())
        return "--outputs expects a directory";
      options.outputs = value;
    } else if (arg == "--threads") {
      if (!takeValue() || !parseUnsigned(value, options.threads) ||
          options.threads == 0 || options.threads > 1024)
        return "--threads expects an integer in [1, 1024]";
    } else if (arg == "--checkpoints") {
      if (!takeValue() || !parseUnsigned(value, options.checkpointSamples) ||
          options.checkpointSamples == 0)
        return "--checkpoints expects a positive number of samples";
    } else if (arg == "--max-cycles") {
      if (!takeValue() || !parseUnsigned(value, options.maxCycles) || options.maxCycles == 0)
        return "--max-cycles expects a positive number of cycles";
    } else if (arg == "--time-limit") {
      char *end = nullptr;
      if (!takeValue() || value.empty() ||
          !((options.timeLimit = std::strtod(value.c_str(), &end)) > 0) || *end != '\0' ||
          !std::isfinite(options.timeLimit))
        return "--time-limit expects a positive number of seconds";
    } else if (arg == "--kernel-cache") {
      if (!takeValue() || value.empty())
        return "--kernel-cache expects a directory or 'none'";
      options.kernelCache = value == "none" ? "" : value;
    } else if (arg == "--corrupt-input") {
      size_t colon = takeValue() ? value.find(':') : std::string::npos;
      if (colon == std::string::npos ||
          !parseUnsigned(value.substr(0, colon), options.corruptArgument) ||
          !parseUnsigned(value.substr(colon + 1), options.corruptByte))
        return "--corrupt-input expects ARG:BYTE (unsigned integers)";
      options.corrupt = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option '" + std::string(argv[i]) + "'";
    } else if (options.path.empty()) {
      options.path = arg;
    } else {
      return "more than one package given ('" + options.path + "', '" + arg +
             "')";
    }
  }
  if (options.path.empty())
    return std::string("no package given");
  if (options.seedGiven && !options.inputs.empty())
    return "--seed generates inputs, --inputs reads them: give one of them";
  return std::nullopt;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Reads, validates and simulates the package at `path` on inputs from
/// `options.seed`, within the same limits: the other side of --compare.
std::optional<std::string> simulateOther(const std::string &path, const Options &options,
                                         Package &package,
                                         SimulationResult &result) {
  std::vector<uint8_t> bytes;
  if (auto error = readPackageBytes(path, bytes))
    return error;
  if (auto error = deserializePackage(bytes.data(), bytes.size(), package))
    return "'" + path + "': " + *error;
  std::optional<TargetModel> target = TargetModel::byName(package.target);
  if (!target)
    return "'" + path + "': target '" + package.target + "' is unknown";
  if (auto error = validatePackage(package, *target, options.maxCycles))
    return "'" + path + "': invalid package: " + *error;
  CompiledKernels kernels;
  KernelCompileStats stats;
  if (auto error = kernels.load(package, options.kernelCache, stats))
    return "'" + path + "': " + *error;
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = prepareInputs(package, options.seed, "", inputs, generated))
    return "'" + path + "': " + *error;
  if (auto error = simulate(package, *target, inputs, result, options.timeLimit))
    return "'" + path + "': simulation failed: " + *error;
  return std::nullopt;
}

/// "file:line:col" as a report value ("-" when unknown).
std::string locationValue(const std::string &location) {
  return location.empty() ? "-" : reportValue(location);
}

int run(const Options &options) {
  auto start = std::chrono::steady_clock::now();
  log().info("reading package path={}", reportValue(options.path));
  std::vector<uint8_t> bytes;
  if (auto error = readPackageBytes(options.path, bytes))
    return fail(*error);
  Package package;
  if (auto error = deserializePackage(bytes.data(), bytes.size(), package)) {
    const char *prefix = "corrupt package";
    if (error->compare(0, std::strlen(prefix), prefix) == 0)
      return fail(*error);
    return fail(std::string(prefix) + ": " + *error);
  }
  log().info("package read tiles={} compiler={} bytes={} elapsed_ms={:.0f}",
             package.tiles, reportValue(package.compiler), bytes.size(),
             millisecondsSince(start));

  std::optional<TargetModel> target = TargetModel::byName(package.target);
  if (!target)
    return fail("package target '" + package.target +
                "' is unknown; known targets: " + TargetModel::knownNames());
  auto validateStart = std::chrono::steady_clock::now();
  if (auto error = validatePackage(package, *target, options.maxCycles))
    return fail("invalid package: " + *error);
  log().info("package validated target={} elapsed_ms={:.0f}", target->name,
             millisecondsSince(validateStart));
  // Generated kernels run code this tool compiles from their bodies (a
  // package carries no code): before anything runs.
  auto kernelStart = std::chrono::steady_clock::now();
  CompiledKernels compiledKernels;
  KernelCompileStats kernelStats;
  if (auto error = compiledKernels.load(package, options.kernelCache, kernelStats))
    return fail(*error);
  if (!kernelStats.cacheWarning.empty())
    log().warn("{}", kernelStats.cacheWarning);
  if (!package.kernels.empty())
    log().info("compiled kernels kernels={} objectBytes={} cached={} "
               "lowerSeconds={:.3f} compileSeconds={:.3f} linkSeconds={:.3f} "
               "targetCpu={} elapsed_ms={:.0f}",
               kernelStats.kernels, kernelStats.objectBytes,
               kernelStats.cached ? "true" : "false", kernelStats.lowerSeconds,
               kernelStats.compileSeconds, kernelStats.linkSeconds,
               kKernelTargetCpu, millisecondsSince(kernelStart));
  // A PASS must mean every output was compared: refuse up front what would
  // leave one unchecked, naming the stream.
  if (options.check)
    if (auto error = checkReferenceCoverage(package))
      return fail("--check: " + *error);
  if (options.check && package.reference.empty())
    return fail("--check: the package carries no reference computation");

  auto inputStart = std::chrono::steady_clock::now();
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = prepareInputs(package, options.seed, options.inputs, inputs,
                                 generated))
    return fail(*error);
  uint64_t inputBytes = 0;
  for (const HostTensor &input : inputs)
    inputBytes += input.bytes.size();
  if (options.inputs.empty())
    log().info("prepared inputs seed={} inputs={} bytes={} elapsed_ms={:.0f}",
               options.seed, inputs.size(), inputBytes,
               millisecondsSince(inputStart));
  else
    log().info("read inputs dir={} inputs={} bytes={} elapsed_ms={:.0f}",
               reportValue(options.inputs), inputs.size(), inputBytes,
               millisecondsSince(inputStart));

  // The output directory before the simulation, so that a bad one fails
  // fast.
  if (!options.outputs.empty()) {
    std::error_code error;
    if (std::filesystem::exists(options.outputs, error) &&
        !std::filesystem::is_directory(options.outputs, error))
      return fail("--outputs: '" + options.outputs +
                  "' exists and is not a directory");
    std::filesystem::create_directories(options.outputs, error);
    if (error)
      return fail("--outputs: cannot create directory '" + options.outputs +
                  "': " + error.message());
  }

  // Checked before the reference so that a bad option fails fast; applied
  // after it, since the reference must see the inputs as given.
  if (options.corrupt) {
    if (options.corruptArgument >= generated.size() ||
        !generated[options.corruptArgument])
      return fail("--corrupt-input: argument " +
                  std::to_string(options.corruptArgument) +
                  " is not an input of the package (" +
                  std::to_string(inputs.size()) + " arguments)");
    size_t size = inputs[options.corruptArgument].bytes.size();
    if (options.corruptByte >= size)
      return fail("--corrupt-input: byte " +
                  std::to_string(options.corruptByte) + " is outside input " +
                  std::to_string(options.corruptArgument) + " of " +
                  std::to_string(size) + " bytes");
  }

  // The reference sees the inputs as given, before any corruption.
  std::vector<HostTensor> referenceInputs;
  if (options.check)
    referenceInputs = inputs;

  if (options.corrupt) {
    inputs[options.corruptArgument].bytes[options.corruptByte] ^= 0xFF;
    log().info("corrupted input argument={} byte={}", options.corruptArgument,
               options.corruptByte);
  }

  std::printf("package=%s target=%s tiles=%u streams=%zu computeSets=%zu "
              "phases=%zu steps=%zu loops=%zu\n",
              reportValue(options.path).c_str(),
              reportValue(package.target).c_str(), package.tiles,
              package.streams.size(), package.computeSets.size(),
              package.phases.size(), package.program.size(),
              package.loops.size());
  std::fflush(stdout);

  auto simulateStart = std::chrono::steady_clock::now();
  SimulationResult result;
  if (auto error = simulate(package, *target, inputs, result, options.timeLimit))
    return fail("simulation failed: " + *error);
  log().info("simulated package cycles={} steps={} elapsed_ms={:.0f}",
             result.cycles, result.steps.size(),
             millisecondsSince(simulateStart));
  if (!options.trace.empty()) {
    if (auto error = writeTrace(options.trace, package, *target, result))
      return fail(*error);
    log().info("wrote trace path={} steps={}", reportValue(options.trace),
               result.steps.size());
  }
  std::vector<OpCycles> ops = cyclesByOp(package, result);
  if (options.ops)
    for (const OpCycles &op : ops)
      std::printf("op=%s location=%s steps=%u cycles=%llu computeCycles=%llu "
                  "exchangeCycles=%llu syncCycles=%llu exchangeBytes=%llu "
                  "sharePercent=%s loopCycles=%llu\n",
                  reportValue(op.op).c_str(), locationValue(op.location).c_str(),
                  op.steps, (unsigned long long)op.cycles(),
                  (unsigned long long)op.computeCycles,
                  (unsigned long long)op.exchangeCycles,
                  (unsigned long long)op.syncCycles,
                  (unsigned long long)op.exchangeBytes,
                  fixed(result.cycles ? 100.0 * op.cycles() / result.cycles : 0, 2)
                      .c_str(),
                  (unsigned long long)op.loopCycles);
  // The planner's re-ranked finalists, best first, as the package keeps
  // them: "finalist op=mm0 rank=0 rows=... analyticalCycles=...
  // scheduledCycles=... fits=true".
  if (options.ops)
    for (const auto &[key, value] : package.metadata)
      if (key.rfind("finalist.", 0) == 0) {
        size_t dot = key.rfind('.');
        std::printf("finalist op=%s rank=%s %s\n",
                    reportValue(key.substr(9, dot - 9)).c_str(),
                    reportValue(key.substr(dot + 1)).c_str(),
                    escapeText(value).c_str());
      }
  Package otherPackage;
  SimulationResult otherResult;
  std::vector<OpComparison> opComparison;
  if (!options.compare.empty()) {
    if (auto error = simulateOther(options.compare, options, otherPackage, otherResult))
      return fail("--compare: " + *error);
    opComparison = compareOps(ops, cyclesByOp(otherPackage, otherResult));
    for (const OpComparison &row : opComparison)
      std::printf("compare op=%s location=%s cycles=%llu otherCycles=%llu "
                  "deltaCycles=%lld\n",
                  reportValue(row.op).c_str(), locationValue(row.location).c_str(),
                  (unsigned long long)row.cycles,
                  (unsigned long long)row.otherCycles,
                  (long long)row.otherCycles - (long long)row.cycles);
    std::printf("compare package=%s other=%s cycles=%llu otherCycles=%llu "
                "deltaCycles=%lld\n",
                reportValue(options.path).c_str(),
                reportValue(options.compare).c_str(),
                (unsigned long long)result.cycles,
                (unsigned long long)otherResult.cycles,
                (long long)otherResult.cycles - (long long)result.cycles);
    std::fflush(stdout);
  }
  if (!options.profile.empty()) {
    ProfileComparison other{options.compare, &opComparison, otherResult.cycles};
    if (auto error = writeProfile(options.profile, package, *target, result,
                                  options.compare.empty() ? nullptr : &other))
      return fail(*error);
    log().info("wrote profile dir={} steps={}", reportValue(options.profile),
               result.steps.size());
  }
  // Before the check: a FAIL keeps the values it failed on.
  if (!options.outputs.empty()) {
    size_t written = 0;
    if (auto error = writeOutputs(options.outputs, package, result, written))
      return fail(*error);
    log().info("wrote outputs dir={} results={}", reportValue(options.outputs),
               written);
  }

  double seconds = target->clockHz > 0 ? result.cycles / target->clockHz : 0;
  // From the program's gemm vertices, not from the field the package states.
  double tflops =
      seconds > 0 ? double(programFlops(package)) / seconds / 1e12 : 0;
  double peakTflops = target->peakFlopsF16() / 1e12;
  double efficiency = peakTflops > 0 ? tflops / peakTflops * 100 : 0;
  // Against the peak of the program's own types (f8 inputs with f16
  // partials: twice the f16 peak), which it never exceeds.
  const double ownPeakCycles = programPeakCycles(package, *target);
  const double ownEfficiency =
      result.cycles ? ownPeakCycles / double(result.cycles) * 100 : 0;
  const double ownPeakTflops =
      ownPeakCycles > 0 && target->clockHz > 0
          ? double(programFlops(package)) / (ownPeakCycles / target->clockHz) / 1e12
          : 0;
  std::printf(
      "workload=%s cycles=%llu computeCycles=%llu exchangeCycles=%llu "
      "syncCycles=%llu loopCycles=%llu deviceMicroseconds=%s "
      "effectiveGemmTflops=%s peakTflops=%s efficiencyPercent=%s "
      "ownPeakTflops=%s efficiencyOwnPeakPercent=%s "
      "activeTiles=%u executionTiles=%u\n",
      reportValue(package.workload).c_str(), (unsigned long long)result.cycles,
      (unsigned long long)result.computeCycles,
      (unsigned long long)result.exchangeCycles,
      (unsigned long long)result.syncCycles,
      (unsigned long long)result.loopCycles, fixed(seconds * 1e6, 3).c_str(),
      fixed(tflops, 3).c_str(), fixed(peakTflops, 3).c_str(),
      fixed(efficiency, 2).c_str(), fixed(ownPeakTflops, 3).c_str(),
      fixed(ownEfficiency, 2).c_str(), result.activeTiles, target->tiles);
  // Memory as the program uses it: from the region bases (the runtime image
  // and reserved code included) to the highest byte touched on the busiest
  // tile. The compiler's own figures follow on the metadata line.
  std::printf("touchedStandardBytes=%llu touchedInterleavedBytes=%llu "
              "touchedMemoryElements=%llu\n",
              (unsigned long long)result.touchedBytes[0],
              (unsigned long long)result.touchedBytes[1],
              (unsigned long long)result.touchedElements);
  // The program's code and state, sized from what the package holds (the
  // loader refused it if a buffer reached into them): on the busiest tile.
  ReservedArea reserved(*target);
  if (auto error = tallyReservedArea(package, *target, reserved))
    return fail("invalid package: " + *error);
  const uint32_t busiest = reserved.busiestTile();
  std::printf("reservedStandardBytes=%llu reservedTile=%u "
              "reservedExchangeCodeBytes=%llu reservedVertexStateBytes=%llu "
              "reservedKernelCodeBytes=%llu\n",
              (unsigned long long)reserved.bytes(), busiest,
              (unsigned long long)reserved.exchangeCodeBytes(busiest),
              (unsigned long long)reserved.vertexStateBytes(busiest),
              (unsigned long long)reserved.kernelCodeBytes(busiest));

  if (!package.metadata.empty()) {
    // The planner's finalists have a line each (--ops); the rest is one.
    std::string line;
    for (const auto &[key, value] : package.metadata)
      if (key.rfind("finalist.", 0) != 0)
        line += (line.empty() ? "" : " ") + escapeText(key) + "=" + reportValue(value);
    if (!line.empty())
      std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);

  if (!options.check)
    return 0;
  if (options.threads)
    openblas_set_num_threads(int(options.threads));
  auto referenceStart = std::chrono::steady_clock::now();
  std::vector<Reference> references;
  Comparison comparison;
  // Diagnostic checkpoints: values a later reference op reads.
  std::vector<bool> consumed(package.reference.size(), false);
  for (const ReferenceOp &op : package.reference)
    for (uint32_t argument : op.arguments)
      if (argument >= ReferenceOp::kReferenceValue &&
          argument - ReferenceOp::kReferenceValue < consumed.size())
        consumed[argument - ReferenceOp::kReferenceValue] = true;
  uint64_t diagnosticCheckpoints = 0;
  for (size_t index = 0; index < package.reference.size(); ++index) {
    Reference reference;
    if (auto error = evaluateReference(package, *target, index, referenceInputs,
                                       generated, references, result.outputs,
                                       reference))
      return fail(*error);
    Comparison checkpoint;
    const uint64_t samples = consumed[index] ? options.checkpointSamples : 0;
    if (consumed[index] && reference.result != ReferenceOp::kNoResult)
      ++diagnosticCheckpoints;
    if (auto error = compareWithReference(reference, result.outputs, checkpoint, samples))
      return fail(*error);
    // An elementwise op accumulates nothing: it says which kernel ran; a
    // permute moves elements exactly.
    const ReferenceOp &op = package.reference[index];
    const std::string detail =
        op.op == "elementwise" ? "kernel=" + reportValue(package.kernels[op.kernel]->name())
        : op.op == "permute"   ? std::string("exact")
                               : "partials=" + std::string(elementTypeName(op.partials));
    if (reference.result != ReferenceOp::kNoResult)
      std::printf("checkpoint=%zu operation=%s result=%u %s "
                  "maximumAbsoluteError=%.6g mismatches=%llu %s\n",
                  index, reportValue(op.op).c_str(), reference.result, detail.c_str(),
                  checkpoint.maximumAbsoluteError,
                  (unsigned long long)checkpoint.mismatches,
                  checkpoint.keys(false).c_str());
    comparison.add(checkpoint, index);
    // A checkpoint's consumers read the device's value: its reference is
    // done with, so only intermediate values stay in host memory.
    if (reference.result != ReferenceOp::kNoResult) {
      reference.values = std::vector<float>();
      reference.allowance = std::vector<float>();
    }
    references.push_back(std::move(reference));
  }
  log().info("evaluated host reference ops={} elapsed_ms={:.0f}",
             references.size(), millisecondsSince(referenceStart));
  // Nothing compared is no evidence: a FAIL, not a PASS.
  bool pass = comparison.mismatches == 0 && comparison.elementsCompared > 0;
  if (comparison.elementsCompared == 0)
    std::fprintf(stderr, "ipu-run: --check compared no elements: no "
                         "reference op has a result\n");
  std::printf(
      "referencePrecision=f32 maximumAbsoluteError=%.6g mismatches=%llu "
      "numericalTest=%s %s%s\n",
      comparison.maximumAbsoluteError,
      (unsigned long long)comparison.mismatches, pass ? "PASS" : "FAIL",
      comparison.keys(true).c_str(),
      options.checkpointSamples
          ? (" diagnosticCheckpoints=" + std::to_string(diagnosticCheckpoints) +
             " sampleLimit=" + std::to_string(options.checkpointSamples))
                .c_str()
          : "");
  std::fflush(stdout);
  log().info("total elapsed_ms={:.0f}", millisecondsSince(start));
  return pass ? 0 : kExitCheckFailed;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  bool help = false;
  if (auto error = parseOptions(argc, argv, options, help)) {
    fail(*error);
    std::fputs(kUsage, stderr);
    return kExitError;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }

  // Progress goes to stderr through the project logger (level from IPU_LOG),
  // so stdout holds only the report lines.
  if (options.quiet)
    log().set_level(spdlog::level::off);
  // The validator bounds what a package can make us allocate, but the host
  // may still have less; whatever happens, the tool reports and exits 1.
  try {
    return run(options);
  } catch (const std::bad_alloc &) {
    return fail("out of host memory running '" + options.path + "'");
  } catch (const std::exception &e) {
    return fail(std::string("unexpected failure running '") + options.path +
                "': " + e.what());
  } catch (...) {
    return fail("unexpected failure running '" + options.path + "'");
  }
}
