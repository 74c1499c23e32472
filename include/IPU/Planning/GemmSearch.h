//===- GemmSearch.h - The search over one matmul's plans -------*- C++ -*-===//
//
// Every legal plan of a matmul that matches its constraints, costed (or
// pruned by a bound), the best that fit memory kept as finalists.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMSEARCH_H
#define IPU_PLANNING_GEMMSEARCH_H

#include "IPU/Planning/GemmCost.h"

#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct GemmPlanChoice {
  GemmPlan plan;
  GemmCost cost;
  /// Set by re-ranking (planGemmProgram with rerank > 0): the plan lowered,
  /// its phases scheduled and its buffers placed (scheduleGemmPlan).
  bool scheduled = false;
  uint64_t scheduledCycles = 0;
  bool scheduledFits = false;
};

struct GemmPlanSearch {
  uint64_t candidates = 0; ///< Plans in the space that can be lowered.
  uint64_t matching = 0;   ///< Of those, plans that satisfy the constraints.
  uint64_t costed = 0;     ///< Matching plans whose full cost was computed.
  /// Matching plans skipped by a lower bound: on cycles (they cannot beat
  /// the finalists) or on standard memory (they cannot fit, nor be smaller
  /// than a plan already seen).
  uint64_t pruned = 0;
  uint64_t fitting = 0;    ///< Costed plans that fit memory.
  std::vector<GemmPlanChoice> finalists; ///< Best first, fitting only.
  /// When no plan fits: the one that needs the least memory.
  std::optional<GemmPlanChoice> smallest;
};

/// Searches the plan space (both orientations; every rows x cols x inner
/// split that fits the tiles; both weight classes; both reductions; local
/// staging), keeping the best `finalistCount` plans that match and fit.
/// When no plan fits and the problem may be split serially, the rows are
/// cut into serial chunks (the divisors of M, fewest chunks first; the
/// first count that fits and the next two that fit compete), and the error
/// then names the smallest memory any plan tried needs.
/// Partitions whose compute-only lower bound cannot beat the current
/// finalists are skipped without costing them. Fails with a message naming
/// the constraint when none matches, or with the bytes per tile the smallest
/// plan needs when none fits. The result does not depend on threads or
/// evaluation order.
std::optional<std::string> searchGemmPlans(const TargetModel &target,
                                           const GemmProblem &problem,
                                           const GemmPlanConstraints &constraints,
                                           unsigned finalistCount,
                                           GemmPlanSearch &search,
                                           const MemoryBudget &budget = {},
                                           bool allowSerial = true);

} // namespace ipu

#endif // IPU_PLANNING_GEMMSEARCH_H
