//===- kernels-bench.cpp - Tile kernel estimates against their references -===//
//
// bench=kernels: the cycle estimates of the tile kernels (device/), one line
// per case. For the AMP GEMM it prints the estimator's breakdown next to two
// independent references:
//   poplibsCycles   poplibs' ConvPartial1x1 supervisor estimate (one conv
//                   group, zeroing on the first k pass): its half path for
//                   f16 inputs, its quarter path for f8 inputs with f16
//                   partials (poplibs has no f8 vertex with f32 partials),
//                   written out here from its published arithmetic, plus
//                   the model's vertexCallCycles, so the estimator is
//                   checked against numbers it does not share code with.
//                   f32 inputs get none. A conversion epilogue is compared
//                   with poplibs' cast vertex (poplibsCastCycles);
//   measuredCycles  the hardware measurement of one ConvPartial1x1 vertex
//                   [N x 16] x [16 x 16], f16 in, f16 partials, for N a
//                   multiple of 16 up to 2,048: tessellate-ipu's "IPU Peak
//                   Flops" published TFLOP/s, converted back to cycles
//                   (IPU/Device/AmpMeasurements.h). lineCycles is the
//                   4.0 N + 320 line fitted to them (machine-model.md).
//
//   kernels-bench                 the calibration table and a few other cases
//   kernels-bench --kernel gemm --shape MxKxN [--in f16] [--partials f32]
//                 [--out <partials>] [--held interleaved|standard]
//                 [--streamed standard|interleaved]
//   kernels-bench --kernel reduce --shape MxN --count C [--in f32] [--out f32]
//   kernels-bench --kernel copy --bytes B
//   every mode: [--target ipu21]
//
// A GEMM shape MxKxN is m streamed rows, k inner, n held columns (the
// GemmCostShape convention). Bad options print an error naming the option
// and exit with status 1.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/AmpMeasurements.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Device/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace ipu;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "kernels-bench: %s\n", message.c_str());
  return 1;
}

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// Sizes must fit the kernels' parameter range, [1, 2^24).
constexpr int64_t kMaxExtent = int64_t(1) << 24;

/// Parses `text` as exactly `dims` positive decimal sizes joined by 'x'.
/// strtoll alone would accept trailing junk and signs, which a bench must
/// not silently reinterpret.
std::optional<std::vector<int64_t>> parseShape(const std::string &text,
                                               unsigned dims) {
  std::vector<int64_t> sizes;
  size_t pos = 0;
  for (unsigned d = 0; d < dims; ++d) {
    if (d > 0) {
      if (pos >= text.size() || text[pos] != 'x')
        return std::nullopt;
      ++pos;
    }
    size_t begin = pos;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + (text[pos] - '0');
      if (value >= kMaxExtent)
        return std::nullopt;
      ++pos;
    }
    if (pos == begin || value < 1)
      return std::nullopt;
    sizes.push_back(value);
  }
  if (pos != text.size())
    return std::nullopt;
  return sizes;
}

/// Element types by their MLIR names, plus "f8" for f8E4M3FN: both f8
/// formats cost the same, and the short name is what people type.
std::optional<ElementType> parseType(const std::string &name) {
  if (name == "f8")
    return ElementType::F8E4M3FN;
  return parseElementType(name);
}

std::string typeName(ElementType type) {
  return std::string(elementTypeName(type));
}

std::string percent(double estimate, double reference) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f",
                100.0 * (estimate - reference) / reference);
  return buffer;
}

//===----------------------------------------------------------------------===//
// The poplibs reference for the AMP vertex.
//
// poplibs lib/poplin/PerformanceEstimation.hpp, ConvPartial1x1 supervisor
// estimate for half activations on the code path shared by 16 conv units
// with half partials and 8 conv units with float partials. The cycle
// constants are poplibs' own and deliberately not the TargetModel fields the
// estimator uses: the point is to catch the estimator drifting from them.
// The structure (workers, conv units, pass depth) comes from the target.
//===----------------------------------------------------------------------===//

