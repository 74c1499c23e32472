//===- GemmPlan.cpp - Partition plans for one matmul and their cost -------===//

#include "IPU/Planning/GemmPlan.h"
#include "IPU/Device/Kernels.h"

#include <algorithm>
#include <sstream>

using namespace ipu;

static uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t alignTo4(uint64_t bytes) { return (bytes + 3) / 4 * 4; }

std::string GemmPlan::str() const {
  std::ostringstream os;
  os << "rows=" << rows << " cols=" << cols << " inner=" << inner
     << " orientation=" << (swapped ? "swapped" : "normal")
     << " weights=" << memoryClassName(weights);
  return os.str();
}

bool GemmPlanConstraints::matches(const GemmPlan &plan) const {
  return (!rows || *rows == plan.rows) && (!cols || *cols == plan.cols) &&
         (!inner || *inner == plan.inner) &&
         (!swapped || *swapped == plan.swapped) &&
         (!weights || *weights == plan.weights);
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
  return os.str();
}

uint32_t ipu::activationArrivalTiles(const GemmProblem &problem,
                                     const TargetModel &target) {
  return static_cast<uint32_t>(
      std::min<int64_t>(problem.m, static_cast<int64_t>(target.tiles)));
}

GemmCost ipu::costGemmPlan(const TargetModel &target, const GemmProblem &problem,
                           const GemmPlan &plan) {
  GemmCost cost;
  const uint64_t inBytes = elementBytes(problem.inType);
  const uint64_t outBytes = elementBytes(problem.outType);
  const uint64_t blockRows = ceilDiv(problem.m, plan.rows);
  const uint64_t blockCols = ceilDiv(problem.n, plan.cols);
  const uint64_t lhsPitch = alignTo4(problem.k * inBytes);
  const uint32_t arrivalTiles = activationArrivalTiles(problem, target);
  const uint64_t arrivalRows = ceilDiv(problem.m, arrivalTiles);

  // Gather: each arrival tile sends its rows once (a broadcast along the
  // block row); each plan tile receives its whole block row of A.
  uint64_t sendWords = arrivalRows * lhsPitch / 4;
  uint64_t receiveWords = blockRows * lhsPitch / 4;
  cost.exchangeCycles =
      std::max(sendWords, receiveWords) + target.exchangeLatencyCycles;
  cost.computeCycles = estimateGemmCycles(target, problem.inType, blockRows,
                                          problem.k, blockCols);
  // A sync before the gather and one before results stream out.
  cost.syncCycles = 2ull * target.syncCycles;
  cost.totalCycles = cost.exchangeCycles + cost.computeCycles + cost.syncCycles;
  cost.activeTiles = plan.tiles();

  // Liveness as lowered: arrival A until the gather, gathered A until the
  // compute set, C from the compute set on; weights always.
  uint64_t arrival = arrivalRows * lhsPitch;
  uint64_t gathered = blockRows * lhsPitch;
  uint64_t result = blockRows * alignTo4(blockCols * outBytes);
  uint64_t weights = problem.k * alignTo4(blockCols * inBytes);
  cost.peakBytes[0] = std::max(arrival + gathered, gathered + result);
  cost.peakBytes[static_cast<int>(plan.weights)] += weights;
  return cost;
}

bool ipu::fitsMemory(const TargetModel &target, const GemmCost &cost) {
  return cost.peakBytes[0] <= target.allocatableBytes(MemoryClass::Standard) &&
         cost.peakBytes[1] <= target.allocatableBytes(MemoryClass::Interleaved);
}

/// Strict weak order: cheaper first, then fewer tiles, then by fields, so the
/// choice never depends on enumeration order or threads.
static bool better(const GemmPlanChoice &a, const GemmPlanChoice &b) {
  if (a.cost.totalCycles != b.cost.totalCycles)
    return a.cost.totalCycles < b.cost.totalCycles;
  if (a.plan.tiles() != b.plan.tiles())
    return a.plan.tiles() < b.plan.tiles();
  if (a.plan.rows != b.plan.rows)
    return a.plan.rows < b.plan.rows;
  if (a.plan.cols != b.plan.cols)
    return a.plan.cols < b.plan.cols;
  return a.plan.weights < b.plan.weights;
}

