//===- GemmSchedule.cpp - A plan lowered, scheduled and placed ------------===//
//
// Re-ranking the planner's finalists by what the program would really do:
// the phases the lowering makes from the plan's layouts, scheduled by the
// same scheduler --ipu-schedule-exchange runs, and the plan's buffers
// placed by the same allocator --ipu-place-storage runs.
//
//===----------------------------------------------------------------------===//

#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Exchange/Timing.h"
#include "IPU/Storage/Allocator.h"

#include <algorithm>

using namespace ipu;

namespace {

/// Appends every transfer of `from` to `into`.
BufferRequest request(const char *name, const BlockLayout &layout,
                      MemoryClass memoryClass, uint32_t first, uint32_t last,
                      const TargetModel &target) {
  BufferRequest buffer;
  buffer.name = name;
  buffer.memoryClass = memoryClass;
  buffer.bytes = layout.maxBlockBytes();
  buffer.alignment = target.bufferAlignmentBytes;
  buffer.firstUse = first;
  buffer.lastUse = last;
  buffer.tiles = layout.tileList();
  std::sort(buffer.tiles.begin(), buffer.tiles.end());
  buffer.tiles.erase(std::unique(buffer.tiles.begin(), buffer.tiles.end()),
                     buffer.tiles.end());
  return buffer;
}

} // namespace