/// Worker cycles saved by worker state retention, on every worker that has
/// rows, and the part of it retained across k passes (poplibs' pair 7, 3).
constexpr uint64_t kRetentionSaving = 7;
constexpr uint64_t kRetentionInChannelSaving = 3;
/// Worker cycles per streamed row of one pass (poplibs coreCycles, half).
constexpr uint64_t kCoreCyclesPerRow = 4;
/// Tile cycles the supervisor spends tagging the least busy worker: the
/// pass lasts at least that long after that worker finishes.
constexpr uint64_t kMinWorkerTagCycles = 14;

/// Worker cycles of one worker with `rows` rows in one pass. Without zeroing
/// (later k passes accumulate into the partials) each costs one more.
/// A worker with no rows has no work-list entry in poplibs (the caller drops
/// empty rows before the switch), so it costs nothing, and with fewer than
/// 6 rows the least busy worker's 0 makes the tag alone a lower bound.
uint64_t poplibsWorkerCycles(uint64_t rows, bool zeroing) {
  const uint64_t noZeroing = zeroing ? 0 : 1;
  uint64_t cycles = 0;
  switch (rows) {
  case 0:
    return 0;
  case 1:
    cycles = 32 + noZeroing;
    break;
  case 2:
    cycles = 41 + noZeroing;
    break;
  default:
    cycles = 37 + noZeroing + kCoreCyclesPerRow * (rows - 3);
    break;
  }
  return cycles - kRetentionSaving;
}

/// Tile cycles of one pass: `m` rows split as evenly as possible over the
/// workers, the busiest worker's cycles times the barrel interleave, and at
/// least the least busy worker's plus the tag.
uint64_t poplibsInnerCycles(uint64_t m, uint64_t workers, bool zeroing) {
  uint64_t maxCycles = 0, minCycles = UINT64_MAX;
  for (uint64_t w = 0; w < workers; ++w) {
    uint64_t rows = m / workers + (w < m % workers ? 1 : 0);
    uint64_t cycles = workers * poplibsWorkerCycles(rows, zeroing);
    maxCycles = std::max(maxCycles, cycles);
    minCycles = std::min(minCycles, cycles);
  }
  return std::max(maxCycles, minCycles + kMinWorkerTagCycles);
}

/// The whole vertex: supervisor overhead, per-worker retention set-up, the
/// first k pass (with zeroing) over every column pass, then every later k
/// pass (without). Each column pass of conv-units width is its own out
/// group, as poplibs plans the AMP with one conv unit per output channel.
uint64_t poplibsGemmCycles(const TargetModel &target,
                           const GemmCostShape &shape) {
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  const uint64_t grainK = std::max<uint32_t>(target.ampGrainK(shape.inType), 1);
  const uint64_t convUnits =
      std::max<uint32_t>(target.ampPassColumns(shape.partialsType), 1);
  // Each conv unit holds grainK inputs (32 bytes for f16 and f8 alike),
  // loaded at poplibs' convUnitCoeffLoadBytesPerCycle of 16 (ld128) whatever
  // memory class the estimator's held operand is in.
  const uint64_t weightBytesPerConvUnit = grainK * elementBytes(shape.inType);
  const uint64_t numLoads = convUnits * weightBytesPerConvUnit / 16;
  const uint64_t inGroups = ceilDiv(static_cast<uint64_t>(shape.k), grainK);
  const uint64_t outGroups = ceilDiv(static_cast<uint64_t>(shape.n), convUnits);
  const uint64_t m = static_cast<uint64_t>(shape.m);
  const uint64_t innerZero = poplibsInnerCycles(m, workers, true);
  const uint64_t innerNoZero = poplibsInnerCycles(m, workers, false);

  const uint64_t supervisor = 50;
  const uint64_t retention =
      workers * (kRetentionSaving + kRetentionInChannelSaving * (inGroups - 1));
  const uint64_t convGroupLoop = 12 + 1;
  const uint64_t laterInGroups =
      (inGroups - 1) * (15 + outGroups * (19 + (6 + numLoads + innerNoZero)));
  const uint64_t firstInGroup =
      (10 + 1) + outGroups * (18 + (7 + numLoads + innerZero));
  return supervisor + retention + convGroupLoop + laterInGroups + firstInGroup;
}

