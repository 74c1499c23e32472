//===- GemmPlan.h - Partition plans for one matmul and their cost --------===//
//
// A plan cuts C[M x N] = A[M x K] x B[K x N] over rows x cols x inner tiles:
// tile p * rows * cols + i * cols + j computes the partial product of row
// block i of A, inner block p of K and column block j of B. Weights B are
// resident in the plan's layout (block (p, j) on every tile of column block j
// and inner block p), in the plan's memory class; with local staging they
// stay in standard memory and are copied to an interleaved scratch before the
// AMP reads them. In the swapped orientation the AMP holds blocks of A and
// streams the columns of B, which the weights' host stream stores
// transposed (B^T, one row per column of B). Activations A arrive split by
// rows over min(M, tiles) tiles and are gathered into the plan's layout in
// one exchange phase (each row segment broadcast along its block row). With
// inner > 1 the partial sums are reduced: completely (every partial of block
// (i, j) goes to the tile of p = 0, which sums them) or staged (the rows of
// block (i, j) are split over its `inner` tiles and each sums its share).
//
// The cost model mirrors what --ipu-lower-to-tile emits and what the
// simulator charges, step by step: syncs, each exchange phase at its
// endpoint bound plus latency, each compute set at its slowest tile's
// kernel estimate. The most loaded tile decides, never the average.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMPLAN_H
#define IPU_PLANNING_GEMMPLAN_H

#include "IPU/Support/ElementType.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

struct GemmProblem {
  int64_t m = 0, k = 0, n = 0;
  ElementType inType = ElementType::F16;
  /// The accumulation the op asks for. An f32 accumulation runs with f32
  /// partials unless `allowHalfPartials`; an f16 one with f16 partials.
  ElementType accType = ElementType::F32;
  ElementType outType = ElementType::F32;
  /// The user allows f16 partials for an f32 accumulation (a pass option or
  /// the op's constraints); the check's tolerance then follows them.
  bool allowHalfPartials = false;
  /// B is an inference weight, resident and stored in whatever layout the
  /// plan wants (transposed for the swapped orientation).
  bool rhsIsWeight = true;
  /// B is given as B^T [N x K]. An activation B^T is already the swapped
  /// orientation's operand; no plan can transpose an activation.
  bool rhsTransposed = false;
  /// A is an activation given as A^T [K x M]: it is gathered as A^T, each
  /// tile receiving the transpose of its A block, and transposed there by
  /// a `transpose` compute set before the GEMM.
  bool lhsTransposed = false;
  /// A comes spread over every tile, its rows and columns split
  /// (spreadLayout), rather than split by rows as activations arrive: a
  /// serial split's chunk, sliced from where A lives whole.
  bool lhsSpread = false;
  /// A is a function argument, streamed by the host straight into where a
  /// serial split keeps it. Otherwise an op computed it, and a serial split
  /// first moves it from there into its chunks: one exchange before the
  /// loop, charged as a move from the arrival layout (the planner's stand-in
  /// for any producer, as for a spatial plan's gather).
  bool lhsFromHost = true;
  /// GEMMs of this shape side by side (a batched matmul), each on
  /// tiles / batches tiles of its own with the same plan.
  int64_t batches = 1;
  /// The elementwise chain (bias, activation, cast) that runs on the
  /// result in its layout, if any: each plan pays for it on its busiest
  /// output block, holds its result, and keeps its narrowest stored type
  /// on 32-bit word boundaries for the exchange after it.
  std::shared_ptr<const ElementwiseBody> epilogue;
  /// The row reductions (softmax's max and sum, layer norm's statistics)
  /// that read the result, or an elementwise chain of it, in C's layout:
  /// each plan pays for them on its output blocks, and when it splits rows
  /// over column blocks, for the gather of the partials and the second
  /// reduction (ElementwiseLowering's split reduction).
  std::vector<std::shared_ptr<const ElementwiseBody>> rowReductions;
  /// Whether the result (or the epilogue's) moves by exchange to another
  /// op, in 32-bit words: a narrow type then needs word-aligned column
  /// blocks. A value only returned leaves by host stream, which has no
  /// such grain.
  bool resultExchanged = true;
};

