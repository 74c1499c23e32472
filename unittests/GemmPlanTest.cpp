//===- GemmPlanTest.cpp - Plan space, cost model and constraints ----------===//

#include "IPU/Planning/GemmProgram.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Planning/GemmPlanKeys.h"

#include <sstream>
#include <random>

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace ipu;

namespace {

GemmProblem problem(int64_t m, int64_t k, int64_t n,
                    ElementType in = ElementType::F16) {
  GemmProblem p;
  p.m = m;
  p.k = k;
  p.n = n;
  p.inType = in;
  return p;
}

GemmPlan plan(uint32_t rows, uint32_t cols, uint32_t inner = 1,
              MemoryClass weights = MemoryClass::Interleaved,
              Reduction reduction = Reduction::Complete, bool staging = false) {
  GemmPlan p;
  p.rows = rows;
  p.cols = cols;
  p.inner = inner;
  p.weights = weights;
  p.reduction = reduction;
  p.localStaging = staging;
  return p;
}

uint64_t gemm(const TargetModel &target, int64_t m, int64_t k, int64_t n,
              MemoryClass weights, ElementType out = ElementType::F32,
              ElementType in = ElementType::F16) {
  return estimateGemmCycles(
      target, GemmCostShape(m, k, n, in, ElementType::F32, out, weights));
}

TEST(GemmPlanCost, HandComputedSixteenTiles) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmCost cost = costGemmPlan(target, problem(96, 128, 64), plan(8, 2));
  // A rows are 128 f16 = 256 bytes. Arrival: 96 rows over 16 tiles, 6 each,
  // sent once (384 words); each plan tile receives its 12 rows (768 words).
  // Before a schedule: the words, the planner's 126-event route latency and
  // the 600-cycle fixed cost of a phase.
  EXPECT_EQ(cost.exchangeCycles, 768u + 126 + 600);
  // GEMM of 12x128x32, f16 in, f32 partials (8 columns a pass): 8 k passes
  // x 4 column passes = 32 passes. Vertex 141; pass overheads 32 x 25 + 7
  // later k passes x 39; 32 blocks of 8 x 16 f16 (256 bytes) at 16 B/cycle;
  // 32 x 6 workers x 18 set-up; 2 rows a worker take poplibs' two-row path
  // (34 instructions) and every worker is equal, so the 14-cycle tag
  // applies: 32 x (6 x 34 + 14 - 108).
  EXPECT_EQ(cost.computeCycles,
            141u + (800 + 273) + 32 * 16 + 32 * 108 + 32 * 110);
  EXPECT_EQ(cost.reductionCycles, 0u);
  // Syncs cost nothing apart from the phase's fixed cost.
  EXPECT_EQ(cost.syncCycles, 0u);
  EXPECT_EQ(cost.totalCycles, 1494u + 8702u);
  EXPECT_EQ(cost.activeTiles, 16u);
  // Exchange code: the gather sends 6 row runs (8 bytes each) from an
  // arrival tile and receives 12 (12 bytes each), plus 4 for the phase;
  // the gemm vertex state is 16 + 3 x 4 + 8 x 8 = 92 bytes.
  EXPECT_EQ(cost.codeBytes, 6u * 8 + 12 * 12 + 4 + 92);
  // Standard: max(arrival 6x256 + gathered 12x256, gathered + C 12x32x4)
  // and the code; interleaved: the weights 128 x 32 f16.
  EXPECT_EQ(cost.peakBytes[0], 12u * 256 + 12u * 128 + 288);
  EXPECT_EQ(cost.peakBytes[1], 128u * 64);
  EXPECT_EQ(cost.weightBytes[1], 128u * 64);
  EXPECT_EQ(cost.weightBytes[0], 0u);

  GemmCost standard = costGemmPlan(target, problem(96, 128, 64),
                                   plan(8, 2, 1, MemoryClass::Standard));
  // Standard weights load at 8 B/cycle: 32 cycles a block.
  EXPECT_EQ(standard.computeCycles, cost.computeCycles + 32u * 16);
  EXPECT_EQ(standard.peakBytes[0], cost.peakBytes[0] + cost.peakBytes[1]);
  EXPECT_EQ(standard.peakBytes[1], 0u);
}

TEST(GemmPlanCost, InnerPartitionsReduceCompletelyOrStaged) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmCost complete = costGemmPlan(target, p, plan(8, 1, 2));
  // Gather: arrival tiles send 6 rows of 64 words; each tile receives 12
  // rows of its 64-element half: 384 words.
  // Reduce (complete): a tile sends its 12 x 64 f32 partial (768 words), the
  // tile of p = 0 receives both (1536 words).
  // Each phase: its words, the planner's 126-event latency, 600 fixed.
  EXPECT_EQ(complete.exchangeCycles, (384u + 726) + (1536u + 726));
  // GEMM 12x64x64, f32 partials: 4 k passes x 8 column passes.
  EXPECT_EQ(complete.computeCycles,
            141u + (32 * 25 + 3 * 39) + 32 * 16 + 32 * 108 + 32 * 110);
  // Reduce 12 rows x 64 f32 of 2 blocks, as the user's stack charges it:
  // both 3,072-byte partials read at a byte a cycle, plus an 11-cycle launch
  // (the worker loop's 1,674 is faster).
  EXPECT_EQ(complete.reductionCycles, 2u * 12 * 64 * 4 + 11);
  EXPECT_EQ(complete.reductionCycles,
            estimateReduceCycles(target, 12, 64, 2, ElementType::F32,
                                 ElementType::F32));
  // Syncs cost nothing apart from each phase's fixed cost.
  EXPECT_EQ(complete.syncCycles, 0u);
  EXPECT_EQ(complete.activeTiles, 16u);

  GemmCost staged = costGemmPlan(target, p, plan(8, 1, 2, MemoryClass::Interleaved,
                                                 Reduction::Staged));
  // Staged: each tile sends its partial (768 words) and receives its half of
  // the rows from both (768 words); it reduces 6 rows.
  EXPECT_EQ(staged.exchangeCycles, (384u + 726) + (768u + 726));
  EXPECT_EQ(staged.reductionCycles,
            estimateReduceCycles(target, 6, 64, 2, ElementType::F32,
                                 ElementType::F32));
  EXPECT_EQ(staged.computeCycles, complete.computeCycles);
  EXPECT_LT(staged.totalCycles, complete.totalCycles);
  EXPECT_LT(staged.peakBytes[0], complete.peakBytes[0]);
}

TEST(GemmPlanCost, SwappedHoldsAAndStreamsB) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmPlan swapped = plan(8, 2);
  swapped.swapped = true;
  GemmCost cost = costGemmPlan(target, problem(96, 128, 64), swapped);
  // The AMP holds 12 rows of A (padded to 16) loaded from standard memory
  // and streams the 32 columns of B: the gemm estimate with m and n
  // exchanged.
  EXPECT_EQ(cost.computeCycles,
            gemm(target, 32, 128, 12, MemoryClass::Standard));
  // B^T blocks: 32 rows of 128 f16.
  uint64_t weights[2];
  weightBytesPerTile(problem(96, 128, 64), swapped, weights);
  EXPECT_EQ(weights[1], 32u * 256);
}

TEST(GemmPlanCost, LocalStagingCopiesThenLoadsFast) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmCost staged = costGemmPlan(target, problem(96, 128, 64),
                                 plan(8, 2, 1, MemoryClass::Standard,
                                      Reduction::Complete, true));
  // The 128 x 32 f16 block (8192 bytes) is copied, then read at 16 B/cycle.
  EXPECT_EQ(staged.computeCycles,
            estimateCopyCycles(target, 8192) +
                gemm(target, 12, 128, 32, MemoryClass::Interleaved));
  EXPECT_EQ(staged.peakBytes[1], 8192u);
  // The copy vertex adds 16 + 2 x 4 + 8 bytes of state.
  EXPECT_EQ(staged.codeBytes, 288u + 32);
  EXPECT_EQ(staged.peakBytes[0], 12u * 256 + 12u * 128 + 8192u + 320);
}

TEST(GemmPlanCost, UnevenSplitsChargeTheLargestBlock) {
  TargetModel target = TargetModel::ipu21();
  // 729 rows over 16 parts: the first 9 hold 46 rows; 4304 over 92: 47.
  GemmCost cost = costGemmPlan(target, problem(729, 1152, 4304), plan(16, 92));
  EXPECT_EQ(cost.computeCycles,
            gemm(target, 46, 1152, 47, MemoryClass::Interleaved));
  EXPECT_EQ(cost.exchangeCycles, target.plannedExchangeCycles(46u * 1152 * 2 / 4));
}

TEST(GemmPlanCost, PaddingToTheAmpGrain) {
  TargetModel target = TargetModel::ipu21WithTiles(4);
  // k = 17 pads to 32 (f16 grain 16), n = 1 pads to one pass of 8 (f32
  // partials): the same AMP work as k = 32, n = 8; n = 9 takes a second pass.
  EXPECT_EQ(gemm(target, 8, 17, 1, MemoryClass::Interleaved),
            gemm(target, 8, 32, 8, MemoryClass::Interleaved));
  EXPECT_GT(gemm(target, 8, 32, 9, MemoryClass::Interleaved),
            gemm(target, 8, 32, 8, MemoryClass::Interleaved));
  // f8 pads k to 32 and streams twice the MACs per cycle.
  EXPECT_LT(costGemmPlan(target, problem(64, 64, 64, ElementType::F8E4M3FN),
                         plan(1, 1))
                .computeCycles,
            costGemmPlan(target, problem(64, 64, 64), plan(1, 1)).computeCycles);
}

TEST(GemmPlanCost, SmallRowsAreDominatedByWeightReload) {
  TargetModel target = TargetModel::ipu21();
  // For one row, loading 1152/16 x 64/16 weight blocks costs more than
  // streaming; doubling the rows must not double the cycles.
  uint64_t one = gemm(target, 1, 1152, 64, MemoryClass::Interleaved);
  uint64_t two = gemm(target, 2, 1152, 64, MemoryClass::Interleaved);
  EXPECT_LT(two, 2 * one - 100);
}

/// The endpoint lower bound of the phase that rearranges `from` into `to`.
uint64_t phaseBound(const BlockLayout &from, const BlockLayout &to,
                    uint32_t tiles) {
  Rearrangement r;
  std::optional<std::string> error = planRearrangement(from, to, tiles, r);
  EXPECT_FALSE(error) << *error;
  return endpointLowerBound(r.phase);
}

// The cost model charges each exchange its endpoint bound (a broadcast word
// counted once at its sender) plus latency. Check that analytic figure
// against the bound of the real phases the lowering's layouts produce, for
// random problems and plans.
TEST(GemmPlanCost, ExchangeMatchesTheLoweredPhases) {
  TargetModel target = TargetModel::ipu21WithTiles(64);
  std::mt19937 rng(11);
  int checked = 0, exact = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    const ElementType types[] = {ElementType::F32, ElementType::F16,
                                 ElementType::F8E4M3FN};
    GemmProblem p = problem(1 + rng() % 90, 1 + rng() % 120, 1 + rng() % 70,
                            types[rng() % 3]);
    GemmPlan candidate = plan(1 + rng() % 8, 1 + rng() % 8, 1 + rng() % 4,
                              MemoryClass::Interleaved,
                              rng() % 2 ? Reduction::Staged : Reduction::Complete);
    if (candidate.inner == 1)
      candidate.reduction = Reduction::Complete;
    if (checkGemmPlan(target, p, candidate))
      continue;
    ++checked;
    GemmLayouts layouts = gemmLayouts(p, candidate);
    BlockLayout arrival = arrivalLayout(p.m, p.k, p.inType, target);
    uint64_t expected =
        target.plannedExchangeCycles(phaseBound(arrival, layouts.lhs, target.tiles));
    if (candidate.inner > 1)
      expected += target.plannedExchangeCycles(
          phaseBound(layouts.partials, layouts.gathered, target.tiles));
    GemmCost cost = costGemmPlan(target, p, candidate);
    // The model charges the largest blocks; uneven splits may put the
    // largest send and the largest receive on different tiles, so the model
    // may exceed the bound, never undercut it.
    EXPECT_GE(cost.exchangeCycles, expected) << candidate.str();
    // With even splits the figures agree exactly.
    if (p.m % candidate.rows == 0 && p.n % candidate.cols == 0 &&
        p.k % candidate.inner == 0 && p.m % arrival.gridRows == 0 &&
        (p.m / candidate.rows) % candidate.inner == 0) {
      ++exact;
      EXPECT_EQ(cost.exchangeCycles, expected) << candidate.str();
    }
  }
  EXPECT_GT(checked, 400);
  EXPECT_GT(exact, 20);
}

