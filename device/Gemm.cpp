//===- Gemm.cpp - The AMP GEMM partial kernel and its estimator -----------===//
//
// One vertex computes out[m x n] = lhs[m x k] * rhs[k x n] on one tile.
// Operand layout: row-major, each row padded to a multiple of 4 bytes (tile
// memory is word addressed for the exchange), so
//   lhs: m rows, pitch roundUp(k * bytes(inType), 4)
//   rhs: k rows, pitch roundUp(n * bytes(inType), 4)
//   out: m rows, pitch roundUp(n * bytes(outType), 4)
// weightClass says which memory class the AMP loads its weights (rhs) from:
// it sets the weight load rate, and the verifier checks it against the rhs
// buffer.
// Padding bytes of out are never written: neighbouring data may live there
// after the storage pass packs tensors.
//
// Numerics: inputs decode exactly to f32, products and sums are f32. With an
// f16 accumulator the running sum is rounded to f16 after every AMP grain of
// k (the ipu21 grain of the input type: 8 for f32, 16 for f16, 32 for f8),
// modelling the AMP's f32 partials folded into an f16 accumulator once per
// pass. The final value is stored as outType with round to nearest even.
//
//===----------------------------------------------------------------------===//

#include "KernelImpls.h"

#include "IPU/Support/ElementType.h"

#include <cmath>
#include <algorithm>
#include <cstring>

namespace ipu {
namespace detail {

namespace {

std::string paramPrefix(const char *name, int64_t value) {
  return std::string("gemm: parameter '") + name +
         "' = " + std::to_string(value) + " is ";
}

/// Accumulator rounding grain: the ipu21 AMP grain, taken from the target
/// model so the number lives in one place.
uint32_t accumulatorGrain(ElementType inType) {
  static const TargetModel ipu21 = TargetModel::ipu21();
  return std::max<uint32_t>(ipu21.ampGrainK(inType), 1);
}

/// Decodes `count` elements of `type` starting at `src` into `dst`. The f32
/// memcpy (and the f32 store below) assume a little-endian host, like the
/// tile; loadElement/storeElement are the portable definitions.
void decodeRow(ElementType type, const uint8_t *src, int64_t count,
               float *dst) {
  switch (type) {
  case ElementType::F32:
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
    return;
  case ElementType::F16:
    for (int64_t i = 0; i < count; ++i)
      dst[i] = halfToFloat(static_cast<uint16_t>(src[2 * i] |
                                                 (src[2 * i + 1] << 8)));
    return;
  case ElementType::F8E4M3FN:
    for (int64_t i = 0; i < count; ++i)
      dst[i] = f8E4M3FNToFloat(src[i]);
    return;
  case ElementType::F8E5M2:
    for (int64_t i = 0; i < count; ++i)
      dst[i] = f8E5M2ToFloat(src[i]);
    return;
  }
}

/// Rounds each value to the nearest f16 value (ties to even), in place.
/// Values whose f16 result is normal take a branch-free bit trick the
/// compiler vectorises; the rest (subnormal, overflow, inf, NaN) take the
/// exact conversion.
void roundToHalf(float *values, int64_t count) {
  constexpr uint32_t kMinNormal = 0x38800000u; // 2^-14.
  constexpr uint32_t kOverflow = 0x477FF000u;  // 65520 rounds to infinity.
  bool anySlow = false;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    uint32_t magnitude = bits & 0x7FFFFFFFu;
    bool fast = magnitude >= kMinNormal && magnitude < kOverflow;
    // Drop the 13 mantissa bits f16 lacks, rounding to nearest even.
    uint32_t rounded = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
    uint32_t result = fast ? rounded : bits;
    std::memcpy(&values[i], &result, sizeof(result));
    anySlow |= !fast;
  }
  if (!anySlow)
    return;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude < kMinNormal || magnitude >= kOverflow)
      values[i] = halfToFloat(floatToHalf(values[i]));
  }
}

} // namespace

