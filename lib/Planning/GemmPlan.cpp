//===- GemmPlan.cpp - Partition plans for one matmul and their cost -------===//

#include "IPU/Planning/GemmPlan.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Layout/BlockLayout.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>
#include <tuple>

using namespace ipu;

static uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static constexpr uint64_t kWord = TargetModel::kExchangeWordBytes;
/// `bytes` rounded up to whole exchange words, as rows are stored.
static uint64_t alignToWords(uint64_t bytes) { return (bytes + kWord - 1) / kWord * kWord; }

std::string_view ipu::reductionName(Reduction reduction) {
  return reduction == Reduction::Staged ? "staged" : "complete";
}

std::optional<Reduction> ipu::parseReduction(std::string_view name) {
  if (name == "complete")
    return Reduction::Complete;
  if (name == "staged")
    return Reduction::Staged;
  return std::nullopt;
}

std::string GemmPlan::str() const {
  std::ostringstream os;
  os << "rows=" << rows << " cols=" << cols << " inner=" << inner
     << " orientation=" << (swapped ? "swapped" : "normal")
     << " weights=" << memoryClassName(weights)
     << " reduction=" << reductionName(reduction)
     << " staging=" << (localStaging ? "true" : "false")
     << " partials=" << elementTypeName(partials);
  if (gatheredWeights)
    os << " gathered=true";
  if (serial > 1)
    os << " serial=" << serial;
  return os.str();
}

bool GemmPlanConstraints::matches(const GemmPlan &plan) const {
  return (!rows || *rows == plan.rows) && (!cols || *cols == plan.cols) &&
         (!inner || *inner == plan.inner) &&
         (!swapped || *swapped == plan.swapped) &&
         (!weights || *weights == plan.weights) &&
         (!reduction || *reduction == plan.reduction) &&
         (!localStaging || *localStaging == plan.localStaging) &&
         (!partials || *partials == plan.partials) &&
         (!gatheredWeights || *gatheredWeights == plan.gatheredWeights) &&
         (!serial || *serial == plan.serial);
}

void GemmPlanConstraints::override(const GemmPlanConstraints &other) {
  auto take = [](auto &field, const auto &value) {
    if (value)
      field = value;
  };
  take(rows, other.rows);
  take(cols, other.cols);
  take(inner, other.inner);
  take(swapped, other.swapped);
  take(weights, other.weights);
  take(reduction, other.reduction);
  take(localStaging, other.localStaging);
  take(partials, other.partials);
  take(gatheredWeights, other.gatheredWeights);
  take(serial, other.serial);
}

bool GemmPlanConstraints::empty() const {
  return !rows && !cols && !inner && !swapped && !weights && !reduction &&
         !localStaging && !partials && !gatheredWeights && !serial;
}

std::string GemmPlanConstraints::str() const {
  std::ostringstream os;
  const char *sep = "";
  auto field = [&](const char *name, auto value) {
    os << sep << name << "=" << value;
    sep = " ";
  };
  if (rows)
    field("rows", *rows);
  if (cols)
    field("cols", *cols);
  if (inner)
    field("inner", *inner);
  if (swapped)
    field("orientation", *swapped ? "swapped" : "normal");
  if (weights)
    field("weights", memoryClassName(*weights));
  if (reduction)
    field("reduction", reductionName(*reduction));
  if (localStaging)
    field("staging", *localStaging ? "true" : "false");
  if (partials)
    field("partials", elementTypeName(*partials));
  if (gatheredWeights)
    field("gathered", *gatheredWeights ? "true" : "false");
  if (serial)
    field("serial", *serial);
  return os.str();
}

bool ipu::serialSplitPossible(const GemmProblem &problem) {
  return problem.batches == 1 && !problem.lhsTransposed && problem.rhsIsWeight &&
         problem.rowReductions.empty();
}

GemmProblem ipu::serialChunk(const GemmProblem &problem, uint32_t serial) {
  GemmProblem chunk = problem;
  chunk.m = problem.m / std::max<uint32_t>(serial, 1);
  chunk.epilogue = nullptr;
  chunk.lhsSpread = true;
  return chunk;
}

uint32_t ipu::activationArrivalTiles(const GemmProblem &problem,
                                     const TargetModel &target) {
  return static_cast<uint32_t>(
      std::min<int64_t>(problem.m, static_cast<int64_t>(target.tiles)));
}

bool ipu::activationArrivesInPlace(const GemmProblem &problem,
                                   const GemmPlan &plan,
                                   const TargetModel &target) {
  // Arrival splits the rows over min(M, tiles) tiles, block i on tile i:
  // exactly the A layout of a plan with that many row blocks and no column
  // or inner split.
  return !problem.lhsTransposed && !problem.lhsSpread &&
         plan.rows == activationArrivalTiles(problem, target) &&
         plan.cols == 1 && plan.inner == 1;
}

/// Whether every inner block of K starts on a 32-bit word of an A row, so
/// the gather moves whole words.
static bool innerSplitAligned(const GemmProblem &problem, uint32_t inner) {
  const uint64_t bytes = elementBytes(problem.inType);
  for (uint32_t p = 1; p < inner; ++p)
    if (BlockLayout::splitBegin(problem.k, inner, p) * bytes % kWord != 0)
      return false;
  return true;
}

bool ipu::orientationPossible(const GemmProblem &problem, bool swapped) {
  return problem.rhsIsWeight || swapped == problem.rhsTransposed;
}

std::optional<std::string> ipu::tilesPerBatch(const TargetModel &target,
                                              const GemmProblem &problem,
                                              uint32_t &tiles) {
  if (problem.batches < 1 || problem.batches > int64_t(target.tiles))
    return std::to_string(problem.batches) + " batches do not fit side by side "
           "on the " + std::to_string(target.tiles) + " tiles of '" +
           target.name + "' (batches sharing a tile are not supported yet)";
  tiles = static_cast<uint32_t>(target.tiles / problem.batches);
  return std::nullopt;
}

