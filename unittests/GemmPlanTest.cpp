//===- GemmPlanTest.cpp - Plan space, cost model and constraints ----------===//

#include "IPU/Planning/GemmPlan.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Layout/BlockLayout.h"

#include <gtest/gtest.h>

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

GemmPlan plan(uint32_t rows, uint32_t cols,
              MemoryClass weights = MemoryClass::Standard) {
  GemmPlan p;
  p.rows = rows;
  p.cols = cols;
  p.weights = weights;
  return p;
}

TEST(GemmPlanCost, HandComputedSixteenTiles) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmCost cost = costGemmPlan(target, problem(96, 128, 64), plan(8, 2));
  // A rows are 128 f16 = 256 bytes. Arrival: 96 rows over 16 tiles, 6 each,
  // sent once (384 words); each plan tile receives its 12 rows (768 words).
  EXPECT_EQ(cost.exchangeCycles, 768u + 32u);
  // GEMM of 12x128x32: 8x2 weight blocks of 512 bytes at 16 B/cycle = 512,
  // 12*128*32/64 = 768 streaming, 50 setup + 6 workers x 20 dispatch.
  EXPECT_EQ(cost.computeCycles, 512u + 768u + 50u + 120u);
  EXPECT_EQ(cost.computeCycles,
            estimateGemmCycles(target, ElementType::F16, 12, 128, 32));
  EXPECT_EQ(cost.syncCycles, 300u);
  EXPECT_EQ(cost.totalCycles, 800u + 1450u + 300u);
  EXPECT_EQ(cost.activeTiles, 16u);
  // Standard: max(arrival 6x256 + gathered 12x256, gathered + C 12x32x4)
  // plus the weights 128 x 32 f16.
  EXPECT_EQ(cost.peakBytes[0], 12u * 256 + 12u * 128 + 128u * 64);
  EXPECT_EQ(cost.peakBytes[1], 0u);
}

TEST(GemmPlanCost, InterleavedWeightsMoveToTheirClass) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmCost standard = costGemmPlan(target, problem(96, 128, 64), plan(8, 2));
  GemmCost interleaved = costGemmPlan(target, problem(96, 128, 64),
                                      plan(8, 2, MemoryClass::Interleaved));
  EXPECT_EQ(interleaved.peakBytes[1], 128u * 64);
  EXPECT_EQ(interleaved.peakBytes[0] + interleaved.peakBytes[1],
            standard.peakBytes[0]);
}

TEST(GemmPlanCost, UnevenSplitsChargeTheLargestBlock) {
  TargetModel target = TargetModel::ipu21();
  // 729 rows over 16 parts: the first 9 hold 46 rows.
  GemmCost cost = costGemmPlan(target, problem(729, 1152, 4304), plan(16, 92));
  uint64_t blockCols = (4304 + 91) / 92; // 47
  EXPECT_EQ(cost.computeCycles,
            estimateGemmCycles(target, ElementType::F16, 46, 1152, blockCols));
  EXPECT_EQ(cost.exchangeCycles, 46u * 1152 * 2 / 4 + 32u);
}

TEST(GemmPlanCost, PaddingToTheAmpGrain) {
  TargetModel target = TargetModel::ipu21WithTiles(4);
  // k = 17 pads to 32 (f16 grain 16), n = 1 pads to 16: the same cost as
  // k = 32, n = 16.
  EXPECT_EQ(costGemmPlan(target, problem(8, 17, 1), plan(1, 1)).computeCycles,
            costGemmPlan(target, problem(8, 32, 16), plan(1, 1)).computeCycles);
  // f8 pads k to 32 and streams twice the MACs per cycle.
  EXPECT_LT(costGemmPlan(target, problem(64, 64, 64, ElementType::F8E4M3FN),
                         plan(1, 1))
                .computeCycles,
            costGemmPlan(target, problem(64, 64, 64), plan(1, 1)).computeCycles);
}

TEST(GemmPlanCost, SmallRowsAreDominatedByWeightReload) {
  TargetModel target = TargetModel::ipu21();
  // For one row, reloading 1152/16 x 64/16 weight blocks costs more than
  // streaming; doubling the rows must not double the cycles.
  uint64_t one = estimateGemmCycles(target, ElementType::F16, 1, 1152, 64);
  uint64_t two = estimateGemmCycles(target, ElementType::F16, 2, 1152, 64);
  EXPECT_LT(two, 2 * one - 100);
}