TEST(GemmPlanCheck, WordGrainIsTheTargets) {
  // A target whose exchange moves 8-byte words: 100 f16 over 2 inner blocks
  // starts the second at byte 100, a 32-bit word but no 64-bit one.
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 100, 64);
  EXPECT_FALSE(checkGemmPlan(target, p, plan(4, 2, 2)));
  target.exchange.wordBytes = 8;
  EXPECT_EQ(*checkGemmPlan(target, p, plan(4, 2, 2)),
            "the problem pads rows to 4-byte words, but 'ipu21-16' moves 8-byte words");
  p.wordBytes = 8;
  EXPECT_EQ(*checkGemmPlan(target, p, plan(4, 2, 2)),
            "inner=2 cuts f16 rows of A off 64-bit word boundaries");
  GemmProblem aligned = problem(96, 128, 64);
  aligned.wordBytes = 8;
  EXPECT_FALSE(checkGemmPlan(target, aligned, plan(4, 2, 2)));
  // Its layouts pad rows to 8 bytes: 33 f32 columns of C take 136, not 132.
  GemmProblem odd = problem(96, 128, 66);
  odd.wordBytes = 8;
  GemmLayouts layouts = gemmLayouts(odd, plan(4, 2));
  EXPECT_EQ(layouts.out.wordBytes, 8u);
  EXPECT_EQ(layouts.out.rowPitchBytes(0), 136u);
}

TEST(GemmPlanCheck, RejectsWhatCannotBeLowered) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  EXPECT_FALSE(checkGemmPlan(target, p, plan(8, 2)));
  // 128 f16 over 3: the second block starts at element 43, byte 86.
  EXPECT_EQ(*checkGemmPlan(target, p, plan(2, 2, 3)),
            "inner=3 cuts f16 rows of A off 32-bit word boundaries");
  EXPECT_EQ(*checkGemmPlan(target, p, plan(4, 4, 2)),
            "rows x cols x inner = 32 exceeds the 16 tiles of 'ipu21-16'");
  EXPECT_EQ(*checkGemmPlan(target, p, plan(4, 1, 1, MemoryClass::Interleaved,
                                           Reduction::Staged)),
            "a staged reduction needs inner > 1");
  EXPECT_EQ(*checkGemmPlan(target, problem(5, 128, 64),
                           plan(4, 1, 2, MemoryClass::Interleaved,
                                Reduction::Staged)),
            "a staged reduction splits each block's 1 rows into 2 parts");
  EXPECT_EQ(*checkGemmPlan(target, p, plan(4, 1, 1, MemoryClass::Interleaved,
                                           Reduction::Complete, true)),
            "local staging copies standard weights to interleaved memory");
  GemmProblem halfAcc = problem(96, 128, 63);
  halfAcc.accType = ElementType::F16;
  GemmPlan halfPartials = plan(4, 1, 2);
  halfPartials.partials = ElementType::F16;
  EXPECT_EQ(*checkGemmPlan(target, halfAcc, halfPartials),
            "inner > 1 with f16 partial sums needs even column blocks");
  // Partials follow the op: f16 accumulation keeps f16 partials, f32 keeps
  // f32 ones unless the user allows f16, and f32 inputs have no f16 path.
  EXPECT_EQ(*checkGemmPlan(target, halfAcc, plan(4, 1, 1)),
            "the op accumulates in f16: partials=f32 would change its numerics");
  GemmPlan half = plan(4, 1, 1);
  half.partials = ElementType::F16;
  EXPECT_EQ(*checkGemmPlan(target, p, half),
            "partials=f16 for an f32 accumulation must be allowed (pass option "
            "partials=f16 or any, or the op's constraints)");
  GemmProblem allowed = p;
  allowed.allowHalfPartials = true;
  EXPECT_FALSE(checkGemmPlan(target, allowed, half));
  // f32 inputs accumulating in f16: the AMP runs its f32 path and the
  // partial sums are rounded to f16 each pass, as the op asks.
  GemmProblem floats = problem(96, 128, 64, ElementType::F32);
  floats.accType = ElementType::F16;
  EXPECT_FALSE(checkGemmPlan(target, floats, half));
  EXPECT_EQ(costGemmPlan(target, floats, half).computeCycles,
            costGemmPlan(target, floats, [&] {
              GemmPlan p = half;
              p.partials = ElementType::F32;
              return p;
            }()).computeCycles);
  GemmPlan swapped = plan(4, 1);
  swapped.swapped = true;
  EXPECT_FALSE(checkGemmPlan(target, p, swapped));
  GemmProblem activation = p;
  activation.rhsIsWeight = false;
  EXPECT_EQ(*checkGemmPlan(target, activation, swapped),
            "orientation=swapped needs B stored transposed: B must be a weight "
            "or an activation given transposed");
  // An activation given as B^T is the swapped orientation's operand, and
  // only that: nothing transposes it into B.
  GemmProblem transposedActivation = activation;
  transposedActivation.rhsTransposed = true;
  EXPECT_FALSE(checkGemmPlan(target, transposedActivation, swapped));
  EXPECT_EQ(*checkGemmPlan(target, transposedActivation, plan(4, 1)),
            "orientation=normal needs B [K x N], and B is an activation given "
            "transposed (no kernel transposes it)");
  // A weight is stored either way, whatever it is given as.
  GemmProblem transposedWeight = p;
  transposedWeight.rhsTransposed = true;
  EXPECT_FALSE(checkGemmPlan(target, transposedWeight, swapped));
  EXPECT_FALSE(checkGemmPlan(target, transposedWeight, plan(4, 1)));
  // An activation B is gathered in 32-bit words: 64 f16 columns over 2
  // start the second block at element 32, byte 64; over 3 the third block
  // starts at element 43, byte 86.
  GemmProblem activationB = p;
  activationB.rhsIsWeight = false;
  EXPECT_FALSE(checkGemmPlan(target, activationB, plan(4, 2)));
  EXPECT_EQ(*checkGemmPlan(target, activationB, plan(4, 3)),
            "cols=3 cuts f16 rows of B off 32-bit word boundaries, and B is "
            "an activation gathered by exchange");
  // A weight B may take any column split: the host stream writes bytes.
  EXPECT_FALSE(checkGemmPlan(target, p, plan(4, 3)));
  swapped.weights = MemoryClass::Standard;
  swapped.localStaging = true;
  EXPECT_EQ(*checkGemmPlan(target, p, swapped),
            "local staging copies B for the AMP, which holds A when swapped");
}

/// Every finalist covers the matmul exactly once: each (row, inner, column)
/// product belongs to exactly one tile, and the tiles are distinct.
void expectCoversOnce(const TargetModel &target, const GemmProblem &p,
                      const GemmPlan &candidate) {
  std::vector<int> covered(p.m * p.k * p.n, 0);
  std::set<uint64_t> tiles;
  for (uint32_t q = 0; q < candidate.inner; ++q)
    for (uint32_t i = 0; i < candidate.rows; ++i)
      for (uint32_t j = 0; j < candidate.cols; ++j) {
        uint64_t tile = uint64_t(q) * candidate.rows * candidate.cols +
                        i * candidate.cols + j;
        ASSERT_LT(tile, target.tiles) << candidate.str();
        ASSERT_TRUE(tiles.insert(tile).second) << candidate.str();
        for (int64_t r = 0; r < BlockLayout::splitSize(p.m, candidate.rows, i); ++r)
          for (int64_t kk = 0; kk < BlockLayout::splitSize(p.k, candidate.inner, q); ++kk)
            for (int64_t c = 0; c < BlockLayout::splitSize(p.n, candidate.cols, j); ++c) {
              int64_t row = BlockLayout::splitBegin(p.m, candidate.rows, i) + r;
              int64_t in = BlockLayout::splitBegin(p.k, candidate.inner, q) + kk;
              int64_t col = BlockLayout::splitBegin(p.n, candidate.cols, j) + c;
              ++covered[(row * p.k + in) * p.n + col];
            }
      }
  for (int count : covered)
    ASSERT_EQ(count, 1) << candidate.str();
}

TEST(GemmPlanSearch, FinalistsCoverTheMatmulExactlyOnce) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (auto [m, k, n] : {std::tuple{96, 128, 64}, std::tuple{37, 20, 13},
                         std::tuple{5, 8, 3}}) {
    GemmProblem p = problem(m, k, n);
    GemmPlanSearch search;
    ASSERT_FALSE(searchGemmPlans(target, p, {}, 16, search).has_value());
    ASSERT_FALSE(search.finalists.empty());
    for (const GemmPlanChoice &choice : search.finalists)
      expectCoversOnce(target, p, choice.plan);
    // Also the plans with inner partitions, which may not be finalists.
    GemmPlanConstraints inner;
    inner.inner = 2;
    ASSERT_FALSE(searchGemmPlans(target, p, inner, 16, search).has_value());
    for (const GemmPlanChoice &choice : search.finalists)
      expectCoversOnce(target, p, choice.plan);
  }
}

/// Every plan of the space that can be lowered, by brute force.
std::vector<GemmPlan> allPlans(const TargetModel &target, const GemmProblem &p) {
  std::vector<GemmPlan> plans;
  for (uint32_t rows = 1; rows <= target.tiles; ++rows)
    for (uint32_t cols = 1; rows * cols <= target.tiles; ++cols)
      for (uint32_t inner = 1; rows * cols * inner <= target.tiles; ++inner)
        for (bool swapped : {false, true})
          for (MemoryClass w : {MemoryClass::Standard, MemoryClass::Interleaved})
            for (Reduction red : {Reduction::Complete, Reduction::Staged})
              for (bool staging : {false, true})
                for (bool gathered : {false, true}) {
                  GemmPlan candidate = plan(rows, cols, inner, w, red, staging);
                  candidate.swapped = swapped;
                  candidate.gatheredWeights = gathered;
                  if (!checkGemmPlan(target, p, candidate))
                    plans.push_back(candidate);
                }
  return plans;
}

