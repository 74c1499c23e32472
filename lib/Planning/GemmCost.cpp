//===- GemmCost.cpp - What a plan costs: cycles and memory per tile --------===//

#include "IPU/Planning/GemmCost.h"
#include "IPU/Planning/GemmLayouts.h"
#include "PlanningDetail.h"

#include "IPU/Device/Kernels.h"
#include "IPU/Layout/BlockLayout.h"

#include <algorithm>

using namespace ipu;
using namespace ipu::planning;
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

WeightBlock weightBlockOf(const GemmProblem &problem, const GemmPlan &plan,
                          ElementType type) {
  const uint64_t blockCols = widestColumnBlock(problem, plan);
  const uint64_t blockInner = ceilDiv(problem.k, plan.inner);
  const uint64_t in = elementBytes(type);
  return plan.swapped ? WeightBlock{blockCols, alignToWords(blockInner * in, problem.wordBytes)}
                      : WeightBlock{blockInner, alignToWords(blockCols * in, problem.wordBytes)};
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
  shape.blockCols = widestColumnBlock(problem, plan);
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

} // namespace

std::vector<ElementType> planning::allowedPartials(const GemmProblem &problem) {
  if (problem.accType == ElementType::F16)
    return {ElementType::F16};
  if (problem.allowHalfPartials)
    return {ElementType::F32, ElementType::F16};
  return {ElementType::F32};
}