enum class Reduction : uint8_t { Complete = 0, Staged = 1 };
std::string_view reductionName(Reduction reduction);
std::optional<Reduction> parseReduction(std::string_view name);

struct GemmPlan {
  uint32_t rows = 1, cols = 1, inner = 1;
  bool swapped = false;
  MemoryClass weights = MemoryClass::Standard;
  Reduction reduction = Reduction::Complete; ///< Only with inner > 1.
  bool localStaging = false; ///< Only with standard weights.
  /// What the AMP accumulates in: sets its rate and the partial sums.
  ElementType partials = ElementType::F32;
  /// Weights stored once rather than on every replica: each block's rows
  /// are split over the `rows` tiles that use it (gatheredWeightHome), and
  /// an exchange before each GEMM (the phase that gathers A) gathers the
  /// whole block onto each of them, into a transient buffer. Only for
  /// weights in interleaved memory, without staging, with rows > 1: it
  /// trades the replicas' memory for that exchange, as poplibs does.
  bool gatheredWeights = false;
  /// Serial chunks of the rows of A and C, run one after another in a loop
  /// over the same buffers (poplibs' serial split): rows, cols and inner
  /// split one chunk of M / serial rows. A holds all its chunks spread once
  /// over the tiles and C all its chunks in the chunk's output blocks; each
  /// iteration copies its chunk of A out (a dynamic slice), gathers it into
  /// the plan's layout, multiplies, reduces and copies the chunk's result
  /// into C (a dynamic update). Only for 2-D problems with resident weights
  /// and M a multiple of serial: it trades cycles for memory.
  uint32_t serial = 1;
  uint32_t tiles() const { return rows * cols * inner; }
  /// "rows=4 cols=4 inner=1 orientation=normal weights=standard
  /// reduction=complete staging=false partials=f32", and " gathered=true"
  /// for gathered weights, " serial=S" for a serial split.
  std::string str() const;
};

struct GemmPlanConstraints {
  std::optional<uint32_t> rows, cols, inner;
  std::optional<bool> swapped;
  std::optional<MemoryClass> weights;
  std::optional<Reduction> reduction;
  std::optional<bool> localStaging;
  std::optional<ElementType> partials;
  std::optional<bool> gatheredWeights;
  std::optional<uint32_t> serial;
  bool matches(const GemmPlan &plan) const;
  bool empty() const;
  /// Every field `other` sets replaces this one's.
  void override(const GemmPlanConstraints &other);
  std::string str() const;
};

struct GemmCost {
  uint64_t computeCycles = 0;   ///< GEMM compute set (and staging copy).
  uint64_t exchangeCycles = 0;  ///< Every phase, latency included.
  uint64_t reductionCycles = 0; ///< Reduce compute set.
  uint64_t epilogueCycles = 0;  ///< The fused elementwise epilogue.
  /// The row reductions on the result: both halves, the gather and its
  /// syncs (in none of the other fields).
  uint64_t rowReductionCycles = 0;
  uint64_t syncCycles = 0;
  uint64_t totalCycles = 0;
  uint64_t peakBytes[2] = {0, 0}; ///< Per memory class, worst tile.
  /// Of peakBytes: the resident weights (and staging scratch), and the
  /// exchange code and vertex state this matmul adds to reserved standard
  /// memory.
  uint64_t weightBytes[2] = {0, 0};
  uint64_t codeBytes = 0;
  uint32_t activeTiles = 0;
  /// A serial split's cost per iteration besides the chunk's GEMM (the
  /// slice and update copies, their dynamic offsets, the loop's branch),
  /// in computeCycles; 0 without one.
  uint64_t serialStepCycles = 0;
  /// Of exchangeCycles and syncCycles: a serial split's move of a computed
  /// A into its chunks before the loop, latency and syncs included.
  uint64_t serialMoveCycles = 0;
};

/// Whether `problem` may be split serially: a 2-D product (batches folded
/// into its rows) of an untransposed A by resident weights, with no row
/// reductions on its result (they would need every chunk).
bool serialSplitPossible(const GemmProblem &problem);
/// One serial chunk of `problem` under `serial` chunks: M / serial rows, and
/// no epilogue (it runs once on the whole result, after the loop).
GemmProblem serialChunk(const GemmProblem &problem, uint32_t serial);