TEST(GemmPlanSearch, PruningKeepsTheExactBest) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (auto [m, k, n] : {std::tuple{96, 128, 64}, std::tuple{37, 20, 13},
                         std::tuple{200, 64, 24}}) {
    GemmProblem p = problem(m, k, n);
    GemmPlanSearch search;
    ASSERT_FALSE(searchGemmPlans(target, p, {}, 3, search).has_value());
    ASSERT_EQ(search.finalists.size(), 3u);
    std::vector<GemmPlan> plans = allPlans(target, p);
    EXPECT_EQ(search.candidates, plans.size());
    EXPECT_EQ(search.costed + search.pruned, search.matching);
    // The finalists are the three cheapest fitting plans of the whole space.
    std::vector<uint64_t> totals;
    for (const GemmPlan &candidate : plans) {
      GemmCost cost = costGemmPlan(target, p, candidate);
      if (fitsMemory(target, cost))
        totals.push_back(cost.totalCycles);
    }
    std::sort(totals.begin(), totals.end());
    for (size_t f = 0; f < 3; ++f)
      EXPECT_EQ(search.finalists[f].cost.totalCycles, totals[f]) << f;
    // Same answer twice: the choice never depends on hidden state.
    GemmPlanSearch again;
    ASSERT_FALSE(searchGemmPlans(target, p, {}, 3, again).has_value());
    EXPECT_EQ(again.finalists.front().plan.str(),
              search.finalists.front().plan.str());
  }
  // At full scale most of the space is pruned.
  GemmPlanSearch siglip;
  ASSERT_FALSE(searchGemmPlans(TargetModel::ipu21(), problem(729, 1152, 4304),
                               {}, 4, siglip));
  EXPECT_GT(siglip.pruned, siglip.costed);
}

TEST(GemmPlanSearch, ConstraintsFilter) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlanConstraints constraints;
  constraints.rows = 4;
  constraints.weights = MemoryClass::Interleaved;
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, constraints, 100, search).has_value());
  uint64_t expected = 0;
  for (const GemmPlan &candidate : allPlans(target, p))
    expected += candidate.rows == 4 && candidate.weights == MemoryClass::Interleaved;
  EXPECT_EQ(search.matching, expected);
  EXPECT_EQ(search.finalists.size(), expected);
  for (const GemmPlanChoice &choice : search.finalists) {
    EXPECT_EQ(choice.plan.rows, 4u);
    EXPECT_EQ(choice.plan.weights, MemoryClass::Interleaved);
  }

  GemmPlanConstraints staged;
  staged.reduction = Reduction::Staged;
  staged.localStaging = true;
  ASSERT_FALSE(searchGemmPlans(target, p, staged, 100, search).has_value());
  for (const GemmPlanChoice &choice : search.finalists) {
    EXPECT_GT(choice.plan.inner, 1u);
    EXPECT_EQ(choice.plan.reduction, Reduction::Staged);
    EXPECT_TRUE(choice.plan.localStaging);
    EXPECT_EQ(choice.plan.weights, MemoryClass::Standard);
  }
}

// A bound on weights' replicas keeps exactly the plans whose resident B
// layout (the plan's, or its home when gathered) holds at most that many
// copies of each block, and never finds a faster plan than the free search.
TEST(GemmPlanSearch, MaxWeightReplicasKeepsThePlansWithFewerCopies) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (const GemmProblem &p : {problem(96, 128, 64), problem(64, 96, 256), problem(48, 32, 32)}) {
    GemmPlanSearch free;
    ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, free).has_value());
    const std::vector<GemmPlan> plans = allPlans(target, p);
    for (uint32_t bound : {1u, 2u, 3u, 5u}) {
      SCOPED_TRACE("m=" + std::to_string(p.m) + " bound=" + std::to_string(bound));
      GemmPlanConstraints constraints;
      constraints.maxWeightReplicas = bound;
      EXPECT_EQ(constraints.str(), "max-weight-replicas=" + std::to_string(bound));
      GemmPlanSearch search;
      ASSERT_FALSE(searchGemmPlans(target, p, constraints, 1000, search).has_value());
      uint64_t expected = 0;
      for (GemmPlan candidate : plans) {
        candidate.columnGrain = neededColumnGrain(p, candidate);
        const GemmLayouts layouts = gemmLayouts(p, candidate);
        const uint32_t copies = candidate.gatheredWeights
                                    ? gatheredWeightHome(layouts.rhs).replicas
                                    : layouts.rhs.replicas;
        EXPECT_EQ(candidate.weightReplicas(), copies) << candidate.str();
        expected += copies <= bound;
      }
      EXPECT_EQ(search.matching, expected);
      for (const GemmPlanChoice &choice : search.finalists)
        EXPECT_LE(choice.plan.weightReplicas(), bound) << choice.plan.str();
      ASSERT_FALSE(search.finalists.empty());
      EXPECT_GE(search.finalists.front().cost.totalCycles,
                free.finalists.front().cost.totalCycles);
    }
  }
}

TEST(GemmPlanSearch, NoMatchNamesTheConstraint) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmPlanSearch search;
  GemmPlanConstraints rows;
  rows.rows = 1000;
  std::optional<std::string> error =
      searchGemmPlans(target, problem(96, 128, 64), rows, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, "no plan matches constraint 'rows=1000': rows must be in "
                    "[1, 16]");

  GemmPlanConstraints both;
  both.rows = 8;
  both.cols = 4;
  error = searchGemmPlans(target, problem(96, 128, 64), both, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, "no plan matches constraint 'rows=8 cols=4': rows x cols x "
                    "inner = 32 exceeds the 16 tiles of 'ipu21-16'");

  GemmPlanConstraints inner;
  inner.inner = 3;
  error = searchGemmPlans(target, problem(96, 128, 64), inner, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, "no plan matches constraint 'inner=3': inner=3 cuts f16 "
                    "rows of A off 32-bit word boundaries");
}

TEST(GemmPlanSearch, TooBigForTheChipSaysTheBytes) {
  TargetModel target = TargetModel::ipu21();
  GemmPlanSearch search;
  std::optional<std::string> error =
      searchGemmPlans(target, problem(1024, 8, 500000), {}, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("no plan fits tile memory"), std::string::npos) << *error;
  EXPECT_NE(error->find("162080 standard and 424880 interleaved bytes"),
            std::string::npos)
      << *error;
  EXPECT_EQ(search.fitting, 0u);
  // Plans that can neither fit nor be the smallest are skipped by the
  // memory bound; every other one is costed.
  EXPECT_EQ(search.costed + search.pruned, search.matching);
  EXPECT_GT(search.pruned, 0u);
  EXPECT_TRUE(search.smallest);
  EXPECT_GT(search.matching, 0u);
}

} // namespace

namespace {

TEST(GemmPlanSearch, BudgetLeavesRoomForOtherWeights) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlanSearch alone, shared;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 1, alone));
  // Another matmul's weights take all but 4 KiB of interleaved memory and
  // most of standard memory: the plan must change to fit next to them.
  MemoryBudget budget;
  budget.reservedBytes[1] = target.allocatableBytes(MemoryClass::Interleaved) - 4096;
  budget.reservedBytes[0] = target.allocatableBytes(MemoryClass::Standard) - 16384;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 1, shared, budget));
  const GemmPlanChoice &choice = shared.finalists.front();
  EXPECT_TRUE(fitsMemory(target, choice.cost, budget));
  EXPECT_FALSE(fitsMemory(target, alone.finalists.front().cost, budget));
  EXPECT_GE(choice.cost.totalCycles, alone.finalists.front().cost.totalCycles);
  uint64_t weights[2];
  weightBytesPerTile(p, choice.plan, weights);
  EXPECT_LE(weights[1], 4096u);

  // Nothing fits: the error says how much the others take.
  budget.anyBytes = 1u << 30;
  std::optional<std::string> error =
      searchGemmPlans(target, p, {}, 1, shared, budget);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("of which other matmuls' weights take"), std::string::npos)
      << *error;
}

} // namespace

// Partials precision is a plan dimension the user controls: an f32
// accumulation keeps f32 partials by default; allowed f16 partials win on
// cost (twice the AMP rate for f16 inputs); an f16 accumulation uses them.
TEST(GemmPlanSearch, PartialsFollowTheOpUnlessTheUserAllowsHalf) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  // An f16 result: f16 partials need no conversion, f32 partials do.
  GemmProblem p = problem(256, 256, 256);
  p.outType = ElementType::F16;
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, search));
  for (const GemmPlanChoice &choice : search.finalists)
    EXPECT_EQ(choice.plan.partials, ElementType::F32) << choice.plan.str();
  uint64_t floatBest = search.finalists.front().cost.totalCycles;

  p.allowHalfPartials = true;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, search));
  EXPECT_EQ(search.finalists.front().plan.partials, ElementType::F16);
  EXPECT_LT(search.finalists.front().cost.totalCycles, floatBest);
  EXPECT_NE(search.finalists.front().plan.str().find("partials=f16"),
            std::string::npos);

  // A constraint pins them back to f32 while allowed.
  GemmPlanConstraints pinned;
  pinned.partials = ElementType::F32;
  ASSERT_FALSE(searchGemmPlans(target, p, pinned, 4, search));
  EXPECT_EQ(search.finalists.front().plan.partials, ElementType::F32);
  EXPECT_EQ(search.finalists.front().cost.totalCycles, floatBest);

  GemmProblem half = p;
  half.allowHalfPartials = false;
  half.accType = ElementType::F16;
  ASSERT_FALSE(searchGemmPlans(target, half, {}, 4, search));
  for (const GemmPlanChoice &choice : search.finalists)
    EXPECT_EQ(choice.plan.partials, ElementType::F16);
  std::optional<std::string> none = searchGemmPlans(target, half, pinned, 4, search);
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("partials=f32 would change its numerics"), std::string::npos)
      << *none;
}

// The cost model skips the gather exactly when the plan's A layout is the
// arrival layout, which is when the lowering finds no copy to make.
TEST(GemmPlanCost, NoGatherWhenAArrivesInPlace) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  std::mt19937 rng(11);
  int inPlace = 0;
  for (int trial = 0; trial < 400; ++trial) {
    GemmProblem p = problem(1 + rng() % 40, 16 * (1 + rng() % 4), 1 + rng() % 40);
    GemmPlan candidate = plan(1 + rng() % 16, 1 + rng() % 2, 1);
    if (rng() % 3 == 0)
      candidate.rows = activationArrivalTiles(p, target);
    if (checkGemmPlan(target, p, candidate))
      continue;
    BlockLayout arrival = arrivalLayout(p.m, p.k, p.inType, target);
    BlockLayout lhs = gemmLayouts(p, candidate).lhs;
    bool same = arrival.gridRows == lhs.gridRows &&
                arrival.gridCols == lhs.gridCols &&
                arrival.replicas == lhs.replicas;
    for (uint32_t i = 0; same && i < lhs.gridRows; ++i)
      same = arrival.tileOf(i, 0, 0) == lhs.tileOf(i, 0, 0) &&
             arrival.blockRows(i) == lhs.blockRows(i);
    EXPECT_EQ(activationArrivesInPlace(p, candidate, target), same)
        << p.m << "x" << p.k << "x" << p.n << " " << candidate.str();
    GemmCost cost = costGemmPlan(target, p, candidate);
    if (same) {
      ++inPlace;
      EXPECT_EQ(cost.exchangeCycles, 0u);
      EXPECT_EQ(cost.syncCycles, uint64_t(target.syncCycles));
    } else {
      EXPECT_GT(cost.exchangeCycles, target.plannedExchangeCycles(0));
    }
  }
  EXPECT_GT(inPlace, 20);
}

