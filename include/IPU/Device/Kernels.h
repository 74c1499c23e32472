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
  /// When set, operand `classOperand` must live in the MemoryClass given by
  /// parameter `classParam` (its estimator depends on it).
  int classOperand = -1;
  int classParam = -1;
};

/// Every kernel in device/:
/// - "gemm", the AMP GEMM partial: operands lhs [m x k], rhs [k x n],
///   out [m x n], each row-major with rows padded to 4 bytes; params m, k,
///   n, inType, accType, outType (ElementType values), weightClass (the
///   MemoryClass of rhs).
/// - "reduce": operands in [m x (count * n)] (count blocks side by side in
///   each row) and out [m x n]; params m, n, count, inType, outType;
///   out = the sum of the count blocks, accumulated in f32.
/// - "copy": operands src, dst; params bytes.
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

/// One tile's GEMM block, as the estimator sees it.
struct GemmCostShape {
  GemmCostShape() = default;
  GemmCostShape(int64_t m, int64_t k, int64_t n, ElementType inType,
                ElementType outType, MemoryClass weightClass)
      : m(m), k(k), n(n), inType(inType), outType(outType),
        weightClass(weightClass) {}
  int64_t m = 0, k = 0, n = 0;
  ElementType inType = ElementType::F16;
  ElementType outType = ElementType::F32;
  MemoryClass weightClass = MemoryClass::Interleaved;
};

/// GEMM estimator, exposed for the planner: one tile computing an
/// [m x k] x [k x n] block: weight block loads at the rate of the weights'
/// memory class, rows streamed at the AMP MAC rate (k and n padded to the
/// AMP grain), results stored at the store rate, plus vertex setup and
/// worker dispatch.
uint64_t estimateGemmCycles(const TargetModel &target, const GemmCostShape &shape);

/// Cycles of the "reduce" kernel, for the planner.
uint64_t estimateReduceCycles(const TargetModel &target, int64_t m, int64_t n,
                              int64_t count, ElementType inType,
                              ElementType outType);
/// Cycles of the "copy" kernel, for the planner.
uint64_t estimateCopyCycles(const TargetModel &target, uint64_t bytes);

} // namespace ipu

#endif // IPU_DEVICE_KERNELS_H