std::optional<std::string> ipu::checkGemmPlan(const TargetModel &target,
                                              const GemmProblem &problem,
                                              const GemmPlan &plan) {
  if (plan.serial < 1)
    return "serial must be at least 1";
  if (plan.serial > 1) {
    if (!serialSplitPossible(problem))
      return "a serial split needs a 2-D product (batches folded into the "
             "rows) of an untransposed A by resident weights, with no row "
             "reduction of its result";
    if (problem.m % plan.serial != 0)
      return "serial=" + std::to_string(plan.serial) + " does not divide the " +
             std::to_string(problem.m) + " rows of A";
    if (plan.gatheredWeights)
      return "a serial split keeps its weights resident, not gathered";
    GemmPlan chunkPlan = plan;
    chunkPlan.serial = 1;
    if (std::optional<std::string> why =
            checkGemmPlan(target, serialChunk(problem, plan.serial), chunkPlan))
      return "a serial chunk of " + std::to_string(problem.m / plan.serial) +
             " rows: " + *why;
    // The epilogue's word grain on C's column blocks.
    GemmProblem whole = problem;
    whole.m = problem.m / plan.serial;
    return checkGemmPlan(target, whole, chunkPlan);
  }
  if (plan.rows < 1 || plan.cols < 1 || plan.inner < 1)
    return "partitions must be at least 1";
  if (plan.rows > problem.m || plan.cols > problem.n || plan.inner > problem.k)
    return "more partitions than rows, columns or inner elements";
  if (uint64_t(plan.rows) * plan.cols * plan.inner > target.tiles)
    return "rows x cols x inner = " +
           std::to_string(uint64_t(plan.rows) * plan.cols * plan.inner) +
           " exceeds the " + std::to_string(target.tiles) + " tiles of '" +
           target.name + "'";
  if (!orientationPossible(problem, plan.swapped))
    return plan.swapped
               ? "orientation=swapped needs B stored transposed: B must be a "
                 "weight or an activation given transposed"
               : "orientation=normal needs B [K x N], and B is an activation "
                 "given transposed (no kernel transposes it)";
  if (plan.swapped && plan.localStaging)
    return "local staging copies B for the AMP, which holds A when swapped";
  if (!innerSplitAligned(problem, plan.inner))
    return "inner=" + std::to_string(plan.inner) + " cuts " +
           std::string(elementTypeName(problem.inType)) +
           " rows of A off 32-bit word boundaries";
  if (problem.lhsTransposed)
    // A^T is gathered by exchange: its column blocks (A's row blocks) must
    // start on words of its rows.
    for (uint32_t i = 1; i < plan.rows; ++i)
      if (BlockLayout::splitBegin(problem.m, plan.rows, i) *
              elementBytes(problem.inType) % kWord != 0)
        return "rows=" + std::to_string(plan.rows) + " cuts " +
               std::string(elementTypeName(problem.inType)) +
               " rows of A^T off 32-bit word boundaries, and A^T is an "
               "activation gathered by exchange";
  if (plan.partials != ElementType::F32 && plan.partials != ElementType::F16)
    return "partials must be f32 or f16";
  if (plan.partials == ElementType::F32 && problem.accType == ElementType::F16)
    return "the op accumulates in f16: partials=f32 would change its numerics";
  if (plan.partials == ElementType::F16 && problem.accType != ElementType::F16 &&
      !problem.allowHalfPartials)
    return "partials=f16 for an f32 accumulation must be allowed (pass option "
           "partials=f16 or any, or the op's constraints)";
  if (plan.inner > 1 && elementBytes(plan.partials) == 2) {
    // Partials of f16 sit side by side in the reduction's rows: each block
    // must be a whole number of 32-bit words.
    for (uint32_t j = 0; j < plan.cols; ++j)
      if (BlockLayout::splitSize(problem.n, plan.cols, j) % 2 != 0)
        return "inner > 1 with f16 partial sums needs even column blocks";
  }
  if (!problem.rhsIsWeight && elementBytes(problem.inType) < 4) {
    // An activation B is gathered into the plan's layout by exchange, in
    // 32-bit words: every column block of B must start on a word of its
    // rows. (Weights arrive by host stream, which has no such grain.)
    for (uint32_t j = 1; j < plan.cols; ++j)
      if (BlockLayout::splitBegin(problem.n, plan.cols, j) *
              elementBytes(problem.inType) % kWord != 0)
        return "cols=" + std::to_string(plan.cols) + " cuts " +
               std::string(elementTypeName(problem.inType)) +
               " rows of B off 32-bit word boundaries, and B is an "
               "activation gathered by exchange";
  }
  // Narrow results feed other operations: every column block of C (and of
  // the epilogue's result, in C's layout) must start on a 32-bit word of
  // its rows so that any rearrangement moves whole words.
  ElementType stored = problem.outType;
  if (problem.epilogue &&
      elementBytes(problem.epilogue->resultType) < elementBytes(stored))
    stored = problem.epilogue->resultType;
  if (elementBytes(stored) < 4 && problem.resultExchanged) {
    for (uint32_t j = 1; j < plan.cols; ++j)
      if (BlockLayout::splitBegin(problem.n, plan.cols, j) *
              elementBytes(stored) % kWord != 0)
        return "cols=" + std::to_string(plan.cols) + " cuts " +
               std::string(elementTypeName(stored)) + " rows of " +
               (stored == problem.outType ? "C" : "the epilogue's result") +
               " off 32-bit word boundaries";
  }
  if (plan.inner == 1 && plan.reduction != Reduction::Complete)
    return "a staged reduction needs inner > 1";
  if (plan.reduction == Reduction::Staged &&
      problem.m / plan.rows < static_cast<int64_t>(plan.inner))
    return "a staged reduction splits each block's " +
           std::to_string(problem.m / plan.rows) + " rows into " +
           std::to_string(plan.inner) + " parts";
  if (plan.localStaging && plan.weights != MemoryClass::Standard)
    return "local staging copies standard weights to interleaved memory";
  if (plan.gatheredWeights) {
    if (!problem.rhsIsWeight)
      return "gathered weights need B to be a weight; an activation B is "
             "gathered anyway";
    if (plan.rows < 2)
      return "gathered weights need rows > 1: with one row block nothing is "
             "replicated";
    if (plan.weights != MemoryClass::Interleaved || plan.localStaging)
      return "gathered weights are gathered into interleaved memory, without "
             "staging";
  }
  return std::nullopt;
}

namespace {

/// The largest block of B a tile holds, as stored: blockInner rows of
/// blockCols elements, or the transpose when swapped (a row per column),
/// each row padded to words.
struct WeightBlock {
  uint64_t rows = 0, pitch = 0;
  uint64_t bytes() const { return rows * pitch; }
  /// A gathered weight's home share: the block's rows split over its
  /// `replicas` (gatheredWeightHome).
  uint64_t homeBytes(uint64_t replicas) const {
    return ceilDiv(rows, replicas) * pitch;
  }
};

WeightBlock weightBlockOf(const GemmProblem &problem, const GemmPlan &plan) {
  const uint64_t blockCols = ceilDiv(problem.n, plan.cols);
  const uint64_t blockInner = ceilDiv(problem.k, plan.inner);
  const uint64_t in = elementBytes(problem.inType);
  return plan.swapped ? WeightBlock{blockCols, alignToWords(blockInner * in)}
                      : WeightBlock{blockInner, alignToWords(blockCols * in)};
}

/// The largest block each step touches, as lowered.
struct PlanShape {
  uint64_t blockRows, blockCols, blockInner; ///< Largest m_i, n_j, k_p.
  uint64_t subRows;        ///< Largest staged sub-block (inner > 1).
  ElementType partialType; ///< What the GEMM writes.
  ElementType ampPartials; ///< What the AMP accumulates in.
};

PlanShape shapeOf(const GemmProblem &problem, const GemmPlan &plan) {
  PlanShape shape;
  shape.blockRows = ceilDiv(problem.m, plan.rows);
  shape.blockCols = ceilDiv(problem.n, plan.cols);
  shape.blockInner = ceilDiv(problem.k, plan.inner);
  shape.subRows = ceilDiv(shape.blockRows, plan.inner);
  shape.partialType = plan.inner > 1 ? plan.partials : problem.outType;
  shape.ampPartials = plan.partials;
  return shape;
}

/// The AMP's view of one tile's block: normal holds B (in `heldClass`) and
/// streams the gathered rows of A from standard memory; swapped holds A
/// (gathered, standard) and streams the columns of B, stored as rows of B^T
/// in `weightClass`.
GemmCostShape gemmShape(const GemmProblem &problem, const PlanShape &shape,
                        MemoryClass weightClass, bool swapped) {
  return GemmCostShape(
      static_cast<int64_t>(swapped ? shape.blockCols : shape.blockRows),
      static_cast<int64_t>(shape.blockInner),
      static_cast<int64_t>(swapped ? shape.blockRows : shape.blockCols),
      problem.inType, shape.ampPartials, shape.partialType,
      swapped ? MemoryClass::Standard : weightClass,
      swapped ? weightClass : MemoryClass::Standard);
}

uint32_t syncCount(const GemmPlan &plan, bool gather) {
  // A sync on either side of the gather and of the reduction exchange, one
  // before streaming out.
  return 1 + (gather ? 2 : 0) + (plan.inner > 1 ? 2 : 0);
}

/// A lower bound on the total of every variant of a partition: its GEMM at
/// the fastest weight load and the cheapest partials it may use, its syncs
/// and one exchange phase's fixed cost.
/// The partials the op allows: what it accumulates in, and f16 for an f32
/// accumulation when the user allows it.
std::vector<ElementType> allowedPartials(const GemmProblem &problem) {
  if (problem.accType == ElementType::F16)
    return {ElementType::F16};
  if (problem.allowHalfPartials)
    return {ElementType::F32, ElementType::F16};
  return {ElementType::F32};
}

uint64_t partitionLowerBound(const TargetModel &target, const GemmProblem &problem,
                             const GemmPlan &partition) {
  if (partition.serial > 1) {
    GemmPlan chunkPlan = partition;
    chunkPlan.serial = 1;
    return partition.serial *
           partitionLowerBound(target, serialChunk(problem, partition.serial), chunkPlan);
  }
  uint64_t gemm = UINT64_MAX;
  for (ElementType partials : allowedPartials(problem)) {
    GemmPlan plan = partition;
    plan.partials = partials;
    PlanShape shape = shapeOf(problem, plan);
    for (bool swapped : {false, true}) {
      if (!orientationPossible(problem, swapped))
        continue;
      gemm = std::min(gemm, estimateGemmCycles(
                                target, gemmShape(problem, shape,
                                                  MemoryClass::Interleaved,
                                                  swapped)));
    }
  }
  if (gemm == UINT64_MAX)
    gemm = 0;
  // A partition that needs no gather may still reduce: one phase at least
  // unless it needs neither.
  bool gather = !activationArrivesInPlace(problem, partition, target) ||
                !problem.rhsIsWeight;
  bool anyPhase = gather || partition.inner > 1;
  return gemm + uint64_t(syncCount(partition, gather)) * target.syncCycles +
         (anyPhase ? target.plannedExchangeCycles(0) : 0);
}

/// A lower bound on the standard bytes every variant of `partition` holds
/// at once on its busiest tile: its A block as gathered beside its GEMM's
/// output block (the partials in the narrowest type the op allows when
/// inner > 1), as costGemmPlan counts them.
uint64_t partitionStandardBound(const GemmProblem &problem, const GemmPlan &partition) {
  const GemmProblem chunk =
      partition.serial > 1 ? serialChunk(problem, partition.serial) : problem;
  GemmPlan plan = partition;
  plan.serial = 1;
  const PlanShape shape = shapeOf(chunk, plan);
  uint64_t outBytes = elementBytes(chunk.outType);
  if (plan.inner > 1) {
    outBytes = 4;
    for (ElementType partials : allowedPartials(chunk))
      outBytes = std::min<uint64_t>(outBytes, elementBytes(partials));
  }
  return shape.blockRows * alignToWords(shape.blockInner * elementBytes(chunk.inType)) +
         shape.blockRows * alignToWords(shape.blockCols * outBytes);
}

} // namespace

