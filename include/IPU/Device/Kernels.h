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

class ElementwiseKernel;

struct KernelSpec;

/// The exchange word the device library is built for (ipu21's
/// TargetModel::exchangeWordBytes): its kernels, and the kernels the
/// KernelCompiler generates, pad their rows to it, as a target's layouts
/// do. Like poplibs' codelets, device code is built for one architecture:
/// validatePackage refuses a package for a target that moves other words.
constexpr uint32_t kDeviceWordBytes = 4;

/// The matrix operand `operand` holds on its tile, by the vertex's
/// parameters: `rows` x `cols` elements of `type`, row-major with rows
/// padded to kDeviceWordBytes, as kernelOperandBytes counts it. A "copy"
/// operand is untyped: one row of `cols` bytes, and no type. Parameters
/// must have passed checkKernelParams.
struct KernelOperandShape {
  int64_t rows = 0, cols = 0;
  std::optional<ElementType> type;
};

/// What a kernel does, one function each: every kernel, built in or
/// generated, has all of them, so that callers dispatch through the table
/// and a new kernel is one entry of it. The public functions below
/// (checkKernelParams, ...) call these.
struct KernelFunctions {
  std::optional<std::string> (*checkParams)(const KernelSpec &, const int64_t *params);
  KernelOperandShape (*operandShape)(const KernelSpec &, const int64_t *params,
                                     unsigned operand);
  uint64_t (*operandBytes)(const KernelSpec &, const int64_t *params, unsigned operand);
  uint64_t (*flops)(const KernelSpec &, const int64_t *params);
  uint64_t (*estimateCycles)(const KernelSpec &, const int64_t *params,
                             const TargetModel &target, const uint32_t *operandAddresses);
  void (*execute)(const KernelSpec &, const int64_t *params, const TargetModel &target,
                  uint8_t *const *operands);
};

struct KernelSpec {
  std::string_view name;
  std::vector<std::string_view> operandNames;
  std::vector<std::string_view> paramNames;
  const KernelFunctions *functions = nullptr;
  /// When set, operand `classOperand` must live in the MemoryClass given by
  /// parameter `classParam` (its estimator depends on it).
  int classOperand = -1;
  int classParam = -1;
  /// Set for a generated kernel (Elementwise.h), which owns this spec.
  const ElementwiseKernel *elementwise = nullptr;
};

/// Every kernel in device/:
/// - "gemm", the AMP GEMM partial: operands lhs [m x k], rhs [k x n],
///   out [m x n], each row-major with rows padded to 4 bytes; params m, k,
///   n, inType, accType, outType (ElementType values), weightClass (the
///   MemoryClass of rhs), inputScale (e: each product times 2^e, the AMP's
///   input scale; 0 unless inType is f8).
/// - "reduce": operands in [m x (count * n)] (count blocks side by side in
///   each row) and out [m x n]; params m, n, count, inType, outType;
///   out = the sum of the count blocks, accumulated in f32.
/// - "reduce_columns_add", "reduce_columns_max", "reduce_columns_maxnum":
///   operands in [(batches * count) x n] f32 and out [(batches * n) x 1];
///   params batches, count, n, outType; out[t * n + c] = the reduction
///   (Elementwise.h's RowReduction of the name) of column c of matrix t's
///   count rows, from its identity, in f32.
/// - "copy": operands src, dst; params bytes.
/// - "transpose": operands src [rows x cols], dst [cols x rows]; params
///   rows, cols, type (ElementType).
const std::vector<KernelSpec> &allKernels();
const KernelSpec *lookupKernel(std::string_view name);

/// Checks parameter values (sizes positive, types supported). Returns a
/// message naming the parameter at fault.
std::optional<std::string> checkKernelParams(const KernelSpec &kernel,
                                             const int64_t *params);
/// Bytes operand `operand` spans in tile memory.
uint64_t kernelOperandBytes(const KernelSpec &kernel, const int64_t *params,
                            unsigned operand);
/// The shape of operand `operand` (KernelOperandShape).
KernelOperandShape kernelOperandShape(const KernelSpec &kernel,
                                      const int64_t *params, unsigned operand);
