//===- KernelImpls.h - Private entry points of every kernel -------------===//
//
// Kernels.cpp's table calls these; each kernel's code lives in its own file
// behind these declarations. Not part of the public Kernels.h contract.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DEVICE_KERNELIMPLS_H
#define IPU_DEVICE_KERNELIMPLS_H

#include "IPU/Device/Elementwise.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Support/ElementType.h"

namespace ipu::detail {

/// Sizes are below 2^24 so every byte count fits easily in 64 bits.
constexpr int64_t kMaxExtent = int64_t(1) << 24;

/// Bytes of a stored row: tile rows are padded to exchange words.
inline uint64_t rowPitch(int64_t elements, ElementType type) {
  constexpr uint64_t word = kDeviceWordBytes;
  uint64_t bytes = static_cast<uint64_t>(elements) * elementBytes(type);
  return (bytes + word - 1) / word * word;
}

/// Indices of the gemm kernel's parameters and operands.
enum GemmParam : unsigned {
  GemmM,
  GemmK,
  GemmN,
  GemmIn,
  GemmAcc,
  GemmOut,
  GemmWeightClass,
  GemmInputScale
};
enum GemmOperand : unsigned { GemmLhs, GemmRhs, GemmOutput };

std::optional<std::string> checkGemmParams(const int64_t *params);
uint64_t gemmOperandBytes(const int64_t *params, unsigned operand);
void executeGemm(const int64_t *params, uint8_t *const *operands);

/// gemm_t: out[m x n] = lhs[m x k] * rhsT[n x k]^T, the swapped orientation:
/// the AMP holds blocks of lhs and streams the rows of rhsT. Parameters as
/// gemm, with the last naming the memory class of lhs.
std::optional<std::string> checkGemmTParams(const int64_t *params);
uint64_t gemmTOperandBytes(const int64_t *params, unsigned operand);
void executeGemmT(const int64_t *params, uint8_t *const *operands);

/// reduce: out[m x n] = sum over `count` blocks of in[m x (count * n)].
enum ReduceParam : unsigned { ReduceM, ReduceN, ReduceCount, ReduceIn, ReduceOut };
enum ReduceOperand : unsigned { ReduceInput, ReduceOutput };
std::optional<std::string> checkReduceParams(const int64_t *params);
uint64_t reduceOperandBytes(const int64_t *params, unsigned operand);
uint64_t estimateReduceCycles(const int64_t *params, const TargetModel &target);
void executeReduce(const int64_t *params, uint8_t *const *operands);

/// reduce_columns_<add|max|maxnum>: in holds `batches` matrices of `count`
/// rows of n f32; out[t * n + c] (one value per row of out) is row c of
/// matrix t reduced over its `count` rows.
enum ColumnReduceParam : unsigned { ColumnBatches, ColumnCount, ColumnN, ColumnOut };
enum ColumnReduceOperand : unsigned { ColumnInput, ColumnOutput };
std::optional<std::string> checkColumnReduceParams(std::string_view kernel,
                                                   const int64_t *params);
KernelOperandShape columnReduceOperandShape(const int64_t *params, unsigned operand);
uint64_t estimateColumnReduceCycles(const int64_t *params, const TargetModel &target);
void executeColumnReduce(RowReduction reduction, const int64_t *params,
                         uint8_t *const *operands);

/// transpose: dst[cols x rows] = src[rows x cols]^T.
enum TransposeParam : unsigned { TransposeRows, TransposeCols, TransposeType };
enum TransposeOperand : unsigned { TransposeSource, TransposeDest };
std::optional<std::string> checkTransposeParams(const int64_t *params);
KernelOperandShape transposeOperandShape(const int64_t *params, unsigned operand);
uint64_t transposeOperandBytes(const int64_t *params, unsigned operand);
uint64_t estimateTransposeCycles(const int64_t *params, const TargetModel &target);
void executeTranspose(const int64_t *params, uint8_t *const *operands);

/// copy: dst[0, bytes) = src[0, bytes).
enum CopyParam : unsigned { CopyBytes };
std::optional<std::string> checkCopyParams(const int64_t *params);
uint64_t estimateCopyCycles(const int64_t *params, const TargetModel &target);

/// A generated elementwise kernel (Elementwise.h): rows, cols of the output
/// block; each input's block follows from its broadcast.
using ipu::ElementwiseCols;
using ipu::ElementwiseRows;
std::optional<std::string> checkElementwiseParams(const ElementwiseKernel &kernel,
                                                  const int64_t *params);
KernelOperandShape elementwiseOperandShape(const ElementwiseKernel &kernel,
                                           const int64_t *params, unsigned operand);
/// The functions of every generated kernel's spec (Kernels.cpp).
extern const KernelFunctions elementwiseFunctions;

} // namespace ipu::detail

#endif // IPU_DEVICE_KERNELIMPLS_H