// A matmul planned after another keeps its weights resident while the other
// runs: its weights must fit beside the other's transient peak, not only
// beside the other's weights.
TEST(GemmPlanSearch, WeightsFitBesideOtherTransients) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlanSearch alone;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 1, alone));
  const GemmCost &best = alone.finalists.front().cost;
  MemoryBudget budget;
  // The other matmul's transient buffers leave less standard memory than
  // the best plan's standard weights and code need.
  uint64_t resident = best.weightBytes[0] + best.codeBytes;
  const uint64_t standard = target.allocatableBytes(MemoryClass::Standard);
  const uint64_t interleaved = target.allocatableBytes(MemoryClass::Interleaved);
  budget.coexistingSteps = {{standard - resident + 1, 0}};
  EXPECT_FALSE(fitsMemory(target, best, budget));
  budget.coexistingSteps = {{standard - resident, 0}};
  EXPECT_TRUE(fitsMemory(target, best, budget));
  budget.coexistingSteps = {{standard - resident + 1, 0}};
  GemmPlanSearch beside;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 1, beside, budget));
  EXPECT_TRUE(fitsMemory(target, beside.finalists.front().cost, budget));
  EXPECT_LT(beside.finalists.front().cost.weightBytes[0] +
                beside.finalists.front().cost.codeBytes,
            resident);
  // Two other steps never run at once: one's standard buffers and the
  // other's interleaved ones are not live together, one step's both are.
  const uint64_t residentInterleaved = best.weightBytes[1];
  budget.coexistingSteps = {{standard - resident, 0},
                            {0, interleaved - residentInterleaved}};
  EXPECT_TRUE(fitsMemory(target, best, budget));
  budget.coexistingSteps = {{standard - resident, interleaved - residentInterleaved + 1}};
  EXPECT_FALSE(fitsMemory(target, best, budget));
  // A cap on the plan's transient buffers (both classes, weights and code
  // apart) leaves room for later matmuls.
  budget = MemoryBudget();
  const uint64_t transient =
      best.peakBytes[0] + best.peakBytes[1] - best.weightBytes[0] - best.weightBytes[1] -
      best.codeBytes;
  budget.transientCapBytes = transient;
  EXPECT_TRUE(fitsMemory(target, best, budget));
  budget.transientCapBytes = transient - 1;
  EXPECT_FALSE(fitsMemory(target, best, budget));
}

TEST(GemmPlanBatches, EachBatchPlansOnItsShareOfTheTiles) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  std::vector<ProgramGemm> program(2);
  program[0].problem.m = 64;
  program[0].problem.k = 32;
  program[0].problem.n = 64;
  program[0].problem.batches = 4;
  program[1].problem = program[0].problem;
  program[1].problem.batches = 17;
  planGemmProgram(target, program, 4);
  ASSERT_FALSE(program[0].error) << *program[0].error;
  for (const GemmPlanChoice &choice : program[0].search.finalists)
    EXPECT_LE(choice.plan.tiles(), 4u) << choice.plan.str();
  ASSERT_TRUE(program[1].error);
  EXPECT_EQ(*program[1].error,
            "17 batches do not fit side by side on the 16 tiles of 'ipu21-16' "
            "(batches sharing a tile are not supported yet)");
}

TEST(GemmPlanBatches, BatchLayoutsShiftEveryTileAndShareNone) {
  // Every plan of a 3-batch problem on 4 tiles per batch: batch b's blocks
  // sit on batch 0's tiles plus 4 b, and no two batches share a tile.
  TargetModel target = TargetModel::ipu21WithTiles(12);
  GemmProblem problem;
  problem.m = 24;
  problem.k = 32;
  problem.n = 16;
  problem.outType = ElementType::F32;
  unsigned checked = 0;
  for (uint32_t rows : {1u, 2u, 4u})
    for (uint32_t inner : {1u, 2u})
      for (Reduction reduction : {Reduction::Complete, Reduction::Staged}) {
        if (rows * inner > 4 || (inner == 1 && reduction == Reduction::Staged))
          continue;
        GemmPlan plan;
        plan.rows = rows;
        plan.inner = inner;
        plan.reduction = reduction;
        GemmLayouts one = gemmLayouts(problem, plan);
        GemmLayouts three = batchGemmLayouts(one, 3, 4);
        for (auto [single, batched] :
             {std::pair(&one.lhs, &three.lhs), std::pair(&one.rhs, &three.rhs),
              std::pair(&one.out, &three.out)}) {
          ASSERT_EQ(batched->batches, 3);
          EXPECT_FALSE(batched->validate(target.tiles)) << plan.str();
          std::vector<uint32_t> tiles = single->tileList();
          std::vector<uint32_t> all = batched->tileList();
          ASSERT_EQ(all.size(), 3 * tiles.size());
          for (uint32_t b = 0; b < 3; ++b)
            for (size_t t = 0; t < tiles.size(); ++t)
              EXPECT_EQ(all[b * tiles.size() + t], tiles[t] + 4 * b);
          ++checked;
        }
      }
  EXPECT_EQ(checked, 7u * 3u); // 7 plans, 3 layouts each
}

TEST(RelayoutCost, IsThePhaseThePlannerChargesForTheGather) {
  // The planner's gather of an arriving A and the relayout the layout pass
  // puts in the IR are one phase: the same bound, plus the fixed phase
  // cycles (the planner counts syncs apart).
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem problem;
  problem.m = 96;
  problem.k = 128;
  problem.n = 64;
  unsigned compared = 0;
  for (uint32_t rows : {1u, 2u, 4u, 8u})
    for (uint32_t cols : {1u, 2u}) {
      GemmPlan plan;
      plan.rows = rows;
      plan.cols = cols;
      BlockLayout arrival =
          arrivalLayout(problem.m, problem.k, problem.inType, target);
      RelayoutCost cost;
      ASSERT_FALSE(relayoutCost(arrival, gemmLayouts(problem, plan).lhs, target, cost));
      // The relayout is timed as scheduled: never below its bound, in
      // events (a paired message sends two words an event).
      EXPECT_GE(cost.cycles, cost.boundCycles / 2 + target.exchange.phaseFixedCycles +
                                 2 * target.syncCycles);
      EXPECT_GT(cost.transfers, 0u);
      EXPECT_EQ(target.plannedExchangeCycles(cost.boundCycles),
                costGemmPlan(target, problem, plan).exchangeCycles)
          << plan.str();
      ++compared;
    }
  EXPECT_EQ(compared, 8u);
  // Shapes that differ cannot be moved, and say why.
  RelayoutCost cost;
  EXPECT_TRUE(relayoutCost(arrivalLayout(8, 16, ElementType::F16, target),
                           arrivalLayout(16, 8, ElementType::F16, target), target,
                           cost));
}

// Activations arrive with their matrices side by side; with more
// matrices than tiles (the pooling head's [2, 16, 1, 1, 64] on 16 tiles),
// each tile holds a balanced run of whole matrices. Every matrix is on
// one tile, every tile holds some, and the layout is valid.
TEST(GemmLayouts, ArrivalWithMoreMatricesThanTiles) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (int64_t batches : {2, 16, 17, 32, 100}) {
    BlockLayout layout = arrivalLayout(3, 64, ElementType::F32, target, batches);
    ASSERT_FALSE(layout.validate(target.tiles)) << batches << ": "
                                                << *layout.validate(target.tiles);
    EXPECT_EQ(layout.batches, batches);
    std::vector<int64_t> held(target.tiles, 0);
    for (uint32_t b = 0; b < layout.gridBatches; ++b)
      for (uint32_t i = 0; i < layout.gridRows; ++i)
        held[layout.tileOf(b, i, 0, 0)] += layout.blockBatches(b) * layout.blockRows(i);
    int64_t total = 0;
    for (int64_t rows : held)
      total += rows;
    EXPECT_EQ(total, batches * 3) << batches;
    if (batches >= int64_t(target.tiles))
      for (uint32_t tile = 0; tile < target.tiles; ++tile)
        EXPECT_GT(held[tile], 0) << batches << " tile " << tile;
  }
}

TEST(GemmPlanCheck, NarrowResultsAlignOnlyWhenExchanged) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  // 66 f16 columns over 4: blocks begin at 17, 34, 50 (bytes 34, 68, 100).
  GemmProblem p = problem(96, 128, 66);
  p.outType = ElementType::F16;
  EXPECT_EQ(*checkGemmPlan(target, p, plan(2, 4)),
            "cols=4 cuts f16 rows of C off 32-bit word boundaries");
  // A result that is only returned leaves by host stream: any split.
  p.resultExchanged = false;
  EXPECT_FALSE(checkGemmPlan(target, p, plan(2, 4)));
  // An epilogue storing f8 in C's layout: its result is what moves on.
  ElementwiseBody cast;
  cast.inputs = {{ElementType::F16, Broadcast::Full}};
  BodyOp truncf;
  truncf.kind = BodyOpKind::TruncF;
  truncf.type = ElementType::F8E4M3FN;
  cast.ops = {truncf};
  cast.result = 1;
  cast.resultType = ElementType::F8E4M3FN;
  p.epilogue = std::make_shared<const ElementwiseBody>(cast);
  p.resultExchanged = true;
  p.n = 72; // f16-aligned blocks of 18, but 18 f8 bytes is no word.
  EXPECT_EQ(*checkGemmPlan(target, p, plan(2, 4)),
            "cols=4 cuts f8E4M3FN rows of the epilogue's result off 32-bit "
            "word boundaries");
  EXPECT_FALSE(checkGemmPlan(target, p, plan(2, 2))); // Blocks of 36.
  // The epilogue costs every plan something, on its output blocks.
  GemmCost with = costGemmPlan(target, p, plan(2, 2));
  EXPECT_GT(with.epilogueCycles, 0u);
  EXPECT_EQ(with.totalCycles, with.exchangeCycles + with.computeCycles +
                                  with.reductionCycles + with.epilogueCycles +
                                  with.syncCycles);
  p.epilogue = nullptr;
  GemmCost without = costGemmPlan(target, p, plan(2, 2));
  EXPECT_EQ(without.epilogueCycles, 0u);
  EXPECT_EQ(with.totalCycles - with.epilogueCycles, without.totalCycles);
}

TEST(GemmPlanProgram, WeightsReplicatedForSpeedAreCappedWhenTheProgramDoesNotFit) {
  // The encoder block's resident weights in program order (q, k, v, o,
  // fc1, fc2 in f16, with attention's softmax holding 46 KB a tile): the
  // fastest plans of the first ones replicate their weights so much that
  // fc2 finds no room; each weight then gets a share of tile memory by its
  // size, and every plan's weights stay within it.
  TargetModel target = TargetModel::ipu21();
  auto gemm = [](int64_t k, int64_t n) {
    ProgramGemm g;
    g.problem.m = 729;
    g.problem.k = k;
    g.problem.n = n;
    g.problem.inType = ElementType::F16;
    g.problem.outType = ElementType::F16;
    g.problem.rhsIsWeight = true;
    g.problem.allowHalfPartials = true;
    g.coexistingStandardBytes = 46244;
    return g;
  };
  std::vector<ProgramGemm> program = {gemm(1152, 1152), gemm(1152, 1152),
                                      gemm(1152, 1152), gemm(1152, 1152),
                                      gemm(1152, 4304), gemm(4304, 1152)};
  // Alone, each plans with its weights replicated far beyond its share.
  std::vector<ProgramGemm> alone = {program[0]};
  planGemmProgram(target, alone, 1);
  ASSERT_FALSE(alone[0].error) << *alone[0].error;
  EXPECT_EQ(alone[0].weightCapBytes, 0u);

  planGemmProgram(target, program, 2);
  bool capped = false;
  for (const ProgramGemm &g : program) {
    ASSERT_FALSE(g.error) << *g.error;
    const GemmCost &cost = g.search.finalists.front().cost;
    capped |= g.weightCapBytes > 0;
    if (g.weightCapBytes) {
      EXPECT_LE(cost.weightBytes[0] + cost.weightBytes[1], g.weightCapBytes)
          << g.search.finalists.front().plan.str();
      // Standard memory is left to activations and partials.
      EXPECT_EQ(g.search.finalists.front().plan.weights, MemoryClass::Interleaved);
    }
  }
  EXPECT_TRUE(capped);
  // The shares follow the weights' sizes: fc1's is about 3.7 times q's.
  ASSERT_GT(program[0].weightCapBytes, 0u);
  EXPECT_NEAR(double(program[4].weightCapBytes) / program[0].weightCapBytes,
              4304.0 / 1152.0, 0.01);
}

