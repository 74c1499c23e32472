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

#include "IPU/Package/Package.h"
#include "IPU/Runtime/KernelLoader.h"
#include "IPU/Runtime/Npy.h"
#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Profile.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Runtime/Trace.h"
#include "IPU/Support/ElementType.h"
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
    "                       [--corrupt-kernel BYTE] [--checkpoints N]\n"
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
    "  --corrupt-kernel BYTE     flip every bit of byte BYTE of the kernel\n"
    "                            object after its hash is checked, before it\n"
    "                            is loaded (shows the generated code runs)\n"
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
  std::optional<uint64_t> corruptKernelByte;
  /// Elements compared per diagnostic checkpoint; 0: every element.
  uint64_t checkpointSamples = 0;
  uint64_t threads = 0; ///< 0: library default.
  bool quiet = false;
  std::string trace; ///< Chrome trace-event file to write, if any.
  std::string profile; ///< Directory for profile.html, if any.
  bool ops = false;     ///< Print the cycles per source op.
  std::string compare;  ///< Another package to run and set beside this one.
};

int fail(const std::string &message) {
  std::fprintf(stderr, "ipu-run: error: %s\n", message.c_str());
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
    } else if (arg == "--corrupt-kernel") {
      uint64_t byte = 0;
      if (!takeValue() || !parseUnsigned(value, byte))
        return "--corrupt-kernel expects BYTE (an unsigned integer)";
      options.corruptKernelByte = byte;
    } else if (arg == "--corrupt-input") {
      size_t colon = takeValue() ? value.find(':') : std::string::npos;
      if (colon == std::string::npos ||
          !parseUnsigned(value.substr(0, colon), options.corruptArgument) ||
          !parseUnsigned(value.substr(colon + 1), options.corruptByte))
        return "--corrupt-input expects ARG:BYTE (unsigned integers)";
      options.corrupt = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option '" + std::string(argv[i]) + "'\n" + kUsage;
    } else if (options.path.empty()) {
      options.path = arg;
    } else {
      return "more than one package given ('" + options.path + "', '" + arg +
             "')";
    }
  }
  if (options.path.empty())
    return std::string("no package given\n") + kUsage;
  if (options.seedGiven && !options.inputs.empty())
    return "--seed generates inputs, --inputs reads them: give one of them";
  return std::nullopt;
}

/// A report value, quoted only when it would not read as one token.
std::string reportValue(const std::string &value) {
  bool plain = !value.empty();
  for (char c : value)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '=')
      plain = false;
  if (plain)
    return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
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

