//===- IntegerListTest.cpp - Integer lists as ranges and repeats ---------===//

#include "IPU/Support/IntegerList.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

using namespace ipu;

namespace {

std::vector<int64_t> expanded(const IntegerTerms &terms) {
  std::vector<int64_t> values;
  std::optional<std::string> why = expandIntegerList(terms, values);
  EXPECT_FALSE(why) << *why;
  return values;
}

std::vector<int64_t> iota(int64_t from, int64_t to, int64_t step = 1) {
  std::vector<int64_t> values;
  for (int64_t v = from; step > 0 ? v < to : v > to; v += step)
    values.push_back(v);
  return values;
}

/// A random list made of the pieces real IR has (ranges, strided ranges,
/// nested repeats) and of noise, so that every branch of the search runs.
std::vector<int64_t> randomList(std::mt19937_64 &rng) {
  std::vector<int64_t> values;
  auto below = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  for (int64_t pieces = below(6); pieces >= 0; --pieces) {
    switch (below(4)) {
    case 0: // noise
      for (int64_t k = below(5); k >= 0; --k)
        values.push_back(below(2000) - 1000);
      break;
    case 1: { // a range, any step but 0
      int64_t start = below(2000) - 1000, step = below(21) - 10;
      for (int64_t k = below(40); k >= 0; --k)
        values.push_back(start + k * (step ? step : 1));
      break;
    }
    default: { // a nested repeat of a few values
      std::vector<int64_t> body;
      for (int64_t k = below(6); k >= 0; --k)
        body.push_back(below(100));
      int64_t inner = 1 + below(5), outer = 1 + below(5);
      int64_t innerStep = below(400) - 200, outerStep = below(50);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          for (int64_t v : body)
            values.push_back(v + i * innerStep + o * outerStep);
    }
    }
  }
  return values;
}

} // namespace

TEST(IntegerListTest, EveryListExpandsBackToItself) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<int64_t> values = randomList(rng);
    IntegerTerms terms = compressIntegerList(values);
    ASSERT_EQ(expanded(terms), values) << printIntegerTerms(terms);
  }
}

TEST(IntegerListTest, ExtremeValuesExpandBackToThemselves) {
  const int64_t max = std::numeric_limits<int64_t>::max(),
                min = std::numeric_limits<int64_t>::min();
  for (const std::vector<int64_t> &values :
       {std::vector<int64_t>{max - 2, max - 1, max}, {min, min + 1, min + 2},
        {min, max, min, max, min, max}, {max, 0, min}, {0, max, 0, max}}) {
    IntegerTerms terms = compressIntegerList(values);
    EXPECT_EQ(expanded(terms), values) << printIntegerTerms(terms);
  }
}

TEST(IntegerListTest, RegularListsPrintShort) {
  EXPECT_EQ(printIntegerTerms(compressIntegerList(iota(0, 1472))), "0 to 1472");
  EXPECT_EQ(printIntegerTerms(compressIntegerList(iota(0, 729, 4))),
            "0 to 732 step 4");
  EXPECT_EQ(printIntegerTerms(compressIntegerList(iota(10, 0, -5))), "10, 5");
  EXPECT_EQ(printIntegerTerms(compressIntegerList({3, 1, 4, 1, 5})),
            "3, 1, 4, 1, 5");
  EXPECT_EQ(printIntegerTerms(compressIntegerList({})), "");
  // Short terms print as their values where that is no longer.
  EXPECT_EQ(printIntegerTerms(compressIntegerList({0, 2, 1, 3})), "0, 2, 1, 3");
  EXPECT_EQ(printIntegerTerms(compressIntegerList({0, 2, 4, 6, 8})), "0, 2, 4, 6, 8");
  EXPECT_EQ(printIntegerTerms(compressIntegerList(iota(0, 4))), "0 to 4");
  EXPECT_EQ(printIntegerTerms(compressIntegerList(iota(5, -1, -1))), "5, 4, 3, 2, 1, 0");
  // A GEMM's reduce tiles on ipu21: 8 tiles from each quarter of the chip,
  // then the next 8 of each quarter.
  std::vector<int64_t> tiles;
  for (int64_t block = 0; block < 46; ++block)
    for (int64_t quarter = 0; quarter < 4; ++quarter)
      for (int64_t t = 0; t < 8; ++t)
        tiles.push_back(quarter * 368 + block * 8 + t);
  EXPECT_EQ(printIntegerTerms(compressIntegerList(tiles)),
            "((0 to 8) x 4 step 368) x 46 step 8");
  // A split of 729 rows into 184 parts of 4 or 3: a few terms, not 185.
  std::vector<int64_t> splits = {0};
  for (int64_t part = 0; part < 184; ++part)
    splits.push_back(splits.back() + (part < 160 || part % 4 == 0 ? 4 : 3));
  splits.back() = 729;
  EXPECT_LT(compressIntegerList(splits).size(), 12u)
      << printIntegerTerms(compressIntegerList(splits));
}

TEST(IntegerListTest, RangesHoldExactlyTheirValues) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 5000; ++trial) {
    int64_t from = int64_t(rng() % 200) - 100, to = int64_t(rng() % 200) - 100,
            step = int64_t(rng() % 21) - 10;
    IntegerTerm term;
    std::optional<std::string> why = makeRangeTerm(from, to, step, term);
    std::vector<int64_t> want = step ? iota(from, to, step) : std::vector<int64_t>();
    if (want.empty()) {
      EXPECT_TRUE(why) << from << " to " << to << " step " << step;
      continue;
    }
    ASSERT_FALSE(why) << *why;
    EXPECT_EQ(expanded({term}), want) << from << " to " << to << " step " << step;
  }
}

