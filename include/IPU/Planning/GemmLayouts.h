//===- GemmLayouts.h - The tensor layouts a GEMM plan wants ---*- C++ -*-===//
//
// The block layouts --ipu-lower-to-tile gives a planned matmul's tensors.
// They live beside the planner so that the lowering, the cost model's tests
// and the benchmarks derive exactly the same layouts (and so the same
// exchange phases) from a plan.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMLAYOUTS_H
#define IPU_PLANNING_GEMMLAYOUTS_H

#include "IPU/Layout/BlockLayout.h"
#include "IPU/Planning/GemmCost.h"
#include "IPU/Exchange/Timing.h"

namespace ipu {

/// Tile p * rows * cols + i * cols + j holds row block i, inner block p and
/// column block j of a plan.
struct GemmLayouts {
  BlockLayout lhs; ///< A: block (i, p), replicated over j.
  BlockLayout rhs; ///< B: block (p, j), replicated over i; B^T [N x K],
                   ///< block (j, p), when swapped.
  /// With inner > 1: the partial sums, as a [M, inner * N] tensor whose
  /// column block j holds the inner partials of C's column block j side by
  /// side; `partials` is where the GEMMs write them, `gathered` where the
  /// reduction reads them.
  BlockLayout partials, gathered;
  BlockLayout out; ///< C.
};

/// The layouts of `plan` (normal orientation).
GemmLayouts gemmLayouts(const GemmProblem &problem, const GemmPlan &plan);

/// The layouts of `plan` for `batches` GEMMs side by side: batch b on the
/// tiles of batch 0 shifted by b * tilesPerBatch.
GemmLayouts batchGemmLayouts(const GemmLayouts &layouts, int64_t batches,
                             uint32_t tilesPerBatch);

/// Where gathered weights (GemmPlan::gatheredWeights) are stored: each block
/// of `rhs` once, its rows split (balanced) over min(replicas, block rows)
/// of the tiles that hold its replicas, part r on the tile of replica r.
/// Moving it to `rhs` (planRearrangement) broadcasts each part to every
/// replica: the gather the planner charges.
BlockLayout gatheredWeightHome(const BlockLayout &rhs);

/// The layout activations arrive in: rows split over min(M, tiles) tiles;
/// with batches, batch b on tiles / batches tiles of its own, rows split
/// over min(M, tiles / batches) of them.
BlockLayout arrivalLayout(int64_t rows, int64_t cols, ElementType type,
                          const TargetModel &target, int64_t batches = 1);

/// A serial split's layouts: `chunk` (the layouts of one chunk of M /
/// serial rows, gemmLayouts of serialChunk), and where the whole A and C
/// live for the loop: A's chunks in the chunk's arrival blocks, C's in the
/// chunk's output blocks, `serial` batch-local batches each (the serial
/// layout of the [M, K] and [M, N] matrices).
struct SerialGemmLayouts {
  GemmLayouts chunk;
  BlockLayout lhsChunk; ///< One chunk of A as it is sliced: its arrival layout.
  BlockLayout lhsHome, outHome;
};
SerialGemmLayouts serialGemmLayouts(const GemmProblem &problem,
                                    const GemmPlan &plan,
                                    const TargetModel &target);

/// A matrix spread over as many tiles as it has 32-bit words to cut: rows
/// split over min(rows, tiles) tiles, and the columns of each row block, on
/// word boundaries, over as many of the tiles left as the row has words.
/// Block (i, j) on tile i * grid columns + j.
BlockLayout spreadLayout(int64_t rows, int64_t cols, ElementType type,
                         const TargetModel &target);
/// Where `problem`'s A comes from before its gather: spread for a serial
/// chunk (lhsSpread), else as activations arrive (A^T as its transpose).
BlockLayout lhsSourceLayout(const GemmProblem &problem, const TargetModel &target);

/// A base for a buffer of `bytes` before placement: from the SRAM conflict
/// unit after `next` (the next free byte, moved past the buffer), again
/// from the bottom of allocatable standard memory past the end of tile
/// memory.
uint32_t provisionalBufferBase(const TargetModel &target, uint64_t bytes,
                               uint32_t &next);

/// Appends `move` to a phase being built before placement, its source and
/// destination buffers each at a base of their own (one after another from
/// the bottom of allocatable standard memory, each from an SRAM conflict
/// unit of its own as placement keeps them, `next` the next free byte), its
/// transfers at their offsets: the addresses the timed schedule sees are
/// then contiguous where placed buffers would be.
void appendMove(const TargetModel &target, const Rearrangement &move,
                ExchangePhase &phase, TransferAddresses &addresses,
                uint32_t &next);

/// What moving a tensor from one layout to another costs: one exchange
/// phase, timed as the compiler schedules it, and a sync on each side, as
/// the lowering emits and the simulator charges it.
struct RelayoutCost {
  uint64_t transfers = 0;
  uint64_t boundCycles = 0; ///< Endpoint lower bound of the phase.
  uint64_t cycles = 0;      ///< The phase timed, and syncs.
};
/// With `permutation`, the move permutes (planPermutation). Fails with the
/// planner's message when the move cannot be made.
std::optional<std::string> relayoutCost(const BlockLayout &from,
                                        const BlockLayout &to,
                                        const TargetModel &target,
                                        RelayoutCost &cost,
                                        const Permutation *permutation = nullptr);

/// A plan lowered as --ipu-lower-to-tile lowers it, its phases scheduled
/// and its buffers placed: what re-ranking the planner's finalists
/// compares (the user's stack's "refined" cycles beside the analytical
/// ones).
struct ScheduledPlan {
  /// The analytical total with each exchange phase at its schedule's send
  /// horizon instead of its endpoint bound.
  uint64_t cycles = 0;
  uint64_t exchangeCycles = 0; ///< Its phases, scheduled, latency included.
  uint64_t boundCycles = 0;    ///< The same phases at their bounds.
  /// Its buffers (A as it arrives and as gathered, B resident and gathered,
  /// partials, C) placed with first fit next to `reserved` bytes per class
  /// kept for the rest of the program.
  bool fits = false;
  uint64_t peakBytes[2] = {0, 0};
};

/// Lowers, schedules and places `plan` for one batch of `problem` on
/// `target` (tiles of one batch), with A (and an activation B) arriving as
/// activations do: the gather phase, A's and B's moves in one, and with
/// inner > 1 the reduction phase, scheduled by scheduleBest; `cost` is the
/// plan's analytical cost. Fails with planRearrangement's message.
std::optional<std::string> scheduleGemmPlan(const TargetModel &target,
                                            const GemmProblem &problem,
                                            const GemmPlan &plan,
                                            const GemmCost &cost,
                                            const uint64_t reserved[2],
                                            ScheduledPlan &scheduled);

} // namespace ipu

#endif // IPU_PLANNING_GEMMLAYOUTS_H
