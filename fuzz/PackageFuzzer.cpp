//===- PackageFuzzer.cpp - libFuzzer target for the package loader -------===//
//
// Everything ipu-run does with a package before it trusts it: parse the
// bytes, find the target, validate, compile its kernel bodies (the bodies
// are mutated like every other field: the kernel compiler must take any
// body verifyBody accepts), and, for a package that validates, simulate it
// on zero inputs. A package that passes validation must compile and
// simulate without crashing, hanging or exhausting memory (libFuzzer's
// -rss_limit_mb and -timeout catch the last two): that is the loader's
// contract. Compiled objects are cached by their bodies in
// $IPU_KERNEL_CACHE (scripts/fuzz.sh points it into the build tree), so
// that only new bodies are compiled.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <cstddef>
#include <cstdint>

using namespace ipu;

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
  (void)simulate(package, *target, inputs, result);
  return 0;
}