/// A serial split: `serial` iterations of the chunk's program, each with a
/// slice of A and an update of C (copies at a dynamic offset) and the
/// loop's branch, then the epilogue once on all of C. A holds its chunks
/// in the chunk's arrival blocks and C in the chunk's output blocks, for
/// the whole loop.
static GemmCost costSerialPlan(const TargetModel &target, const GemmProblem &problem,
                               const GemmPlan &plan) {
  const uint64_t serial = plan.serial;
  const GemmProblem chunk = serialChunk(problem, plan.serial);
  GemmPlan chunkPlan = plan;
  chunkPlan.serial = 1;
  GemmCost cost = costGemmPlan(target, chunk, chunkPlan);
  const PlanShape shape = shapeOf(chunk, chunkPlan);
  const uint64_t outBytes = elementBytes(problem.outType);
  const uint64_t sliceBytes = lhsSourceLayout(chunk, target).maxBlockBytes();
  const uint64_t outRows = plan.inner > 1 && plan.reduction == Reduction::Staged
                               ? shape.subRows
                               : shape.blockRows;
  const uint64_t outBlock = outRows * alignToWords(shape.blockCols * outBytes);
  cost.serialStepCycles = estimateCopyCycles(target, sliceBytes) +
                          estimateCopyCycles(target, outBlock) +
                          2 * uint64_t(target.dynamicOffsetCycles) +
                          target.loopIterationCycles;
  cost.computeCycles = serial * (cost.computeCycles + cost.serialStepCycles);
  cost.exchangeCycles *= serial;
  cost.reductionCycles *= serial;
  // Each iteration's syncs (its body opens with one, in place of the one a
  // spatial plan has before its result streams out), and that one after
  // the loop.
  cost.syncCycles = serial * cost.syncCycles + target.syncCycles;
  // Both copies' vertex state, once: the loop's body is one program.
  const KernelSpec *copy = lookupKernel("copy");
  const uint64_t copyVertices =
      2 * target.vertexStateBytes(copy->operandNames.size(), copy->paramNames.size());
  cost.codeBytes += copyVertices;
  cost.peakBytes[0] += copyVertices + serial * (sliceBytes + outBlock);
  if (problem.epilogue) {
    const uint64_t rows = serial * outRows;
    cost.epilogueCycles =
        estimateElementwise(target, *problem.epilogue, static_cast<int64_t>(rows),
                            static_cast<int64_t>(shape.blockCols))
            .total;
    cost.peakBytes[0] +=
        rows * alignToWords(shape.blockCols * elementBytes(problem.epilogue->resultType));
    for (const ElementwiseInput &input : problem.epilogue->inputs)
      if (input.broadcast == Broadcast::Row) {
        const uint64_t bytes = alignToWords(shape.blockCols * elementBytes(input.type));
        cost.weightBytes[1] += bytes;
        cost.peakBytes[1] += bytes;
      }
  }
  if (!problem.lhsFromHost) {
    // A computed A moves into its chunks first: each tile sends its rows as
    // they arrived and receives its block of every chunk.
    const uint64_t sent =
        arrivalLayout(problem.m, problem.k, problem.inType, target).maxBlockBytes();
    const uint64_t received = serial * sliceBytes;
    const uint64_t move = target.plannedExchangeCycles(std::max(sent, received) / kWord);
    cost.exchangeCycles += move;
    cost.syncCycles += 2 * uint64_t(target.syncCycles);
    cost.serialMoveCycles = move + 2 * uint64_t(target.syncCycles);
  }
  cost.totalCycles = cost.exchangeCycles + cost.computeCycles +
                     cost.reductionCycles + cost.epilogueCycles + cost.syncCycles;
  return cost;
}