/// splitmix64: tiny, seedable and identical on every platform.
uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// `name` in directory `dir`.
std::string joinPath(const std::string &dir, const std::string &name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool fileExists(const std::string &path) {
  struct stat status;
  return stat(path.c_str(), &status) == 0;
}

/// The file of a value of `type` named `stem` ("arg2", "result0"):
/// "arg2.npy", or "arg2.f8E4M3FN.npy" for an f8 type, whose bits the file
/// holds as uint8 (NumPy has no f8 dtype).
std::string npyFileName(const std::string &stem, ElementType type) {
  if (isF8(type))
    return stem + "." + std::string(elementTypeName(type)) + ".npy";
  return stem + ".npy";
}

/// The element type named in a file name of npyFileName's, if an f8 one.
std::optional<ElementType> f8TypeOfFileName(const std::string &name) {
  for (ElementType type : {ElementType::F8E4M3FN, ElementType::F8E5M2})
    if (name.size() > npyFileName("", type).size() &&
        name.compare(name.size() - npyFileName("", type).size(),
                     std::string::npos, npyFileName("", type)) == 0)
      return type;
  return std::nullopt;
}

/// Reads argument `stream.index` from `dir` into the bytes of `input`
/// (`bytes` of them, of the stream's type and shape): the file npyFileName
/// names, of exactly the stream's shape and dtype. When it is missing, a
/// file of the argument under another type's name is reported as what was
/// found.
std::optional<std::string> readInput(const std::string &dir,
                                     const HostStream &stream, uint64_t bytes,
                                     HostTensor &input) {
  const std::string stem = "arg" + std::to_string(stream.index);
  const std::string typeName(elementTypeName(stream.type));
  const std::string wanted = joinPath(dir, npyFileName(stem, stream.type));
  std::string path = wanted;
  if (!fileExists(wanted)) {
    path.clear();
    for (ElementType other :
         {ElementType::F32, ElementType::F8E4M3FN, ElementType::F8E5M2})
      if (npyFileName(stem, other) != npyFileName(stem, stream.type) &&
          fileExists(joinPath(dir, npyFileName(stem, other)))) {
        path = joinPath(dir, npyFileName(stem, other));
        break;
      }
    if (path.empty())
      return wanted +
             ": no such file: --inputs needs a file for every "
             "argument (argument " +
             std::to_string(stream.index) + ", stream '" + stream.name +
             "', shape " + npyShapeText(stream.shape) + " " + typeName + ")";
  }
  NpyArray array;
  if (auto error = readNpy(path, array))
    return error;
  // What the file holds: an f8 type when its name says so and it holds
  // bytes; its dtype otherwise.
  std::optional<ElementType> named = f8TypeOfFileName(path);
  std::string found = named && array.descr == npyDescr(*named)
                          ? std::string(elementTypeName(*named))
                          : npyTypeName(array.descr);
  if (path != wanted && isF8(stream.type) && !named &&
      array.descr == npyDescr(stream.type))
    return path + ": argument " + std::to_string(stream.index) + " is " +
           typeName + ": name its file " + npyFileName(stem, stream.type) +
           " to say which f8 type the uint8 values are";
  bool sameType = path == wanted && array.descr == npyDescr(stream.type);
  if (!sameType || array.shape != stream.shape) {
    std::string expected =
        "shape " + npyShapeText(stream.shape) + " " + typeName;
    std::string notes;
    if (isF8(stream.type) && array.descr != npyDescr(stream.type))
      notes = "its bits as uint8";
    if (path != wanted)
      notes +=
          (notes.empty() ? "in " : ", in ") + npyFileName(stem, stream.type);
    if (!notes.empty())
      expected += " (" + notes + ")";
    return path + ": expected " + expected + ", found " +
           npyShapeText(array.shape) + " " + found;
  }
  // Both are little-endian and row-major: the file's bytes are the
  // tensor's.
  if (array.data.size() != bytes)
    return path + ": holds " + std::to_string(array.data.size()) +
           " bytes, the argument " + std::to_string(bytes);
  input.bytes = std::move(array.data);
  return std::nullopt;
}

/// Inputs by argument index. Without `dir`, values uniform in [-1, 1),
/// rounded to the stream's type, from a generator seeded by (seed, argument
/// index) so that each argument is independent of the others and of stream
/// order; with it, readInput's files. `generated[i]` tells whether argument
/// i is streamed in at all.
std::optional<std::string> prepareInputs(const Package &package, uint64_t seed,
                                         const std::string &dir,
                                         std::vector<HostTensor> &inputs,
                                         std::vector<bool> &generated) {
  // Far above any real workload, far below what would exhaust the host.
  constexpr uint64_t kMaxInputBytes = uint64_t(1) << 34;
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice)
      continue;
    // Validated indices are below the stream count; checked again so that
    // `index + 1` cannot wrap.
    if (stream.index >= package.streams.size())
      return "input stream '" + stream.name + "' has argument index " +
             std::to_string(stream.index) + ", out of range [0, " +
             std::to_string(package.streams.size()) + ")";
    if (stream.index >= inputs.size()) {
      inputs.resize(stream.index + 1);
      generated.resize(stream.index + 1, false);
    }
    if (generated[stream.index])
      continue;
    generated[stream.index] = true;
    unsigned bytesPerElement = elementBytes(stream.type);
    uint64_t elements = 1;
    for (int64_t dim : stream.shape) {
      if (dim < 0 || (dim != 0 && elements > kMaxInputBytes / uint64_t(dim)))
        return "input stream '" + stream.name + "' has an unusable shape";
      elements *= uint64_t(dim);
    }
    if (elements > kMaxInputBytes / bytesPerElement)
      return "input stream '" + stream.name + "' is too large";

    HostTensor &input = inputs[stream.index];
    input.type = stream.type;
    input.shape = stream.shape;
    if (!dir.empty()) {
      if (auto error =
              readInput(dir, stream, elements * bytesPerElement, input))
        return error;
      continue;
    }
    input.bytes.resize(elements * bytesPerElement);
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (stream.index + 1));
    for (uint64_t e = 0; e < elements; ++e) {
      // 24 random bits give values exactly representable in f32.
      float value = float(splitmix64(state) >> 40) * 0x1p-23f - 1.0f;
      storeElement(stream.type, value, &input.bytes[e * bytesPerElement]);
    }
  }
  return std::nullopt;
}

std::vector<float> decode(const HostTensor &tensor) {
  unsigned bytesPerElement = elementBytes(tensor.type);
  std::vector<float> values(tensor.bytes.size() / bytesPerElement);
  for (size_t e = 0; e < values.size(); ++e)
    values[e] = loadElement(tensor.type, &tensor.bytes[e * bytesPerElement]);
  return values;
}

