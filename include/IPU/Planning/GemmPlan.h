//===- GemmPlan.h - Partition plans for one matmul and their legality ----===//
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
// Planning is split by job: this header holds the plan types and what makes
// a plan legal; GemmCost.h what a plan costs, GemmSearch.h the search over
// one matmul's plans, GemmProgram.h the planning of a program's matmuls
// side by side.
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
  /// How many layers' B (and biases) stay resident: a repeated layer's
  /// matmul holds every layer's block on its tiles, one after another.
  /// 1 when B is an activation.
  uint32_t weightLayers = 1;
  /// How many layers' epilogue rows (biases) stay on the plan's tiles: a
  /// repeated layer's every layer when they are short, one layer's when
  /// they stay in a home and are broadcast to the plan's blocks as each
  /// layer runs.
  uint32_t epilogueRowLayers = 1;
  /// B is a repeated layer's weight streamed from the host each layer
  /// (ipu_tile.repeat's `streamed`): the plan's blocks cross the host link
  /// every run, so a plan that replicates B streams every replica.
  bool weightsStreamed = false;
  /// The class of a gathered plan's homes is left open while the program's
  /// matmuls are planned: the cost counts them in GemmCost::openHomeBytes,
  /// and planGemmProgram places them in one class or the other once every
  /// plan is chosen (GemmPlan::homes).
  bool homesOpen = false;
  /// A weight stored in another type (f8) than the GEMM reads (inType): an
  /// elementwise op expands it where it stays, before the GEMM runs: into
  /// the plan's layout, or into its home when gathered, the gather then
  /// moving the expanded home (its stream transposes it as for any
  /// weight). Resident bytes are the stored type's; the expanded block
  /// lives while the GEMM runs. Not staged: the expansion already writes
  /// the class the AMP reads.
  std::optional<ElementType> expandedFrom;
  /// The expansion's body, charged on the block it writes (the plan's B
  /// block on each tile, or its home share when gathered).
  std::shared_ptr<const ElementwiseBody> expansion;
  /// The type B stays resident in.
  ElementType weightStorageType() const { return expandedFrom.value_or(inType); }
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
  /// The target's exchange word (TargetModel::exchangeWordBytes): rows are
  /// padded to it, and what the exchange moves must be whole words of it.
  /// 4 is ipu21's; checkGemmPlan refuses a problem made for another word.
  uint32_t wordBytes = 4;
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
  /// Where gathered weights' homes stay: the exchange alone reads them, so
  /// they may sit in standard memory while the gathered block the AMP
  /// reads is interleaved. planGemmProgram chooses it to balance the two
  /// classes when a repeated layer's homes (every layer's block) are large.
  MemoryClass homes = MemoryClass::Interleaved;
  /// Where the AMP's partial sums and the reduction's gathered partials
  /// stay (inner > 1): standard memory, or interleaved where standard
  /// memory is short (the AMP stores its partials to either class at one
  /// rate; the user's stack keeps its partials interleaved, estimate.rs).
  /// The search takes interleaved only for a plan whose partials do not
  /// fit standard memory.
  MemoryClass psums = MemoryClass::Standard;
  /// The column blocks of B and C cut N in whole grains of this many
  /// elements, balanced over the grains (columnSplits); 1: N balanced. The
  /// search gives a plan the grain its narrow rows need (columnGrain) when
  /// the balanced split would cut their exchange words.
  uint32_t columnGrain = 1;
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
  /// The copies of each block of a weight B the tiles keep resident: one
  /// per row block (B's layout replicates it over `rows`), or one when
  /// gathered (its home).
  uint32_t weightReplicas() const { return gatheredWeights ? 1 : rows; }
  /// "rows=4 cols=4 inner=1 orientation=normal weights=standard
  /// reduction=complete staging=false partials=f32", and " gathered=true"
  /// for gathered weights (" homes=standard" when they stay in standard
  /// memory), " psums=interleaved" for partials there, " serial=S" for a
  /// serial split.
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
  /// Gathered weights' homes (GemmPlan::homes): set, only gathered plans
  /// with homes there match.
  std::optional<MemoryClass> homes;
  /// GemmPlan::columnGrain: 1 keeps N's balanced split only.
  std::optional<uint32_t> columnGrain;
  /// The most copies of a weight B's blocks a plan may keep resident
  /// (GemmPlan::weightReplicas): 1 stores every weight once, as a stack of
  /// layers must. Says nothing of an activation B (the planner drops it).
  std::optional<uint32_t> maxWeightReplicas;
  bool matches(const GemmPlan &plan) const;
  bool empty() const;
  /// Every field `other` sets replaces this one's.
  void override(const GemmPlanConstraints &other);
  std::string str() const;
};

/// Whether `problem` may be split serially: a 2-D product (batches folded
/// into its rows) of an untransposed A by resident weights, with no row
/// reductions on its result (they would need every chunk).
bool serialSplitPossible(const GemmProblem &problem);

/// Elements per exchange word of the narrowest row a plan's column blocks
/// cut that must be cut on word boundaries: C or the epilogue's result
/// when exchanged, an activation B, f16 partials side by side; 1 when none.
uint32_t columnGrain(const GemmProblem &problem, const GemmPlan &plan);
/// The grain `plan` needs (GemmPlan::columnGrain): 1 when the balanced
/// split of N starts every block on a grain of columnGrain, else that
/// grain, so that any column count up to N / grain cuts a narrow C (4304
/// f16 columns in 16 blocks of 268 or 270, where the balanced 269 would
/// cut words).
uint32_t neededColumnGrain(const GemmProblem &problem, const GemmPlan &plan);
/// Where a plan's column blocks of B and C start: empty for the balanced
/// split (columnGrain 1), else cols + 1 offsets from 0 to N, the plan's
/// grains split balanced.
std::vector<int64_t> columnSplits(const GemmProblem &problem, const GemmPlan &plan);
/// The widest column block of columnSplits (without building them).
int64_t widestColumnBlock(const GemmProblem &problem, const GemmPlan &plan);
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

} // namespace ipu

#endif // IPU_PLANNING_GEMMPLAN_H