GemmCost ipu::costGemmPlan(const TargetModel &target, const GemmProblem &problem,
                           const GemmPlan &plan) {
  if (plan.serial > 1)
    return costSerialPlan(target, problem, plan);
  GemmCost cost;
  const PlanShape shape = shapeOf(problem, plan);
  const uint64_t inBytes = elementBytes(problem.inType);
  const uint64_t accBytes = elementBytes(plan.partials);
  const uint64_t outBytes = elementBytes(problem.outType);
  const uint64_t rowPitchK = alignToWords(problem.k * inBytes);
  // Where A comes from: its largest block and that block's rows.
  const BlockLayout sourceA = lhsSourceLayout(problem, target);
  const uint64_t arrivalRows =
      problem.lhsSpread ? ceilDiv(problem.m, sourceA.gridRows)
                        : ceilDiv(problem.m, activationArrivalTiles(problem, target));
  const uint64_t arrivalBytes =
      problem.lhsSpread ? sourceA.maxBlockBytes() : arrivalRows * rowPitchK;
  const uint64_t gatheredPitch = alignToWords(shape.blockInner * inBytes);
  // Swapped plans store each block of B transposed: a row per column.
  const WeightBlock weightBlock = weightBlockOf(problem, plan);
  const uint64_t weightBytes = weightBlock.bytes();

  // Gather: each arrival tile sends each of its rows once (segments
  // broadcast along the block row); each plan tile receives its block. A
  // plan whose A blocks are the arrival blocks needs no gather of A. B
  // moves in the same phase when it must: an activation B from where it
  // arrived (its rows split over the tiles), gathered weights from their
  // home (each tile's share of its block broadcast to the block's
  // replicas). Each plan tile then receives its whole B block.
  const bool gatherA = !activationArrivesInPlace(problem, plan, target);
  const bool gatherB = !problem.rhsIsWeight || plan.gatheredWeights;
  const bool gather = gatherA || gatherB;
  const uint64_t homeBytes =
      plan.gatheredWeights ? weightBlock.homeBytes(plan.rows) : 0;
  uint64_t sendBytes = 0, receiveBytes = 0, sendRunsB = 0, receiveRunsB = 0;
  if (gatherA) {
    // A^T arrives as the transpose of each A block: blockInner rows of
    // blockRows elements.
    receiveBytes += problem.lhsTransposed
                        ? shape.blockInner * alignToWords(shape.blockRows * inBytes)
                        : shape.blockRows * gatheredPitch;
    sendBytes += arrivalBytes;
  }
  if (gatherB) {
    receiveBytes += weightBytes;
    if (plan.gatheredWeights) {
      sendBytes += homeBytes;
      sendRunsB = 1;
      receiveRunsB = plan.rows;
    } else {
      // B as given ([K x N], or [N x K] when transposed) arrives split by
      // its rows; each row goes out in a segment per block it meets.
      const uint64_t givenRows = problem.rhsTransposed ? problem.n : problem.k;
      const uint64_t givenCols = problem.rhsTransposed ? problem.k : problem.n;
      const uint64_t sourceRows =
          ceilDiv(givenRows, std::min<uint64_t>(givenRows, target.tiles));
      sendBytes += sourceRows * alignToWords(givenCols * inBytes);
      sendRunsB = sourceRows * (problem.rhsTransposed ? plan.inner : plan.cols);
      receiveRunsB = weightBlock.rows;
    }
  }
  if (gather)
    cost.exchangeCycles =
        target.plannedExchangeCycles(std::max(sendBytes, receiveBytes) / kWord);

  // Local staging copies the weight block to interleaved memory first, and
  // the AMP loads it from there.
  MemoryClass ampWeights = plan.localStaging ? MemoryClass::Interleaved : plan.weights;
  if (plan.localStaging)
    cost.computeCycles += estimateCopyCycles(target, weightBytes);
  if (problem.lhsTransposed)
    cost.computeCycles +=
        estimateTransposeCycles(target, shape.blockInner, shape.blockRows);
  cost.computeCycles += estimateGemmCycles(
      target, gemmShape(problem, shape, ampWeights, plan.swapped));

  // Liveness as lowered, per step, on the most loaded tile.
  const uint64_t arrival = arrivalBytes;
  const uint64_t gathered = shape.blockRows * gatheredPitch;
  uint64_t standardPeak = gatherA ? arrival + gathered : gathered;
  // The A^T blocks and the A blocks they are transposed into.
  if (problem.lhsTransposed)
    standardPeak = std::max(
        standardPeak,
        shape.blockInner * alignToWords(shape.blockRows * inBytes) + gathered);
  if (plan.inner == 1) {
    uint64_t result = shape.blockRows * alignToWords(shape.blockCols * outBytes);
    standardPeak = std::max(standardPeak, gathered + result);
  } else {
    const uint64_t partial = shape.blockRows * alignToWords(shape.blockCols * accBytes);
    const uint64_t reduceRows =
        plan.reduction == Reduction::Complete ? shape.blockRows : shape.subRows;
    const uint64_t reduceIn =
        reduceRows * alignToWords(plan.inner * shape.blockCols * accBytes);
    const uint64_t result = reduceRows * alignToWords(shape.blockCols * outBytes);
    standardPeak = std::max({standardPeak, gathered + partial, partial + reduceIn,
                             reduceIn + result});
    // Every tile sends its partial once; the reducing tile receives a
    // reduceIn block.
    uint64_t reduceWords =
        std::max(shape.blockRows * alignToWords(shape.blockCols * accBytes) / kWord,
                 reduceIn / kWord);
    cost.exchangeCycles += target.plannedExchangeCycles(reduceWords);
    cost.reductionCycles =
        estimateReduceCycles(target, static_cast<int64_t>(reduceRows),
                             static_cast<int64_t>(shape.blockCols), plan.inner,
                             plan.partials, problem.outType);
  }
  if (problem.epilogue) {
    // On the output blocks, where the result is: a reduced sub-block when
    // the reduction is staged.
    const uint64_t outRows = plan.inner > 1 && plan.reduction == Reduction::Staged
                                 ? shape.subRows
                                 : shape.blockRows;
    const uint64_t batchRows = outRows;
    cost.epilogueCycles =
        estimateElementwise(target, *problem.epilogue, static_cast<int64_t>(batchRows),
                            static_cast<int64_t>(shape.blockCols))
            .total;
    const uint64_t result =
        batchRows * alignToWords(shape.blockCols * outBytes);
    const uint64_t epilogueResult =
        batchRows *
        alignToWords(shape.blockCols * elementBytes(problem.epilogue->resultType));
    standardPeak = std::max(standardPeak, result + epilogueResult);
  }
  for (const std::shared_ptr<const ElementwiseBody> &body : problem.rowReductions) {
    const int64_t outRows = static_cast<int64_t>(
        plan.inner > 1 && plan.reduction == Reduction::Staged ? shape.subRows
                                                              : shape.blockRows);
    cost.rowReductionCycles +=
        estimateElementwise(target, *body, outRows, static_cast<int64_t>(shape.blockCols))
            .total;
    if (plan.cols > 1) {
      // Every tile of a row block receives the row's partials (a word per
      // row per column block) in one phase between syncs, and reduces them.
      ElementwiseBody combine;
      combine.inputs = {{ElementType::F32, Broadcast::Full}};
      combine.resultType = ElementType::F32;
      combine.reduction = body->reduction;
      combine.init = body->init;
      cost.rowReductionCycles +=
          target.plannedExchangeCycles(static_cast<uint64_t>(outRows) * plan.cols) +
          2 * uint64_t(target.syncCycles) +
          estimateElementwise(target, combine, outRows, plan.cols).total;
    }
  }
  cost.syncCycles = uint64_t(syncCount(plan, gather)) * target.syncCycles;
  cost.totalCycles = cost.exchangeCycles + cost.computeCycles +
                     cost.reductionCycles + cost.epilogueCycles + cost.syncCycles +
                     cost.rowReductionCycles;
  cost.activeTiles = plan.tiles();

  // Exchange code, sized from the runs the busiest tile sends and receives
  // (a transfer is one run until the scheduler splits it): the gather sends
  // a segment of each arrival row per inner block and receives a run per
  // row of its block; the reduction sends a run per partial row and
  // receives one per row of each of the `inner` partials it sums.
  uint64_t sendRuns = sendRunsB, receiveRuns = receiveRunsB, phases = 0;
  if (gatherA) {
    sendRuns += arrivalRows * plan.inner;
    receiveRuns += shape.blockRows;
  }
  if (gather)
    ++phases;
  if (plan.inner > 1) {
    const uint64_t reduceRows =
        plan.reduction == Reduction::Complete ? shape.blockRows : shape.subRows;
    sendRuns += shape.blockRows;
    receiveRuns += reduceRows * plan.inner;
    ++phases;
  }
  // Vertex state of each kernel the plan runs on a tile.
  auto vertexOf = [&](const char *name) {
    const KernelSpec *kernel = lookupKernel(name);
    return target.vertexStateBytes(kernel->operandNames.size(),
                                   kernel->paramNames.size());
  };
  uint64_t vertexBytes = vertexOf("gemm");
  if (plan.inner > 1)
    vertexBytes += vertexOf("reduce");
  if (plan.localStaging)
    vertexBytes += vertexOf("copy");
  cost.codeBytes = sendRuns * target.exchange.plannerSendBytes +
                   receiveRuns * target.exchange.plannerReceiveBytes +
                   phases * target.exchange.plannerPhaseBytes + vertexBytes;

  if (plan.gatheredWeights) {
    // Only the home share stays; the gathered block lives while the GEMM
    // runs, beside it in the same class.
    cost.weightBytes[static_cast<int>(plan.weights)] += homeBytes;
    cost.peakBytes[static_cast<int>(plan.weights)] += weightBytes;
  } else {
    cost.weightBytes[static_cast<int>(plan.weights)] += weightBytes;
  }
  if (plan.localStaging)
    cost.weightBytes[static_cast<int>(MemoryClass::Interleaved)] += weightBytes;
  // The epilogue's row inputs (biases) stay resident in interleaved
  // memory, one column block on each tile of it.
  if (problem.epilogue)
    for (const ElementwiseInput &input : problem.epilogue->inputs)
      if (input.broadcast == Broadcast::Row)
        cost.weightBytes[1] += alignToWords(shape.blockCols * elementBytes(input.type));
  cost.peakBytes[0] += standardPeak + cost.codeBytes + cost.weightBytes[0];
  cost.peakBytes[1] += cost.weightBytes[1];
  return cost;
}