const HostStream *resultStream(const Package &package, uint32_t index) {
  for (const HostStream &stream : package.streams)
    if (!stream.toDevice && stream.index == index)
      return &stream;
  return nullptr;
}

/// Writes every result the device streamed out to `dir` as npyFileName's
/// resultN files, by result index; counts them in `written`.
std::optional<std::string> writeOutputs(const std::string &dir,
                                        const Package &package,
                                        const SimulationResult &result,
                                        size_t &written) {
  written = 0;
  for (uint32_t index = 0; index < result.outputs.size(); ++index) {
    const HostStream *stream = resultStream(package, index);
    if (!stream)
      continue;
    const HostTensor &output = result.outputs[index];
    if (output.type != stream->type || output.shape != stream->shape)
      return "--outputs: result " + std::to_string(index) + " ('" +
             stream->name + "') was never streamed out";
    NpyArray array;
    array.descr = std::string(npyDescr(output.type));
    array.itemBytes = elementBytes(output.type);
    array.shape = output.shape;
    array.data = output.bytes;
    std::string path = joinPath(
        dir, npyFileName("result" + std::to_string(index), output.type));
    if (auto error = writeNpy(path, array))
      return error;
    ++written;
  }
  return std::nullopt;
}

/// One evaluated reference op: its value already rounded to the op's type,
/// its shape, and the tolerances that apply when it is a result.
struct Reference {
  uint32_t result = ReferenceOp::kNoResult;
  std::vector<int64_t> shape;
  std::vector<float> values;
  double atol = 0;
  double rtol = 0;
  /// Per element, sqrt(sum of squared partial sums at the device's f16
  /// rounding points); empty when the device accumulated in f32.
  std::vector<float> roundingScale;
};

/// f16 unit roundoff, and how many of its rounding-noise standard
/// deviations (u |s| / sqrt(3) per rounding) the check allows: 8 u is about
/// 14 sigma, and Hoeffding's bound for R bounded roundings keeps a false
/// FAIL below 1e-13 per element.
constexpr double kHalfRoundoff = 0x1p-11;
constexpr double kRoundingAllowance = 8.0;

/// sqrt(sum_r s_r^2) per element of an [m x k] x [k x n] product (both
/// row-major, untransposed), written to `scale` (m x n); s_r the partial
/// sum the device rounds after its r-th AMP pass: k is summed in `blocks`
/// balanced blocks, each from zero, a pass every `grain` terms of its block.
void roundingScale(const float *lhs, const float *rhs, int64_t m, int64_t k,
                   int64_t n, int64_t grain, int64_t blocks, float *scale) {
  std::vector<float> partial(size_t(m) * size_t(n), 0.0f);
  std::vector<double> squares(partial.size(), 0.0);
  for (int64_t p = 0; p < blocks; ++p) {
    int64_t begin = p * (k / blocks) + std::min(p, k % blocks);
    int64_t end = begin + k / blocks + (p < k % blocks ? 1 : 0);
    std::fill(partial.begin(), partial.end(), 0.0f);
    for (int64_t k0 = begin; k0 < end; k0 += grain) {
      int64_t depth = std::min(grain, end - k0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n),
                  int(depth), 1.0f, lhs + k0, int(k),
                  rhs + size_t(k0) * size_t(n), int(n), 1.0f, partial.data(),
                  int(n));
      for (size_t e = 0; e < partial.size(); ++e)
        squares[e] += double(partial[e]) * partial[e];
    }
  }
  for (size_t e = 0; e < partial.size(); ++e)
    scale[e] = float(std::sqrt(squares[e]));
}

/// The [cols x rows] transpose of a row-major [rows x cols] matrix.
void transposeInto(const float *matrix, int64_t rows, int64_t cols,
                   std::vector<float> &transposed) {
  transposed.resize(size_t(rows) * size_t(cols));
  for (int64_t x = 0; x < rows; ++x)
    for (int64_t y = 0; y < cols; ++y)
      transposed[size_t(y) * size_t(rows) + size_t(x)] =
          matrix[size_t(x) * size_t(cols) + size_t(y)];
}

/// "2x8x16", for messages.
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  return text;
}

void tolerances(ElementType type, int64_t k, double &atol, double &rtol) {
  double scale = std::sqrt(double(std::max<int64_t>(k, 1)));
  switch (type) {
  case ElementType::F32:
    atol = 1e-4 * scale, rtol = 1e-3;
    return;
  case ElementType::F16:
    atol = 1e-3 * scale, rtol = 2e-3;
    return;
  case ElementType::F8E4M3FN:
    atol = 1e-2 * scale, rtol = 0.13;
    return;
  case ElementType::F8E5M2:
    atol = 2e-2 * scale, rtol = 0.26;
    return;
  }
  atol = 1e-4 * scale, rtol = 1e-3;
}

