//===- Kernels.h - Tile kernels (codelets) and their cycle estimators ----===//
//
// Each kernel runs natively on the host over tile memory for its values and
// is charged the cycles of its estimator, written against the TargetModel in
// the style of poplibs' vertex estimators. A vertex of a compute set is one
// kernel instance on one tile: operand addresses plus integer parameters.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DEVICE_KERNELS_H
#define IPU_DEVICE_KERNELS_H

#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

struct KernelSpec {
  std::string_view name;
  std::vector<std::string_view> operandNames;
  std::vector<std::string_view> paramNames;
};

/// Every kernel in device/. The GEMM partial kernel is "gemm":
///   operands: lhs [m x k], rhs [k x n], out [m x n], each row-major with rows
///   padded to 4 bytes;
///   params: m, k, n, inType, accType, outType (ElementType values).
const std::vector<KernelSpec> &allKernels();
const KernelSpec *lookupKernel(std::string_view name);

/// Checks parameter values (sizes positive, types supported). Returns a
/// message naming the parameter at fault.
std::optional<std::string> checkKernelParams(const KernelSpec &kernel,
                                             const int64_t *params);
/// Bytes operand `operand` spans in tile memory.
uint64_t kernelOperandBytes(const KernelSpec &kernel, const int64_t *params,
                            unsigned operand);
/// Estimated cycles of one vertex on one tile.
uint64_t estimateKernelCycles(const KernelSpec &kernel, const int64_t *params,
                              const TargetModel &target);
/// Runs the kernel on operand memory (already bounds-checked by the caller).
void executeKernel(const KernelSpec &kernel, const int64_t *params,
                   uint8_t *const *operands);

/// GEMM estimator, exposed for the planner: one tile computing an
/// [m x k] x [k x n] block.
uint64_t estimateGemmCycles(const TargetModel &target, ElementType inType,
                            int64_t m, int64_t k, int64_t n);

} // namespace ipu

#endif // IPU_DEVICE_KERNELS_H