// Gathered weights: stored once, each block's rows split over the tiles of
// its replicas, and gathered into the plan's layout in the phase that
// gathers A.
namespace {

TEST(GatheredWeights, HomeHoldsEveryElementOnceOnTheTilesOfItsReplicas) {
  TargetModel target = TargetModel::ipu21WithTiles(64);
  std::mt19937 rng(7);
  unsigned checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    GemmProblem p = problem(1 + rng() % 40, 2 * (1 + rng() % 24), 2 * (1 + rng() % 24));
    GemmPlan candidate = plan(2 + rng() % 4, 1 + rng() % 4, 1 + rng() % 3);
    candidate.swapped = rng() % 2;
    candidate.gatheredWeights = true;
    if (checkGemmPlan(target, p, candidate))
      continue;
    SCOPED_TRACE(candidate.str() + " k=" + std::to_string(p.k) +
                 " n=" + std::to_string(p.n));
    const BlockLayout rhs = gemmLayouts(p, candidate).rhs;
    const BlockLayout home = gatheredWeightHome(rhs);
    ASSERT_FALSE(home.validate(target.tiles));
    EXPECT_EQ(home.replicas, 1u);
    // Every element once: the parts' rows tile the blocks' rows.
    uint64_t homeBytes = 0, oneReplica = 0;
    for (uint32_t i = 0; i < home.gridRows; ++i)
      for (uint32_t j = 0; j < home.gridCols; ++j)
        homeBytes += home.blockBytes(i, j);
    for (uint32_t i = 0; i < rhs.gridRows; ++i)
      for (uint32_t j = 0; j < rhs.gridCols; ++j)
        oneReplica += rhs.blockBytes(i, j);
    EXPECT_EQ(homeBytes, oneReplica);
    // Each part sits on a tile of its block's replicas, so the gather
    // broadcasts it within them (the part's own tile included).
    Rearrangement gather;
    ASSERT_FALSE(planRearrangement(home, rhs, target.tiles, gather));
    for (size_t t = 0; t < gather.phase.size(); ++t) {
      const uint32_t *begin = gather.phase.destinationsBegin(t),
                     *end = gather.phase.destinationsEnd(t);
      EXPECT_EQ(end - begin, int64_t(candidate.rows)) << "transfer " << t;
      EXPECT_NE(std::find(begin, end, gather.phase.source[t]), end) << "transfer " << t;
    }
    // What the planner keeps resident and charges: the largest home share
    // sent, the largest block received.
    uint64_t resident[2];
    weightBytesPerTile(p, candidate, resident);
    std::vector<uint64_t> sent = gather.phase.wordsSentPerTile();
    std::vector<uint64_t> received = gather.phase.wordsReceivedPerTile();
    EXPECT_EQ(*std::max_element(sent.begin(), sent.end()) * 4,
              resident[static_cast<int>(MemoryClass::Interleaved)]);
    EXPECT_EQ(*std::max_element(received.begin(), received.end()) * 4,
              rhs.maxBlockBytes());
    ++checked;
  }
  EXPECT_GT(checked, 100u);
}

TEST(GatheredWeights, PlannerChargesTheMergedGatherPhase) {
  // 96x128x64 f16, rows=4 cols=2 on 16 tiles: every plan tile receives its
  // A block (24 rows of 256 bytes) and its B block (128 rows of 32 f16)
  // in one phase; the arrival tiles send 6 rows of A and the home tiles a
  // quarter of a B block each.
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlan resident = plan(4, 2), gathered = resident;
  gathered.gatheredWeights = true;
  ASSERT_FALSE(checkGemmPlan(target, p, gathered));
  GemmLayouts layouts = gemmLayouts(p, gathered);
  Rearrangement a, b;
  ASSERT_FALSE(planRearrangement(arrivalLayout(p.m, p.k, p.inType, target),
                                 layouts.lhs, target.tiles, a));
  ASSERT_FALSE(planRearrangement(gatheredWeightHome(layouts.rhs), layouts.rhs,
                                 target.tiles, b));
  ExchangePhase merged = a.phase;
  for (size_t t = 0; t < b.phase.size(); ++t)
    merged.addTransfer(b.phase.source[t], b.phase.words[t],
                       b.phase.destinationsBegin(t),
                       b.phase.destinationsEnd(t) - b.phase.destinationsBegin(t));
  EXPECT_EQ(endpointLowerBound(merged), (24u * 256 + 128 * 64) / 4);
  GemmCost cost = costGemmPlan(target, p, gathered);
  EXPECT_EQ(cost.exchangeCycles, target.plannedExchangeCycles(endpointLowerBound(merged)));
  // A quarter of the block stays resident; the whole block is transient.
  GemmCost kept = costGemmPlan(target, p, resident);
  EXPECT_EQ(kept.weightBytes[1], 128u * 64);
  EXPECT_EQ(cost.weightBytes[1], 32u * 64);
  EXPECT_EQ(cost.peakBytes[1], 128u * 64 + 32 * 64);
  EXPECT_GT(cost.totalCycles, kept.totalCycles);
}

TEST(GatheredWeights, RefusedWhereNothingIsReplicatedOrForActivations) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlan one = plan(1, 4);
  one.gatheredWeights = true;
  EXPECT_NE(checkGemmPlan(target, p, one)->find("rows > 1"), std::string::npos);
  GemmPlan standard = plan(4, 2, 1, MemoryClass::Standard);
  standard.gatheredWeights = true;
  EXPECT_NE(checkGemmPlan(target, p, standard)->find("interleaved"), std::string::npos);
  GemmProblem activation = p;
  activation.rhsIsWeight = false;
  GemmPlan gathered = plan(4, 2);
  gathered.gatheredWeights = true;
  EXPECT_NE(checkGemmPlan(target, activation, gathered)->find("need B to be a weight"),
            std::string::npos);
}

TEST(GatheredWeights, ChosenWhenTheCapLeavesNoReplicatedPlan) {
  // A cap of a third of the unreplicated share times two leaves resident
  // plans only one or two row blocks: the search finds gathered plans
  // faster, or keeps resident ones, but never exceeds the cap.
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  MemoryBudget budget;
  budget.weightCapBytes = 128 * 64 * 2 / 16 * 2;
  GemmPlanConstraints interleaved;
  interleaved.weights = MemoryClass::Interleaved;
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, interleaved, 8, search, budget));
  bool anyGathered = false;
  for (const GemmPlanChoice &choice : search.finalists) {
    uint64_t resident[2];
    weightBytesPerTile(p, choice.plan, resident);
    EXPECT_LE(resident[0] + resident[1], budget.weightCapBytes) << choice.plan.str();
    anyGathered |= choice.plan.gatheredWeights;
  }
  EXPECT_TRUE(anyGathered);
}

} // namespace

// Re-ranking: each finalist lowered to its phases, scheduled and placed.
namespace {

TEST(ScheduledPlans, PhasesNeverBeatTheirBoundAndThePlannerChargesAtLeastIt) {
  // Random problems, weights and activations, plain and gathered: the
  // scheduled phases are at least their endpoint bound, and the planner's
  // analytical exchange (max of sends and receives per tile, per phase)
  // is never below that bound: it charges what the schedule must pay.
  TargetModel target = TargetModel::ipu21WithTiles(64);
  std::mt19937 rng(11);
  unsigned checked = 0, exact = 0;
  for (int iter = 0; iter < 120; ++iter) {
    GemmProblem p = problem(8 * (1 + rng() % 12), 8 * (1 + rng() % 12), 8 * (1 + rng() % 12));
    p.rhsIsWeight = rng() % 3 != 0;
    GemmPlan candidate = plan(1 + rng() % 6, 1 + rng() % 4, 1 + rng() % 3);
    candidate.swapped = p.rhsIsWeight && rng() % 2;
    candidate.reduction = candidate.inner > 1 && rng() % 2 ? Reduction::Staged
                                                           : Reduction::Complete;
    candidate.gatheredWeights = p.rhsIsWeight && candidate.rows > 1 && rng() % 2;
    if (checkGemmPlan(target, p, candidate))
      continue;
    SCOPED_TRACE(candidate.str());
    GemmCost cost = costGemmPlan(target, p, candidate);
    const uint64_t none[2] = {0, 0};
    ScheduledPlan scheduled;
    ASSERT_FALSE(scheduleGemmPlan(target, p, candidate, cost, none, scheduled));
    EXPECT_GE(scheduled.exchangeCycles, scheduled.boundCycles);
    EXPECT_GE(cost.exchangeCycles, scheduled.boundCycles);
    EXPECT_EQ(scheduled.cycles,
              cost.totalCycles - cost.exchangeCycles + scheduled.exchangeCycles);
    exact += scheduled.exchangeCycles == cost.exchangeCycles;
    ++checked;
  }
  EXPECT_GT(checked, 60u);
  // The schedules are timed, not the planner's estimate restated.
  EXPECT_LT(exact, checked);
}

TEST(ScheduledPlans, PlacementSaysWhenTheRestOfTheProgramLeavesNoRoom) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlan candidate = plan(4, 2, 2, MemoryClass::Interleaved, Reduction::Staged);
  GemmCost cost = costGemmPlan(target, p, candidate);
  ScheduledPlan scheduled;
  const uint64_t none[2] = {0, 0};
  ASSERT_FALSE(scheduleGemmPlan(target, p, candidate, cost, none, scheduled));
  EXPECT_TRUE(scheduled.fits);
  EXPECT_GT(scheduled.peakBytes[0], 0u);
  EXPECT_GT(scheduled.peakBytes[1], 0u);
  // Interleaved memory all taken by the rest of the program: the weights
  // have nowhere to go.
  const uint64_t full[2] = {0, target.allocatableBytes(MemoryClass::Interleaved)};
  ASSERT_FALSE(scheduleGemmPlan(target, p, candidate, cost, full, scheduled));
  EXPECT_FALSE(scheduled.fits);
}

TEST(ScheduledPlans, RerankingPutsTheFewestScheduledCyclesFirst) {
  // The attention scores' batched P x V at full scale (an activation B,
  // broadcast to overlapping replica groups): the finalists' schedules
  // differ from their bounds, and re-ranking orders them by what they
  // schedule to.
  TargetModel target = TargetModel::ipu21();
  GemmProblem p = problem(729, 729, 72);
  p.rhsIsWeight = false;
  p.batches = 16;
  p.allowHalfPartials = true;
  std::vector<ProgramGemm> program(1);
  program[0].problem = p;
  planGemmProgram(target, program, 4, 4);
  ASSERT_FALSE(program[0].error) << *program[0].error;
  const std::vector<GemmPlanChoice> &finalists = program[0].search.finalists;
  ASSERT_GE(finalists.size(), 2u);
  for (size_t i = 0; i < finalists.size(); ++i) {
    EXPECT_TRUE(finalists[i].scheduled) << i;
    if (i > 0 && finalists[i].scheduledFits && finalists[0].scheduledFits)
      EXPECT_LE(finalists[0].scheduledCycles, finalists[i].scheduledCycles) << i;
  }
  EXPECT_TRUE(finalists[0].scheduledFits);
  EXPECT_TRUE(std::any_of(finalists.begin(), finalists.end(),
                          [](const GemmPlanChoice &c) {
                            return c.scheduledCycles > c.cost.totalCycles;
                          }));
  // Deterministic: the same order again.
  std::vector<ProgramGemm> again(1);
  again[0].problem = p;
  planGemmProgram(target, again, 4, 4);
  ASSERT_FALSE(again[0].error) << *again[0].error;
  ASSERT_EQ(again[0].search.finalists.size(), finalists.size());
  for (size_t i = 0; i < finalists.size(); ++i) {
    EXPECT_EQ(again[0].search.finalists[i].plan.str(), finalists[i].plan.str());
    EXPECT_EQ(again[0].search.finalists[i].scheduledCycles, finalists[i].scheduledCycles);
  }
  // Without re-ranking nothing is scheduled.
  std::vector<ProgramGemm> plain(1);
  plain[0].problem = p;
  planGemmProgram(target, plain, 4);
  EXPECT_FALSE(plain[0].search.finalists.front().scheduled);
}

} // namespace