/// The tolerance of an elementwise value by its type: a few units in the
/// last place relative, and as many at 1.0 absolute, since device and host
/// may round an intermediate on opposite sides of a midpoint (the device's
/// transcendentals are polynomials, the host's the C library's) and a
/// cancellation after it (1 + tanh near -1 in GELU) keeps that difference.
void elementwiseTolerances(ElementType type, double &atol, double &rtol) {
  switch (type) {
  case ElementType::F32: atol = 1e-5; rtol = 1e-5; break;
  case ElementType::F16: atol = 4e-3; rtol = 4e-3; break;
  case ElementType::F8E4M3FN: atol = 0x1p-6; rtol = 0.13; break;
  case ElementType::F8E5M2: atol = 0x1p-14; rtol = 0.26; break;
  }
}

/// An "elementwise" reference op: the kernel's body on every element of
/// its first full input's shape, each op exact and rounded to its type.
std::optional<std::string>
evaluateElementwise(const Package &package, const ReferenceOp &op,
                    const std::string &what,
                    const std::vector<std::vector<float>> &operand,
                    const std::vector<std::vector<int64_t>> &shape,
                    Reference &reference) {
  if (op.kernel >= package.kernels.size())
    return what + ": kernel " + std::to_string(op.kernel) + " does not exist";
  const ElementwiseBody &body = package.kernels[op.kernel]->body();
  if (body.inputs.size() != operand.size())
    return what + ": the kernel takes " + std::to_string(body.inputs.size()) +
           " inputs";
  std::vector<int64_t> expected;
  for (size_t a = 0; a < operand.size() && expected.empty(); ++a)
    if (body.inputs[a].broadcast == Broadcast::Full)
      expected = shape[a];
  if (expected.empty())
    return what + ": no full input gives the value a shape";
  uint64_t elements = 1;
  for (int64_t extent : expected)
    elements *= uint64_t(extent);
  const uint64_t cols = uint64_t(expected.back());
  const uint64_t rows = elements / cols;
  for (size_t a = 0; a < operand.size(); ++a) {
    uint64_t need = 1;
    switch (body.inputs[a].broadcast) {
    case Broadcast::Full: need = elements; break;
    case Broadcast::Row: need = cols; break;
    case Broadcast::Scalar: need = 1; break;
    case Broadcast::Column: need = rows; break;
    }
    if (operand[a].size() != need)
      return what + ": input " + std::to_string(a) + " holds " +
             std::to_string(operand[a].size()) + " elements, expected " +
             std::to_string(need);
  }
  // A reduction's value has one element per row of the iteration shape.
  const bool reduces = body.reduction != RowReduction::None;
  if (reduces)
    expected.back() = 1;
  if (op.result != ReferenceOp::kNoResult) {
    const HostStream *out = resultStream(package, op.result);
    if (!out || out->shape != expected)
      return what + ": result " + std::to_string(op.result) +
             " is not a streamed " + shapeText(expected) + " tensor";
  }
  std::vector<float> element(operand.size());
  auto valueAt = [&](uint64_t e) {
    for (size_t a = 0; a < operand.size(); ++a) {
      switch (body.inputs[a].broadcast) {
      case Broadcast::Full: element[a] = operand[a][e]; break;
      case Broadcast::Row: element[a] = operand[a][e % cols]; break;
      case Broadcast::Scalar: element[a] = operand[a][0]; break;
      case Broadcast::Column: element[a] = operand[a][e / cols]; break;
      }
    }
    return evaluateBody(body, element.data());
  };
  std::vector<float> values(reduces ? rows : elements);
  // A sum the device accumulates in f32, in its own order, may differ from
  // the exact one by up to (cols - 1) units of f32 rounding of the sum of
  // magnitudes (recursive summation's bound).
  double largestMagnitudeSum = 0;
  if (reduces) {
    for (uint64_t r = 0; r < rows; ++r) {
      double magnitudeSum = 0;
      values[r] = reduceRow(body, int64_t(cols), [&](int64_t c) {
        double value = valueAt(r * cols + uint64_t(c));
        magnitudeSum += std::fabs(value);
        return value;
      });
      if (std::isfinite(magnitudeSum))
        largestMagnitudeSum = std::max(largestMagnitudeSum, magnitudeSum);
    }
  } else {
    for (uint64_t e = 0; e < elements; ++e)
      values[e] = valueAt(e);
  }
  reference.result = op.result;
  reference.shape = std::move(expected);
  reference.values = std::move(values);
  elementwiseTolerances(op.type, reference.atol, reference.rtol);
  if (body.reduction == RowReduction::Add)
    reference.atol = std::max(reference.atol, double(cols) * 0x1p-24 * largestMagnitudeSum);
  return std::nullopt;
}