TEST(IntegerListTest, RefusesWhatCannotBeExpanded) {
  IntegerTerm term;
  EXPECT_EQ(*makeRangeTerm(0, 10, 0, term), "a range's step cannot be 0");
  EXPECT_EQ(*makeRangeTerm(5, 5, 1, term), "the range 5 to 5 step 1 is empty");
  EXPECT_EQ(*makeRangeTerm(0, 10, -1, term), "the range 0 to 10 step -1 is empty");
  EXPECT_TRUE(makeRepeatTerm({}, 3, 1, term));
  ASSERT_FALSE(makeRangeTerm(0, 4, 1, term));
  IntegerTerm repeat;
  EXPECT_EQ(*makeRepeatTerm({term}, 0, 1, repeat),
            "a repeat needs a count of at least 1, got 0");

  // A written list cannot ask for more memory than the limit.
  ASSERT_FALSE(makeRepeatTerm({term}, int64_t(1) << 62, 4, repeat));
  std::vector<int64_t> values;
  EXPECT_EQ(*expandIntegerList({repeat}, values), "the list has more than 16777216 values");
  EXPECT_TRUE(values.empty());
  EXPECT_EQ(*expandIntegerList({term}, values, 3), "the list has more than 3 values");

  // Nor leave the int64 range.
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(makeRangeTerm(max, std::numeric_limits<int64_t>::min(), -1, term));
  ASSERT_FALSE(makeRangeTerm(max - 1, max - 3, -1, term));
  ASSERT_FALSE(makeRepeatTerm({term}, 2, max, repeat));
  EXPECT_EQ(*expandIntegerList({repeat}, values),
            "a value of the list leaves the 64-bit integer range");
}

namespace {

/// Balanced splits as BlockLayout computes them, one level at a time.
std::vector<int64_t> splitsByHand(int64_t extent, const std::vector<int64_t> &levels) {
  std::vector<std::pair<int64_t, int64_t>> blocks = {{0, extent}};
  for (int64_t parts : levels) {
    std::vector<std::pair<int64_t, int64_t>> next;
    for (auto [begin, size] : blocks)
      for (int64_t p = 0, at = begin; p < parts; ++p) {
        int64_t part = size / parts + (p < size % parts ? 1 : 0);
        next.push_back({at, part});
        at += part;
      }
    blocks = next;
  }
  std::vector<int64_t> points;
  for (auto [begin, size] : blocks)
    points.push_back(begin);
  points.push_back(extent);
  return points;
}

TEST(BalancedSplitsTest, NestedSplitsAreFoundAgainAndExpandBack) {
  // A staged reduction's rows: 729 into 46 blocks, each into 4.
  std::vector<int64_t> rows;
  ASSERT_FALSE(balancedSplits(729, {46, 4}, rows));
  EXPECT_EQ(rows, splitsByHand(729, {46, 4}));
  EXPECT_EQ(rows.size(), 185u);
  EXPECT_EQ(nestedBalancedLevels(rows), (std::vector<int64_t>{46, 4}));
  // Random extents and levels: whatever levels are found give the same
  // points back (another factorisation may give the same points).
  std::mt19937_64 rng(5);
  for (int round = 0; round < 500; ++round) {
    std::vector<int64_t> levels;
    for (int depth = 2 + int(rng() % 2); depth > 0; --depth)
      levels.push_back(2 + int64_t(rng() % 9));
    int64_t product = 1;
    for (int64_t parts : levels)
      product *= parts;
    const int64_t extent = product + int64_t(rng() % uint64_t(5 * product));
    std::vector<int64_t> points;
    ASSERT_FALSE(balancedSplits(extent, levels, points));
    ASSERT_EQ(points, splitsByHand(extent, levels));
    std::optional<std::vector<int64_t>> found = nestedBalancedLevels(points);
    if (compressIntegerList(points).size() == 1) {
      // One range says it as well: printed as the range.
      EXPECT_FALSE(found);
      continue;
    }
    ASSERT_TRUE(found) << "extent " << extent;
    std::vector<int64_t> again;
    ASSERT_FALSE(balancedSplits(extent, *found, again));
    EXPECT_EQ(again, points);
  }
}

TEST(BalancedSplitsTest, OtherListsAreNotBalancedSplits) {
  EXPECT_FALSE(nestedBalancedLevels({0, 4, 8}));
  EXPECT_FALSE(nestedBalancedLevels({0, 1, 2, 3, 4, 5, 6, 7, 8}));   // one range
  EXPECT_FALSE(nestedBalancedLevels({0, 3, 5, 8, 9, 12, 14, 17, 18})); // irregular
  EXPECT_FALSE(nestedBalancedLevels({1, 3, 5, 7, 9}));                // not from 0
}

TEST(BalancedSplitsTest, RefusesSplitsWithEmptyPartsOrNoParts) {
  std::vector<int64_t> points;
  EXPECT_EQ(balancedSplits(3, {2, 2}, points),
            "a block of 1 cannot be split into 2 non-empty parts");
  EXPECT_EQ(balancedSplits(10, {0}, points),
            "a balanced split needs at least 1 part per level, got 0");
  EXPECT_EQ(balancedSplits(0, {1}, points),
            "balanced splits need an extent of at least 1, got 0");
  EXPECT_EQ(balancedSplits(5, {}, points), "balanced splits need at least one level");
  EXPECT_TRUE(balancedSplits(1 << 20, {1 << 10, 1 << 10}, points, 1000).has_value());
}

} // namespace