/// Explains why a constraint selects nothing, naming the first field that
/// alone matches no plan of the space.
static std::string explainNoMatch(const TargetModel &target,
                                  const GemmProblem &problem,
                                  const GemmPlanConstraints &constraints) {
  uint64_t maxRows = std::min<uint64_t>(problem.m, target.tiles);
  uint64_t maxCols = std::min<uint64_t>(problem.n, target.tiles);
  std::ostringstream os;
  os << "no plan matches constraint '" << constraints.str() << "'";
  if (constraints.rows && (*constraints.rows < 1 || *constraints.rows > maxRows))
    os << ": rows must be in [1, " << maxRows << "]";
  else if (constraints.cols &&
           (*constraints.cols < 1 || *constraints.cols > maxCols))
    os << ": cols must be in [1, " << maxCols << "]";
  else if (constraints.inner && *constraints.inner != 1)
    os << ": only inner=1 is lowered today";
  else if (constraints.swapped && *constraints.swapped)
    os << ": only orientation=normal is lowered today";
  else if (constraints.rows && constraints.cols)
    os << ": rows x cols = " << uint64_t(*constraints.rows) * *constraints.cols
       << " exceeds the " << target.tiles << " tiles of '" << target.name << "'";
  return os.str();
}

std::optional<std::string>
ipu::searchGemmPlans(const TargetModel &target, const GemmProblem &problem,
                     const GemmPlanConstraints &constraints,
                     unsigned finalistCount, GemmPlanSearch &search) {
  search = GemmPlanSearch();
  if (problem.m < 1 || problem.k < 1 || problem.n < 1)
    return "matmul dimensions must be positive";
  std::vector<GemmPlanChoice> fitting;
  GemmPlanChoice smallest; // Least memory among matching plans.
  uint64_t smallestBytes = UINT64_MAX;
  const uint64_t maxRows = std::min<uint64_t>(problem.m, target.tiles);
  for (uint32_t rows = 1; rows <= maxRows; ++rows) {
    uint64_t maxCols = std::min<uint64_t>(problem.n, target.tiles / rows);
    for (uint32_t cols = 1; cols <= maxCols; ++cols) {
      for (MemoryClass weights :
           {MemoryClass::Standard, MemoryClass::Interleaved}) {
        ++search.candidates;
        GemmPlan plan;
        plan.rows = rows;
        plan.cols = cols;
        plan.weights = weights;
        if (!constraints.matches(plan))
          continue;
        ++search.matching;
        GemmCost cost = costGemmPlan(target, problem, plan);
        uint64_t bytes = cost.peakBytes[0] + cost.peakBytes[1];
        if (bytes < smallestBytes) {
          smallestBytes = bytes;
          smallest = {plan, cost};
        }
        if (!fitsMemory(target, cost))
          continue;
        ++search.fitting;
        fitting.push_back({plan, cost});
      }
    }
  }
  if (search.matching == 0)
    return explainNoMatch(target, problem, constraints);
  if (fitting.empty()) {
    std::ostringstream os;
    os << "no plan fits tile memory: the smallest (" << smallest.plan.str()
       << ") needs " << smallest.cost.peakBytes[0] << " standard and "
       << smallest.cost.peakBytes[1] << " interleaved bytes per tile; a tile of '"
       << target.name << "' has "
       << target.allocatableBytes(MemoryClass::Standard) << " standard and "
       << target.allocatableBytes(MemoryClass::Interleaved)
       << " interleaved bytes";
    return os.str();
  }
  size_t keep = std::min<size_t>(std::max(finalistCount, 1u), fitting.size());
  std::partial_sort(fitting.begin(), fitting.begin() + keep, fitting.end(),
                    better);
  fitting.resize(keep);
  search.finalists = std::move(fitting);
  return std::nullopt;
}