/// poplibs' separate estimate for quarter (f8) inputs, which only exists
/// with 16 conv units (f16 partials): every worker pays a fixed 20 cycles,
/// zeroing saves 5, and the supervisor loops cost more than on the half path.
/// Printed next to the half-path figure because the estimator charges f8 by
/// the half path.
uint64_t poplibsQuarterWorkerCycles(uint64_t rows, bool zeroing) {
  const uint64_t overhead = 20;
  const uint64_t zeroSaving = zeroing ? 5 : 0;
  switch (rows) {
  case 0:
    return overhead;
  case 1:
    return overhead + 17 - zeroSaving;
  case 2:
    return overhead + 22 - zeroSaving;
  default:
    return overhead + 29 - zeroSaving + kCoreCyclesPerRow * (rows - 3);
  }
}

uint64_t poplibsQuarterInnerCycles(uint64_t m, uint64_t workers, bool zeroing) {
  uint64_t maxCycles = 0, minCycles = UINT64_MAX;
  for (uint64_t w = 0; w < workers; ++w) {
    uint64_t rows = m / workers + (w < m % workers ? 1 : 0);
    uint64_t cycles = workers * poplibsQuarterWorkerCycles(rows, zeroing);
    maxCycles = std::max(maxCycles, cycles);
    minCycles = std::min(minCycles, cycles);
  }
  return std::max(maxCycles, minCycles + kMinWorkerTagCycles);
}

/// Out groups outside, k passes inside: per out group its loop, the zeroing
/// k pass and every later k pass after a sync, each with the worker calls.
uint64_t poplibsQuarterGemmCycles(const TargetModel &target,
                                  const GemmCostShape &shape) {
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  const uint64_t grainK = std::max<uint32_t>(target.ampGrainK(shape.inType), 1);
  const uint64_t convUnits =
      std::max<uint32_t>(target.ampPassColumns(ElementType::F16), 1);
  const uint64_t numLoads =
      convUnits * grainK * elementBytes(shape.inType) / 16;
  const uint64_t inGroups = ceilDiv(static_cast<uint64_t>(shape.k), grainK);
  const uint64_t outGroups = ceilDiv(static_cast<uint64_t>(shape.n), convUnits);
  const uint64_t m = static_cast<uint64_t>(shape.m);
  const uint64_t innerZero = poplibsQuarterInnerCycles(m, workers, true);
  const uint64_t innerNoZero = poplibsQuarterInnerCycles(m, workers, false);

  const uint64_t workerCalls = workers * 6;
  const uint64_t supervisor = 46;
  const uint64_t convGroupLoop = workers * 2 + 9;
  const uint64_t outGroupLoop = workers * 6 + 10;
  const uint64_t inGroupLoop = workers * 14 + 11 + workerCalls;
  const uint64_t inGroupLoopAfterSync = workers * 11 + 6 + workerCalls;
  return supervisor + convGroupLoop +
         outGroups *
             (outGroupLoop + inGroupLoop + numLoads + innerZero +
              (inGroups - 1) * (inGroupLoopAfterSync + numLoads + innerNoZero));
}

