//===- Kernels.cpp - The kernel registry and name-based dispatch ----------===//
//
// The registry is the single list the verifier, the package translator and
// the simulator consult; each kernel's code lives in its own file.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Kernels.h"

#include "GemmKernel.h"

namespace ipu {

const std::vector<KernelSpec> &allKernels() {
  static const std::vector<KernelSpec> kernels = {
      {"gemm",
       {"lhs", "rhs", "out"},
       {"m", "k", "n", "inType", "accType", "outType"}},
  };
  return kernels;
}

const KernelSpec *lookupKernel(std::string_view name) {
  for (const KernelSpec &kernel : allKernels())
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

std::optional<std::string> checkKernelParams(const KernelSpec &kernel,
                                             const int64_t *params) {
  if (kernel.name == "gemm")
    return detail::checkGemmParams(params);
  return std::string(kernel.name) + ": unknown kernel";
}

uint64_t kernelOperandBytes(const KernelSpec &kernel, const int64_t *params,
                            unsigned operand) {
  if (kernel.name == "gemm")
    return detail::gemmOperandBytes(params, operand);
  return 0;
}

uint64_t estimateKernelCycles(const KernelSpec &kernel, const int64_t *params,
                              const TargetModel &target) {
  if (kernel.name == "gemm") {
    // Invalid parameters have no meaningful cost; callers check them first.
    if (detail::checkGemmParams(params))
      return 0;
    // accType and outType do not change the AMP rate in this model.
    return estimateGemmCycles(
        target, static_cast<ElementType>(params[detail::GemmIn]),
        params[detail::GemmM], params[detail::GemmK], params[detail::GemmN]);
  }
  return 0;
}

void executeKernel(const KernelSpec &kernel, const int64_t *params,
                   uint8_t *const *operands) {
  if (kernel.name == "gemm")
    detail::executeGemm(params, operands);
}

} // namespace ipu