bool ipu::fitsMemory(const TargetModel &target, const GemmCost &cost,
                     const MemoryBudget &budget) {
  const uint64_t standard = target.allocatableBytes(MemoryClass::Standard);
  const uint64_t interleaved = target.allocatableBytes(MemoryClass::Interleaved);
  const uint64_t usedStandard = cost.peakBytes[0] + budget.reservedBytes[0];
  const uint64_t usedInterleaved = cost.peakBytes[1] + budget.reservedBytes[1];
  // While another matmul runs, this one's weights and code stay resident.
  const uint64_t besideStandard = cost.weightBytes[0] + cost.codeBytes +
                                  budget.reservedBytes[0] +
                                  budget.coexistingBytes[0];
  const uint64_t besideInterleaved = cost.weightBytes[1] + budget.reservedBytes[1] +
                                     budget.coexistingBytes[1];
  return usedStandard <= standard && usedInterleaved <= interleaved &&
         besideStandard <= standard && besideInterleaved <= interleaved &&
         usedStandard + usedInterleaved + budget.anyBytes <= standard + interleaved &&
         cost.weightBytes[0] + cost.weightBytes[1] <= budget.weightCapBytes;
}

void ipu::weightBytesPerTile(const GemmProblem &problem, const GemmPlan &plan,
                             uint64_t bytes[2]) {
  const WeightBlock block = weightBlockOf(problem, plan);
  bytes[0] = bytes[1] = 0;
  bytes[static_cast<int>(plan.weights)] +=
      plan.gatheredWeights ? block.homeBytes(plan.rows) : block.bytes();
  if (plan.localStaging)
    bytes[static_cast<int>(MemoryClass::Interleaved)] += block.bytes();
}

/// Strict weak order: cheaper first, then fewer tiles, then by fields, so the
/// choice never depends on enumeration order or threads.
static bool better(const GemmPlanChoice &a, const GemmPlanChoice &b) {
  auto key = [](const GemmPlanChoice &c) {
    return std::make_tuple(c.cost.totalCycles, c.plan.tiles(), c.plan.rows,
                           c.plan.cols, c.plan.inner, c.plan.swapped,
                           c.plan.weights, c.plan.reduction,
                           c.plan.localStaging, c.plan.partials,
                           c.plan.gatheredWeights, c.plan.serial);
  };
  return key(a) < key(b);
}

/// Every variant of a partition that can be lowered.
static std::vector<GemmPlan> variantsOf(const GemmPlan &partition,
                                        const std::vector<ElementType> &partialsTypes) {
  std::vector<GemmPlan> variants;
  for (bool swapped : {false, true})
    for (MemoryClass weights : {MemoryClass::Standard, MemoryClass::Interleaved})
      for (Reduction reduction : {Reduction::Complete, Reduction::Staged})
        for (bool staging : {false, true})
          for (ElementType partials : partialsTypes)
            for (bool gathered : {false, true}) {
            if (partition.inner == 1 && reduction == Reduction::Staged)
              continue;
            if (staging && (weights != MemoryClass::Standard || swapped))
              continue;
            if (gathered && (weights != MemoryClass::Interleaved || staging ||
                             partition.rows < 2))
              continue;
            GemmPlan plan = partition;
            plan.gatheredWeights = gathered;
            plan.swapped = swapped;
            plan.weights = weights;
            plan.reduction = reduction;
            plan.localStaging = staging;
            plan.partials = partials;
            variants.push_back(plan);
          }
  return variants;
}

/// Explains why a constraint selects nothing, naming the field that alone
/// matches no plan of the space, or the combination.
static std::string explainNoMatch(const TargetModel &target,
                                  const GemmProblem &problem,
                                  const GemmPlanConstraints &constraints) {
  uint64_t maxRows = std::min<uint64_t>(problem.m, target.tiles);
  uint64_t maxCols = std::min<uint64_t>(problem.n, target.tiles);
  std::ostringstream os;
  os << "no plan matches constraint '" << constraints.str() << "'";
  // Probe with the constrained fields, defaults elsewhere, to name the rule
  // the constraint breaks.
  GemmPlan probe;
  if (constraints.rows) probe.rows = *constraints.rows;
  if (constraints.cols) probe.cols = *constraints.cols;
  if (constraints.inner) probe.inner = *constraints.inner;
  if (constraints.swapped) probe.swapped = *constraints.swapped;
  if (constraints.weights) probe.weights = *constraints.weights;
  if (constraints.reduction) probe.reduction = *constraints.reduction;
  if (constraints.localStaging) probe.localStaging = *constraints.localStaging;
  if (constraints.partials) probe.partials = *constraints.partials;
  if (constraints.gatheredWeights) probe.gatheredWeights = *constraints.gatheredWeights;
  if (constraints.rows && (*constraints.rows < 1 || *constraints.rows > maxRows))
    os << ": rows must be in [1, " << maxRows << "]";
  else if (constraints.cols &&
           (*constraints.cols < 1 || *constraints.cols > maxCols))
    os << ": cols must be in [1, " << maxCols << "]";
  else if (std::optional<std::string> why = checkGemmPlan(target, problem, probe))
    os << ": " << *why;
  return os.str();
}

/// The search over spatial splits of `serial` chunks (1: none), adding to
/// `search`'s counts; its finalists replace search.finalists. On failure
/// `smallestPlan` is the plan that needs the least memory.
static std::optional<std::string>
searchSpatialPlans(const TargetModel &target, const GemmProblem &problem,
                   const GemmPlanConstraints &constraints, size_t keep,
                   uint32_t serial, GemmPlanSearch &search,
                   const MemoryBudget &budget, GemmPlanChoice &smallestPlan);