/// poplibs charges the partials-to-output conversion as its own cast vertex
/// (estimateCastCycles): each worker's share of the elements, bound by
/// whichever of the 64-bit partials loads or output stores is more, plus 26.
uint64_t poplibsCastCycles(const TargetModel &target, uint64_t elements,
                           ElementType partials, ElementType out) {
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  const uint64_t perWorker = ceilDiv(elements, workers);
  const uint64_t loads = ceilDiv(perWorker, 8 / elementBytes(partials));
  const uint64_t stores = ceilDiv(perWorker, 8 / elementBytes(out));
  return (std::max(loads, stores) + 26) * workers;
}

//===----------------------------------------------------------------------===//
// Cases.
//===----------------------------------------------------------------------===//

void printGemm(const std::string &name, const TargetModel &target,
               const GemmCostShape &shape) {
  const GemmCycles cycles = estimateGemm(target, shape);
  // The estimator accumulates f32 inputs in f32 whatever was asked; the
  // callers reject that combination, so partialsType is the one used.
  const uint64_t peak =
      target.ampMacsPerCycle(shape.inType, shape.partialsType);
  const double macs = static_cast<double>(shape.m) * shape.k * shape.n;
  std::printf(
      "bench=kernels case=%s target=%s kernel=gemm "
      "shape=%lldx%lldx%lld in=%s partials=%s out=%s held=%s "
      "streamed=%s cycles=%llu vertexCycles=%llu "
      "passOverheadCycles=%llu weightLoadCycles=%llu "
      "workerOverheadCycles=%llu streamingCycles=%llu "
      "epilogueCycles=%llu passes=%llu passesK=%llu passesN=%llu "
      "rowsPerWorker=%llu macsPerCycle=%.2f peakMacsPerCycle=%llu",
      name.c_str(), target.name.c_str(), (long long)shape.m, (long long)shape.k,
      (long long)shape.n, typeName(shape.inType).c_str(),
      typeName(shape.partialsType).c_str(), typeName(shape.outType).c_str(),
      std::string(memoryClassName(shape.heldClass)).c_str(),
      std::string(memoryClassName(shape.streamedClass)).c_str(),
      (unsigned long long)cycles.total, (unsigned long long)cycles.vertex,
      (unsigned long long)cycles.passOverhead,
      (unsigned long long)cycles.weightLoad,
      (unsigned long long)cycles.workerOverhead,
      (unsigned long long)cycles.streaming, (unsigned long long)cycles.epilogue,
      (unsigned long long)(cycles.passesK * cycles.passesN),
      (unsigned long long)cycles.passesK, (unsigned long long)cycles.passesN,
      (unsigned long long)cycles.rowsPerWorker,
      cycles.total ? macs / cycles.total : 0.0, (unsigned long long)peak);
  // poplibs' formula: the half path for f16 inputs, the quarter path for f8
  // inputs (which poplibs has with 16 conv units, so f16 partials, only).
  // It charges the partials-to-output cast as a separate vertex, so its
  // error is only printed where the estimate has no epilogue either.
  std::optional<uint64_t> poplibs;
  if (shape.inType == ElementType::F16)
    poplibs = poplibsGemmCycles(target, shape) + target.vertexCallCycles;
  else if (isF8(shape.inType) && shape.partialsType == ElementType::F16)
    poplibs = poplibsQuarterGemmCycles(target, shape) + target.vertexCallCycles;
  if (poplibs) {
    std::printf(" poplibsCycles=%llu", (unsigned long long)*poplibs);
    if (cycles.epilogue == 0)
      std::printf(" errorVsPoplibsPercent=%s",
                  percent(cycles.total, *poplibs).c_str());
  }
  if (cycles.epilogue != 0)
    std::printf(" poplibsCastCycles=%llu",
                (unsigned long long)poplibsCastCycles(
                    target, static_cast<uint64_t>(shape.m) * shape.n,
                    shape.partialsType, shape.outType));
  // The measured vertex: f16 in, f16 partials stored as f16, [N x 16] x
  // [16 x 16]. Where its operands lived is not recorded, so any class.
  if (shape.k == 16 && shape.n == 16 && shape.inType == ElementType::F16 &&
      shape.partialsType == ElementType::F16 &&
      shape.outType == ElementType::F16) {
    const uint64_t line = 4 * static_cast<uint64_t>(shape.m) + 320;
    std::printf(" lineCycles=%llu errorVsLinePercent=%s",
                (unsigned long long)line, percent(cycles.total, line).c_str());
    if (std::optional<double> measured = measuredAmpVertexCycles(shape.m)) {
      const uint64_t rounded = static_cast<uint64_t>(std::llround(*measured));
      std::printf(" measuredCycles=%llu errorVsMeasuredPercent=%s",
                  (unsigned long long)rounded,
                  percent(cycles.total, rounded).c_str());
    }
  }
  std::printf("\n");
}

