//===- PackageFuzzer.cpp - libFuzzer target for the package loader -------===//
//
// Everything ipu-run does with a package before it trusts it: parse the
// bytes, find the target, validate, compile its kernel bodies (the bodies
// are mutated like every other field: the kernel compiler must take any
// body verifyBody accepts), and, for a package that validates, simulate it
// on zero inputs and check it against its host reference (ipu-run
// --check), when that is small enough to be quick. A package that passes
// validation must compile, simulate and be checked without crashing,
// hanging or exhausting memory (libFuzzer's -rss_limit_mb and -timeout
// catch the last two): that is the loader's contract. Compiled objects are cached by their bodies in
// $IPU_KERNEL_CACHE (scripts/fuzz.sh points it into the build tree), so
// that only new bodies are compiled.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Package/Package.h"
#include "IPU/Reference/Check.h"
#include "IPU/Runtime/Simulator.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

using namespace ipu;

namespace {

uint64_t elementsOf(const std::vector<int64_t> &shape) {
  uint64_t elements = 1;
  for (int64_t dim : shape)
    elements = dim < 0 || (dim && elements > (uint64_t(1) << 40) / uint64_t(dim))
                   ? uint64_t(1) << 40
                   : elements * uint64_t(dim);
  return elements;
}

/// A bound on the host reference's work for `package` (elements computed,
/// a matmul's times K, an elementwise op's times its body), from the
/// shapes each op takes and gives; std::nullopt when a shape is unknown.
/// Keeps each input quick: the evaluator's safety, not its speed, is what
/// is fuzzed.
std::optional<uint64_t> referenceWork(const Package &package) {
  std::vector<std::vector<int64_t>> values;
  uint64_t work = 0;
  for (const ReferenceOp &op : package.reference) {
    std::vector<std::vector<int64_t>> shapes;
    for (uint32_t argument : op.arguments) {
      if (argument >= ReferenceOp::kReferenceValue) {
        if (argument - ReferenceOp::kReferenceValue >= values.size())
          return std::nullopt;
        shapes.push_back(values[argument - ReferenceOp::kReferenceValue]);
        continue;
      }
      auto stream = std::find_if(package.streams.begin(), package.streams.end(),
                                 [&](const HostStream &s) {
                                   return s.toDevice && s.index == argument;
                                 });
      if (stream == package.streams.end())
        return std::nullopt;
      shapes.push_back(stream->shape);
    }
    std::vector<int64_t> shape;
    uint64_t perElement = 1;
    switch (op.kind) {
    case ReferenceKind::Matmul: {
      MatmulShape product;
      if (shapes.size() != 2 || matmulShape(op, shapes[0], shapes[1], product))
        return std::nullopt;
      shape = product.result;
      perElement = uint64_t(std::max<int64_t>(product.k, 1));
      break;
    }
    case ReferenceKind::Elementwise:
      for (const std::vector<int64_t> &operand : shapes)
        if (elementsOf(operand) >= elementsOf(shape))
          shape = operand;
      if (op.kernel < package.kernels.size())
        perElement += package.kernels[op.kernel]->body().ops.size();
      break;
    case ReferenceKind::Permute:
      shape = op.shape;
      break;
    case ReferenceKind::Streamed: {
      auto stream = std::find_if(package.streams.begin(), package.streams.end(),
                                 [&](const HostStream &s) {
                                   return !s.toDevice && s.index == op.result;
                                 });
      if (stream == package.streams.end())
        return std::nullopt;
      shape = stream->shape;
      break;
    }
    }
    for (const std::vector<int64_t> &operand : shapes)
      work += elementsOf(operand);
    work += std::min<uint64_t>(elementsOf(shape), uint64_t(1) << 40) * perElement;
    if (work > (uint64_t(1) << 40))
      return std::nullopt;
    values.push_back(std::move(shape));
  }
  return work;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Package package;
  if (deserializePackage(data, size, package))
    return 0;
  std::optional<TargetModel> target = TargetModel::byName(package.target);
  // A low work limit keeps each input quick: the limit itself is what the
  // validator must get right, whatever its value.
  // 2^25 host work units: about 34 ms of simulation.
  constexpr uint64_t kFuzzMaxWork = uint64_t(1) << 25;
  if (!target || validatePackage(package, *target, kFuzzMaxWork))
    return 0;
  // Small kernel tables only: compiling is the slow part.
  size_t bodyOps = 0;
  for (const auto &kernel : package.kernels)
    bodyOps += kernel->body().ops.size();
  if (package.kernels.size() > 16 || bodyOps > 256)
    return 0;
  CompiledKernels kernels;
  KernelCompileStats stats;
  if (std::optional<std::string> error =
          kernels.load(package, defaultKernelCacheDirectory(), stats))
    __builtin_trap(); // A body the validator accepts must compile.
  // Inputs of the right type and shape, zero-filled: the validator bounded
  // every shape, so this allocation is bounded too.
  std::vector<HostTensor> inputs;
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice)
      continue;
    if (stream.index >= inputs.size())
      inputs.resize(size_t(stream.index) + 1);
    HostTensor &input = inputs[stream.index];
    input.type = stream.type;
    input.shape = stream.shape;
    input.bytes.assign(size_t(input.elements()) * elementBytes(stream.type), 0);
  }
  SimulationResult result;
  if (simulate(package, *target, inputs, result))
    return 0;
  // --check's path on what the device computed: verdicts on fuzzed data
  // may be anything, but the evaluator must neither crash nor read out of
  // bounds on any package the validator accepts.
  constexpr uint64_t kFuzzMaxReferenceWork = uint64_t(1) << 24;
  std::optional<uint64_t> work = referenceWork(package);
  if (!work || *work > kFuzzMaxReferenceWork)
    return 0;
  std::vector<bool> generated(inputs.size(), false);
  for (const HostStream &stream : package.streams)
    if (stream.toDevice)
      generated[stream.index] = true;
  CheckReport report;
  (void)checkPackage(package, *target, inputs, generated, result.outputs,
                     /*checkpointSamples=*/0, report);
  return 0;
}