/// A "permute" reference op: the operand's elements moved, exactly (the
/// validator checked the view, the permutation and the element counts).
std::optional<std::string> evaluatePermute(const ReferenceOp &op, const std::string &what,
                                           const std::vector<float> &operand,
                                           Reference &reference) {
  const size_t rank = op.view.size();
  std::vector<int64_t> stride(rank, 1), permuted(rank);
  for (size_t d = rank - 1; d > 0; --d)
    stride[d - 1] = stride[d] * op.view[d];
  for (size_t k = 0; k < rank; ++k)
    permuted[k] = op.view[op.permutation[k]];
  std::vector<float> values(operand.size());
  for (size_t flat = 0; flat < values.size(); ++flat) {
    int64_t rest = int64_t(flat), index = 0;
    for (size_t k = rank; k-- > 0;) {
      index += (rest % permuted[k]) * stride[op.permutation[k]];
      rest /= permuted[k];
    }
    if (index < 0 || size_t(index) >= operand.size())
      return what + ": element " + std::to_string(flat) + " reads outside its operand";
    values[flat] = operand[size_t(index)];
  }
  reference.result = op.result;
  reference.shape = op.shape;
  reference.values = std::move(values);
  reference.atol = reference.rtol = 0;
  return std::nullopt;
}

/// Evaluates reference op `index`. Its operands are inputs as given,
/// or earlier ops' values: the device's own value when that op is a
/// checkpoint (streamed out), so that each op is checked on exactly the
/// operands the device used; the reference value otherwise.
std::optional<std::string>
evaluateReference(const Package &package, const TargetModel &target,
                  size_t index, const std::vector<HostTensor> &inputs,
                  const std::vector<bool> &generated,
                  const std::vector<Reference> &done,
                  const std::vector<HostTensor> &outputs, Reference &reference) {
  const ReferenceOp &op = package.reference[index];
  std::string what = "reference op '" + op.op + "'";
  if (op.op != "matmul" && op.op != "elementwise" && op.op != "permute")
    return what + " is not supported (supported: matmul, elementwise, permute)";
  const size_t arity = op.op == "matmul" ? 2 : op.op == "permute" ? 1 : op.arguments.size();
  if (op.arguments.size() != arity)
    return what + " expects " + std::to_string(arity) + " arguments, has " +
           std::to_string(op.arguments.size());
  std::vector<std::vector<float>> operand(arity);
  std::vector<std::vector<int64_t>> shape(arity);
  ElementType inType = ElementType::F32; ///< Of the device's operands.
  for (unsigned a = 0; a < arity; ++a) {
    uint32_t argument = op.arguments[a];
    if (argument >= ReferenceOp::kReferenceValue) {
      uint32_t producer = argument - ReferenceOp::kReferenceValue;
      if (producer >= done.size())
        return what + ": operand " + std::to_string(a) +
               " names a later reference op";
      // A checkpoint's reference value is released once compared: its
      // consumers read what the device streamed out (validated to exist).
      uint32_t checkpoint = done[producer].result;
      if (checkpoint == ReferenceOp::kNoResult)
        operand[a] = done[producer].values;
      else if (checkpoint < outputs.size() && !outputs[checkpoint].bytes.empty())
        operand[a] = decode(outputs[checkpoint]);
      else
        return what + ": operand " + std::to_string(a) + " is result " +
               std::to_string(checkpoint) + ", which was never streamed out";
      shape[a] = done[producer].shape;
      inType = package.reference[producer].type;
      continue;
    }
    if (argument >= generated.size() || !generated[argument])
      return what + ": argument " + std::to_string(argument) +
             " is not streamed to the device";
    operand[a] = decode(inputs[argument]);
    shape[a] = inputs[argument].shape;
    inType = inputs[argument].type;
  }
  if (op.op == "elementwise")
    return evaluateElementwise(package, op, what, operand, shape, reference);
  if (op.op == "permute")
    return evaluatePermute(op, what, operand[0], reference);
  // The operand ranks say which product: a shared rhs [K, N], or one
  // matrix per batch of lhs (matmulShape, as the validator read it).
  MatmulShape product;
  if (auto error = matmulShape(op, shape[0], shape[1], product))
    return what + ": shapes " + shapeText(shape[0]) + " x " +
           shapeText(shape[1]) + " " + *error;
  const int64_t batches = product.batches, m = product.m, k = product.k,
                n = product.n;
  const uint64_t lhsMatrix = uint64_t(m) * uint64_t(k);
  const uint64_t rhsMatrix = uint64_t(k) * uint64_t(n);
  if (operand[0].size() != uint64_t(batches) * lhsMatrix ||
      operand[1].size() !=
          (product.batchedRhs ? uint64_t(batches) : 1) * rhsMatrix)
    return what + ": operands hold " + std::to_string(operand[0].size()) +
           " and " + std::to_string(operand[1].size()) +
           " elements, not the elements of shapes " + shapeText(shape[0]) +
           " and " + shapeText(shape[1]);
  std::vector<int64_t> expected = product.result;
  if (op.result != ReferenceOp::kNoResult) {
    const HostStream *out = resultStream(package, op.result);
    if (!out)
      return what + ": result " + std::to_string(op.result) +
             " is not streamed to the host";
    if (out->shape != expected)
      return what + ": result stream '" + out->name + "' is " +
             shapeText(out->shape) + ", but " + shapeText(shape[0]) + " x " +
             shapeText(shape[1]) + " is " + shapeText(expected);
  }
  // lhs [..., M, K] x a shared rhs [K, N] folds the leading dimensions into
  // M: one product, as before batches. Otherwise one product per batch
  // (each lhs matrix transposed on its own).
  const bool fold = !product.batchedRhs && !op.transposeLhs;
  const int64_t products = fold ? 1 : batches;
  const int64_t rows = fold ? batches * m : m;
  // BLAS takes int dimensions.
  if (rows > INT32_MAX || k > INT32_MAX || n > INT32_MAX)
    return what + ": dimensions too large for BLAS";

  const CBLAS_TRANSPOSE transLhs = op.transposeLhs ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE transRhs = op.transposeRhs ? CblasTrans : CblasNoTrans;
  const uint64_t outMatrix = uint64_t(rows) * uint64_t(n);
  auto lhsOf = [&](int64_t p) { return operand[0].data() + p * lhsMatrix; };
  auto rhsOf = [&](int64_t p) {
    return operand[1].data() + (product.batchedRhs ? p * rhsMatrix : 0);
  };
  std::vector<float> c(size_t(products) * outMatrix, 0.0f);
  if (rows > 0 && n > 0 && k > 0)
    for (int64_t p = 0; p < products; ++p)
      cblas_sgemm(CblasRowMajor, transLhs, transRhs, int(rows), int(n), int(k),
                  1.0f, lhsOf(p), op.transposeLhs ? int(m) : int(k), rhsOf(p),
                  op.transposeRhs ? int(k) : int(n), 0.0f,
                  c.data() + p * outMatrix, int(n));
  // Round to the op's type, as the device stores the value.
  uint8_t element[4];
  for (float &value : c) {
    storeElement(op.type, value, element);
    value = loadElement(op.type, element);
  }
  reference.result = op.result;
  reference.shape = std::move(expected);
  reference.values = std::move(c);
  tolerances(op.type, k, reference.atol, reference.rtol);
  if (op.partials == ElementType::F16 && rows > 0 && n > 0 && k > 0) {
    // The rounding points follow the untransposed product.
    reference.roundingScale.resize(reference.values.size());
    std::vector<float> lhsT, rhsT;
    for (int64_t p = 0; p < products; ++p) {
      const float *lhs = lhsOf(p), *rhs = rhsOf(p);
      if (op.transposeLhs) {
        transposeInto(lhs, k, m, lhsT);
        lhs = lhsT.data();
      }
      if (op.transposeRhs) {
        if (p == 0 || product.batchedRhs)
          transposeInto(rhs, n, k, rhsT);
        rhs = rhsT.data();
      }
      roundingScale(lhs, rhs, rows, k, n,
                    std::max<int64_t>(target.ampGrainK(inType), 1),
                    std::clamp<int64_t>(op.innerBlocks, 1, k),
                    reference.roundingScale.data() + p * outMatrix);
    }
  }
  return std::nullopt;
}