void printReduce(const std::string &name, const TargetModel &target, int64_t m,
                 int64_t n, int64_t count, ElementType in, ElementType out) {
  const uint64_t cycles = estimateReduceCycles(target, m, n, count, in, out);
  const uint64_t inBytes =
      static_cast<uint64_t>(m) * n * count * elementBytes(in);
  std::printf("bench=kernels case=%s target=%s kernel=reduce shape=%lldx%lld "
              "count=%lld in=%s out=%s cycles=%llu inBytes=%llu "
              "bytesPerCycle=%.2f\n",
              name.c_str(), target.name.c_str(), (long long)m, (long long)n,
              (long long)count, typeName(in).c_str(), typeName(out).c_str(),
              (unsigned long long)cycles, (unsigned long long)inBytes,
              cycles ? static_cast<double>(inBytes) / cycles : 0.0);
}

void printCopy(const std::string &name, const TargetModel &target,
               uint64_t bytes) {
  const uint64_t cycles = estimateCopyCycles(target, bytes);
  std::printf("bench=kernels case=%s target=%s kernel=copy bytes=%llu "
              "cycles=%llu bytesPerCycle=%.2f\n",
              name.c_str(), target.name.c_str(), (unsigned long long)bytes,
              (unsigned long long)cycles,
              cycles ? static_cast<double>(bytes) / cycles : 0.0);
}

/// A body op on earlier values (inputs first, then ops in order).
BodyOp bodyOp(BodyOpKind kind, ElementType type, std::initializer_list<uint32_t> operands,
              double constant = 0) {
  BodyOp op;
  op.kind = kind;
  op.type = type;
  op.constant = constant;
  unsigned i = 0;
  for (uint32_t operand : operands)
    op.operands[i++] = operand;
  return op;
}

/// The SigLIP MLP's epilogues as the import builds them: bias + GELU tanh
/// in f16 (torch-mlir's ops, x^3 as two multiplies), the same ending in a
/// cast to f8 (the f8 configuration), and the f16 -> f8 cast of the input.
std::vector<std::pair<std::string, ElementwiseBody>> siglipBodies() {
  const ElementType f16 = ElementType::F16, f8 = ElementType::F8E4M3FN;
  using K = BodyOpKind;
  ElementwiseBody gelu;
  gelu.inputs = {{f16, Broadcast::Full}, {f16, Broadcast::Row}};
  gelu.ops = {bodyOp(K::Constant, f16, {}, 0.044708251953125),
              bodyOp(K::Constant, f16, {}, 0.7978515625),
              bodyOp(K::Constant, f16, {}, 1.0),
              bodyOp(K::Constant, f16, {}, 0.5),
              bodyOp(K::AddF, f16, {0, 1}),      // 6: x = in + bias
              bodyOp(K::MulF, f16, {6, 6}),      // 7
              bodyOp(K::MulF, f16, {7, 6}),      // 8: x^3
              bodyOp(K::MulF, f16, {8, 2}),      // 9
              bodyOp(K::AddF, f16, {6, 9}),      // 10
              bodyOp(K::MulF, f16, {10, 3}),     // 11
              bodyOp(K::Tanh, f16, {11}),        // 12
              bodyOp(K::AddF, f16, {12, 4}),     // 13
              bodyOp(K::MulF, f16, {13, 5}),     // 14
              bodyOp(K::MulF, f16, {6, 14})};    // 15
  gelu.result = 15;
  gelu.resultType = f16;
  ElementwiseBody geluF8 = gelu;
  geluF8.ops.push_back(bodyOp(K::TruncF, f8, {15}));
  geluF8.result = 16;
  geluF8.resultType = f8;
  ElementwiseBody cast;
  cast.inputs = {{f16, Broadcast::Full}};
  cast.ops = {bodyOp(K::TruncF, f8, {0})};
  cast.result = 1;
  cast.resultType = f8;
  return {{"bias-gelu-tanh-f16", gelu}, {"bias-gelu-tanh-f16-to-f8", geluF8},
          {"cast-f16-to-f8", cast}};
}

