//===- GemmSearch.cpp - The search over one matmul's plans ---------------===//

#include "IPU/Planning/GemmSearch.h"
#include "PlanningDetail.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>
#include <tuple>

using namespace ipu;
using namespace ipu::planning;
/// Strict weak order: cheaper first, then fewer tiles, then by fields, so the
/// choice never depends on enumeration order or threads.
static bool better(const GemmPlanChoice &a, const GemmPlanChoice &b) {
  auto key = [](const GemmPlanChoice &c) {
    return std::make_tuple(c.cost.totalCycles, c.plan.tiles(), c.plan.rows,
                           c.plan.cols, c.plan.inner, c.plan.swapped,
                           c.plan.weights, c.plan.reduction,
                           c.plan.localStaging, c.plan.partials,
                           c.plan.gatheredWeights, c.plan.serial, c.plan.homes,
                           c.plan.columnGrain, c.plan.psums);
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
  if (constraints.homes) probe.homes = *constraints.homes;
  probe.columnGrain = neededColumnGrain(problem, probe);
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
        for (GemmPlan plan : variantsOf(partition.plan, partialsTypes)) {
          // Where gathered homes stay changes no cycles: the constraint's
          // class, or interleaved (planGemmProgram may move them later).
          if (plan.gatheredWeights && constraints.homes)
            plan.homes = *constraints.homes;
          // Serial chunks keep N's balanced split: they are the last
          // resort, for memory, and grains would multiply their search.
          plan.columnGrain = serial > 1 ? 1 : neededColumnGrain(problem, plan);
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
      if (!fitsMemory(target, choice.cost, budget)) {
        // Partial sums that do not fit standard memory may in interleaved:
        // the same cycles, so only a plan that does not fit takes them.
        if (plan.inner < 2 || plan.psums != MemoryClass::Standard)
          continue;
        GemmPlan interleaved = plan;
        // (A twin, not a plan of the space: `costed` counts those.)
        interleaved.psums = MemoryClass::Interleaved;
        choice = GemmPlanChoice{interleaved, costGemmPlan(target, problem, interleaved)};
        bytes = choice.cost.peakBytes[0] + choice.cost.peakBytes[1];
        if (bytes < smallestBytes) {
          smallestBytes = bytes;
          smallest = choice;
        }
        if (!fitsMemory(target, choice.cost, budget))
          continue;
      }
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