std::optional<std::string>
ipu::searchGemmPlans(const TargetModel &target, const GemmProblem &problem,
                     const GemmPlanConstraints &constraints,
                     unsigned finalistCount, GemmPlanSearch &search,
                     const MemoryBudget &budget, bool allowSerial) {
  search = GemmPlanSearch();
  if (problem.m < 1 || problem.k < 1 || problem.n < 1)
    return "matmul dimensions must be positive";
  const size_t keep = std::max(finalistCount, 1u);
  GemmPlanChoice smallest;
  if (constraints.serial && *constraints.serial > 1 && !serialSplitPossible(problem))
    return "no plan matches constraint '" + constraints.str() +
           "': a serial split needs a 2-D product (batches folded into the "
           "rows) of an untransposed A by resident weights, with no row "
           "reduction of its result";
  if (constraints.serial && *constraints.serial > 1 &&
      problem.m % *constraints.serial != 0)
    return "no plan matches constraint '" + constraints.str() + "': serial=" +
           std::to_string(*constraints.serial) + " does not divide the " +
           std::to_string(problem.m) + " rows of A";
  const uint32_t first = constraints.serial.value_or(1);
  std::optional<std::string> error = searchSpatialPlans(
      target, problem, constraints, keep, first, search, budget, smallest);
  if (error && search.matching)
    search.smallest = smallest;
  if (!error || !allowSerial || constraints.serial || !serialSplitPossible(problem) ||
      search.matching == 0)
    return error;
  // A and C stay whole in standard memory beside the loop, spread at best
  // evenly over every tile: when that alone does not fit, no count can.
  const uint64_t wholeBytes =
      ceilDiv(uint64_t(problem.m) * problem.k * elementBytes(problem.inType) +
                  uint64_t(problem.m) * problem.n * elementBytes(problem.outType),
              target.tiles);
  if (wholeBytes + budget.reservedBytes[0] > target.allocatableBytes(MemoryClass::Standard))
    return *error + "; and no serial split can fit: A and C alone, held whole and "
                    "spread evenly over the tiles, need " +
           std::to_string(wholeBytes) + " standard bytes per tile";
  // Memory decides: cut the rows into serial chunks, fewest first. The
  // first count that fits competes with the next two that fit (a finer
  // chunk may split better); the search gives up after kSerialTries counts
  // in a row that do not fit.
  constexpr unsigned kSerialTries = 8, kAfterFit = 2;
  std::vector<GemmPlanChoice> finalists;
  GemmPlanSearch total = search;
  unsigned tried = 0, afterFit = 0;
  std::optional<std::string> serialError;
  for (int64_t chunks = 2; chunks <= problem.m && tried < kSerialTries &&
                           afterFit <= kAfterFit && chunks <= UINT32_MAX;
       ++chunks) {
    if (problem.m % chunks != 0)
      continue;
    ++tried;
    GemmPlanSearch part;
    GemmPlanChoice partSmallest;
    serialError = searchSpatialPlans(target, problem, constraints, keep,
                                     static_cast<uint32_t>(chunks), part, budget,
                                     partSmallest);
    total.candidates += part.candidates;
    total.matching += part.matching;
    total.costed += part.costed;
    total.pruned += part.pruned;
    total.fitting += part.fitting;
    if (serialError) {
      // The smallest plan of any count tried, for the error.
      const uint64_t bytes = partSmallest.cost.peakBytes[0] + partSmallest.cost.peakBytes[1];
      if (part.matching &&
          bytes < smallest.cost.peakBytes[0] + smallest.cost.peakBytes[1])
        smallest = partSmallest;
      continue;
    }
    tried = 0;
    ++afterFit;
    for (GemmPlanChoice &choice : part.finalists)
      finalists.insert(std::upper_bound(finalists.begin(), finalists.end(),
                                        choice, better),
                       choice);
    if (finalists.size() > keep)
      finalists.resize(keep);
  }
  total.finalists = std::move(finalists);
  search = std::move(total);
  if (!search.finalists.empty())
    return std::nullopt;
  search.smallest = smallest;
  return *error + "; and cut into serial chunks, the smallest plan tried (" +
         smallest.plan.str() + ") still needs " +
         std::to_string(smallest.cost.peakBytes[0]) + " standard and " +
         std::to_string(smallest.cost.peakBytes[1]) + " interleaved bytes per tile";
}

static std::optional<std::string>
searchSpatialPlans(const TargetModel &target, const GemmProblem &problem,
                   const GemmPlanConstraints &constraints, size_t keep,
                   uint32_t serial, GemmPlanSearch &search,
                   const MemoryBudget &budget, GemmPlanChoice &smallestPlan) {
  const int64_t chunkRows = problem.m / serial;

  // Every partition, with the lower bound shared by its variants.
  struct Partition {
    GemmPlan plan;
    uint64_t bound;       ///< Cycles, partitionLowerBound.
    uint64_t memoryBound; ///< Standard bytes, partitionStandardBound.
    std::vector<GemmPlan> matching;
  };
  std::vector<Partition> partitions;
  const std::vector<ElementType> partialsTypes = allowedPartials(problem);
  const uint64_t maxRows = std::min<uint64_t>(chunkRows, target.tiles);
  for (uint32_t rows = 1; rows <= maxRows; ++rows) {
    uint64_t maxCols = std::min<uint64_t>(problem.n, target.tiles / rows);
    for (uint32_t cols = 1; cols <= maxCols; ++cols) {
      uint64_t maxInner =
          std::min<uint64_t>(problem.k, target.tiles / (uint64_t(rows) * cols));
      for (uint32_t inner = 1; inner <= maxInner; ++inner) {
        Partition partition;
        partition.plan.rows = rows;
        partition.plan.cols = cols;
        partition.plan.inner = inner;
        partition.plan.serial = serial;
        for (const GemmPlan &plan : variantsOf(partition.plan, partialsTypes)) {
          if (checkGemmPlan(target, problem, plan))
            continue;
          ++search.candidates;
          if (constraints.matches(plan))
            partition.matching.push_back(plan);
        }
        if (partition.matching.empty())
          continue;
        search.matching += partition.matching.size();
        partition.bound = partitionLowerBound(target, problem, partition.plan);
        partition.memoryBound = partitionStandardBound(problem, partition.plan);
        partitions.push_back(std::move(partition));
      }
    }
  }
  if (search.matching == 0)
    return explainNoMatch(target, problem, constraints);

  // Best-first by lower bound: once the finalists are full and a bound
  // exceeds the worst of them, no later partition can enter.
  std::sort(partitions.begin(), partitions.end(),
            [](const Partition &a, const Partition &b) {
              return std::make_tuple(a.bound, a.plan.rows, a.plan.cols,
                                     a.plan.inner) <
                     std::make_tuple(b.bound, b.plan.rows, b.plan.cols,
                                     b.plan.inner);
            });
  std::vector<GemmPlanChoice> finalists;
  GemmPlanChoice smallest;
  uint64_t smallestBytes = UINT64_MAX;
  const uint64_t standardLeft =
      target.allocatableBytes(MemoryClass::Standard) -
      std::min<uint64_t>(target.allocatableBytes(MemoryClass::Standard), budget.reservedBytes[0]);
  for (const Partition &partition : partitions) {
    if (finalists.size() == keep &&
        partition.bound > finalists.back().cost.totalCycles) {
      search.pruned += partition.matching.size();
      continue;
    }
    // No variant fits, and none needs less memory than the smallest plan
    // seen: the result is the same without costing them.
    if (partition.memoryBound > standardLeft && partition.memoryBound >= smallestBytes) {
      search.pruned += partition.matching.size();
      continue;
    }
    for (const GemmPlan &plan : partition.matching) {
      ++search.costed;
      GemmPlanChoice choice{plan, costGemmPlan(target, problem, plan)};
      uint64_t bytes = choice.cost.peakBytes[0] + choice.cost.peakBytes[1];
      if (bytes < smallestBytes) {
        smallestBytes = bytes;
        smallest = choice;
      }
      if (!fitsMemory(target, choice.cost, budget))
        continue;
      ++search.fitting;
      auto at = std::upper_bound(finalists.begin(), finalists.end(), choice, better);
      if (finalists.size() < keep || at != finalists.end()) {
        finalists.insert(at, choice);
        if (finalists.size() > keep)
          finalists.pop_back();
      }
    }
  }
  if (finalists.empty()) {
    // Only plans no smaller than `smallest` were pruned (the cycle bound
    // needs finalists), so it is the smallest matching plan.
    smallestPlan = smallest;
    std::ostringstream os;
    os << "no plan fits tile memory: the smallest (" << smallest.plan.str()
       << ") needs " << smallest.cost.peakBytes[0] << " standard and "
       << smallest.cost.peakBytes[1] << " interleaved bytes per tile; a tile of '"
       << target.name << "' has "
       << target.allocatableBytes(MemoryClass::Standard) << " standard and "
       << target.allocatableBytes(MemoryClass::Interleaved)
       << " interleaved bytes";
    const uint64_t kept = budget.peerCodeBytes + budget.programBytes;
    const uint64_t weights =
        budget.reservedBytes[0] + budget.reservedBytes[1] - kept;
    if (weights + kept + budget.anyBytes) {
      os << ", of which other matmuls' weights take " << weights;
      if (budget.anyBytes)
        os << " (and " << budget.anyBytes << " for those not planned yet)";
      if (budget.peerCodeBytes)
        os << ", their exchange code and vertex state " << budget.peerCodeBytes;
      if (budget.programBytes)
        os << ", the other ops' kernels, vertex state and row vectors "
           << budget.programBytes;
    }
    if (budget.coexistingBytes[0] + budget.coexistingBytes[1])
      os << "; buffers of other steps take " << budget.coexistingBytes[0]
         << " standard and " << budget.coexistingBytes[1]
         << " interleaved bytes beside this one's resident data";
    return os.str();
  }
  search.finalists = std::move(finalists);
  return std::nullopt;
}

