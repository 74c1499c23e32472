//===- GemmKernel.h - Private entry points of the gemm kernel -------------===//
//
// Kernels.cpp dispatches by kernel name; each kernel's code lives in its own
// file behind these declarations. Not part of the public Kernels.h contract.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DEVICE_GEMMKERNEL_H
#define IPU_DEVICE_GEMMKERNEL_H

#include "IPU/Device/Kernels.h"

namespace ipu::detail {

/// Indices of the gemm kernel's parameters and operands.
enum GemmParam : unsigned { GemmM, GemmK, GemmN, GemmIn, GemmAcc, GemmOut };
enum GemmOperand : unsigned { GemmLhs, GemmRhs, GemmOutput };

std::optional<std::string> checkGemmParams(const int64_t *params);
uint64_t gemmOperandBytes(const int64_t *params, unsigned operand);
void executeGemm(const int64_t *params, uint8_t *const *operands);

} // namespace ipu::detail

#endif // IPU_DEVICE_GEMMKERNEL_H