void printElementwise(const std::string &name, const TargetModel &target,
                      const ElementwiseBody &body, int64_t rows, int64_t cols) {
  ElementwiseCycles cycles = estimateElementwise(target, body, rows, cols);
  std::printf("bench=kernels case=%s-%lldx%lld target=%s kernel=elementwise "
              "shape=%lldx%lld lanes=%u instructionsPerVector=%.2f vectors=%llu "
              "rowsPerWorker=%llu cycles=%llu cyclesPerElement=%.2f codeBytes=%llu\n",
              name.c_str(), (long long)rows, (long long)cols, target.name.c_str(),
              (long long)rows, (long long)cols, cycles.lanes,
              cycles.instructionsPerVector, (unsigned long long)cycles.vectors,
              (unsigned long long)cycles.rowsPerWorker,
              (unsigned long long)cycles.total,
              static_cast<double>(cycles.total) / double(rows * cols),
              (unsigned long long)elementwiseCodeBytes(target, body));
}

std::string gemmCaseName(const GemmCostShape &s) {
  std::string name = "gemm-" + std::to_string(s.m) + "x" + std::to_string(s.k) +
                     "x" + std::to_string(s.n) + "-" + typeName(s.inType) +
                     "-" + typeName(s.partialsType);
  if (s.outType != s.partialsType)
    name += "-" + typeName(s.outType);
  if (s.heldClass != MemoryClass::Interleaved)
    name += "-held-" + std::string(memoryClassName(s.heldClass));
  if (s.streamedClass != MemoryClass::Standard)
    name += "-streamed-" + std::string(memoryClassName(s.streamedClass));
  return name;
}

void runGemm(const TargetModel &target, const GemmCostShape &shape,
             const std::string &prefix = "") {
  printGemm(prefix + gemmCaseName(shape), target, shape);
}

