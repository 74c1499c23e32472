//===- GemmPlan.h - Partition plans for one matmul and their cost --------===//
//
// A plan cuts C[M x N] = A[M x K] x B[K x N] into a rows x cols grid of
// blocks, block (i, j) on tile i * cols + j. Weights B are resident in the
// plan's layout; activations A arrive split by rows over the tiles and are
// gathered (broadcast along each block row) in one exchange phase.
//
// The cost model mirrors what --ipu-lower-to-tile emits and what the
// simulator charges: one sync and the gather phase (its endpoint bound plus
// latency), then the slowest tile's GEMM estimate. The most loaded tile
// decides, never the average.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMPLAN_H
#define IPU_PLANNING_GEMMPLAN_H

#include "IPU/Support/ElementType.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct GemmProblem {
  int64_t m = 0, k = 0, n = 0;
  ElementType inType = ElementType::F16;
  ElementType accType = ElementType::F32;
  ElementType outType = ElementType::F32;
};

struct GemmPlan {
  uint32_t rows = 1, cols = 1, inner = 1;
  bool swapped = false;
  MemoryClass weights = MemoryClass::Standard;
  uint32_t tiles() const { return rows * cols * inner; }
  /// "rows=4 cols=4 inner=1 orientation=normal weights=standard".
  std::string str() const;
};

struct GemmPlanConstraints {
  std::optional<uint32_t> rows, cols, inner;
  std::optional<bool> swapped;
  std::optional<MemoryClass> weights;
  bool matches(const GemmPlan &plan) const;
  std::string str() const;
};

struct GemmCost {
  uint64_t computeCycles = 0;
  uint64_t exchangeCycles = 0; ///< Gather phase, latency included.
  uint64_t syncCycles = 0;
  uint64_t totalCycles = 0;
  uint64_t peakBytes[2] = {0, 0}; ///< Per memory class, worst tile.
  uint32_t activeTiles = 0;
};

/// The layout activations arrive in: rows split over min(M, tiles) tiles.
uint32_t activationArrivalTiles(const GemmProblem &problem,
                                const TargetModel &target);

GemmCost costGemmPlan(const TargetModel &target, const GemmProblem &problem,
                      const GemmPlan &plan);
/// Whether every memory class fits on every tile.
bool fitsMemory(const TargetModel &target, const GemmCost &cost);

struct GemmPlanChoice {
  GemmPlan plan;
  GemmCost cost;
};

struct GemmPlanSearch {
  uint64_t candidates = 0; ///< Plans in the space.
  uint64_t matching = 0;   ///< Plans that satisfy the constraints.
  uint64_t fitting = 0;    ///< Matching plans that fit memory.
  std::vector<GemmPlanChoice> finalists; ///< Best first, fitting only.
};

/// Enumerates the plans lowered today (normal orientation, inner = 1, both
/// weight classes), keeps the best `finalistCount` that match and fit.
/// Fails with a message naming the constraint when none matches, or with the
/// bytes per tile the smallest plan needs when none fits.
std::optional<std::string> searchGemmPlans(const TargetModel &target,
                                           const GemmProblem &problem,
                                           const GemmPlanConstraints &constraints,
                                           unsigned finalistCount,
                                           GemmPlanSearch &search);

} // namespace ipu

#endif // IPU_PLANNING_GEMMPLAN_H