std::optional<std::string>
ipu::scheduleGemmPlan(const TargetModel &target, const GemmProblem &problem,
                      const GemmPlan &plan, const GemmCost &cost,
                      const uint64_t reserved[2], ScheduledPlan &scheduled) {
  scheduled = ScheduledPlan();
  // A serial split runs its chunk's program `serial` times over the same
  // buffers, beside A and C held whole.
  const uint32_t serial = std::max<uint32_t>(plan.serial, 1);
  const GemmProblem base = serial > 1 ? serialChunk(problem, serial) : problem;
  GemmPlan basePlan = plan;
  basePlan.serial = 1;
  const GemmLayouts layouts = gemmLayouts(base, basePlan);
  // A arrives split by rows (A^T as its transpose), as the planner assumes.
  const BlockLayout arrivalA = lhsSourceLayout(base, target);
  const BlockLayout wantedA =
      base.lhsTransposed ? transposedLayout(layouts.lhs) : layouts.lhs;
  const bool gatherA = !activationArrivesInPlace(base, basePlan, target);
  std::optional<BlockLayout> sourceB;
  if (!base.rhsIsWeight)
    sourceB = base.rhsTransposed
                  ? arrivalLayout(base.n, base.k, base.inType, target)
                  : arrivalLayout(base.k, base.n, base.inType, target);
  else if (basePlan.gatheredWeights)
    sourceB = gatheredWeightHome(layouts.rhs);

  // The phases as lowered: A's and B's relayouts in one, then the
  // reduction's gather of the partials.
  // Each buffer at an address of its own, as placement will put them.
  std::vector<ExchangePhase> phases;
  std::vector<TransferAddresses> addresses;
  uint32_t next = target.allocatableBase(MemoryClass::Standard);
  if (gatherA || sourceB) {
    ExchangePhase gather;
    gather.tiles = target.tiles;
    TransferAddresses gatherAddresses;
    Rearrangement move;
    if (gatherA) {
      if (std::optional<std::string> why =
              planRearrangement(arrivalA, wantedA, target.tiles, move))
        return "gathering A: " + *why;
      appendMove(target, move, gather, gatherAddresses, next);
    }
    if (sourceB) {
      if (std::optional<std::string> why =
              planRearrangement(*sourceB, layouts.rhs, target.tiles, move))
        return "gathering B: " + *why;
      appendMove(target, move, gather, gatherAddresses, next);
    }
    phases.push_back(std::move(gather));
    addresses.push_back(std::move(gatherAddresses));
  }
  if (basePlan.inner > 1) {
    Rearrangement reduce;
    if (std::optional<std::string> why = planRearrangement(
            layouts.partials, layouts.gathered, target.tiles, reduce))
      return "reducing the partials: " + *why;
    ExchangePhase phase;
    phase.tiles = target.tiles;
    TransferAddresses reduceAddresses;
    appendMove(target, reduce, phase, reduceAddresses, next);
    phases.push_back(std::move(phase));
    addresses.push_back(std::move(reduceAddresses));
  }
  // Each phase timed as the compiler will schedule it, on addresses laid
  // out like its buffers (placement comes later).
  for (size_t p = 0; p < phases.size(); ++p) {
    const ExchangePhase &phase = phases[p];
    ScheduleReport report;
    TimedPhaseCost timed = plannedPhaseCost(target, phase, addresses[p], &report);
    scheduled.exchangeCycles += timed.cycles;
    // The bound of the exchange itself (local copies are not exchange).
    scheduled.boundCycles +=
        report.bound + (timed.timing.cycles ? target.exchange.phaseFixedCycles : 0);
  }
  scheduled.exchangeCycles *= serial;
  scheduled.boundCycles *= serial;
  // A serial split's move of A into its chunks is charged at its bound.
  const uint64_t moveExchange =
      cost.serialMoveCycles ? cost.serialMoveCycles - 2 * uint64_t(target.syncCycles) : 0;
  scheduled.exchangeCycles += moveExchange;
  scheduled.boundCycles += moveExchange;
  // The analytical model charges each phase at its bound (the words of its
  // busiest tile); the schedule may need more.
  scheduled.cycles = cost.totalCycles - std::min(cost.exchangeCycles, cost.totalCycles) +
                     scheduled.exchangeCycles;

  // Its buffers over its steps (0: gather, 1: GEMM, 2: reduction phase,
  // 3: sum), beside what the rest of the program keeps for the whole run.
  const MemoryClass weightClass = basePlan.weights;
  std::vector<BufferRequest> buffers;
  const uint32_t last = 3;
  if (gatherA)
    buffers.push_back(request("lhs.arrived", arrivalA, MemoryClass::Standard, 0, 0, target));
  buffers.push_back(request("lhs", wantedA, MemoryClass::Standard, 0, 1, target));
  if (base.rhsIsWeight)
    buffers.push_back(request("rhs.resident", sourceB ? *sourceB : layouts.rhs,
                              basePlan.gatheredWeights ? basePlan.homes : weightClass,
                              0, last, target));
  else
    buffers.push_back(request("rhs.arrived", *sourceB, MemoryClass::Standard, 0, 0, target));
  if (sourceB)
    buffers.push_back(request("rhs", layouts.rhs, weightClass, 0, 1, target));
  if (basePlan.localStaging)
    buffers.push_back(request("rhs.staged", layouts.rhs, MemoryClass::Interleaved, 1, 1, target));
  if (basePlan.inner > 1) {
    BlockLayout partials = layouts.partials, gathered = layouts.gathered;
    buffers.push_back(request("psums", partials, basePlan.psums, 1, 2, target));
    buffers.push_back(request("gathered", gathered, basePlan.psums, 2, 3, target));
    buffers.push_back(request("out", layouts.out, MemoryClass::Standard, 3, last, target));
  } else {
    buffers.push_back(request("out", layouts.out, MemoryClass::Standard, 1, last, target));
  }
  if (serial > 1) {
    const SerialGemmLayouts homes = serialGemmLayouts(problem, plan, target);
    buffers.push_back(
        request("lhs.home", homes.lhsHome, MemoryClass::Standard, 0, last, target));
    buffers.push_back(
        request("out.home", homes.outHome, MemoryClass::Standard, 0, last, target));
  }
  // The rest of the program: a buffer on every tile for the whole run in
  // interleaved memory; standard's goes to the allocator as reserved bytes.
  std::vector<uint32_t> everyTile(target.tiles);
  for (uint32_t t = 0; t < target.tiles; ++t)
    everyTile[t] = t;
  if (reserved[1]) {
    BufferRequest rest;
    rest.name = "program";
    rest.memoryClass = MemoryClass::Interleaved;
    rest.bytes = reserved[1];
    rest.alignment = target.bufferAlignmentBytes;
    rest.firstUse = 0;
    rest.lastUse = last;
    rest.tiles = everyTile;
    buffers.push_back(std::move(rest));
  }
  const uint64_t standard = target.allocatableBytes(MemoryClass::Standard);
  if (reserved[0] + cost.codeBytes >= standard)
    return std::nullopt; // Does not fit: nothing left to place in.
  Placement placement;
  scheduled.fits = !placeBuffers(target, buffers,
                                 static_cast<uint32_t>(reserved[0] + cost.codeBytes),
                                 placement);
  scheduled.peakBytes[0] = placement.peakBytes[0];
  scheduled.peakBytes[1] = placement.peakBytes[1];
  return std::nullopt;
}
