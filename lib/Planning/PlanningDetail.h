//===- PlanningDetail.h - What the planning files share -------*- C++ -*-===//
//
// Private to lib/Planning: arithmetic on sizes, and the bounds the cost
// model gives the search for pruning.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_PLANNINGDETAIL_H
#define IPU_PLANNING_PLANNINGDETAIL_H

#include "IPU/Planning/GemmPlan.h"

#include <cstdint>
#include <vector>

namespace ipu::planning {

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
/// `bytes` rounded up to whole exchange words of `word` bytes, as rows are
/// stored (GemmProblem::wordBytes).
inline uint64_t alignToWords(uint64_t bytes, uint64_t word) {
  return (bytes + word - 1) / word * word;
}

/// The partials the op allows: what it accumulates in, and f16 for an f32
/// accumulation when the user allows it.
std::vector<ElementType> allowedPartials(const GemmProblem &problem);

/// A lower bound on the total of every variant of a partition: its GEMM at
/// the fastest weight load and the cheapest partials it may use, its syncs
/// and one exchange phase's fixed cost.
uint64_t partitionLowerBound(const TargetModel &target, const GemmProblem &problem,
                             const GemmPlan &partition);

/// A lower bound on the standard bytes every variant of `partition` holds
/// at once on its busiest tile: its A block as gathered beside its GEMM's
/// output block (the partials in the narrowest type the op allows when
/// inner > 1), as costGemmPlan counts them.
uint64_t partitionStandardBound(const GemmProblem &problem, const GemmPlan &partition);

} // namespace ipu::planning

#endif // IPU_PLANNING_PLANNINGDETAIL_H