/// What comparing results found. The worst element is the one furthest past
/// its allowed error, or closest to it when all pass (largest error /
/// allowed, the first on ties), so that a FAIL names a failing element.
struct Comparison {
  double maximumAbsoluteError = 0;
  uint64_t mismatches = 0;
  uint64_t elementsCompared = 0;
  double worstRatio = -1; ///< error / allowed; < 0 while nothing compared.
  size_t worstCheckpoint = 0;
  std::string worstElement; ///< "[row,col]" (one index per dimension).
  double worstDevice = 0, worstReference = 0, worstAllowed = 0;

  /// Folds a checkpoint's comparison into the total.
  void add(const Comparison &checkpoint, size_t index) {
    maximumAbsoluteError =
        std::max(maximumAbsoluteError, checkpoint.maximumAbsoluteError);
    mismatches += checkpoint.mismatches;
    elementsCompared += checkpoint.elementsCompared;
    if (checkpoint.worstRatio > worstRatio) {
      worstRatio = checkpoint.worstRatio;
      worstCheckpoint = index;
      worstElement = checkpoint.worstElement;
      worstDevice = checkpoint.worstDevice;
      worstReference = checkpoint.worstReference;
      worstAllowed = checkpoint.worstAllowed;
    }
  }

  /// The report keys after the existing ones: elementsCompared, then the
  /// worst element (for a total, with its checkpoint) and its values;
  /// worstElement=none when nothing was compared.
  std::string keys(bool total) const {
    std::string text = "elementsCompared=" + std::to_string(elementsCompared);
    if (worstRatio < 0)
      return text + " worstElement=none";
    if (total)
      text += " worstCheckpoint=" + std::to_string(worstCheckpoint);
    char values[160];
    std::snprintf(values, sizeof(values),
                  " worstDevice=%.9g worstReference=%.9g worstAllowed=%.6g",
                  worstDevice, worstReference, worstAllowed);
    return text + " worstElement=" + worstElement + values;
  }
};