uint64_t planning::partitionLowerBound(const TargetModel &target, const GemmProblem &problem,
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

uint64_t planning::partitionStandardBound(const GemmProblem &problem, const GemmPlan &partition) {
  const GemmProblem chunk =
      partition.serial > 1 ? serialChunk(problem, partition.serial) : problem;
  GemmPlan plan = partition;
  plan.serial = 1;
  const PlanShape shape = shapeOf(chunk, plan);
  // With inner > 1 the partial sums may stay in interleaved memory
  // (GemmPlan::psums): only A's block is sure to take standard memory.
  const uint64_t outBytes = plan.inner > 1 ? 0 : elementBytes(chunk.outType);
  return shape.blockRows * alignToWords(shape.blockInner * elementBytes(chunk.inType), problem.wordBytes) +
         shape.blockRows * alignToWords(shape.blockCols * outBytes, problem.wordBytes);
}


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
  const uint64_t outBlock = outRows * alignToWords(shape.blockCols * outBytes, problem.wordBytes);
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
  // In a repeated layer's body, the chunks' GEMMs read the iteration's
  // weights from a copy of one layer's block (a compute set advances per
  // iteration of its innermost loop only), made once per layer. An
  // expansion already writes one layer's block; a gathered plan reads the
  // gathered copy.
  const uint64_t layers = std::max<uint32_t>(problem.weightLayers, 1);
  if (layers > 1 && !problem.expandedFrom && !plan.gatheredWeights) {
    const uint64_t block =
        weightBlockOf(chunk, chunkPlan, problem.weightStorageType()).bytes();
    cost.peakBytes[static_cast<int>(plan.weights)] += block;
    cost.computeCycles += estimateCopyCycles(target, block);
  }
  if (problem.epilogue) {
    const uint64_t rows = serial * outRows;
    cost.epilogueCycles =
        estimateElementwise(target, *problem.epilogue, static_cast<int64_t>(rows),
                            static_cast<int64_t>(shape.blockCols))
            .total;
    cost.peakBytes[0] +=
        rows * alignToWords(shape.blockCols * elementBytes(problem.epilogue->resultType), problem.wordBytes);
    for (const ElementwiseInput &input : problem.epilogue->inputs)
      if (input.broadcast == Broadcast::Row) {
        const uint64_t bytes =
            std::max<uint32_t>(problem.epilogueRowLayers, 1) *
            alignToWords(shape.blockCols * elementBytes(input.type), problem.wordBytes);
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
    const uint64_t move = target.plannedExchangeCycles(std::max(sent, received) / problem.wordBytes);
    cost.exchangeCycles += move;
    cost.syncCycles += 2 * uint64_t(target.syncCycles);
    cost.serialMoveCycles = move + 2 * uint64_t(target.syncCycles);
  }
  cost.totalCycles = cost.exchangeCycles + cost.computeCycles +
                     cost.reductionCycles + cost.epilogueCycles + cost.syncCycles +
                     cost.expansionCycles + cost.hostCycles;
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
  const uint64_t rowPitchK = alignToWords(problem.k * inBytes, problem.wordBytes);
  // Where A comes from: its largest block and that block's rows.
  const BlockLayout sourceA = lhsSourceLayout(problem, target);
  const uint64_t arrivalRows =
      problem.lhsSpread ? ceilDiv(problem.m, sourceA.gridRows)
                        : ceilDiv(problem.m, activationArrivalTiles(problem, target));
  const uint64_t arrivalBytes =
      problem.lhsSpread ? sourceA.maxBlockBytes() : arrivalRows * rowPitchK;
  const uint64_t gatheredPitch = alignToWords(shape.blockInner * inBytes, problem.wordBytes);
  // Swapped plans store each block of B transposed: a row per column.
  const WeightBlock weightBlock = weightBlockOf(problem, plan, problem.inType);
  const uint64_t weightBytes = weightBlock.bytes();
  // What stays resident: an expanded weight's block in its stored type.
  const WeightBlock storedBlock = weightBlockOf(problem, plan, problem.weightStorageType());

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
                        ? shape.blockInner * alignToWords(shape.blockRows * inBytes, problem.wordBytes)
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
      sendBytes += sourceRows * alignToWords(givenCols * inBytes, problem.wordBytes);
      sendRunsB = sourceRows * (problem.rhsTransposed ? plan.inner : plan.cols);
      receiveRunsB = weightBlock.rows;
    }
  }
  if (gather)
    cost.exchangeCycles =
        target.plannedExchangeCycles(std::max(sendBytes, receiveBytes) / problem.wordBytes);

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
  // psums=interleaved: the partials (live with B's transient block while
  // the GEMM runs) and the reduction's input (live with the partials).
  uint64_t psumsPartial = 0, psumsReduceIn = 0;
  const uint64_t gathered = shape.blockRows * gatheredPitch;
  uint64_t standardPeak = gatherA ? arrival + gathered : gathered;
  // The A^T blocks and the A blocks they are transposed into.
  if (problem.lhsTransposed)
    standardPeak = std::max(
        standardPeak,
        shape.blockInner * alignToWords(shape.blockRows * inBytes, problem.wordBytes) + gathered);
  if (plan.inner == 1) {
    uint64_t result = shape.blockRows * alignToWords(shape.blockCols * outBytes, problem.wordBytes);
    standardPeak = std::max(standardPeak, gathered + result);
  } else {
    const uint64_t partial = shape.blockRows * alignToWords(shape.blockCols * accBytes, problem.wordBytes);
    const uint64_t reduceRows =
        plan.reduction == Reduction::Complete ? shape.blockRows : shape.subRows;
    const uint64_t reduceIn =
        reduceRows * alignToWords(plan.inner * shape.blockCols * accBytes, problem.wordBytes);
    const uint64_t result = reduceRows * alignToWords(shape.blockCols * outBytes, problem.wordBytes);
    if (plan.psums == MemoryClass::Standard) {
      standardPeak = std::max({standardPeak, gathered + partial, partial + reduceIn,
                               reduceIn + result});
    } else {
      // In interleaved memory, beside the block of B the GEMM reads there
      // (counted with the weights below: both live while it runs).
      standardPeak = std::max(standardPeak, result);
      psumsPartial = partial;
      psumsReduceIn = reduceIn;
    }
    // Every tile sends its partial once; the reducing tile receives a
    // reduceIn block.
    uint64_t reduceWords =
        std::max(shape.blockRows * alignToWords(shape.blockCols * accBytes, problem.wordBytes) / problem.wordBytes,
                 reduceIn / problem.wordBytes);
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
        batchRows * alignToWords(shape.blockCols * outBytes, problem.wordBytes);
    const uint64_t epilogueResult =
        batchRows *
        alignToWords(shape.blockCols * elementBytes(problem.epilogue->resultType), problem.wordBytes);
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
      // row per column block) in one phase between syncs, and combines them.
      cost.rowReductionCycles +=
          target.plannedExchangeCycles(static_cast<uint64_t>(outRows) * plan.cols) +
          2 * uint64_t(target.syncCycles) +
          estimateSplitRowCombine(target, body->reduction, body->init, 1, outRows,
                                  plan.cols, body->resultType);
    }
  }
  cost.syncCycles = uint64_t(syncCount(plan, gather)) * target.syncCycles;
  if (problem.expansion) {
    // Every tile expands the block of B it holds (stored transposed when
    // swapped), or its home share when gathered: replicas each expand.
    const uint64_t rows = weightBlock.rows;
    const uint64_t cols = plan.swapped ? shape.blockInner : shape.blockCols;
    cost.expansionCycles =
        estimateElementwise(target, *problem.expansion,
                            static_cast<int64_t>(plan.gatheredWeights ? ceilDiv(rows, plan.rows) : rows),
                            static_cast<int64_t>(cols))
            .total;
  }
  cost.totalCycles = cost.exchangeCycles + cost.computeCycles +
                     cost.reductionCycles + cost.epilogueCycles + cost.syncCycles +
                     cost.rowReductionCycles + cost.expansionCycles;
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

  // Every layer's block of a repeated layer's weights stays resident.
  const uint64_t layers = std::max<uint32_t>(problem.weightLayers, 1);
  const uint64_t peakBeforeWeights = cost.peakBytes[1];
  if (plan.gatheredWeights) {
    // Only the home share stays (in its stored type), in its own class; the
    // gathered block lives while the GEMM runs, in the plan's class, and
    // an expanded home before it is gathered.
    const uint64_t homes = storedBlock.homeBytes(plan.rows) * layers;
    if (problem.homesOpen)
      cost.openHomeBytes = homes;
    else
      cost.weightBytes[static_cast<int>(plan.homes)] += homes;
    cost.peakBytes[static_cast<int>(plan.weights)] += weightBytes;
    if (problem.expandedFrom)
      cost.peakBytes[static_cast<int>(plan.weights)] += homeBytes;
  } else {
    cost.weightBytes[static_cast<int>(plan.weights)] += storedBlock.bytes() * layers;
    // The expansion's block lives while the GEMM runs.
    if (problem.expandedFrom)
      cost.peakBytes[static_cast<int>(plan.weights)] += weightBytes;
  }
  if (plan.localStaging)
    cost.weightBytes[static_cast<int>(MemoryClass::Interleaved)] += weightBytes;
  if (problem.weightsStreamed && problem.rhsIsWeight) {
    const uint64_t perTile =
        plan.gatheredWeights ? storedBlock.homeBytes(plan.rows) : storedBlock.bytes();
    cost.hostCycles = target.hostStreamCycles(perTile * plan.tiles());
    cost.totalCycles += cost.hostCycles;
  }
  // The epilogue's row inputs (biases) stay resident in interleaved
  // memory, one column block on each tile of it.
  if (problem.epilogue)
    for (const ElementwiseInput &input : problem.epilogue->inputs)
      if (input.broadcast == Broadcast::Row)
        cost.weightBytes[1] +=
            std::max<uint32_t>(problem.epilogueRowLayers, 1) *
            alignToWords(shape.blockCols * elementBytes(input.type), problem.wordBytes);
  if (psumsPartial) {
    // B's transient block in interleaved memory (gathered, or expanded)
    // lives in the GEMM's step, the reduction's input in the next.
    const uint64_t transientB = plan.weights == MemoryClass::Interleaved
                                    ? cost.peakBytes[1] - peakBeforeWeights
                                    : 0;
    cost.peakBytes[1] += psumsPartial + (psumsReduceIn > transientB ? psumsReduceIn - transientB : 0);
  }
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
  // While another step runs, this one's weights and code stay resident
  // beside that step's transient buffers.
  const uint64_t residentStandard =
      cost.weightBytes[0] + cost.codeBytes + budget.reservedBytes[0];
  const uint64_t residentInterleaved = cost.weightBytes[1] + budget.reservedBytes[1];
  const bool besideEveryStep = std::all_of(
      budget.coexistingSteps.begin(), budget.coexistingSteps.end(),
      [&](const std::array<uint64_t, 2> &step) {
        return residentStandard + step[0] <= standard &&
               residentInterleaved + step[1] <= interleaved;
      });
  const uint64_t transient = cost.transientBytes();
  // Homes of open class stay beside every step: each class keeps the room
  // its worst step leaves, and the homes (with the weights not planned
  // yet) take their pick of it.
  const uint64_t open = cost.openHomeBytes + budget.openHomeBytes;
  bool openFits = true;
  if (open) {
    uint64_t worstStandard = usedStandard, worstInterleaved = usedInterleaved;
    for (const std::array<uint64_t, 2> &step : budget.coexistingSteps) {
      worstStandard = std::max(worstStandard, residentStandard + step[0]);
      worstInterleaved = std::max(worstInterleaved, residentInterleaved + step[1]);
    }
    openFits = worstStandard + worstInterleaved + open + budget.anyBytes <=
               standard + interleaved;
  }
  return usedStandard <= standard && usedInterleaved <= interleaved &&
         residentStandard <= standard && residentInterleaved <= interleaved &&
         besideEveryStep && transient <= budget.transientCapBytes &&
         usedStandard + usedInterleaved + budget.anyBytes <= standard + interleaved &&
         openFits &&
         cost.weightBytes[0] + cost.weightBytes[1] + cost.openHomeBytes <=
             budget.weightCapBytes;
}

void ipu::weightBytesPerTile(const GemmProblem &problem, const GemmPlan &plan,
                             uint64_t bytes[2]) {
  const WeightBlock block = weightBlockOf(problem, plan, problem.weightStorageType());
  bytes[0] = bytes[1] = 0;
  if (plan.gatheredWeights)
    bytes[static_cast<int>(plan.homes)] += block.homeBytes(plan.rows);
  else
    bytes[static_cast<int>(plan.weights)] += block.bytes();
  if (plan.localStaging)
    bytes[static_cast<int>(MemoryClass::Interleaved)] += block.bytes();
}
