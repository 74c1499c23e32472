//===- PackageFuzzer.cpp - libFuzzer target for the package loader -------===//
//
// Everything ipu-run does with a package before it trusts it: parse the
// bytes, find the target, validate, and, for a package that validates,
// simulate it on zero inputs. A package that passes validation must simulate
// without crashing, hanging or exhausting memory (libFuzzer's -rss_limit_mb
// and -timeout catch the last two): that is the loader's contract.
//
//===----------------------------------------------------------------------===//

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
  if (!target || validatePackage(package, *target))
    return 0;
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