/// Checks and costs the plan the user gave, as the search would have.
static std::optional<std::string> keepGivenPlan(const TargetModel &target,
                                                ProgramGemm &gemm,
                                                const MemoryBudget &budget) {
  gemm.search = GemmPlanSearch();
  const GemmPlan &plan = *gemm.given;
  if (std::optional<std::string> why = checkGemmPlan(target, gemm.problem, plan))
    return *why;
  if (!gemm.constraints.matches(plan))
    return "it does not match constraint '" + gemm.constraints.str() + "'";
  GemmPlanChoice choice{plan, costGemmPlan(target, gemm.problem, plan)};
  gemm.search.candidates = gemm.search.matching = gemm.search.costed = 1;
  // Memory is the placement's to judge exactly; the model only reports.
  gemm.search.fitting = fitsMemory(target, choice.cost, budget) ? 1 : 0;
  gemm.search.finalists.push_back(choice);
  return std::nullopt;
}

namespace {

/// One pass of planGemmProgram, with per-matmul weight caps (empty: none).
/// Capped weights go to interleaved memory (unless the user said where):
/// standard memory is what every plan's activations and partials share.
GemmPlanConstraints withInterleavedWeights(GemmPlanConstraints constraints) {
  if (!constraints.weights)
    constraints.weights = MemoryClass::Interleaved;
  return constraints;
}

/// Lowers, schedules and places the first `count` finalists of `search`
/// (each on a thread of its own; results by index, so deterministic) and
/// orders them: those whose buffers fit first, then by scheduled cycles,
/// then as the analytical order had them.
void rerankFinalists(const TargetModel &target, const GemmProblem &problem,
                     const MemoryBudget &budget, unsigned count,
                     GemmPlanSearch &search) {
  std::vector<GemmPlanChoice> &finalists = search.finalists;
  const size_t n = std::min<size_t>(count, finalists.size());
  // One finalist is scheduled too: its planned cycles are then its phases
  // as timed, not the analytical estimate.
  if (n == 0)
    return;
  // What stays resident beside this matmul: the others' data, and the
  // weights not planned yet (taken as interleaved, where weights go).
  const uint64_t reserved[2] = {budget.reservedBytes[0],
                                budget.reservedBytes[1] + budget.anyBytes};
  std::vector<ScheduledPlan> results(n);
  std::vector<bool> failed(n, false);
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i)
    threads.emplace_back([&, i] {
      failed[i] = scheduleGemmPlan(target, problem, finalists[i].plan,
                                   finalists[i].cost, reserved, results[i])
                      .has_value();
    });
  failed[0] = scheduleGemmPlan(target, problem, finalists[0].plan,
                               finalists[0].cost, reserved, results[0])
                  .has_value();
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < n; ++i) {
    finalists[i].scheduled = !failed[i];
    finalists[i].scheduledCycles = failed[i] ? UINT64_MAX : results[i].cycles;
    finalists[i].scheduledFits = !failed[i] && results[i].fits;
  }
  // Ties keep the analytical order (the index).
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(!finalists[a].scheduledFits, finalists[a].scheduledCycles, a) <
           std::make_tuple(!finalists[b].scheduledFits, finalists[b].scheduledCycles, b);
  });
  std::vector<GemmPlanChoice> ranked;
  for (size_t i : order)
    ranked.push_back(finalists[i]);
  std::copy(ranked.begin(), ranked.end(), finalists.begin());
}

/// What the other matmuls of the program keep beside matmul `position`:
/// those before it as planned (their first finalists), those after it by
/// their weights' least share; with its weight cap, if any.
MemoryBudget budgetFor(const TargetModel &target,
                       const std::vector<ProgramGemm> &gemms, size_t position,
                       const std::vector<uint64_t> &caps) {
  MemoryBudget budget;
  if (!caps.empty() && caps[position] != UINT64_MAX)
  budget.weightCapBytes = caps[position];
  for (size_t other = 0; other < gemms.size(); ++other) {
    const ProgramGemm &peer = gemms[other];
    if (other < position && !peer.error) {
      // Its code, and its weights if resident, stay; its transient
      // buffers come and go while this one's weights are resident.
      const GemmCost &cost = peer.search.finalists.front().cost;
      budget.reservedBytes[0] += cost.codeBytes;
      budget.peerCodeBytes += cost.codeBytes;
      if (peer.problem.rhsIsWeight) {
        budget.reservedBytes[0] += cost.weightBytes[0];
        budget.reservedBytes[1] += cost.weightBytes[1];
      }
      // An activation B gathered into the weights' class is transient
      // too: it lives with the plan's other buffers, not for the program.
      for (int c = 0; c < 2; ++c)
        budget.coexistingBytes[c] =
            std::max(budget.coexistingBytes[c],
                     cost.peakBytes[c] -
                         (peer.problem.rhsIsWeight ? cost.weightBytes[c] : 0) -
                         (c == 0 ? cost.codeBytes : 0));
    } else if (other > position && peer.problem.rhsIsWeight) {
      const GemmProblem &p = peer.problem;
      uint64_t total = uint64_t(p.k) * p.n * elementBytes(p.inType);
      budget.anyBytes += (total + target.tiles - 1) / target.tiles;
    }
  }
  const ProgramGemm &gemm = gemms[position];
  budget.coexistingBytes[0] =
      std::max(budget.coexistingBytes[0], gemm.coexistingStandardBytes);
  budget.reservedBytes[0] += gemm.residentStandardBytes;
  budget.reservedBytes[1] += gemm.residentInterleavedBytes;
  budget.programBytes = gemm.residentStandardBytes + gemm.residentInterleavedBytes;
  return budget;
}

