//===- GemmCost.h - What a matmul plan costs --------------------*- C++ -*-===//
//
// The cost model mirrors what --ipu-lower-to-tile emits and what the
// simulator charges, step by step: syncs, each exchange phase at its
// endpoint bound plus latency, each compute set at its slowest tile's
// kernel estimate. The most loaded tile decides, never the average. Memory
// is counted per class on the busiest tile, next to a budget of what the
// program's other ops hold.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMCOST_H
#define IPU_PLANNING_GEMMCOST_H

#include "IPU/Planning/GemmPlan.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ipu {

struct GemmCost {
  uint64_t computeCycles = 0;   ///< GEMM compute set (and staging copy).
  uint64_t exchangeCycles = 0;  ///< Every phase, latency included.
  uint64_t reductionCycles = 0; ///< Reduce compute set.
  uint64_t epilogueCycles = 0;  ///< The fused elementwise epilogue.
  /// The weight expansion (GemmProblem::expansion) on the block it writes,
  /// once per run of the matmul (a serial split's loop included).
  uint64_t expansionCycles = 0;
  /// The row reductions on the result: both halves, the gather and its
  /// syncs (in none of the other fields).
  uint64_t rowReductionCycles = 0;
  uint64_t syncCycles = 0;
  /// B streamed from the host as the matmul's layer starts
  /// (GemmProblem::weightsStreamed): every tile's block, replicas included,
  /// over the host link (TargetModel::hostStreamCycles).
  uint64_t hostCycles = 0;
  uint64_t totalCycles = 0;
  uint64_t peakBytes[2] = {0, 0}; ///< Per memory class, worst tile.
  /// Of peakBytes: the resident weights (and staging scratch), and the
  /// exchange code and vertex state this matmul adds to reserved standard
  /// memory.
  uint64_t weightBytes[2] = {0, 0};
  /// A gathered plan's resident homes while their class is open
  /// (GemmProblem::homesOpen): in neither weightBytes nor peakBytes.
  uint64_t openHomeBytes = 0;
  uint64_t codeBytes = 0;
  uint32_t activeTiles = 0;
  /// A serial split's cost per iteration besides the chunk's GEMM (the
  /// slice and update copies, their dynamic offsets, the loop's branch),
  /// in computeCycles; 0 without one.
  uint64_t serialStepCycles = 0;
  /// Of exchangeCycles and syncCycles: a serial split's move of a computed
  /// A into its chunks before the loop, latency and syncs included.
  uint64_t serialMoveCycles = 0;
  /// Both classes' peak less what stays for the whole program (weights,
  /// code): the buffers that come and go with this matmul.
  uint64_t transientBytes() const {
    const uint64_t peak = peakBytes[0] + peakBytes[1];
    const uint64_t kept = weightBytes[0] + weightBytes[1] + codeBytes;
    return peak > kept ? peak - kept : 0;
  }
};

GemmCost costGemmPlan(const TargetModel &target, const GemmProblem &problem,
                      const GemmPlan &plan);
/// Memory other matmuls of the program take on every tile: resident data
/// (their weights, their exchange code) per class when known, and in either
/// class (`anyBytes`) when the other matmul is not planned yet; and the
/// largest transient peak (buffers other than weights) of the planned ones,
/// which is live while this matmul's weights are.
struct MemoryBudget {
  uint64_t reservedBytes[2] = {0, 0};
  uint64_t anyBytes = 0;
  /// The planned matmuls' homes whose class is still open
  /// (GemmCost::openHomeBytes): each in one class, either.
  uint64_t openHomeBytes = 0;
  /// Per class, the largest of coexistingSteps (for messages).
  uint64_t coexistingBytes[2] = {0, 0};
  /// Each other step's transient buffers (standard, interleaved) on its
  /// busiest tiles: one step's live together, two steps' never.
  std::vector<std::array<uint64_t, 2>> coexistingSteps;
  /// The most this matmul's transient buffers (both classes, weights and
  /// code apart) may take per tile: room left for later matmuls' weights
  /// when the fastest plans of the earlier ones would take it.
  uint64_t transientCapBytes = UINT64_MAX;
  /// The most this matmul's resident weights may take per tile (both
  /// classes): its share of tile memory when the program's weights, each
  /// replicated as its fastest plan wants, would not all fit.
  uint64_t weightCapBytes = UINT64_MAX;
  /// Of reservedBytes, for the error message: the other matmuls' exchange
  /// code and vertex state, and what the program's other ops keep (kernel
  /// code, vertex state, layer-norm vectors).
  uint64_t peerCodeBytes = 0, programBytes = 0;
};

/// Whether every memory class fits on every tile next to `budget`: this
/// matmul's peak next to the others' resident data, and its resident
/// weights next to the others' transient peaks. Homes of open class (its
/// own and the budget's) fit when the room both classes keep at their
/// worst step holds them.
bool fitsMemory(const TargetModel &target, const GemmCost &cost,
                const MemoryBudget &budget = {});
/// Per-tile weight bytes of `plan` (in plan.weights) and of its interleaved
/// staging scratch, if any.
void weightBytesPerTile(const GemmProblem &problem, const GemmPlan &plan,
                        uint64_t bytes[2]);

} // namespace ipu

#endif // IPU_PLANNING_GEMMCOST_H