/// The bytes a copy vertex of a serial loop touches on `tile` in iteration
/// `s`: one chunk of the tile's block of `home`, at s chunks in.
struct ChunkBytes {
  uint64_t begin, end;
};
ChunkBytes chunkOnTile(const BlockLayout &home, uint32_t i, uint32_t j, uint32_t s) {
  const uint64_t chunk = home.blockBytes(0, i, j) / uint64_t(home.batches);
  return {s * chunk, (s + 1) * chunk};
}

TEST(SerialSplit, EveryElementOfCIsWrittenOnceAcrossTheSerialSteps) {
  TargetModel target = TargetModel::ipu21WithTiles(64);
  std::mt19937 rng(5);
  unsigned checked = 0;
  for (int iter = 0; iter < 200; ++iter) {
    const uint32_t serial = 2 + rng() % 6;
    GemmProblem p = problem(serial * (1 + rng() % 24), 2 * (1 + rng() % 24),
                            2 * (1 + rng() % 24));
    p.outType = rng() % 2 ? ElementType::F32 : ElementType::F16;
    p.resultExchanged = false;
    GemmPlan candidate = plan(1 + rng() % 4, 1 + rng() % 4, 1 + rng() % 3);
    candidate.swapped = rng() % 2;
    candidate.reduction = candidate.inner > 1 && rng() % 2 ? Reduction::Staged
                                                           : Reduction::Complete;
    candidate.serial = serial;
    if (checkGemmPlan(target, p, candidate))
      continue;
    SCOPED_TRACE(candidate.str() + " m=" + std::to_string(p.m) + " k=" +
                 std::to_string(p.k) + " n=" + std::to_string(p.n));
    const SerialGemmLayouts layouts = serialGemmLayouts(p, candidate, target);
    const BlockLayout &out = layouts.chunk.out, &home = layouts.outHome;
    ASSERT_FALSE(home.validate(target.tiles));
    ASSERT_EQ(home.batches, int64_t(serial));
    ASSERT_EQ(home.gridBatches, 1u);
    ASSERT_EQ(home.rows * int64_t(serial), p.m);
    // Iteration s's update copies each tile's chunk result into chunk s of
    // that tile's block of C: every element of C lands exactly once, at
    // the place C's serial layout says it lives.
    const uint64_t elem = elementBytes(p.outType);
    std::vector<uint8_t> writes(uint64_t(p.m) * p.n, 0);
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> byteOwner; // (tile, byte) -> element
    for (uint32_t s = 0; s < serial; ++s)
      for (uint32_t i = 0; i < out.gridRows; ++i)
        for (uint32_t j = 0; j < out.gridCols; ++j) {
          const uint32_t tile = static_cast<uint32_t>(out.tileOf(i, j, 0));
          ASSERT_EQ(home.tileOf(0, i, j, 0), int64_t(tile));
          ASSERT_EQ(home.blockBytes(0, i, j), serial * out.blockBytes(i, j));
          const ChunkBytes written = chunkOnTile(home, i, j, s);
          ASSERT_EQ(written.end - written.begin, out.blockBytes(i, j));
          for (int64_t r = 0; r < out.blockRows(i); ++r)
            for (int64_t c = 0; c < out.blockCols(j); ++c) {
              const int64_t row = s * home.rows + out.blockRowBegin(i) + r;
              const int64_t col = out.blockColBegin(j) + c;
              ++writes[uint64_t(row) * p.n + col];
              const uint64_t byte = written.begin + r * out.rowPitchBytes(j) + c * elem;
              ASSERT_LT(byte, written.end);
              auto [it, fresh] = byteOwner.emplace(std::make_pair(tile, byte),
                                                   uint64_t(row) * p.n + col);
              ASSERT_TRUE(fresh) << "tile " << tile << " byte " << byte
                                 << " written for two elements";
            }
        }
    for (uint64_t e = 0; e < writes.size(); ++e)
      ASSERT_EQ(writes[e], 1) << "element " << e / p.n << "," << e % p.n;
    // A's chunks are each sliced once, from the same tiles, a chunk apart.
    const BlockLayout &a = layouts.lhsHome;
    ASSERT_FALSE(a.validate(target.tiles));
    ASSERT_EQ(a.batches * a.rows, p.m);
    uint64_t sliced = 0;
    for (uint32_t s = 0; s < serial; ++s)
      for (uint32_t i = 0; i < a.gridRows; ++i)
        for (uint32_t j = 0; j < a.gridCols; ++j) {
          const ChunkBytes read = chunkOnTile(a, i, j, s);
          EXPECT_EQ(read.end - read.begin, layouts.lhsChunk.blockBytes(i, j));
          sliced += uint64_t(a.blockRows(i)) * a.blockCols(j);
        }
    EXPECT_EQ(sliced, uint64_t(p.m) * p.k);
    ++checked;
  }
  EXPECT_GT(checked, 80u);
}

TEST(SerialSplit, CostsItsChunkSerialTimesWithTheCopiesAndHoldsAAndCWhole) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(512, 2048, 256);
  p.outType = ElementType::F16;
  GemmPlan serial = plan(4, 1, 4, MemoryClass::Interleaved, Reduction::Staged);
  serial.swapped = true;
  serial.serial = 8;
  ASSERT_FALSE(checkGemmPlan(target, p, serial));
  GemmPlan chunkPlan = serial;
  chunkPlan.serial = 1;
  const GemmProblem chunk = serialChunk(p, 8);
  const GemmCost whole = costGemmPlan(target, p, serial);
  const GemmCost one = costGemmPlan(target, chunk, chunkPlan);
  const SerialGemmLayouts layouts = serialGemmLayouts(p, serial, target);
  // Each iteration copies a chunk of A out and a chunk of C in, each at a
  // dynamic offset, and takes the loop's branch.
  const uint64_t step = estimateCopyCycles(target, layouts.lhsChunk.maxBlockBytes()) +
                        estimateCopyCycles(target, layouts.chunk.out.maxBlockBytes()) +
                        2 * target.dynamicOffsetCycles + target.loopIterationCycles;
  EXPECT_EQ(whole.serialStepCycles, step);
  EXPECT_EQ(whole.totalCycles, 8 * (one.totalCycles + step) + target.syncCycles);
  EXPECT_EQ(whole.exchangeCycles, 8 * one.exchangeCycles);
  EXPECT_EQ(whole.syncCycles, 8 * one.syncCycles + target.syncCycles);
  // A and C whole, beside one chunk's working set.
  EXPECT_EQ(whole.peakBytes[0], one.peakBytes[0] + 2 * target.vertexStateBytes(2, 1) +
                                    layouts.lhsHome.maxBlockBytes() +
                                    layouts.outHome.maxBlockBytes());
  // A computed A (not a function argument) first moves into its chunks:
  // one more phase at its bound, with a sync on each side.
  GemmProblem computed = p;
  computed.lhsFromHost = false;
  const GemmCost moved = costGemmPlan(target, computed, serial);
  const uint64_t words =
      std::max(arrivalLayout(p.m, p.k, p.inType, target).maxBlockBytes(),
               layouts.lhsHome.maxBlockBytes()) / 4;
  EXPECT_EQ(moved.serialMoveCycles,
            target.plannedExchangeCycles(words) + 2 * target.syncCycles);
  EXPECT_EQ(moved.totalCycles, whole.totalCycles + moved.serialMoveCycles);
  EXPECT_EQ(whole.serialMoveCycles, 0u);
  // Less standard memory than the same split of the whole problem at once.
  GemmPlan spatial = serial;
  spatial.serial = 1;
  EXPECT_LT(whole.peakBytes[0], costGemmPlan(target, p, spatial).peakBytes[0]);
}

TEST(SerialSplit, ChosenOnlyWhenNothingSpatialFitsAndTheErrorSaysHowSmallItGets) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(512, 2048, 256);
  p.outType = ElementType::F16;
  p.allowHalfPartials = true;
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, search));
  ASSERT_FALSE(search.finalists.empty());
  for (const GemmPlanChoice &choice : search.finalists) {
    EXPECT_GT(choice.plan.serial, 1u) << choice.plan.str();
    EXPECT_EQ(p.m % choice.plan.serial, 0);
    EXPECT_TRUE(fitsMemory(target, choice.cost));
  }
  // Without serial splits nothing fits.
  GemmPlanConstraints spatial;
  spatial.serial = 1;
  std::optional<std::string> error = searchGemmPlans(target, p, spatial, 4, search);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("no plan fits tile memory"), std::string::npos) << *error;
  // A small problem never takes one.
  GemmProblem small = problem(64, 128, 64);
  ASSERT_FALSE(searchGemmPlans(target, small, {}, 4, search));
  for (const GemmPlanChoice &choice : search.finalists)
    EXPECT_EQ(choice.plan.serial, 1u);
  // Too big even in serial chunks: the error names the smallest memory the
  // most serial plan tried reaches.
  GemmProblem huge = problem(256, 2048, 2048);
  huge.outType = ElementType::F16;
  error = searchGemmPlans(target, huge, {}, 4, search);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("cut into serial chunks, the smallest plan tried ("),
            std::string::npos)
      << *error;
  EXPECT_NE(error->find("serial="), std::string::npos) << *error;
  // A and C alone too big for the tiles: no serial count is tried.
  GemmProblem whole = problem(4096, 2048, 256);
  whole.outType = ElementType::F16;
  error = searchGemmPlans(target, whole, {}, 4, search);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("no serial split can fit: A and C alone, held whole and spread "
                        "evenly over the tiles, need 1179648 standard bytes per tile"),
            std::string::npos)
      << *error;
  // Not for batched, transposed-A or activation-B products.
  GemmProblem batched = p;
  batched.batches = 2;
  GemmPlan candidate = plan(2, 1, 1);
  candidate.serial = 4;
  EXPECT_TRUE(checkGemmPlan(target, batched, candidate));
  GemmProblem activation = p;
  activation.rhsIsWeight = false;
  EXPECT_TRUE(checkGemmPlan(target, activation, candidate));
  candidate.serial = 3; // does not divide 512
  EXPECT_TRUE(checkGemmPlan(target, p, candidate));
}