std::optional<std::string> checkGemmParams(const int64_t *params) {
  static const char *const sizeNames[] = {"m", "k", "n"};
  for (unsigned i = GemmM; i <= GemmN; ++i)
    if (params[i] < 1 || params[i] >= kMaxExtent)
      return paramPrefix(sizeNames[i], params[i]) + "not in [1, 2^24)";
  int64_t in = params[GemmIn];
  if (in < 0 || in > static_cast<int64_t>(ElementType::F8E5M2))
    return paramPrefix("inType", in) +
           "not an element type (f32=0, f16=1, f8E4M3FN=2, f8E5M2=3)";
  static const char *const accOutNames[] = {"accType", "outType"};
  for (unsigned i = GemmAcc; i <= GemmOut; ++i) {
    int64_t type = params[i];
    if (type != static_cast<int64_t>(ElementType::F32) &&
        type != static_cast<int64_t>(ElementType::F16))
      return paramPrefix(accOutNames[i - GemmAcc], type) + "not f32 or f16";
  }
  int64_t weightClass = params[GemmWeightClass];
  if (weightClass != static_cast<int64_t>(MemoryClass::Standard) &&
      weightClass != static_cast<int64_t>(MemoryClass::Interleaved))
    return paramPrefix("weightClass", weightClass) +
           "not a memory class (standard=0, interleaved=1)";
  const int64_t scale = params[GemmInputScale];
  if (scale != 0 && !isF8(static_cast<ElementType>(in)))
    return paramPrefix("inputScale", scale) + "not 0: only f8 inputs are scaled";
  if (scale < kF8InputScaleMin || scale > kF8InputScaleMax)
    return paramPrefix("inputScale", scale) + "not in [" +
           std::to_string(kF8InputScaleMin) + ", " + std::to_string(kF8InputScaleMax) + "]";
  return std::nullopt;
}

uint64_t gemmOperandBytes(const int64_t *params, unsigned operand) {
  int64_t m = params[GemmM], k = params[GemmK], n = params[GemmN];
  auto in = static_cast<ElementType>(params[GemmIn]);
  auto out = static_cast<ElementType>(params[GemmOut]);
  switch (operand) {
  case GemmLhs:
    return static_cast<uint64_t>(m) * rowPitch(k, in);
  case GemmRhs:
    return static_cast<uint64_t>(k) * rowPitch(n, in);
  case GemmOutput:
    return static_cast<uint64_t>(m) * rowPitch(n, out);
  default:
    return 0;
  }
}

void executeGemm(const int64_t *params, uint8_t *const *operands) {
  const int64_t m = params[GemmM], k = params[GemmK], n = params[GemmN];
  const auto inType = static_cast<ElementType>(params[GemmIn]);
  const bool accHalf =
      static_cast<ElementType>(params[GemmAcc]) == ElementType::F16;
  const auto outType = static_cast<ElementType>(params[GemmOut]);
  const uint64_t lhsPitch = rowPitch(k, inType);
  const uint64_t rhsPitch = rowPitch(n, inType);
  const uint64_t outPitch = rowPitch(n, outType);
  const unsigned outBytes = elementBytes(outType);
  const int64_t grain =
      accHalf ? static_cast<int64_t>(accumulatorGrain(inType)) : k;

  // Scratch survives across calls: the simulator runs thousands of vertices
  // per compute set and reallocating per vertex would dominate small ones.
  thread_local std::vector<float> rhsScratch, lhsRow, accRow;
  rhsScratch.resize(static_cast<size_t>(k * n));
  lhsRow.resize(static_cast<size_t>(k));
  accRow.resize(static_cast<size_t>(n));

  // Decode rhs once; every row of lhs streams through it. The AMP's input
  // scale multiplies each product by 2^e: applied to rhs, it is exact for
  // f8 values (a power of two within f32's range), so each product is.
  const float inputScale = std::ldexp(1.0f, static_cast<int>(params[GemmInputScale]));
  for (int64_t kk = 0; kk < k; ++kk)
    decodeRow(inType, operands[GemmRhs] + kk * rhsPitch, n,
              rhsScratch.data() + kk * n);
  if (inputScale != 1.0f)
    for (float &value : rhsScratch)
      value *= inputScale;

  float *__restrict acc = accRow.data();
  const float *rhs = rhsScratch.data();
  for (int64_t i = 0; i < m; ++i) {
    decodeRow(inType, operands[GemmLhs] + i * lhsPitch, k, lhsRow.data());
    std::fill(acc, acc + n, 0.0f);
    // i-k-j order: the inner loop is a contiguous axpy the compiler
    // vectorises.
    for (int64_t k0 = 0; k0 < k; k0 += grain) {
      int64_t k1 = std::min(k, k0 + grain);
      int64_t kk = k0;
      // Four rows of rhs per pass over acc halve the accumulator traffic;
      // each acc[j] still sees the products in k order, so results are
      // bit-identical to the one-row loop.
      for (; kk + 4 <= k1; kk += 4) {
        const float a0 = lhsRow[kk], a1 = lhsRow[kk + 1];
        const float a2 = lhsRow[kk + 2], a3 = lhsRow[kk + 3];
        const float *__restrict b0 = rhs + kk * n;
        const float *__restrict b1 = b0 + n;
        const float *__restrict b2 = b1 + n;
        const float *__restrict b3 = b2 + n;
        for (int64_t j = 0; j < n; ++j) {
          float sum = acc[j];
          sum += a0 * b0[j];
          sum += a1 * b1[j];
          sum += a2 * b2[j];
          sum += a3 * b3[j];
          acc[j] = sum;
        }
      }
      for (; kk < k1; ++kk) {
        const float a = lhsRow[kk];
        const float *__restrict b = rhs + kk * n;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += a * b[j];
      }
      if (accHalf)
        roundToHalf(acc, n);
    }
    uint8_t *outRow = operands[GemmOutput] + i * outPitch;
    if (outType == ElementType::F32) {
      // Only the n * 4 data bytes; the row pitch equals them for f32.
      std::memcpy(outRow, acc, static_cast<size_t>(n) * sizeof(float));
    } else {
      for (int64_t j = 0; j < n; ++j)
        storeElement(outType, acc[j], outRow + j * outBytes);
    }
  }
}