void planInOrder(const TargetModel &target, std::vector<ProgramGemm> &gemms,
                 unsigned finalistCount, const std::vector<uint64_t> &caps,
                 bool allowSerial) {
  for (size_t position = 0; position < gemms.size(); ++position) {
    ProgramGemm &gemm = gemms[position];
    gemm.search = GemmPlanSearch();
    gemm.error.reset();
    gemm.weightCapBytes = 0;
    if (!caps.empty() && caps[position] != UINT64_MAX)
      gemm.weightCapBytes = caps[position];
    MemoryBudget budget = budgetFor(target, gemms, position, caps);
    auto start = std::chrono::steady_clock::now();
    // Batches run side by side, each on a share of the tiles.
    TargetModel batchTarget = target;
    gemm.error = tilesPerBatch(target, gemm.problem, batchTarget.tiles);
    if (gemm.error)
      continue;
    if (gemm.given)
      gemm.error = keepGivenPlan(batchTarget, gemm, budget);
    else {
      GemmPlanConstraints constraints = budget.weightCapBytes != UINT64_MAX
                                            ? withInterleavedWeights(gemm.constraints)
                                            : gemm.constraints;
      // Serial splits are the last resort, after weight caps.
      gemm.error = searchGemmPlans(batchTarget, gemm.problem, constraints,
                                   finalistCount, gemm.search, budget, allowSerial);
    }
    gemm.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
}

/// How far an attempt got: the longest run of matmuls planned from the
/// start (a stack of blocks then says how many blocks fit), then the most.
std::pair<long, long> standing(const std::vector<ProgramGemm> &attempt) {
  auto failed = [](const ProgramGemm &gemm) { return gemm.error.has_value(); };
  auto firstError = std::find_if(attempt.begin(), attempt.end(), failed);
  auto failures = std::count_if(attempt.begin(), attempt.end(), failed);
  return std::make_pair(long(firstError - attempt.begin()), -long(failures));
}

bool outOfMemory(const std::vector<ProgramGemm> &gemms) {
  return std::any_of(gemms.begin(), gemms.end(), [](const ProgramGemm &gemm) {
    return gemm.error && gemm.error->find("no plan fits") != std::string::npos;
  });
}

} // namespace

/// One planGemmProgram attempt: with serial splits allowed or not.
static void planProgramOnce(const TargetModel &target,
                            std::vector<ProgramGemm> &gemms,
                            unsigned finalistCount, unsigned rerank,
                            bool allowSerial);

void ipu::planGemmProgram(const TargetModel &target,
                          std::vector<ProgramGemm> &gemms,
                          unsigned finalistCount, unsigned rerank) {
  for (ProgramGemm &gemm : gemms)
    gemm.seconds = 0;
  // Spatial plans first, with the weights capped if need be; serial splits
  // only when some matmul still does not fit (they cost cycles).
  std::vector<ProgramGemm> spatial = gemms;
  planProgramOnce(target, spatial, finalistCount, rerank, /*allowSerial=*/false);
  if (!outOfMemory(spatial)) {
    gemms = std::move(spatial);
    return;
  }
  std::vector<ProgramGemm> serial = gemms;
  planProgramOnce(target, serial, finalistCount, rerank, /*allowSerial=*/true);
  // Serial plans take their memory early in program order: an attempt that
  // still does not fit may have got less far. As far, its errors say more
  // (the smallest memory a serial plan reaches).
  const bool serialBetter =
      !outOfMemory(serial) || standing(serial) >= standing(spatial);
  // Planning time counts both attempts.
  for (size_t i = 0; i < gemms.size(); ++i)
    serial[i].seconds = spatial[i].seconds = serial[i].seconds + spatial[i].seconds;
  gemms = serialBetter ? std::move(serial) : std::move(spatial);
}

static void planProgramOnce(const TargetModel &target,
                            std::vector<ProgramGemm> &gemms,
                            unsigned finalistCount, unsigned rerank,
                            bool allowSerial) {
  // The caps the standing plans were made with (none: empty).
  std::vector<uint64_t> standingCaps;
  // Re-ranking runs once, on the standing attempt, in program order: each
  // matmul's choice is then what the next one's budget sees.
  auto finish = [&] {
    if (!rerank)
      return;
    std::vector<ProgramGemm> ranked = gemms;
    for (size_t position = 0; position < ranked.size(); ++position) {
      ProgramGemm &gemm = ranked[position];
      if (gemm.error || gemm.given)
        continue;
      auto start = std::chrono::steady_clock::now();
      // Next to the choices re-ranking made before it: the finalists that
      // still fit, re-ranked.
      MemoryBudget budget = budgetFor(target, ranked, position, standingCaps);
      std::vector<GemmPlanChoice> &finalists = gemm.search.finalists;
      finalists.erase(std::remove_if(finalists.begin(), finalists.end(),
                                     [&](const GemmPlanChoice &choice) {
                                       return !fitsMemory(target, choice.cost, budget);
                                     }),
                      finalists.end());
      if (finalists.empty())
        return; // An earlier choice that moved left it none: keep the first.
      TargetModel batchTarget = target;
      tilesPerBatch(target, gemm.problem, batchTarget.tiles);
      rerankFinalists(batchTarget, gemm.problem, budget, rerank, gemm.search);
      gemm.seconds += std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    }
    gemms = std::move(ranked);
  };
  planInOrder(target, gemms, finalistCount, {}, allowSerial);
  uint64_t totalWeights = 0;
  std::vector<uint64_t> weights(gemms.size(), 0);
  for (size_t i = 0; i < gemms.size(); ++i) {
    const GemmProblem &p = gemms[i].problem;
    if (p.rhsIsWeight && !gemms[i].given)
      weights[i] = uint64_t(p.k) * p.n * elementBytes(p.inType);
    totalWeights += weights[i];
  }
  // Capping weights cannot help a matmul whose activations alone overflow
  // standard memory (serial splits may).
  auto hopeless = [&](const ProgramGemm &gemm) {
    if (!gemm.error || gemm.error->find("no plan fits") == std::string::npos)
      return true;
    if (!gemm.search.smallest)
      return false;
    const GemmCost &cost = gemm.search.smallest->cost;
    return cost.peakBytes[0] - std::min(cost.peakBytes[0], cost.weightBytes[0]) >
           target.allocatableBytes(MemoryClass::Standard);
  };
  if (!outOfMemory(gemms) || totalWeights == 0 ||
      std::all_of(gemms.begin(), gemms.end(), hopeless))
    return finish();
  // If no share makes the program fit, the best attempt stands (its errors
  // name what still does not fit).
  std::vector<ProgramGemm> best = gemms;
  std::vector<uint64_t> bestCaps;
  const uint64_t memory = target.allocatableBytes(MemoryClass::Standard) +
                          target.allocatableBytes(MemoryClass::Interleaved);
  for (unsigned percent : {70u, 55u, 40u, 30u, 20u}) {
    std::vector<uint64_t> caps(gemms.size(), UINT64_MAX);
    for (size_t i = 0; i < gemms.size(); ++i)
      if (weights[i])
        caps[i] = static_cast<uint64_t>(
            static_cast<long double>(memory) * percent / 100 * weights[i] / totalWeights);
    planInOrder(target, gemms, finalistCount, caps, allowSerial);
    if (!outOfMemory(gemms)) {
      standingCaps = caps;
      return finish();
    }
    if (standing(gemms) > standing(best)) {
      best = gemms;
      bestCaps = caps;
    }
  }
  for (size_t i = 0; i < gemms.size(); ++i) {
    double seconds = gemms[i].seconds;
    gemms[i] = best[i];
    gemms[i].seconds = seconds;
  }
  standingCaps = bestCaps;
  finish();
}