/// The default cases: the calibration table first (the figures
/// docs/Calibration.md quotes), then the f32-partials rerun of it, then
/// multi-pass shapes from the SigLIP MLP and the other kernels.
void runDefaults(const TargetModel &target) {
  const ElementType f32 = ElementType::F32, f16 = ElementType::F16,
                    f8 = ElementType::F8E4M3FN;
  const MemoryClass interleaved = MemoryClass::Interleaved,
                    standard = MemoryClass::Standard;
  const int64_t calibrationRows[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
  for (int64_t rows : calibrationRows)
    runGemm(target, {rows, 16, 16, f16, f16, f16, interleaved}, "calibration-");
  // f32 partials halve the conv units: two column passes for n = 16.
  for (int64_t rows : calibrationRows)
    runGemm(target, {rows, 16, 16, f16, f32, f32, interleaved}, "calibration-");
  // Fewer than 3 rows per worker take poplibs' short-row code paths.
  runGemm(target, {4, 16, 16, f16, f16, f16, interleaved});
  // Rows divisible by the workers: poplibs' tag on the least busy worker.
  runGemm(target, {96, 16, 16, f16, f16, f16, interleaved});
  runGemm(target, {512, 16, 16, f16, f16, f16, standard});
  runGemm(target, {512, 16, 16, f16, f16, f16, interleaved, interleaved});
  // One tile of SigLIP fc1 (729 x 1152 x 4304 over 1472 tiles) and of fc2,
  // each with 72 and 269 k passes.
  runGemm(target, {135, 1152, 16, f16, f32, f32, interleaved});
  runGemm(target, {135, 1152, 16, f16, f32, f16, interleaved});
  runGemm(target, {16, 4304, 135, f16, f32, f32, interleaved});
  runGemm(target, {135, 1152, 16, f16, f16, f16, interleaved});
  runGemm(target, {32, 1152, 32, f8, f16, f16, interleaved});
  runGemm(target, {32, 1152, 32, f8, f32, f32, interleaved});
  runGemm(target, {135, 1152, 16, f8, f16, f32, interleaved});
  runGemm(target, {512, 16, 16, f32, f32, f32, interleaved});
  // Reductions that finish a k split over tiles, and weight staging copies.
  printReduce("reduce-135x16-c8-f32-f16", target, 135, 16, 8, f32, f16);
  printReduce("reduce-135x16-c8-f32-f32", target, 135, 16, 8, f32, f32);
  printReduce("reduce-64x128-c2-f16-f16", target, 64, 128, 2, f16, f16);
  printCopy("copy-64", target, 64);
  printCopy("copy-36864", target, 36864);
  // Generated kernels on the SigLIP MLP's blocks: fc1's output sub-blocks
  // (2 x 1076 with a bias row) and an arriving input row (1 x 1152).
  for (const auto &[name, body] : siglipBodies()) {
    printElementwise(name, target, body, 2, 1076);
    printElementwise(name, target, body, 1, 1152);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string kernel, shape, count, bytes, targetName = "ipu21";
  std::optional<std::string> in, partials, out, held, streamed;
  // Which options were given, so options of another kernel are refused
  // instead of silently ignored.
  std::vector<std::string> given;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return fail("option '" + arg + "' is unknown or has no value");
    std::string value = argv[++i];
    if (arg == "--kernel")
      kernel = value;
    else if (arg == "--shape")
      shape = value;
    else if (arg == "--count")
      count = value;
    else if (arg == "--bytes")
      bytes = value;
    else if (arg == "--in")
      in = value;
    else if (arg == "--partials")
      partials = value;
    else if (arg == "--out")
      out = value;
    else if (arg == "--held")
      held = value;
    else if (arg == "--streamed")
      streamed = value;
    else if (arg == "--target")
      targetName = value;
    else
      return fail("unknown option '" + arg + "'");
    if (std::find(given.begin(), given.end(), arg) != given.end())
      return fail("option '" + arg + "' given twice");
    given.push_back(arg);
  }
  std::optional<TargetModel> target = TargetModel::byName(targetName);
  if (!target)
    return fail("--target: unknown target '" + targetName +
                "'; known: " + TargetModel::knownNames());

  if (kernel.empty()) {
    for (const std::string &option : given)
      if (option != "--target")
        return fail("option '" + option + "' needs --kernel gemm|reduce|copy");
    runDefaults(*target);
    return 0;
  }

  // The options each kernel takes; --kernel and --target apply to all.
  std::vector<std::string> allowed;
  if (kernel == "gemm")
    allowed = {"--shape", "--in",   "--partials",
               "--out",   "--held", "--streamed"};
  else if (kernel == "reduce")
    allowed = {"--shape", "--count", "--in", "--out"};
  else if (kernel == "copy")
    allowed = {"--bytes"};
  else
    return fail("--kernel: unknown kernel '" + kernel +
                "'; known: gemm, reduce, copy");
  for (const std::string &option : given)
    if (option != "--kernel" && option != "--target" &&
        std::find(allowed.begin(), allowed.end(), option) == allowed.end())
      return fail("option '" + option + "' does not apply to --kernel " +
                  kernel);

  // f32 or f16, the partials and output types every kernel supports.
  auto accumulatorType =
      [](const std::string &option,
         const std::string &name) -> std::optional<ElementType> {
    std::optional<ElementType> type = parseType(name);
    if (!type || (*type != ElementType::F32 && *type != ElementType::F16)) {
      fail(option + " must be f32 or f16, got '" + name + "'");
      return std::nullopt;
    }
    return type;
  };

  if (kernel == "copy") {
    if (bytes.empty())
      return fail("--kernel copy needs --bytes B");
    std::optional<std::vector<int64_t>> value = parseShape(bytes, 1);
    // The copy kernel takes up to 2^32 bytes; tile memory is far smaller,
    // and parseShape's 2^24 limit already covers every tile.
    if (!value)
      return fail("--bytes must be a positive size below 2^24, got '" + bytes +
                  "'");
    printCopy("copy-" + bytes, *target, static_cast<uint64_t>((*value)[0]));
    return 0;
  }

  if (kernel == "reduce") {
    if (shape.empty())
      return fail("--kernel reduce needs --shape MxN");
    if (count.empty())
      return fail("--kernel reduce needs --count C");
    std::optional<std::vector<int64_t>> sizes = parseShape(shape, 2);
    if (!sizes)
      return fail("--shape must be MxN with sizes in [1, 2^24), got '" + shape +
                  "'");
    std::optional<std::vector<int64_t>> blocks = parseShape(count, 1);
    if (!blocks)
      return fail("--count must be a size in [1, 2^24), got '" + count + "'");
    std::optional<ElementType> inType =
        accumulatorType("--in", in.value_or("f32"));
    if (!inType)
      return 1;
    std::optional<ElementType> outType =
        accumulatorType("--out", out.value_or(typeName(*inType)));
    if (!outType)
      return 1;
    int64_t m = (*sizes)[0], n = (*sizes)[1], c = (*blocks)[0];
    printReduce("reduce-" + shape + "-c" + count + "-" + typeName(*inType) +
                    "-" + typeName(*outType),
                *target, m, n, c, *inType, *outType);
    return 0;
  }

  // gemm.
  if (shape.empty())
    return fail("--kernel gemm needs --shape MxKxN");
  std::optional<std::vector<int64_t>> sizes = parseShape(shape, 3);
  if (!sizes)
    return fail("--shape must be MxKxN with sizes in [1, 2^24), got '" + shape +
                "'");
  std::optional<ElementType> inType = parseType(in.value_or("f16"));
  if (!inType)
    return fail("--in must be f32, f16, f8 (f8E4M3FN) or f8E5M2, got '" + *in +
                "'");
  // f32 partials by default: what a GEMM with an f32 result runs on.
  std::optional<ElementType> partialsType =
      accumulatorType("--partials", partials.value_or("f32"));
  if (!partialsType)
    return 1;
  if (*inType == ElementType::F32 && *partialsType != ElementType::F32)
    return fail("--partials must be f32 with --in f32: the AMP accumulates "
                "f32 inputs in f32");
  // The output defaults to the partials type: no conversion epilogue.
  std::optional<ElementType> outType =
      accumulatorType("--out", out.value_or(typeName(*partialsType)));
  if (!outType)
    return 1;
  std::optional<MemoryClass> heldClass =
      parseMemoryClass(held.value_or("interleaved"));
  if (!heldClass)
    return fail("--held must be interleaved or standard, got '" + *held + "'");
  std::optional<MemoryClass> streamedClass =
      parseMemoryClass(streamed.value_or("standard"));
  if (!streamedClass)
    return fail("--streamed must be standard or interleaved, got '" +
                *streamed + "'");
  runGemm(*target, {(*sizes)[0], (*sizes)[1], (*sizes)[2], *inType,
                    *partialsType, *outType, *heldClass, *streamedClass});
  return 0;
}
