//===- Kernels.cpp - The kernel registry and name-based dispatch ----------===//
//
// The registry is the single list the verifier, the package translator and
// the simulator consult; each kernel's code lives in its own file.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Kernels.h"

#include "KernelImpls.h"
#include "IPU/Device/Elementwise.h"

#include <cstring>

namespace ipu {

const std::vector<KernelSpec> &allKernels() {
  static const std::vector<KernelSpec> kernels = {
      {"gemm",
       {"lhs", "rhs", "out"},
       {"m", "k", "n", "inType", "accType", "outType", "weightClass"},
       detail::GemmRhs,
       detail::GemmWeightClass},
      {"gemm_t",
       {"lhs", "rhsT", "out"},
       {"m", "k", "n", "inType", "accType", "outType", "ampClass"},
       detail::GemmLhs,
       detail::GemmWeightClass},
      {"reduce", {"in", "out"}, {"m", "n", "count", "inType", "outType"}},
      {"copy", {"src", "dst"}, {"bytes"}},
      {"transpose", {"src", "dst"}, {"rows", "cols", "type"}},
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
  if (kernel.elementwise)
    return detail::checkElementwiseParams(*kernel.elementwise, params);
  if (kernel.name == "gemm")
    return detail::checkGemmParams(params);
  if (kernel.name == "gemm_t")
    return detail::checkGemmTParams(params);
  if (kernel.name == "reduce")
    return detail::checkReduceParams(params);
  if (kernel.name == "copy")
    return detail::checkCopyParams(params);
  if (kernel.name == "transpose")
    return detail::checkTransposeParams(params);
  return std::string(kernel.name) + ": unknown kernel";
}

uint64_t kernelOperandBytes(const KernelSpec &kernel, const int64_t *params,
                            unsigned operand) {
  if (kernel.elementwise) {
    KernelOperandShape shape = kernelOperandShape(kernel, params, operand);
    return shape.rows * detail::rowPitch(shape.cols, *shape.type);
  }
  if (kernel.name == "gemm")
    return detail::gemmOperandBytes(params, operand);
  if (kernel.name == "gemm_t")
    return detail::gemmTOperandBytes(params, operand);
  if (kernel.name == "reduce")
    return detail::reduceOperandBytes(params, operand);
  if (kernel.name == "copy")
    return static_cast<uint64_t>(params[detail::CopyBytes]);
  if (kernel.name == "transpose")
    return detail::transposeOperandBytes(params, operand);
  return 0;
}

KernelOperandShape kernelOperandShape(const KernelSpec &kernel,
                                      const int64_t *params, unsigned operand) {
  using namespace detail;
  if (kernel.elementwise)
    return elementwiseOperandShape(*kernel.elementwise, params, operand);
  if (kernel.name == "gemm" || kernel.name == "gemm_t") {
    const int64_t m = params[GemmM], k = params[GemmK], n = params[GemmN];
    const auto in = static_cast<ElementType>(params[GemmIn]);
    switch (operand) {
    case GemmLhs:
      return {m, k, in};
    case GemmRhs:
      // gemm_t holds B^T: n rows of k.
      return kernel.name == "gemm" ? KernelOperandShape{k, n, in}
                                   : KernelOperandShape{n, k, in};
    case GemmOutput:
      return {m, n, static_cast<ElementType>(params[GemmOut])};
    }
  }
  if (kernel.name == "reduce") {
    const int64_t m = params[ReduceM], n = params[ReduceN];
    if (operand == ReduceInput)
      return {m, n * params[ReduceCount],
              static_cast<ElementType>(params[ReduceIn])};
    if (operand == ReduceOutput)
      return {m, n, static_cast<ElementType>(params[ReduceOut])};
  }
  if (kernel.name == "copy" && operand < 2)
    return {1, params[CopyBytes], std::nullopt};
  if (kernel.name == "transpose" && operand < 2)
    return transposeOperandShape(params, operand);
  return {};
}

uint64_t kernelFlops(const KernelSpec &kernel, const int64_t *params) {
  // The reduction's adds are not part of the product the user asked for.
  if (kernel.name != "gemm" && kernel.name != "gemm_t")
    return 0;
  // Valid sizes are below 2^24, so 2 * m * k * n may still need 73 bits.
  uint64_t flops = 2;
  for (unsigned i = detail::GemmM; i <= detail::GemmN; ++i) {
    if (params[i] <= 0)
      return 0;
    if (__builtin_mul_overflow(flops, static_cast<uint64_t>(params[i]), &flops))
      return UINT64_MAX;
  }
  return flops;
}

/// The AMP's view of a gemm or gemm_t vertex. gemm_t holds blocks of lhs
/// and streams the n rows of rhsT: gemm with the roles of m and n exchanged.
/// accType is the partials type of the AMP. The streamed operand's memory
/// class comes from its address when the caller has one.
static GemmCostShape gemmCostShape(const TargetModel &target,
                                   const int64_t *params, bool transposed,
                                   const uint32_t *operandAddresses) {
  MemoryClass streamed = MemoryClass::Standard;
  if (operandAddresses) {
    uint32_t address =
        operandAddresses[transposed ? detail::GemmRhs : detail::GemmLhs];
    if (address >= target.interleaved.base && address < target.interleaved.end())
      streamed = MemoryClass::Interleaved;
  }
  return GemmCostShape(
      params[transposed ? detail::GemmN : detail::GemmM], params[detail::GemmK],
      params[transposed ? detail::GemmM : detail::GemmN],
      static_cast<ElementType>(params[detail::GemmIn]),
      static_cast<ElementType>(params[detail::GemmAcc]),
      static_cast<ElementType>(params[detail::GemmOut]),
      static_cast<MemoryClass>(params[detail::GemmWeightClass]), streamed);
}

uint64_t estimateKernelCycles(const KernelSpec &kernel, const int64_t *params,
                              const TargetModel &target,
                              const uint32_t *operandAddresses) {
  // Invalid parameters have no meaningful cost; callers check them first.
  if (checkKernelParams(kernel, params))
    return 0;
  if (kernel.elementwise)
    return estimateElementwise(target, kernel.elementwise->body(),
                               params[detail::ElementwiseRows],
                               params[detail::ElementwiseCols])
        .total;
  if (kernel.name == "gemm" || kernel.name == "gemm_t")
    return estimateGemmCycles(target,
                              gemmCostShape(target, params,
                                            kernel.name == "gemm_t",
                                            operandAddresses));
  if (kernel.name == "reduce")
    return detail::estimateReduceCycles(params, target);
  if (kernel.name == "copy")
    return detail::estimateCopyCycles(params, target);
  if (kernel.name == "transpose")
    return detail::estimateTransposeCycles(params, target);
  return 0;
}

void executeKernel(const KernelSpec &kernel, const int64_t *params,
                   uint8_t *const *operands) {
  if (kernel.elementwise) {
    // Only a compiled kernel has code: the simulator refuses a compute set
    // whose generated kernel has no entry (CompiledKernels sets them).
    if (kernel.elementwise->entry)
      kernel.elementwise->entry(operands, params);
  } else if (kernel.name == "gemm")
    detail::executeGemm(params, operands);
  else if (kernel.name == "gemm_t")
    detail::executeGemmT(params, operands);
  else if (kernel.name == "reduce")
    detail::executeReduce(params, operands);
  else if (kernel.name == "copy")
    std::memmove(operands[1], operands[0],
                 static_cast<size_t>(params[detail::CopyBytes]));
  else if (kernel.name == "transpose")
    detail::executeTranspose(params, operands);
}

} // namespace ipu