std::optional<std::string> checkGemmTParams(const int64_t *params) {
  std::optional<std::string> error = checkGemmParams(params);
  if (error && error->rfind("gemm:", 0) == 0)
    return "gemm_t" + error->substr(4);
  return error;
}

uint64_t gemmTOperandBytes(const int64_t *params, unsigned operand) {
  // rhsT holds n rows of k elements; lhs and out are as for gemm.
  if (operand == GemmRhs)
    return static_cast<uint64_t>(params[GemmN]) *
           rowPitch(params[GemmK], static_cast<ElementType>(params[GemmIn]));
  return gemmOperandBytes(params, operand);
}

void executeGemmT(const int64_t *params, uint8_t *const *operands) {
  // Transposing rhsT back to k x n rows and running gemm gives the same
  // summation order and rounding points, bit for bit; only the estimate of
  // the two differs.
  const int64_t k = params[GemmK], n = params[GemmN];
  const auto inType = static_cast<ElementType>(params[GemmIn]);
  const unsigned bytes = elementBytes(inType);
  const uint64_t rhsTPitch = rowPitch(k, inType);
  const uint64_t rhsPitch = rowPitch(n, inType);
  thread_local std::vector<uint8_t> rhs;
  rhs.assign(static_cast<size_t>(k * rhsPitch), 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk)
      std::memcpy(&rhs[kk * rhsPitch + j * bytes],
                  operands[GemmRhs] + j * rhsTPitch + kk * bytes, bytes);
  uint8_t *gemmOperands[] = {operands[GemmLhs], rhs.data(), operands[GemmOutput]};
  executeGemm(params, gemmOperands);
}

} // namespace detail

namespace {
uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// A worker loop over `vectors` vectors of `instructions` each, split over
/// the workers by vectors: the busiest worker's instructions, each taking
/// `workersPerTile` tile cycles under barrel scheduling.
uint64_t workerLoopCycles(const TargetModel &target, uint64_t vectors,
                          uint64_t instructions) {
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  return workers * (target.workerPrologueInstructions +
                    ceilDiv(vectors, workers) * instructions);
}

} // namespace

namespace {
/// The overheads of one AMP code path: f16 (and f32) inputs, or f8.
struct AmpPath {
  uint64_t supervisor, loop, workerState, inPass, outPass, columnPass;
  uint64_t workerPass, oneRow, twoRows, idle;
};

AmpPath ampPath(const TargetModel &t, ElementType inType) {
  if (inType == ElementType::F8E4M3FN || inType == ElementType::F8E5M2)
    return {t.ampF8SupervisorOverheadCycles, t.ampF8LoopOverheadCycles,
            t.ampF8WorkerStateCycles,        t.ampF8InPassOverheadCycles,
            t.ampF8OutPassOverheadCycles,    t.ampF8ColumnPassOverheadCycles,
            t.ampF8WorkerPassInstructions,   t.ampF8WorkerOneRowInstructions,
            t.ampF8WorkerTwoRowInstructions, t.ampF8IdleWorkerInstructions};
  return {t.ampSupervisorOverheadCycles, t.ampLoopOverheadCycles,
          t.ampWorkerStateCycles,        t.ampInPassOverheadCycles,
          t.ampOutPassOverheadCycles,    t.ampColumnPassOverheadCycles,
          t.ampWorkerPassInstructions,   t.ampWorkerOneRowInstructions,
          t.ampWorkerTwoRowInstructions, t.ampIdleWorkerInstructions};
}

/// A worker's instructions for one pass over `rows` rows: poplibs has code
/// paths of their own for none, one and two rows.
uint64_t workerPassInstructions(const AmpPath &path, uint64_t rows,
                                uint64_t rowInstructions) {
  switch (rows) {
  case 0:
    return path.idle;
  case 1:
    return path.oneRow;
  case 2:
    return path.twoRows;
  default:
    return path.workerPass + rows * rowInstructions;
  }
}
} // namespace

