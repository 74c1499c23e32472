//===- Flops.cpp - Useful FLOPs counted from the program ------------------===//
//
// Efficiency and TFLOPS are reported from what the program computes, never
// from a figure the package merely states: validatePackage refuses a
// package whose `flops` field differs from this count. A loop's body counts
// once per iteration: a serial split of a matmul into `count` chunks does
// the whole matmul's work.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Kernels.h"
#include "IPU/Package/Package.h"
#include "IPU/Support/Numbers.h"

#include <algorithm>
#include <string_view>

using namespace ipu;

namespace {

/// FLOPs of one run of `computeSet`. Generated kernels (elementwise work)
/// perform none of the useful FLOPs, which are the GEMMs'.
uint64_t computeSetFlops(const ComputeSet &computeSet) {
  const KernelSpec *kernel = lookupKernel(computeSet.kernel);
  if (!kernel)
    return 0;
  size_t paramCount = kernel->paramNames.size();
  size_t vertices = std::min(computeSet.tiles.size(),
                             paramCount ? computeSet.params.size() / paramCount
                                        : computeSet.tiles.size());
  uint64_t flops = 0;
  for (size_t v = 0; v < vertices && paramCount; ++v)
    flops = saturatingAdd(
        flops, kernelFlops(*kernel, computeSet.params.data() + v * paramCount));
  return flops;
}

/// MACs over the AMP rate of their types, of every gemm vertex of one run
/// of `computeSet`, on one tile: 0 for other kernels.
double computeSetPeakCycles(const ComputeSet &computeSet, const TargetModel &target) {
  const KernelSpec *kernel = lookupKernel(computeSet.kernel);
  if (!kernel || (kernel->name != "gemm" && kernel->name != "gemm_t") ||
      kernel->paramNames.size() < 5 ||
      kernel->paramNames[3] != std::string_view("inType") ||
      kernel->paramNames[4] != std::string_view("accType"))
    return 0;
  const size_t paramCount = kernel->paramNames.size();
  const size_t vertices =
      std::min(computeSet.tiles.size(), computeSet.params.size() / paramCount);
  double cycles = 0;
  for (size_t v = 0; v < vertices; ++v) {
    const int64_t *params = computeSet.params.data() + v * paramCount;
    const uint64_t flops = kernelFlops(*kernel, params);
    const uint32_t rate = target.ampMacsPerCycle(static_cast<ElementType>(params[3]),
                                                 static_cast<ElementType>(params[4]));
    if (flops && rate)
      cycles += double(flops) / 2 / rate;
  }
  return cycles;
}

/// Calls `run(set, repeat)` for every compute step of the program: a loop
/// body's steps run once per iteration of every loop around them
/// (stepRuns).
template <typename Run> void forEachComputeRun(const Package &package, Run run) {
  const std::vector<uint64_t> runs = stepRuns(package);
  for (size_t s = 0; s < package.program.size(); ++s) {
    const Step &step = package.program[s];
    if (step.kind == StepKind::Compute && step.index < package.computeSets.size())
      run(step.index, runs[s]);
  }
}

} // namespace

double ipu::programPeakCycles(const Package &package, const TargetModel &target) {
  std::vector<double> perSet(package.computeSets.size());
  for (size_t i = 0; i < perSet.size(); ++i)
    perSet[i] = computeSetPeakCycles(package.computeSets[i], target);
  double cycles = 0;
  forEachComputeRun(package, [&](uint32_t set, uint64_t repeat) {
    cycles += perSet[set] * double(repeat);
  });
  return target.tiles ? cycles / target.tiles : 0;
}

uint64_t ipu::programFlops(const Package &package) {
  // Each compute set is counted once, then charged per step that runs it.
  std::vector<uint64_t> perSet(package.computeSets.size());
  for (size_t i = 0; i < perSet.size(); ++i)
    perSet[i] = computeSetFlops(package.computeSets[i]);
  uint64_t flops = 0;
  forEachComputeRun(package, [&](uint32_t set, uint64_t repeat) {
    flops = saturatingAdd(flops, saturatingMultiply(perSet[set], repeat));
  });
  return flops;
}
