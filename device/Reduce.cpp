//===- Reduce.cpp - Sums of partial blocks, and plain copies --------------===//
//
// reduce: each row of `in` holds `count` blocks of n elements side by side
// (rows padded to 4 bytes); out[r][c] = sum over b of in[r][b * n + c],
// accumulated in f32 and stored as outType. This finishes a matmul whose
// inner dimension was split over tiles.
//
// reduce_columns_<add|max|maxnum>: each of the n columns of a [count x n]
// f32 matrix reduced over its rows into one value per output row: a split
// row reduction's partials, gathered one contiguous row per source, combined.
//
// copy: moves `bytes` from src to dst (local weight staging).
//
// Estimators follow shared/machine-model.md for worker kernels: vectors of
// the target's vectorBytes (2 x f32, 4 x f16 on ipu21), the vectors (not the rows) divided over the
// workers, and each worker issues one instruction every `workersPerTile`
// cycles, so the slowest worker's instruction count times that interleave
// decides (estimateWorkerKernelCycles).
//
//===----------------------------------------------------------------------===//

#include "KernelImpls.h"

#include "IPU/Support/ElementType.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ipu {
namespace detail {

namespace {

std::string prefix(const char *kernel, const char *name, int64_t value) {
  return std::string(kernel) + ": parameter '" + name +
         "' = " + std::to_string(value) + " is ";
}

} // namespace

std::optional<std::string> checkReduceParams(const int64_t *params) {
  static const char *const names[] = {"m", "n", "count"};
  for (unsigned i = ReduceM; i <= ReduceCount; ++i)
    if (params[i] < 1 || params[i] >= kMaxExtent)
      return prefix("reduce", names[i], params[i]) + "not in [1, 2^24)";
  static const char *const typeNames[] = {"inType", "outType"};
  for (unsigned i = ReduceIn; i <= ReduceOut; ++i)
    if (params[i] != static_cast<int64_t>(ElementType::F32) &&
        params[i] != static_cast<int64_t>(ElementType::F16))
      return prefix("reduce", typeNames[i - ReduceIn], params[i]) +
             "not f32 or f16";
  return std::nullopt;
}

uint64_t reduceOperandBytes(const int64_t *params, unsigned operand) {
  int64_t m = params[ReduceM], n = params[ReduceN], count = params[ReduceCount];
  if (operand == ReduceInput) {
    // m x n x count elements may need more than 64 bits: saturate, so that
    // the size is refused as too large rather than wrapped into range.
    uint64_t bytes;
    if (__builtin_mul_overflow(
            static_cast<uint64_t>(m),
            rowPitch(n * count, static_cast<ElementType>(params[ReduceIn])),
            &bytes))
      return UINT64_MAX;
    return bytes;
  }
  if (operand == ReduceOutput)
    return static_cast<uint64_t>(m) *
           rowPitch(n, static_cast<ElementType>(params[ReduceOut]));
  return 0;
}

uint64_t estimateReduceCycles(const int64_t *params, const TargetModel &target) {
  return ipu::estimateReduceCycles(
      target, params[ReduceM], params[ReduceN], params[ReduceCount],
      static_cast<ElementType>(params[ReduceIn]),
      static_cast<ElementType>(params[ReduceOut]));
}

void executeReduce(const int64_t *params, uint8_t *const *operands) {
  const int64_t m = params[ReduceM], n = params[ReduceN];
  const int64_t count = params[ReduceCount];
  const auto inType = static_cast<ElementType>(params[ReduceIn]);
  const auto outType = static_cast<ElementType>(params[ReduceOut]);
  const uint64_t inPitch = rowPitch(n * count, inType);
  const uint64_t outPitch = rowPitch(n, outType);
  const unsigned inBytes = elementBytes(inType), outBytes = elementBytes(outType);
  thread_local std::vector<float> sum;
  sum.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t *row = operands[ReduceInput] + r * inPitch;
    std::fill(sum.begin(), sum.end(), 0.0f);
    // Blocks in order, so the result does not depend on anything but the
    // data: the same sum the host reference would form in that order.
    for (int64_t b = 0; b < count; ++b)
      for (int64_t c = 0; c < n; ++c)
        sum[c] += loadElement(inType, row + (b * n + c) * inBytes);
    uint8_t *out = operands[ReduceOutput] + r * outPitch;
    for (int64_t c = 0; c < n; ++c)
      storeElement(outType, sum[c], out + c * outBytes);
  }
}

std::optional<std::string> checkColumnReduceParams(std::string_view kernel,
                                                   const int64_t *params) {
  static const char *const names[] = {"batches", "count", "n"};
  const std::string name(kernel);
  for (unsigned i = ColumnBatches; i <= ColumnN; ++i)
    if (params[i] < 1 || params[i] >= kMaxExtent)
      return prefix(name.c_str(), names[i], params[i]) + "not in [1, 2^24)";
  if (params[ColumnOut] != static_cast<int64_t>(ElementType::F32) &&
      params[ColumnOut] != static_cast<int64_t>(ElementType::F16))
    return prefix(name.c_str(), "outType", params[ColumnOut]) + "not f32 or f16";
  return std::nullopt;
}