/// Every finalist covers the matmul exactly once: its blocks tile [0, M) x
/// [0, N) without overlap and sit on distinct tiles of the target.
void expectCoversOnce(const TargetModel &target, const GemmProblem &p,
                      const GemmPlan &candidate) {
  BlockLayout out;
  out.rows = p.m;
  out.cols = p.n;
  out.gridRows = candidate.rows;
  out.gridCols = candidate.cols;
  out.tileRowStride = candidate.cols;
  out.tileColStride = 1;
  ASSERT_FALSE(out.validate(target.tiles).has_value()) << candidate.str();
  std::vector<int> covered(p.m * p.n, 0);
  for (uint32_t i = 0; i < candidate.rows; ++i)
    for (uint32_t j = 0; j < candidate.cols; ++j)
      for (int64_t r = 0; r < out.blockRows(i); ++r)
        for (int64_t c = 0; c < out.blockCols(j); ++c)
          ++covered[(out.blockRowBegin(i) + r) * p.n + out.blockColBegin(j) + c];
  for (int count : covered)
    ASSERT_EQ(count, 1) << candidate.str();
}

TEST(GemmPlanSearch, FinalistsCoverTheMatmulExactlyOnce) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  for (auto [m, k, n] : {std::tuple{96, 128, 64}, std::tuple{37, 20, 13},
                         std::tuple{5, 7, 3}}) {
    GemmProblem p = problem(m, k, n);
    GemmPlanSearch search;
    ASSERT_FALSE(searchGemmPlans(target, p, {}, 8, search).has_value());
    ASSERT_FALSE(search.finalists.empty());
    for (const GemmPlanChoice &choice : search.finalists)
      expectCoversOnce(target, p, choice.plan);
  }
}

TEST(GemmPlanSearch, FinalistsAreTheCheapestAndSorted) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, search).has_value());
  ASSERT_EQ(search.finalists.size(), 4u);
  for (size_t i = 1; i < search.finalists.size(); ++i)
    EXPECT_LE(search.finalists[i - 1].cost.totalCycles,
              search.finalists[i].cost.totalCycles);
  // Exhaustive check: no plan of the space is cheaper than the winner.
  uint64_t best = search.finalists.front().cost.totalCycles;
  for (uint32_t rows = 1; rows <= 16; ++rows)
    for (uint32_t cols = 1; rows * cols <= 16 && cols <= 64; ++cols)
      for (MemoryClass weights : {MemoryClass::Standard, MemoryClass::Interleaved})
        EXPECT_GE(costGemmPlan(target, p, plan(rows, cols, weights)).totalCycles,
                  best);
  // Same answer twice: the choice never depends on hidden state.
  GemmPlanSearch again;
  ASSERT_FALSE(searchGemmPlans(target, p, {}, 4, again).has_value());
  EXPECT_EQ(again.finalists.front().plan.str(),
            search.finalists.front().plan.str());
}

TEST(GemmPlanSearch, ConstraintsFilter) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmProblem p = problem(96, 128, 64);
  GemmPlanConstraints constraints;
  constraints.rows = 4;
  constraints.weights = MemoryClass::Interleaved;
  GemmPlanSearch search;
  ASSERT_FALSE(searchGemmPlans(target, p, constraints, 100, search).has_value());
  // rows = 4 leaves cols in [1, 4]; one weight class.
  EXPECT_EQ(search.matching, 4u);
  EXPECT_EQ(search.finalists.size(), 4u);
  for (const GemmPlanChoice &choice : search.finalists) {
    EXPECT_EQ(choice.plan.rows, 4u);
    EXPECT_EQ(choice.plan.weights, MemoryClass::Interleaved);
  }
  std::set<uint32_t> cols;
  for (const GemmPlanChoice &choice : search.finalists)
    cols.insert(choice.plan.cols);
  EXPECT_EQ(cols, (std::set<uint32_t>{1, 2, 3, 4}));
}

TEST(GemmPlanSearch, NoMatchNamesTheConstraint) {
  TargetModel target = TargetModel::ipu21WithTiles(16);
  GemmPlanSearch search;
  GemmPlanConstraints rows;
  rows.rows = 1000;
  std::optional<std::string> error =
      searchGemmPlans(target, problem(96, 128, 64), rows, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("rows=1000"), std::string::npos) << *error;
  EXPECT_NE(error->find("rows must be in [1, 16]"), std::string::npos) << *error;

  GemmPlanConstraints both;
  both.rows = 8;
  both.cols = 4;
  error = searchGemmPlans(target, problem(96, 128, 64), both, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("rows x cols = 32 exceeds the 16 tiles"),
            std::string::npos)
      << *error;
}

TEST(GemmPlanSearch, TooBigForTheChipSaysTheBytes) {
  TargetModel target = TargetModel::ipu21();
  GemmPlanSearch search;
  std::optional<std::string> error =
      searchGemmPlans(target, problem(1024, 8, 500000), {}, 4, search);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("no plan fits tile memory"), std::string::npos) << *error;
  EXPECT_NE(error->find("204800 standard and 425984 interleaved bytes"),
            std::string::npos)
      << *error;
  EXPECT_EQ(search.fitting, 0u);
  EXPECT_GT(search.matching, 0u);
}

} // namespace