GemmCycles estimateGemm(const TargetModel &target, const GemmCostShape &shape) {
  GemmCycles cycles;
  const int64_t m = shape.m, k = shape.k, n = shape.n;
  // No rows or columns means no vertex at all.
  if (m <= 0 || k <= 0 || n <= 0)
    return cycles;
  // f32 inputs have only the f32-partials path in the AMP.
  const ElementType partials = shape.inType == ElementType::F32
                                   ? ElementType::F32
                                   : shape.partialsType;
  const AmpPath path = ampPath(target, shape.inType);
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  // max(.., 1) guards a default-constructed model against division by zero.
  const uint64_t grainK = std::max<uint32_t>(target.ampGrainK(shape.inType), 1);
  const uint64_t passColumns = std::max<uint32_t>(target.ampPassColumns(partials), 1);
  const uint64_t macsPerCycle =
      std::max<uint32_t>(target.ampMacsPerCycle(shape.inType, partials), 1);
  const uint64_t inBytes = elementBytes(shape.inType);

  // The AMP works on whole passes: k and n pad up to the pass shape.
  cycles.passesK = ceilDiv(static_cast<uint64_t>(k), grainK);
  cycles.passesN = ceilDiv(static_cast<uint64_t>(n), passColumns);
  const uint64_t passes = cycles.passesK * cycles.passesN;

  // Per vertex: the call, poplibs' supervisor non-loop and loop overheads,
  // and the worker state every worker sets up once (poplibs: retention).
  cycles.vertex = target.vertexCallCycles + path.supervisor + path.loop +
                  workers * path.workerState;
  // Per pass its loop overhead; per later k pass and per n pass the loops
  // around them.
  cycles.passOverhead = passes * path.outPass +
                        (cycles.passesK - 1) * path.inPass +
                        cycles.passesN * path.columnPass;
  // Per pass the supervisor loads a grainK x passColumns block of the held
  // operand into the AMP at its memory class's load rate (poplibs numLoads).
  const uint64_t heldRate =
      std::max<uint32_t>(target.loadBytesPerCycle(shape.heldClass), 1);
  cycles.weightLoad = passes * ceilDiv(grainK * passColumns * inBytes, heldRate);
  // Per pass the m rows are split over the workers as evenly as possible
  // (q or q + 1 each); one row of a pass is grainK x passColumns MACs (4
  // worker instructions on ipu21, poplibs' coreCycles). The slowest worker
  // decides, and at least the least loaded one plus poplibs' tag.
  const uint64_t q = static_cast<uint64_t>(m) / workers;
  const uint64_t remainder = static_cast<uint64_t>(m) % workers;
  cycles.rowsPerWorker = q + (remainder ? 1 : 0);
  const uint64_t rowInstructions = ceilDiv(grainK * passColumns, macsPerCycle);
  const uint64_t fewer = workerPassInstructions(path, q, rowInstructions);
  const uint64_t more =
      remainder ? workerPassInstructions(path, q + 1, rowInstructions) : fewer;
  // In tile cycles: each worker instruction takes `workers` cycles.
  const uint64_t workerTile =
      std::max({workers * fewer, workers * more,
                workers * std::min(fewer, more) + target.ampMinWorkerTagCycles});
  // Split for the report: the workers' set-up, and the rows on top of it.
  const uint64_t setUpTile =
      workers * std::min<uint64_t>(std::max(fewer, more), path.workerPass);
  cycles.workerOverhead = passes * setUpTile;
  // The streamed rows cannot arrive faster than their memory class loads
  // them: m rows of grainK inputs per pass.
  const uint64_t streamedRate =
      std::max<uint32_t>(target.loadBytesPerCycle(shape.streamedClass), 1);
  const uint64_t loadRows =
      ceilDiv(static_cast<uint64_t>(m) * grainK * inBytes, streamedRate);
  cycles.streaming = passes * std::max(workerTile - setUpTile, loadRows);
  // Partials of another type than the output are converted by the workers.
  if (partials != shape.outType)
    cycles.epilogue = workerLoopCycles(target, ceilDiv(static_cast<uint64_t>(m) * n, 4),
                                       target.workerCastInstructions);
  cycles.total = cycles.vertex + cycles.passOverhead + cycles.weightLoad +
                 cycles.workerOverhead + cycles.streaming + cycles.epilogue;
  return cycles;
}

uint64_t estimateWorkerKernelCycles(const TargetModel &target, uint64_t vectors,
                                    uint64_t instructions) {
  if (vectors == 0)
    return 0;
  return target.vertexCallCycles + target.workerSupervisorCycles +
         workerLoopCycles(target, vectors, instructions);
}

} // namespace ipu