/// Useful FLOPs of one vertex: 2 * m * k * n for "gemm" and "gemm_t" (a
/// multiply and an add per term), 0 for the data movement of "reduce" and
/// "copy". Saturates at UINT64_MAX; a non-positive size counts as 0.
uint64_t kernelFlops(const KernelSpec &kernel, const int64_t *params);
/// Estimated cycles of one vertex on one tile. With `operandAddresses`
/// (one per operand) the memory class of each operand comes from where it
/// lives; without, streamed operands are taken to be in standard memory.
uint64_t estimateKernelCycles(const KernelSpec &kernel, const int64_t *params,
                              const TargetModel &target,
                              const uint32_t *operandAddresses = nullptr);
/// Runs the kernel on operand memory (already bounds-checked by the caller),
/// as `target`'s workers split it where that changes the order of its
/// arithmetic (a reduction's row parts).
void executeKernel(const KernelSpec &kernel, const int64_t *params,
                   const TargetModel &target, uint8_t *const *operands);

/// One tile's GEMM block, as the AMP sees it: it holds blocks of an
/// [k x n] operand (the "weights" of the AMP, whatever the graph calls them)
/// and streams the m rows of the [m x k] operand through them.
struct GemmCostShape {
  GemmCostShape() = default;
  GemmCostShape(int64_t m, int64_t k, int64_t n, ElementType inType,
                ElementType partialsType, ElementType outType,
                MemoryClass heldClass,
                MemoryClass streamedClass = MemoryClass::Standard)
      : m(m), k(k), n(n), inType(inType), partialsType(partialsType),
        outType(outType), heldClass(heldClass), streamedClass(streamedClass) {}
  int64_t m = 0, k = 0, n = 0;
  ElementType inType = ElementType::F16;
  ElementType partialsType = ElementType::F32; ///< What the AMP accumulates.
  ElementType outType = ElementType::F32;      ///< What the vertex stores.
  MemoryClass heldClass = MemoryClass::Interleaved;  ///< Held operand.
  MemoryClass streamedClass = MemoryClass::Standard; ///< Streamed rows.
};

/// Where the cycles of one GEMM vertex go. Every term is a TargetModel
/// field times a count; `total` is their sum.
struct GemmCycles {
  uint64_t passesK = 0, passesN = 0; ///< AMP passes over k and over n.
  uint64_t rowsPerWorker = 0;        ///< Rows of the busiest worker.
  uint64_t vertex = 0;        ///< Call, supervisor, loops, worker state.
  uint64_t passOverhead = 0;  ///< Supervisor loop overheads of every pass.
  uint64_t weightLoad = 0;    ///< Held blocks loaded into the AMP.
  uint64_t workerOverhead = 0; ///< Worker set-up in every pass.
  uint64_t streaming = 0;     ///< Rows through the AMP (or the load path).
  uint64_t epilogue = 0;      ///< Partials converted to the output type.
  uint64_t total = 0;
};

/// The GEMM vertex estimate, built like poplibs' ConvPartial1x1 supervisor
/// estimate: a vertex call, then for each pass (a k-deep, conv-units-wide
/// block of the held operand) the block's load into the AMP at its memory
/// class's rate and the rows split over the workers, the slowest worker
/// setting the time, bounded below by the streamed operand's load rate.
GemmCycles estimateGemm(const TargetModel &target, const GemmCostShape &shape);
inline uint64_t estimateGemmCycles(const TargetModel &target,
                                   const GemmCostShape &shape) {
  return estimateGemm(target, shape).total;
}

/// A worker kernel: `vectors` 64-bit vectors of work, `instructions` worker
/// instructions each, split over the workers by vectors; plus the vertex
/// call, the supervisor and every worker's loop prologue.
uint64_t estimateWorkerKernelCycles(const TargetModel &target, uint64_t vectors,
                                    uint64_t instructions);

/// Cycles of the "reduce" kernel, for the planner.
uint64_t estimateReduceCycles(const TargetModel &target, int64_t m, int64_t n,
                              int64_t count, ElementType inType,
                              ElementType outType);
/// Cycles of the "copy" kernel, for the planner.
uint64_t estimateCopyCycles(const TargetModel &target, uint64_t bytes);
/// Cycles of the "transpose" kernel on a [rows x cols] block.
uint64_t estimateTransposeCycles(const TargetModel &target, int64_t rows,
                                 int64_t cols);

} // namespace ipu

#endif // IPU_DEVICE_KERNELS_H
