//===- Transpose.cpp - A block transposed on its tile ---------------------===//
//
// transpose: dst[cols x rows] = src[rows x cols]^T, element by element, rows
// of both padded to 32-bit words. It turns an activation that reaches a
// matmul as A^T into the A blocks the AMP streams: the exchange moves whole
// row segments of A^T to the tile of each A block, and this kernel
// transposes it there.
//
// Estimate (an assumption: poplibs' Transpose2d estimator is not modelled):
// every element is one load and one store on a worker
// (`transposeInstructionsPerElement`), the elements split over the workers
// as estimateWorkerKernelCycles splits vectors.
//
//===----------------------------------------------------------------------===//

#include "KernelImpls.h"

#include <cstring>
#include <string>

namespace ipu {
namespace detail {

std::optional<std::string> checkTransposeParams(const int64_t *params) {
  static const char *const names[] = {"rows", "cols"};
  for (unsigned i = TransposeRows; i <= TransposeCols; ++i)
    if (params[i] < 1 || params[i] >= kMaxExtent)
      return "transpose: parameter '" + std::string(names[i]) +
             "' = " + std::to_string(params[i]) + " is not in [1, 2^24)";
  if (params[TransposeType] < 0 ||
      params[TransposeType] > static_cast<int64_t>(ElementType::F8E5M2))
    return "transpose: parameter 'type' = " +
           std::to_string(params[TransposeType]) + " is not an element type";
  return std::nullopt;
}

KernelOperandShape transposeOperandShape(const int64_t *params, unsigned operand) {
  const auto type = static_cast<ElementType>(params[TransposeType]);
  if (operand == TransposeSource)
    return {params[TransposeRows], params[TransposeCols], type};
  return {params[TransposeCols], params[TransposeRows], type};
}

uint64_t transposeOperandBytes(const int64_t *params, unsigned operand) {
  KernelOperandShape shape = transposeOperandShape(params, operand);
  return static_cast<uint64_t>(shape.rows) * rowPitch(shape.cols, *shape.type);
}

uint64_t estimateTransposeCycles(const int64_t *params, const TargetModel &target) {
  return ipu::estimateTransposeCycles(target, params[TransposeRows],
                                      params[TransposeCols]);
}

void executeTranspose(const int64_t *params, uint8_t *const *operands) {
  const int64_t rows = params[TransposeRows], cols = params[TransposeCols];
  const auto type = static_cast<ElementType>(params[TransposeType]);
  const unsigned bytes = elementBytes(type);
  const uint64_t srcPitch = rowPitch(cols, type), dstPitch = rowPitch(rows, type);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(operands[TransposeDest] + c * dstPitch + r * bytes,
                  operands[TransposeSource] + r * srcPitch + c * bytes, bytes);
}

} // namespace detail

uint64_t estimateTransposeCycles(const TargetModel &target, int64_t rows,
                                 int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return 0;
  return estimateWorkerKernelCycles(target, static_cast<uint64_t>(rows) * cols,
                                    target.transposeInstructionsPerElement);
}

} // namespace ipu