TEST(GemmPlanSearch, MemoryPruningKeepsTheExactFinalistsAndTheSmallestPlan) {
  // Budgets that leave little standard memory: most partitions cannot fit,
  // and the search skips them without costing them. The finalists (and,
  // when nothing fits, the smallest plan the error names) are those of the
  // whole space, costed plan by plan.
  TargetModel target = TargetModel::ipu21WithTiles(16);
  std::mt19937 rng(3);
  unsigned pruned = 0, failed = 0;
  for (int iter = 0; iter < 40; ++iter) {
    GemmProblem p = problem(16 * (1 + rng() % 24), 32 * (1 + rng() % 16),
                            16 * (1 + rng() % 16));
    MemoryBudget budget;
    budget.reservedBytes[0] =
        target.allocatableBytes(MemoryClass::Standard) * (60 + rng() % 40) / 100;
    SCOPED_TRACE(std::to_string(p.m) + "x" + std::to_string(p.k) + "x" +
                 std::to_string(p.n) + " reserved " +
                 std::to_string(budget.reservedBytes[0]));
    GemmPlanSearch search;
    GemmPlanConstraints spatial;
    spatial.serial = 1;
    std::optional<std::string> error =
        searchGemmPlans(target, p, spatial, 3, search, budget);
    std::vector<std::pair<uint64_t, uint64_t>> fitting; // (cycles, bytes)
    uint64_t smallest = UINT64_MAX;
    for (const GemmPlan &candidate : allPlans(target, p)) {
      GemmCost cost = costGemmPlan(target, p, candidate);
      smallest = std::min(smallest, cost.peakBytes[0] + cost.peakBytes[1]);
      if (fitsMemory(target, cost, budget))
        fitting.push_back({cost.totalCycles, cost.peakBytes[0]});
    }
    std::sort(fitting.begin(), fitting.end());
    pruned += search.pruned > 0;
    if (fitting.empty()) {
      ASSERT_TRUE(error);
      ASSERT_TRUE(search.smallest);
      EXPECT_EQ(search.smallest->cost.peakBytes[0] + search.smallest->cost.peakBytes[1],
                smallest);
      ++failed;
      continue;
    }
    ASSERT_FALSE(error) << *error;
    ASSERT_EQ(search.finalists.size(), std::min<size_t>(3, fitting.size()));
    for (size_t f = 0; f < search.finalists.size(); ++f)
      EXPECT_EQ(search.finalists[f].cost.totalCycles, fitting[f].first) << f;
  }
  EXPECT_GT(pruned, 20u);
  EXPECT_GT(failed, 2u);
}

TEST(ExpandedWeights, StayResidentInTheirStoredTypeAndExpandWhileTheGemmRuns) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem f16 = problem(96, 128, 64);
  f16.weightLayers = 27;
  GemmProblem f8 = f16;
  f8.expandedFrom = ElementType::F8E4M3FN;
  for (bool swapped : {false, true}) {
    GemmPlan candidate = plan(8, 2);
    candidate.swapped = swapped;
    GemmCost wide = costGemmPlan(target, f16, candidate);
    GemmCost narrow = costGemmPlan(target, f8, candidate);
    // A tile's block of B: 128 x 32 (or its transpose), 8192 bytes in f16.
    const uint64_t block = 8192;
    // Every layer's block stays, in f8: half the bytes.
    EXPECT_EQ(wide.weightBytes[1], 27 * block);
    EXPECT_EQ(narrow.weightBytes[1], 27 * block / 2);
    // The one expanded f16 block lives beside them while the GEMM runs.
    EXPECT_EQ(narrow.peakBytes[1], 27 * block / 2 + block);
    // The GEMM itself reads f16 either way.
    EXPECT_EQ(narrow.computeCycles, wide.computeCycles);
    uint64_t resident[2];
    weightBytesPerTile(f8, candidate, resident);
    EXPECT_EQ(resident[1], block / 2);
  }
  // Gathered: the home share stays in f8; the expanded home (f16) and the
  // gathered block live while the GEMM runs.
  GemmPlan gathered = plan(8, 2);
  gathered.gatheredWeights = true;
  EXPECT_FALSE(checkGemmPlan(target, f8, gathered).has_value());
  GemmCost wideHome = costGemmPlan(target, f16, gathered);
  GemmCost narrowHome = costGemmPlan(target, f8, gathered);
  // 128 rows of 32 f16 over 8 replicas: 16 rows of 64 bytes a home.
  EXPECT_EQ(wideHome.weightBytes[1], 27u * 16 * 64);
  EXPECT_EQ(narrowHome.weightBytes[1], 27u * 16 * 32);
  EXPECT_EQ(narrowHome.peakBytes[1], 27u * 16 * 32 + 8192 + 16 * 64);
  // The gather moves the expanded home, as many bytes as for f16.
  EXPECT_EQ(narrowHome.exchangeCycles, wideHome.exchangeCycles);
  // Never staged: the expansion writes the class the AMP reads.
  GemmPlan staged = plan(8, 2, 1, MemoryClass::Standard, Reduction::Complete, true);
  EXPECT_TRUE(checkGemmPlan(target, f8, staged).has_value());
  EXPECT_FALSE(checkGemmPlan(target, f16, staged).has_value());
}

TEST(StreamedWeights, EveryBlockAndReplicaCrossesTheHostLinkEachRun) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem streamed = problem(96, 128, 64);
  streamed.weightsStreamed = true;
  GemmProblem resident = problem(96, 128, 64);
  // A tile's block of B: 128 x 32 f16, 8192 bytes; 8 row blocks hold a
  // replica each: 16 tiles' blocks, 131072 bytes, every run.
  GemmPlan replicated = plan(8, 2);
  GemmCost cost = costGemmPlan(target, streamed, replicated);
  EXPECT_EQ(cost.hostCycles, target.hostStreamCycles(16 * 8192));
  EXPECT_EQ(cost.totalCycles, costGemmPlan(target, resident, replicated).totalCycles +
                                  cost.hostCycles);
  EXPECT_EQ(costGemmPlan(target, resident, replicated).hostCycles, 0u);
  // Gathered, the homes hold B once: 16384 bytes.
  GemmPlan gathered = replicated;
  gathered.gatheredWeights = true;
  EXPECT_EQ(costGemmPlan(target, streamed, gathered).hostCycles,
            target.hostStreamCycles(128 * 64 * 2));
  // So the search prefers a plan that streams B once when the link costs
  // more than the gather.
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, streamed, GemmPlanConstraints(), 4, search).has_value());
  const GemmCost &best = search.finalists.front().cost;
  EXPECT_LE(best.hostCycles, target.hostStreamCycles(2 * 128 * 64 * 2));
}

TEST(ExpandedWeights, EveryTileExpandsTheBlockItHoldsOrItsHomeShare) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  // torch-mlir's expansion: f8 to f16, times a power of two.
  ElementwiseBody body;
  body.inputs = {{ElementType::F8E4M3FN, Broadcast::Full}};
  body.ops.resize(3);
  body.ops[0].kind = BodyOpKind::Constant;
  body.ops[0].type = ElementType::F16;
  body.ops[0].constant = 1.0 / 4096;
  body.ops[1].kind = BodyOpKind::ExtF;
  body.ops[1].type = ElementType::F16;
  body.ops[1].operands[0] = 0;
  body.ops[2].kind = BodyOpKind::MulF;
  body.ops[2].type = ElementType::F16;
  body.ops[2].operands[0] = 2;
  body.ops[2].operands[1] = 1;
  body.result = 3;
  body.resultType = ElementType::F16;
  ASSERT_FALSE(verifyBody(body).has_value());
  GemmProblem f8 = problem(96, 128, 64);
  f8.expandedFrom = ElementType::F8E4M3FN;
  f8.expansion = std::make_shared<const ElementwiseBody>(body);
  GemmProblem f16 = problem(96, 128, 64);
  for (bool swapped : {false, true}) {
    for (bool gathered : {false, true}) {
      GemmPlan candidate = plan(8, 2);
      candidate.swapped = swapped;
      candidate.gatheredWeights = gathered;
      GemmCost wide = costGemmPlan(target, f16, candidate);
      GemmCost narrow = costGemmPlan(target, f8, candidate);
      // The 128 x 32 block (32 x 128 stored when swapped), or a home of
      // its rows over the 8 replicas.
      const int64_t rows = (swapped ? 32 : 128) / (gathered ? 8 : 1);
      const int64_t cols = swapped ? 128 : 32;
      EXPECT_EQ(narrow.expansionCycles, estimateElementwise(target, body, rows, cols).total);
      EXPECT_EQ(narrow.totalCycles, wide.totalCycles + narrow.expansionCycles);
    }
  }
}

TEST(GemmPlanHomes, GatheredHomesStayInTheirOwnClass) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(64, 256, 256);
  p.weightLayers = 4;
  GemmPlan gathered = plan(4, 2, 2);
  gathered.gatheredWeights = true;
  ASSERT_FALSE(checkGemmPlan(target, p, gathered));
  const GemmCost inInterleaved = costGemmPlan(target, p, gathered);
  gathered.homes = MemoryClass::Standard;
  ASSERT_FALSE(checkGemmPlan(target, p, gathered));
  const GemmCost inStandard = costGemmPlan(target, p, gathered);
  // The same cycles; every layer's home moves from one class to the other.
  EXPECT_EQ(inStandard.totalCycles, inInterleaved.totalCycles);
  const uint64_t homes = inInterleaved.weightBytes[1];
  ASSERT_GT(homes, 0u);
  EXPECT_EQ(inStandard.weightBytes[0], homes);
  EXPECT_EQ(inStandard.weightBytes[1], 0u);
  EXPECT_EQ(inStandard.peakBytes[0], inInterleaved.peakBytes[0] + homes);
  EXPECT_EQ(inStandard.peakBytes[1] + homes, inInterleaved.peakBytes[1]);
  // Left open, they are in neither class, and the open bytes say how many.
  p.homesOpen = true;
  const GemmCost open = costGemmPlan(target, p, gathered);
  EXPECT_EQ(open.openHomeBytes, homes);
  EXPECT_EQ(open.weightBytes[0] + open.weightBytes[1], 0u);
  EXPECT_EQ(open.peakBytes[1] + homes, inInterleaved.peakBytes[1]);
  // Only gathered weights have homes of their own.
  GemmPlan replicated = plan(4, 2, 2);
  replicated.homes = MemoryClass::Standard;
  EXPECT_EQ(checkGemmPlan(target, p, replicated),
            "only gathered weights have homes apart from their blocks");
}

TEST(GemmPlanHomes, OpenHomesFitInTheRoomBothClassesLeaveAtTheWorstStep) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(64, 256, 256);
  p.weightLayers = 4;
  p.homesOpen = true;
  GemmPlan gathered = plan(4, 2, 2);
  gathered.gatheredWeights = true;
  const GemmCost cost = costGemmPlan(target, p, gathered);
  ASSERT_GT(cost.openHomeBytes, 0u);
  const uint64_t standard = target.allocatableBytes(MemoryClass::Standard);
  const uint64_t interleaved = target.allocatableBytes(MemoryClass::Interleaved);
  MemoryBudget budget;
  // Another step's standard buffers set the worst standard step; the
  // plan's own peak the worst interleaved one.
  const uint64_t otherStep = cost.peakBytes[0] - cost.codeBytes + 1000;
  budget.coexistingSteps = {{otherStep, 0}};
  const uint64_t worst = cost.codeBytes + otherStep + cost.peakBytes[1];
  const uint64_t room = standard + interleaved - worst;
  budget.openHomeBytes = room - cost.openHomeBytes;
  EXPECT_TRUE(fitsMemory(target, cost, budget));
  budget.openHomeBytes += 1;
  EXPECT_FALSE(fitsMemory(target, cost, budget));
  // Without the other step, its 1000 bytes more are room.
  budget.coexistingSteps.clear();
  EXPECT_TRUE(fitsMemory(target, cost, budget));
}