KernelOperandShape columnReduceOperandShape(const int64_t *params, unsigned operand) {
  const int64_t batches = params[ColumnBatches], n = params[ColumnN];
  if (operand == ColumnInput)
    return {batches * params[ColumnCount], n, ElementType::F32};
  if (operand == ColumnOutput)
    return {batches * n, 1, static_cast<ElementType>(params[ColumnOut])};
  return {};
}

uint64_t estimateColumnReduceCycles(const int64_t *params, const TargetModel &target) {
  // The reduce kernel's work on the same data: per output vector, count
  // loads, count - 1 combines (an f32 max issues like an add), a conversion
  // for f16, a store; and no faster than the measured output rate.
  return ipu::estimateReduceCycles(target, params[ColumnBatches], params[ColumnN],
                                   params[ColumnCount], ElementType::F32,
                                   static_cast<ElementType>(params[ColumnOut]));
}

void executeColumnReduce(RowReduction reduction, const int64_t *params,
                         uint8_t *const *operands) {
  const int64_t batches = params[ColumnBatches], count = params[ColumnCount];
  const int64_t n = params[ColumnN];
  const auto outType = static_cast<ElementType>(params[ColumnOut]);
  const uint64_t inPitch = rowPitch(n, ElementType::F32);
  const uint64_t outPitch = rowPitch(1, outType);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t c = 0; c < n; ++c) {
      // Rows in order, each step rounded to f32 as the device accumulates.
      float acc = static_cast<float>(reductionIdentity(reduction));
      for (int64_t b = 0; b < count; ++b)
        acc = static_cast<float>(combineReduction(
            reduction, acc,
            loadElement(ElementType::F32,
                        operands[ColumnInput] + (t * count + b) * inPitch + c * 4)));
      storeElement(outType, acc, operands[ColumnOutput] + (t * n + c) * outPitch);
    }
}

std::optional<std::string> checkCopyParams(const int64_t *params) {
  if (params[CopyBytes] < 1 || params[CopyBytes] >= (int64_t(1) << 32))
    return prefix("copy", "bytes", params[CopyBytes]) + "not in [1, 2^32)";
  return std::nullopt;
}

uint64_t estimateCopyCycles(const int64_t *params, const TargetModel &target) {
  return ipu::estimateCopyCycles(target, static_cast<uint64_t>(params[CopyBytes]));
}

} // namespace detail

uint64_t estimateReduceCycles(const TargetModel &target, int64_t m, int64_t n,
                              int64_t count, ElementType inType,
                              ElementType outType) {
  if (m <= 0 || n <= 0 || count <= 0)
    return 0;
  const uint64_t perVector = std::max<uint64_t>(1, target.vectorBytes / elementBytes(inType));
  const uint64_t vectors = static_cast<uint64_t>(m) *
                           ((static_cast<uint64_t>(n) + perVector - 1) / perVector);
  // Per output vector: count loads, count - 1 adds, a conversion when the
  // types differ, one store.
  const uint64_t instructions =
      2 * static_cast<uint64_t>(count) + (inType != outType ? 1 : 0);
  const uint64_t issued = estimateWorkerKernelCycles(target, vectors, instructions);
  // No faster than the user's stack charges it: every partial read at the
  // partial rate, plus one launch (one epoch: the vertex reads all `count`
  // partials and writes the sum, so (count - 1 + 1) partials).
  const uint64_t epochs = 1;
  const uint64_t partialBytes =
      static_cast<uint64_t>(m) * static_cast<uint64_t>(n) * elementBytes(inType);
  const uint64_t readBytes = (static_cast<uint64_t>(count) - 1 + epochs) * partialBytes;
  // (A model without the rate, all zeros, is charged a byte a cycle.)
  const double rate =
      target.reducePartialBytesPerCycle > 0 ? target.reducePartialBytesPerCycle : 1.0;
  const uint64_t readCycles =
      static_cast<uint64_t>(std::ceil(static_cast<double>(readBytes) / rate));
  const uint64_t measured = epochs * target.kernelLaunchCycles + readCycles;
  return std::max(issued, measured);
}

uint64_t estimateCopyCycles(const TargetModel &target, uint64_t bytes) {
  // The user's hardware measurement of a six-worker copy: a 288-cycle call
  // and memcpy at 8 bytes a cycle (TargetModel::localCopyCycles), the same
  // figure an exchange phase charges a tile's copy to itself.
  return target.localCopyCycles(bytes);
}

} // namespace ipu