/// Whether the operand layouts of `swapped` can be made for `problem`: a
/// weight is stored either way; an activation B only as it is given.
bool orientationPossible(const GemmProblem &problem, bool swapped);

/// The tiles one batch of `problem` plans for: tiles / batches. Fails when
/// there are more batches than tiles.
std::optional<std::string> tilesPerBatch(const TargetModel &target,
                                         const GemmProblem &problem,
                                         uint32_t &tiles);

/// Tiles activations arrive on: rows split over min(M, tiles) tiles.
uint32_t activationArrivalTiles(const GemmProblem &problem,
                                const TargetModel &target);

/// Whether the plan's A blocks are the arrival blocks, so that the lowering
/// needs no gather phase for an activation that arrives from the host.
bool activationArrivesInPlace(const GemmProblem &problem, const GemmPlan &plan,
                              const TargetModel &target);

/// Why `plan` cannot be lowered for `problem` on `target` (partitions out of
/// range, inner boundaries not on 32-bit words, staged reduction with fewer
/// rows than inner parts, ...), or nothing when it can.
std::optional<std::string> checkGemmPlan(const TargetModel &target,
                                         const GemmProblem &problem,
                                         const GemmPlan &plan);

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
  uint64_t coexistingBytes[2] = {0, 0};
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
/// weights next to the others' transient peaks.
bool fitsMemory(const TargetModel &target, const GemmCost &cost,
                const MemoryBudget &budget = {});
/// Per-tile weight bytes of `plan` (in plan.weights) and of its interleaved
/// staging scratch, if any.
void weightBytesPerTile(const GemmProblem &problem, const GemmPlan &plan,
                        uint64_t bytes[2]);

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

/// A matmul of a program whose matmuls share tile memory.
struct ProgramGemm {
  GemmProblem problem; ///< rhsIsWeight: B is resident for the whole program.
  GemmPlanConstraints constraints;
  /// A plan the user gave: checked (checkGemmPlan, the constraints) and
  /// costed, never replaced. The search then holds it as its one finalist.
  std::optional<GemmPlan> given;
  GemmPlanSearch search;            ///< Filled by planGemmProgram.
  std::optional<std::string> error; ///< Why it could not be planned.
  double seconds = 0;               ///< Its planning time.
  /// Standard bytes per tile the program's other ops (softmax, layer norm)
  /// hold at once while the weights are resident: an estimate, their
  /// operands and result spread evenly over the tiles.
  uint64_t coexistingStandardBytes = 0;
  /// Standard bytes per tile the program's other ops keep for its whole
  /// run: the generated kernels' code and their vertices' state.
  uint64_t residentStandardBytes = 0;
  /// Interleaved bytes per tile they keep: their resident row vectors
  /// (layer norm's scale and shift), replicated over their tiles.
  uint64_t residentInterleavedBytes = 0;
  /// The weight cap planGemmProgram gave this matmul (MemoryBudget), 0 when
  /// none was needed.
  uint64_t weightCapBytes = 0;
};

/// Plans the matmuls of one program in program order (a given plan is kept
/// or refused with the reason), each next to the others' memory: the resident weights and code and the transient peak of
/// those already planned, and the least the later ones' weights can take
/// (spread over every tile). When a matmul then finds no plan that fits,
/// the program is planned again with each resident weight capped at a share
/// of tile memory proportional to its size (tighter shares until every
/// matmul fits): weights replicated less, for memory, where the greedy
/// order would have spent it all on the first ones.
///
/// With `rerank` > 0, each matmul's best `rerank` finalists are then lowered,
/// scheduled and placed (scheduleGemmPlan, in parallel, deterministic) in
/// a last pass in program order, and the one with the fewest scheduled
/// cycles whose buffers fit wins; the finalists are reordered so.
void planGemmProgram(const TargetModel &target, std::vector<ProgramGemm> &gemms,
                     unsigned finalistCount, unsigned rerank = 0);

} // namespace ipu

#endif // IPU_PLANNING_GEMMPLAN_H