/// "[i,j]" for flat index `flat` of a row-major tensor of `shape`.
std::string elementIndex(const std::vector<int64_t> &shape, uint64_t flat) {
  std::vector<uint64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    uint64_t extent = std::max<int64_t>(shape[d], 1);
    index[d] = flat % extent;
    flat /= extent;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

std::optional<std::string> compare(const Package &package,
                                   const Reference &reference,
                                   const SimulationResult &result,
                                   Comparison &comparison, uint64_t samples = 0) {
  if (reference.result == ReferenceOp::kNoResult)
    return std::nullopt; // An intermediate value: its consumers are checked.
  if (reference.result >= result.outputs.size())
    return "result " + std::to_string(reference.result) +
           " was never streamed out";
  std::vector<float> device = decode(result.outputs[reference.result]);
  if (device.size() != reference.values.size())
    return "result " + std::to_string(reference.result) + " holds " +
           std::to_string(device.size()) + " elements, the reference " +
           std::to_string(reference.values.size());
  size_t worst = 0;
  // All elements, or `samples` evenly spaced ones (the first and the last
  // among them).
  const size_t count = samples && samples < device.size() ? samples : device.size();
  for (size_t s = 0; s < count; ++s) {
    const size_t e =
        count == device.size() || count == 1
            ? s
            : static_cast<size_t>((uint64_t(s) * (device.size() - 1)) / (count - 1));
    double d = device[e], r = reference.values[e];
    double error, allowed = reference.atol + reference.rtol * std::fabs(r);
    if (!reference.roundingScale.empty())
      allowed += kRoundingAllowance * kHalfRoundoff * reference.roundingScale[e];
    bool pass;
    if (std::isfinite(d) && std::isfinite(r)) {
      error = std::fabs(d - r);
      pass = error <= allowed;
    } else {
      // Non-finite values only match themselves.
      pass = (std::isnan(d) && std::isnan(r)) || d == r;
      error = pass ? 0.0 : HUGE_VAL;
    }
    comparison.maximumAbsoluteError =
        std::max(comparison.maximumAbsoluteError, error);
    comparison.mismatches += pass ? 0 : 1;
    // Past its allowance when > 1, infinitely for a non-finite mismatch
    // (whose allowance may itself be infinite); allowed > 0, since atol is
    // at least 1e-5.
    double ratio = error / allowed;
    if (!pass && !(ratio > 1))
      ratio = HUGE_VAL;
    if (ratio > comparison.worstRatio) {
      comparison.worstRatio = ratio;
      comparison.worstDevice = d;
      comparison.worstReference = r;
      comparison.worstAllowed = allowed;
      worst = e;
    }
  }
  comparison.elementsCompared = count;
  if (comparison.worstRatio >= 0)
    comparison.worstElement = elementIndex(reference.shape, worst);
  return std::nullopt;
}

/// Reads, validates and simulates the package at `path` on inputs from
/// `seed`: the other side of --compare.
std::optional<std::string> simulateOther(const std::string &path, uint64_t seed,
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
  if (auto error = validatePackage(package, *target))
    return "'" + path + "': invalid package: " + *error;
  LoadedKernels kernels;
  if (auto error = kernels.load(package))
    return "'" + path + "': invalid package: " + *error;
  std::vector<HostTensor> inputs;
  std::vector<bool> generated;
  if (auto error = prepareInputs(package, seed, "", inputs, generated))
    return "'" + path + "': " + *error;
  if (auto error = simulate(package, *target, inputs, result))
    return "'" + path + "': simulation failed: " + *error;
  return std::nullopt;
}

/// "file:line:col" as a report value ("-" when unknown).
std::string locationValue(const std::string &location) {
  return location.empty() ? "-" : reportValue(location);
}

int run(const Options &options) {
  auto start = std::chrono::steady_clock::now();
  log().info("reading package path={}", options.path);
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
  if (auto error = validatePackage(package, *target))
    return fail("invalid package: " + *error);
  log().info("package validated target={} elapsed_ms={:.0f}", target->name,
             millisecondsSince(validateStart));
  if (options.corruptKernelByte) {
    if (*options.corruptKernelByte >= package.kernelObject.size())
      return fail("--corrupt-kernel: byte " +
                  std::to_string(*options.corruptKernelByte) +
                  " is outside the kernel object of " +
                  std::to_string(package.kernelObject.size()) + " bytes");
    package.kernelObject[*options.corruptKernelByte] ^= 0xFF;
    log().info("corrupted kernel object byte={}", *options.corruptKernelByte);
  }
  // Generated kernels run their own code: load it before anything runs.
  LoadedKernels loadedKernels;
  if (auto error = loadedKernels.load(package))
    return fail("invalid package: " + *error);
  if (!package.kernels.empty())
    log().info("kernel object loaded kernels={} bytes={}", package.kernels.size(),
               package.kernelObject.size());
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
  if (auto error = simulate(package, *target, inputs, result))
    return fail("simulation failed: " + *error);
  log().info("simulated package cycles={} steps={} elapsed_ms={:.0f}",
             result.cycles, result.steps.size(),
             millisecondsSince(simulateStart));
  if (!options.trace.empty()) {
    if (auto error = writeTrace(options.trace, package, *target, result))
      return fail(*error);
    log().info("wrote trace path={} steps={}", options.trace,
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
                    reportValue(key.substr(dot + 1)).c_str(), value.c_str());
      }
  Package otherPackage;
  SimulationResult otherResult;
  std::vector<OpComparison> opComparison;
  if (!options.compare.empty()) {
    if (auto error = simulateOther(options.compare, options.seed, otherPackage,
                                   otherResult))
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
  std::printf(
      "workload=%s cycles=%llu computeCycles=%llu exchangeCycles=%llu "
      "syncCycles=%llu loopCycles=%llu deviceMicroseconds=%s "
      "effectiveGemmTflops=%s peakTflops=%s efficiencyPercent=%s "
      "activeTiles=%u executionTiles=%u\n",
      reportValue(package.workload).c_str(), (unsigned long long)result.cycles,
      (unsigned long long)result.computeCycles,
      (unsigned long long)result.exchangeCycles,
      (unsigned long long)result.syncCycles,
      (unsigned long long)result.loopCycles, fixed(seconds * 1e6, 3).c_str(),
      fixed(tflops, 3).c_str(), fixed(peakTflops, 3).c_str(),
      fixed(efficiency, 2).c_str(), result.activeTiles, target->tiles);
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
        line += (line.empty() ? "" : " ") + key + "=" + reportValue(value);
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
    if (auto error = compare(package, reference, result, checkpoint, samples))
      return fail(*error);
    // An elementwise op accumulates nothing: it says which kernel ran; a
    // permute moves elements exactly.
    const ReferenceOp &op = package.reference[index];
    const std::string detail =
        op.op == "elementwise" ? "kernel=" + package.kernels[op.kernel]->name()
        : op.op == "permute"   ? std::string("exact")
                               : "partials=" + std::string(elementTypeName(op.partials));
    if (reference.result != ReferenceOp::kNoResult)
      std::printf("checkpoint=%zu operation=%s result=%u %s "
                  "maximumAbsoluteError=%.6g mismatches=%llu %s\n",
                  index, op.op.c_str(), reference.result, detail.c_str(),
                  checkpoint.maximumAbsoluteError,
                  (unsigned long long)checkpoint.mismatches,
                  checkpoint.keys(false).c_str());
    comparison.add(checkpoint, index);
    // A checkpoint's consumers read the device's value: its reference is
    // done with, so only intermediate values stay in host memory.
    if (reference.result != ReferenceOp::kNoResult) {
      reference.values = std::vector<float>();
      reference.roundingScale = std::vector<float>();
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
  if (auto error = parseOptions(argc, argv, options, help))
    return fail(*error);
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