TEST(GemmPlanHomes, ARepeatedProgramPlacesItsHomesWhereEveryStepFits) {
  // Six repeated layers' matmuls whose every layer's homes (8 layers, 64
  // KiB a tile each, 384 KiB in all) with the steps' own interleaved
  // buffers fill more than interleaved memory: with their class
  // open, the program places some in standard memory and every matmul
  // keeps the fastest plan, where interleaved homes leave the last ones
  // slower plans.
  TargetModel target = TargetModel::ipu21WithTiles(16);
  std::vector<ProgramGemm> program(6);
  for (ProgramGemm &gemm : program) {
    gemm.problem = problem(256, 256, 256);
    gemm.problem.weightLayers = 8;
    gemm.problem.homesOpen = true;
  }
  std::vector<ProgramGemm> closed = program;
  for (ProgramGemm &gemm : closed)
    gemm.problem.homesOpen = false;
  planGemmProgram(target, program, 4, 2);
  planGemmProgram(target, closed, 4, 2);
  unsigned inStandard = 0;
  uint64_t cycles = 0, closedCycles = 0;
  for (size_t i = 0; i < program.size(); ++i) {
    ASSERT_FALSE(program[i].error) << *program[i].error;
    const GemmPlanChoice &choice = program[i].search.finalists.front();
    EXPECT_FALSE(program[i].problem.homesOpen);
    EXPECT_EQ(choice.cost.openHomeBytes, 0u);
    EXPECT_EQ(choice.plan.serial, 1u) << choice.plan.str();
    inStandard += choice.plan.gatheredWeights && choice.plan.homes == MemoryClass::Standard;
    cycles += choice.cost.totalCycles;
    closedCycles += closed[i].error ? UINT64_MAX / 4
                                    : closed[i].search.finalists.front().cost.totalCycles;
  }
  EXPECT_GE(inStandard, 1u);
  // With every home interleaved, the program needs slower plans (or finds
  // none).
  EXPECT_LT(cycles, closedCycles);
  // Every layer's homes, as placed, fit beside every matmul's steps: the
  // bytes each class holds for the whole run, with the worst step, fit.
  uint64_t resident[2] = {0, 0}, worstStep[2] = {0, 0};
  for (const ProgramGemm &gemm : program) {
    const GemmCost &cost = gemm.search.finalists.front().cost;
    resident[0] += cost.weightBytes[0] + cost.codeBytes;
    resident[1] += cost.weightBytes[1];
    for (int c = 0; c < 2; ++c)
      worstStep[c] = std::max(worstStep[c], cost.peakBytes[c] - cost.weightBytes[c] -
                                                (c == 0 ? cost.codeBytes : 0));
  }
  EXPECT_LE(resident[0] + worstStep[0], target.allocatableBytes(MemoryClass::Standard));
  EXPECT_LE(resident[1] + worstStep[1], target.allocatableBytes(MemoryClass::Interleaved));
}

TEST(GemmPlanColumns, NarrowColumnsSplitOnWordsForAnyBlockCount) {
  // Every column count of a narrow exchanged C: the plan the search makes
  // (its needed grain) checks, its blocks start on words, cover N once in
  // increasing order, the widest is what the cost model takes, and the
  // layouts agree.
  TargetModel target = TargetModel::ipu21WithTiles(1472);
  std::mt19937 random(5);
  for (int trial = 0; trial < 300; ++trial) {
    const bool f8 = trial % 3 == 0;
    GemmProblem p = problem(8 + random() % 64, 64, 2 + random() % 4400);
    p.outType = f8 ? ElementType::F8E4M3FN : ElementType::F16;
    const uint32_t bytes = f8 ? 1 : 2;
    const int64_t words = (p.n * bytes + 3) / 4;
    GemmPlan candidate = plan(1, 1 + random() % std::min<int64_t>(words, 700), 1);
    candidate.columnGrain = neededColumnGrain(p, candidate);
    std::optional<std::string> why = checkGemmPlan(target, p, candidate);
    ASSERT_FALSE(why) << "n=" << p.n << " " << candidate.str() << ": " << *why;
    GemmLayouts layouts = gemmLayouts(p, candidate);
    ASSERT_FALSE(layouts.out.validate(target.tiles)) << candidate.str();
    ASSERT_FALSE(layouts.rhs.validate(target.tiles)) << candidate.str();
    int64_t widest = 0;
    for (uint32_t j = 0; j < candidate.cols; ++j) {
      const int64_t begin = layouts.out.blockColBegin(j), size = layouts.out.blockCols(j);
      EXPECT_EQ(begin * bytes % 4, 0) << "n=" << p.n << " " << candidate.str() << " block " << j;
      EXPECT_GT(size, 0);
      EXPECT_EQ(layouts.rhs.blockColBegin(j), begin);
      widest = std::max(widest, size);
    }
    EXPECT_EQ(layouts.out.blockColBegin(candidate.cols - 1) +
                  layouts.out.blockCols(candidate.cols - 1),
              p.n);
    EXPECT_EQ(widestColumnBlock(p, candidate), widest) << candidate.str();
    // A split already on words keeps the balanced one.
    if (candidate.columnGrain == 1)
      EXPECT_TRUE(layouts.out.colSplits.empty());
  }
  // 4304 f16 columns in 16 blocks: 269 each would cut words; grains of 2
  // give 268 or 270.
  GemmProblem fc1 = problem(729, 1152, 4304);
  fc1.outType = ElementType::F16;
  GemmPlan sixteen = plan(2, 16, 1);
  EXPECT_EQ(*checkGemmPlan(target, fc1, sixteen),
            "cols=16 cuts f16 rows of C off 32-bit word boundaries");
  sixteen.columnGrain = neededColumnGrain(fc1, sixteen);
  EXPECT_EQ(sixteen.columnGrain, 2u);
  EXPECT_FALSE(checkGemmPlan(target, fc1, sixteen));
  EXPECT_EQ(widestColumnBlock(fc1, sixteen), 270);
  // More blocks than words is refused.
  GemmProblem narrow = problem(8, 64, 6);
  narrow.outType = ElementType::F16;
  GemmPlan four = plan(1, 4, 1);
  four.columnGrain = 2;
  EXPECT_EQ(*checkGemmPlan(target, narrow, four),
            "cols=4 cuts the 6 columns into more blocks than their 3 32-bit words");
}

TEST(GemmPlanColumns, ABalancedConstraintKeepsTheBalancedSplitsOnly) {
  // The planner's fallback when grained plans leave a program without
  // memory: constraint grain = 1 searches N's balanced splits alone.
  TargetModel target = TargetModel::ipu21WithTiles(64);
  GemmProblem p = problem(96, 128, 86);
  p.outType = ElementType::F16;
  GemmPlanSearch any, balanced;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 8, any));
  GemmPlanConstraints onlyBalanced;
  onlyBalanced.columnGrain = 1;
  ASSERT_FALSE(searchGemmPlans(target, p, onlyBalanced, 8, balanced));
  EXPECT_LT(balanced.matching, any.matching);
  for (const GemmPlanChoice &choice : balanced.finalists) {
    EXPECT_EQ(choice.plan.columnGrain, 1u) << choice.plan.str();
    EXPECT_FALSE(checkGemmPlan(target, p, choice.plan));
  }
  EXPECT_EQ(onlyBalanced.str(), "grain=1");
}

TEST(GemmPlanPsums, PartialSumsMoveToInterleavedAtTheSameCycles) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (bool gathered : {false, true}) {
    GemmProblem p = problem(64, 512, 256);
    p.weightLayers = 4;
    GemmPlan inStandard = plan(4, 2, 2, MemoryClass::Interleaved, Reduction::Staged);
    inStandard.gatheredWeights = gathered;
    ASSERT_FALSE(checkGemmPlan(target, p, inStandard));
    GemmPlan inInterleaved = inStandard;
    inInterleaved.psums = MemoryClass::Interleaved;
    ASSERT_FALSE(checkGemmPlan(target, p, inInterleaved));
    const GemmCost a = costGemmPlan(target, p, inStandard);
    const GemmCost b = costGemmPlan(target, p, inInterleaved);
    EXPECT_EQ(a.totalCycles, b.totalCycles);
    EXPECT_EQ(a.weightBytes[0], b.weightBytes[0]);
    EXPECT_EQ(a.weightBytes[1], b.weightBytes[1]);
    // Standard memory keeps less, interleaved more; never more in all than
    // both steps' partials on top of the rest.
    EXPECT_LT(b.peakBytes[0], a.peakBytes[0]);
    EXPECT_GT(b.peakBytes[1], a.peakBytes[1]);
    EXPECT_EQ(inInterleaved.str().find(" psums=interleaved") != std::string::npos, true);
  }
  // Only partial sums move: inner = 1 has none.
  GemmProblem p = problem(64, 512, 256);
  GemmPlan single = plan(4, 4, 1);
  single.psums = MemoryClass::Interleaved;
  EXPECT_EQ(checkGemmPlan(target, p, single),
            "psums=interleaved keeps the partial sums of inner > 1 there; with "
            "inner = 1 the AMP writes the result");
}

TEST(GemmPlanPsums, TheSearchTakesInterleavedPartialsOnlyWhenStandardIsShort) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(128, 1024, 256);
  p.rhsIsWeight = true;
  GemmPlanConstraints constraints;
  constraints.inner = 4;
  // Every finalist with interleaved partial sums is one whose standard twin
  // does not fit: the same cycles, so it is never taken for them.
  auto onlyWhereStandardIsShort = [&](const GemmPlanSearch &search,
                                      const MemoryBudget &budget) {
    for (const GemmPlanChoice &choice : search.finalists) {
      EXPECT_TRUE(fitsMemory(target, choice.cost, budget)) << choice.plan.str();
      if (choice.plan.psums != MemoryClass::Interleaved)
        continue;
      GemmPlan twin = choice.plan;
      twin.psums = MemoryClass::Standard;
      const GemmCost cost = costGemmPlan(target, p, twin);
      EXPECT_EQ(cost.totalCycles, choice.cost.totalCycles);
      EXPECT_FALSE(fitsMemory(target, cost, budget)) << choice.plan.str();
    }
  };
  GemmPlanSearch roomy;
  ASSERT_FALSE(searchGemmPlans(target, p, constraints, 16, roomy).has_value());
  ASSERT_FALSE(roomy.finalists.empty());
  const GemmPlanChoice best = roomy.finalists.front();
  ASSERT_EQ(best.plan.psums, MemoryClass::Standard) << best.plan.str();
  onlyWhereStandardIsShort(roomy, {});
  // Standard memory one byte short of the best plan, and just enough for
  // its twin with interleaved partial sums: the twin is a finalist.
  GemmPlan twin = best.plan;
  twin.psums = MemoryClass::Interleaved;
  const GemmCost twinCost = costGemmPlan(target, p, twin);
  MemoryBudget budget;
  budget.reservedBytes[0] = target.allocatableBytes(MemoryClass::Standard) - twinCost.peakBytes[0];
  ASSERT_FALSE(fitsMemory(target, best.cost, budget));
  GemmPlanSearch tight;
  ASSERT_FALSE(searchGemmPlans(target, p, constraints, 16, tight, budget).has_value());
  onlyWhereStandardIsShort(tight, budget);
  EXPECT_TRUE(std::any_of(tight.finalists.begin(), tight.finalists.end(),
                          [&](const GemmPlanChoice &choice) {
                            return choice.plan.str() == twin.str();
                          }));
  EXPECT_EQ(tight.finalists.front().cost.totalCycles, best.cost.totalCycles);
}

// A package carries each finalist's printed plan, and validation accepts
// only kGemmPlanKeys: a plan with every optional field set must print
// exactly those keys (psums=interleaved once made the tower's package
// fail validation after it compiled).
TEST(GemmPlanText, EveryFieldSetPrintsExactlyThePackageKeys) {
  GemmPlan full = plan(4, 4, 2, MemoryClass::Interleaved, Reduction::Staged);
  full.swapped = true;
  full.gatheredWeights = true;
  full.homes = MemoryClass::Standard;
  full.psums = MemoryClass::Interleaved;
  full.columnGrain = 4;
  full.serial = 3;
  std::istringstream tokens(full.str());
  std::vector<std::string> keys;
  for (std::string token; tokens >> token;)
    keys.push_back(token.substr(0, token.find('=')));
  ASSERT_EQ(keys.size(), kGemmPlanKeys.size()) << full.str();
  for (size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(keys[i], kGemmPlanKeys[i]) << full.str();
}
