//===- BlockLayoutTest.cpp - Block layouts and rearrangements ------------===//

#include "IPU/Layout/BlockLayout.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstring>
#include <numeric>
#include <random>

using namespace ipu;

namespace {

/// Blocks in (i, j) order on consecutive tiles from `base`, replicas of a
/// block on consecutive tiles.
BlockLayout gridLayout(int64_t rows, int64_t cols, ElementType type,
                       uint32_t gridRows, uint32_t gridCols,
                       uint32_t replicas = 1, uint32_t base = 0) {
  BlockLayout l;
  l.rows = rows;
  l.cols = cols;
  l.type = type;
  l.gridRows = gridRows;
  l.gridCols = gridCols;
  l.replicas = replicas;
  l.tileBase = base;
  l.replicaStride = 1;
  l.tileColStride = replicas;
  l.tileRowStride = int64_t(gridCols) * replicas;
  return l;
}

//===----------------------------------------------------------------------===//
// Geometry
//===----------------------------------------------------------------------===//

TEST(BlockLayoutTest, BalancedSplit) {
  // 729 = 9 * 46 + 7 * 45.
  int64_t begin = 0;
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(BlockLayout::splitBegin(729, 16, i), begin) << i;
    EXPECT_EQ(BlockLayout::splitSize(729, 16, i), i < 9 ? 46 : 45) << i;
    begin += BlockLayout::splitSize(729, 16, i);
  }
  EXPECT_EQ(begin, 729);
  EXPECT_EQ(BlockLayout::splitBegin(729, 16, 16), 729);
  EXPECT_EQ(BlockLayout::splitBegin(729, 16, 9), 9 * 46);
  // Exact and degenerate splits.
  EXPECT_EQ(BlockLayout::splitSize(64, 16, 15), 4);
  EXPECT_EQ(BlockLayout::splitSize(5, 5, 4), 1);
  EXPECT_EQ(BlockLayout::splitSize(7, 1, 0), 7);
  EXPECT_EQ(BlockLayout::splitBegin(1152, 3, 2), 768);
}

TEST(BlockLayoutTest, SplitCoversExtentForManyShapes) {
  for (int64_t extent = 1; extent <= 100; ++extent)
    for (uint32_t parts = 1; parts <= extent; ++parts) {
      int64_t next = 0, smallest = extent, largest = 0;
      for (uint32_t i = 0; i < parts; ++i) {
        ASSERT_EQ(BlockLayout::splitBegin(extent, parts, i), next);
        int64_t size = BlockLayout::splitSize(extent, parts, i);
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        next += size;
      }
      ASSERT_EQ(next, extent);
      ASSERT_LE(largest - smallest, 1);
      ASSERT_GE(smallest, 1);
    }
}

TEST(BlockLayoutTest, RowPitchPadsToWords) {
  BlockLayout l = gridLayout(10, 3, ElementType::F16, 3, 1);
  EXPECT_EQ(l.rowPitchBytes(0), 8u); // 6 bytes -> 8.
  EXPECT_EQ(l.blockBytes(0, 0), 4u * 8u);
  EXPECT_EQ(l.blockBytes(2, 0), 3u * 8u);
  EXPECT_EQ(l.maxBlockBytes(), 32u);

  BlockLayout f8 = gridLayout(4, 10, ElementType::F8E4M3FN, 1, 2);
  EXPECT_EQ(f8.rowPitchBytes(0), 8u); // 5 bytes -> 8.
  BlockLayout f32 = gridLayout(4, 10, ElementType::F32, 1, 3);
  EXPECT_EQ(f32.rowPitchBytes(0), 16u);
  EXPECT_EQ(f32.rowPitchBytes(2), 12u);
  EXPECT_EQ(f32.maxBlockBytes(), 64u);
}

TEST(BlockLayoutTest, TileFormulaAndList) {
  BlockLayout l = gridLayout(8, 8, ElementType::F32, 2, 3, 2, 10);
  EXPECT_EQ(l.tileOf(0, 0, 0), 10);
  EXPECT_EQ(l.tileOf(0, 0, 1), 11);
  EXPECT_EQ(l.tileOf(0, 2, 1), 15);
  EXPECT_EQ(l.tileOf(1, 0, 0), 16);
  std::vector<uint32_t> list = l.tileList();
  ASSERT_EQ(list.size(), 12u);
  for (uint32_t k = 0; k < 12; ++k)
    EXPECT_EQ(list[k], 10 + k);

  BlockLayout strided = l;
  strided.tileBase = 100;
  strided.tileRowStride = -50;
  strided.tileColStride = 7;
  strided.replicaStride = 1000;
  EXPECT_EQ(strided.tileOf(1, 2, 1), 100 - 50 + 14 + 1000);
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

TEST(BlockLayoutTest, ValidateAcceptsGoodLayouts) {
  EXPECT_FALSE(
      gridLayout(729, 1152, ElementType::F16, 16, 1, 92).validate(1472));
  EXPECT_FALSE(gridLayout(729, 1152, ElementType::F16, 729, 1).validate(1472));
  EXPECT_FALSE(gridLayout(1, 1, ElementType::F32, 1, 1, 1, 5).validate(6));
}

TEST(BlockLayoutTest, ValidateRejectsBadGrids) {
  BlockLayout l = gridLayout(4, 4, ElementType::F32, 2, 2);
  BlockLayout tooManyRows = l;
  tooManyRows.gridRows = 5;
  auto e1 = tooManyRows.validate(100);
  ASSERT_TRUE(e1);
  EXPECT_NE(e1->find("gridRows 5"), std::string::npos) << *e1;

  BlockLayout noCols = l;
  noCols.gridCols = 0;
  auto e2 = noCols.validate(100);
  ASSERT_TRUE(e2);
  EXPECT_NE(e2->find("gridCols 0"), std::string::npos) << *e2;

  BlockLayout noReplicas = l;
  noReplicas.replicas = 0;
  auto e3 = noReplicas.validate(100);
  ASSERT_TRUE(e3);
  EXPECT_NE(e3->find("replicas"), std::string::npos) << *e3;

  // More tiles than rows is not a layout: callers clamp the grid.
  EXPECT_TRUE(gridLayout(729, 1152, ElementType::F16, 1472, 1).validate(1472));
}

TEST(BlockLayoutTest, ValidateRejectsTileOutOfRange) {
  BlockLayout l = gridLayout(4, 4, ElementType::F32, 2, 2, 1, 1);
  EXPECT_FALSE(l.validate(5));
  EXPECT_EQ(l.validate(4).value_or(""),
            "block (1, 1) replica 0 is on tile 4, outside [0, 4)");
  BlockLayout negative = l;
  negative.tileRowStride = -2;
  EXPECT_EQ(negative.validate(8).value_or(""),
            "block (1, 0) replica 0 is on tile -1, outside [0, 8)");
}

TEST(BlockLayoutTest, ValidateRejectsSharedTiles) {
  BlockLayout l = gridLayout(8, 8, ElementType::F32, 2, 4, 3);
  l.tileBase = 16;
  l.tileRowStride = -11;
  l.tileColStride = -3;
  l.replicaStride = 1;
  EXPECT_EQ(l.validate(64).value_or(""),
            "block (1, 0) replica 2 and block (0, 3) replica 0 share tile 7");

  BlockLayout sameReplica = gridLayout(8, 8, ElementType::F32, 2, 2, 2);
  sameReplica.replicaStride = 0;
  EXPECT_EQ(sameReplica.validate(64).value_or(""),
            "block (0, 0) replica 1 and block (0, 0) replica 0 share tile 0");
}

//===----------------------------------------------------------------------===//
// Rearrangement
//===----------------------------------------------------------------------===//

/// Per-byte provenance: the byte a cell holds, named by the global element
/// index ((t * rows + x) * cols + y) * elementBytes + byte, plus one; 0 is
/// padding.
using Tags = std::vector<uint32_t>;

/// Calls f(t, x, y, offset) for every element of block (b, i, j), with t, x
/// and y global and offset the element's byte offset in the block.
template <typename F>
void forEachElement(const BlockLayout &l, uint32_t b, uint32_t i, uint32_t j,
                    F f) {
  uint64_t elem = elementBytes(l.type), pitch = l.rowPitchBytes(j);
  for (int64_t t = 0; t < l.blockBatches(b); ++t)
    for (int64_t x = 0; x < l.blockRows(i); ++x)
      for (int64_t y = 0; y < l.blockCols(j); ++y)
        f(l.batchBegin(b) + t, l.blockRowBegin(i) + x, l.blockColBegin(j) + y,
          (uint64_t(t) * l.blockRows(i) + x) * pitch + y * elem);
}

/// Per-tile buffers for a simulated move: `source` holds every byte of
/// each block of `from` (first replica) tagged by `tag(t, x, y, byte)`, 0 in
/// padding; `dest` and `writes` hold every replica's block of `to`, untagged
/// (UINT32_MAX) and unwritten.
template <typename Tag>
void tagBlocks(const BlockLayout &from, const BlockLayout &to, uint32_t tiles,
               Tag tag, std::vector<Tags> &source, std::vector<Tags> &dest,
               std::vector<std::vector<uint8_t>> &writes) {
  const uint64_t elem = elementBytes(from.type);
  source.assign(tiles, {});
  for (uint32_t sb = 0; sb < from.gridBatches; ++sb)
    for (uint32_t i = 0; i < from.gridRows; ++i)
      for (uint32_t j = 0; j < from.gridCols; ++j) {
        Tags &buf = source[from.tileOf(sb, i, j, 0)];
        buf.assign(from.blockBytes(sb, i, j), 0);
        forEachElement(from, sb, i, j,
                       [&](int64_t t, int64_t x, int64_t y, uint64_t offset) {
                         for (uint64_t b = 0; b < elem; ++b)
                           buf[offset + b] = tag(t, x, y, b);
                       });
      }
  dest.assign(tiles, {});
  writes.assign(tiles, {});
  for (uint32_t db = 0; db < to.gridBatches; ++db)
    for (uint32_t i = 0; i < to.gridRows; ++i)
      for (uint32_t j = 0; j < to.gridCols; ++j)
        for (uint32_t r = 0; r < to.replicas; ++r) {
          int64_t tile = to.tileOf(db, i, j, r);
          dest[tile].assign(to.blockBytes(db, i, j), UINT32_MAX);
          writes[tile].assign(to.blockBytes(db, i, j), 0);
        }
}

/// Copies each transfer's words from its source tile to every destination
/// tile, checking that it moves words at word offsets inside both blocks,
/// goes to every replica, and writes no byte twice.
void applyTransfers(const BlockLayout &to, const Rearrangement &plan,
                    const std::vector<Tags> &source, std::vector<Tags> &dest,
                    std::vector<std::vector<uint8_t>> &writes) {
  for (size_t t = 0; t < plan.phase.size(); ++t) {
    ASSERT_GT(plan.phase.words[t], 0u) << "transfer " << t;
    const uint64_t word = to.wordBytes;
    uint64_t bytes = uint64_t(plan.phase.words[t]) * word;
    const Tags &src = source[plan.phase.source[t]];
    ASSERT_EQ(plan.sourceOffset[t] % word, 0u) << "transfer " << t;
    ASSERT_EQ(plan.destOffset[t] % word, 0u) << "transfer " << t;
    ASSERT_LE(plan.sourceOffset[t] + bytes, src.size()) << "transfer " << t;
    ASSERT_EQ(plan.phase.destinationsEnd(t) - plan.phase.destinationsBegin(t),
              ptrdiff_t(to.replicas))
        << "transfer " << t;
    for (const uint32_t *d = plan.phase.destinationsBegin(t);
         d != plan.phase.destinationsEnd(t); ++d) {
      Tags &dst = dest[*d];
      ASSERT_LE(plan.destOffset[t] + bytes, dst.size()) << "transfer " << t;
      std::memcpy(dst.data() + plan.destOffset[t],
                  src.data() + plan.sourceOffset[t], bytes * sizeof(uint32_t));
      for (uint64_t b = 0; b < bytes; ++b)
        ASSERT_EQ(++writes[*d][plan.destOffset[t] + b], 1)
            << "byte " << plan.destOffset[t] + b << " of tile " << *d
            << " written twice, by transfer " << t;
    }
  }
}

/// Checks a simulated move: every byte of every replica of every block of
/// `to` was written exactly once, and element (t, x, y)'s byte b holds
/// `expected(t, x, y, b)`.
template <typename Expected>
void checkDestinations(const BlockLayout &to, const std::vector<Tags> &dest,
                       const std::vector<std::vector<uint8_t>> &writes,
                       uint64_t elem, Expected expected) {
  for (uint32_t db = 0; db < to.gridBatches; ++db)
    for (uint32_t i = 0; i < to.gridRows; ++i)
      for (uint32_t j = 0; j < to.gridCols; ++j)
        for (uint32_t rep = 0; rep < to.replicas; ++rep) {
          int64_t tile = to.tileOf(db, i, j, rep);
          const Tags &buf = dest[tile];
          for (uint64_t k = 0; k < buf.size(); ++k)
            ASSERT_EQ(writes[tile][k], 1)
                << "byte " << k << " of block (" << db << ", " << i << ", " << j
                << ") replica " << rep << " on tile " << tile;
          bool good = true;
          forEachElement(to, db, i, j,
                         [&](int64_t t, int64_t x, int64_t y, uint64_t offset) {
                           for (uint64_t b = 0; b < elem && good; ++b) {
                             EXPECT_EQ(buf[offset + b], expected(t, x, y, b))
                                 << "element (" << t << ", " << x << ", " << y
                                 << ") of block (" << db << ", " << i << ", "
                                 << j << ") replica " << rep;
                             good = buf[offset + b] == expected(t, x, y, b);
                           }
                         });
          ASSERT_TRUE(good);
        }
}

/// Applies `plan` to per-tile source buffers of `from` and checks that every
/// byte of every replica of every block of `to` is written exactly once and
/// holds the right element byte.
void simulate(const BlockLayout &from, const BlockLayout &to, uint32_t tiles,
              const Rearrangement &plan) {
  ASSERT_FALSE(plan.phase.validate()) << *plan.phase.validate();
  ASSERT_EQ(plan.phase.tiles, tiles);
  ASSERT_EQ(plan.sourceOffset.size(), plan.phase.size());
  ASSERT_EQ(plan.destOffset.size(), plan.phase.size());
  const uint64_t elem = elementBytes(from.type);
  auto tag = [&](int64_t t, int64_t x, int64_t y, uint64_t b) {
    return uint32_t(((t * from.rows + x) * from.cols + y) * elem + b + 1);
  };

  std::vector<Tags> source, dest;
  std::vector<std::vector<uint8_t>> writes;
  tagBlocks(from, to, tiles, tag, source, dest, writes);

  applyTransfers(to, plan, source, dest, writes);

  checkDestinations(to, dest, writes, elem, tag);
}

TEST(RearrangementTest, BroadcastsToReplicas) {
  // Rows of 8 f32 on tiles 0..3 into two row blocks, each on three tiles.
  BlockLayout from = gridLayout(4, 8, ElementType::F32, 4, 1);
  BlockLayout to = gridLayout(4, 8, ElementType::F32, 2, 1, 3, 4);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(from, to, 10, plan));
  ASSERT_EQ(plan.phase.size(), 4u);
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_EQ(plan.phase.source[t], t);
    EXPECT_EQ(plan.phase.words[t], 8u);
    EXPECT_EQ(plan.sourceOffset[t], 0u);
    EXPECT_EQ(plan.destOffset[t], (t % 2) * 32u);
    std::vector<uint32_t> dests(plan.phase.destinationsBegin(t),
                                plan.phase.destinationsEnd(t));
    uint32_t first = t < 2 ? 4 : 7;
    EXPECT_EQ(dests, (std::vector<uint32_t>{first, first + 1, first + 2}));
  }
  simulate(from, to, 10, plan);
  ScheduleReport report;
  scheduleBest(plan.phase, &report);
  EXPECT_EQ(report.bound, 16u);
  EXPECT_EQ(report.horizon, 16u);
}

TEST(RearrangementTest, ContiguousRowsMergeIntoOneTransfer) {
  // Same columns on both sides: 5 rows move as one transfer, padding too.
  BlockLayout from = gridLayout(10, 3, ElementType::F16, 2, 1);
  BlockLayout to = gridLayout(10, 3, ElementType::F16, 1, 1, 1, 2);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(from, to, 3, plan));
  ASSERT_EQ(plan.phase.size(), 2u);
  EXPECT_EQ(plan.phase.words[0], 5u * 2u);
  EXPECT_EQ(plan.destOffset[1], 5u * 8u);
  simulate(from, to, 3, plan);
}

TEST(RearrangementTest, ColumnSplitsMoveRowSegments) {
  // [1, 1] -> [1, 3] over 6 f16 columns: 4-byte segments per row.
  BlockLayout from = gridLayout(3, 6, ElementType::F16, 1, 1);
  BlockLayout to = gridLayout(3, 6, ElementType::F16, 1, 3, 1, 1);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(from, to, 4, plan));
  ASSERT_EQ(plan.phase.size(), 9u);
  // Ordered by destination block, then row.
  EXPECT_EQ(plan.sourceOffset[0], 0u);
  EXPECT_EQ(plan.sourceOffset[1], 12u);
  EXPECT_EQ(plan.sourceOffset[3], 4u);
  EXPECT_EQ(plan.destOffset[4], 4u);
  EXPECT_EQ(*plan.phase.destinationsBegin(8), 3u);
  simulate(from, to, 4, plan);
}

TEST(RearrangementTest, RejectsUnalignedRowSegments) {
  // f16 with 3 columns split into 3 column blocks: 2-byte segments.
  BlockLayout from = gridLayout(4, 3, ElementType::F16, 1, 1);
  BlockLayout to = gridLayout(4, 3, ElementType::F16, 1, 3, 1, 1);
  Rearrangement plan;
  auto error = planRearrangement(from, to, 4, plan);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("block (0, 0)"), std::string::npos) << *error;
  EXPECT_NE(error->find("32-bit words"), std::string::npos) << *error;
  EXPECT_NE(error->find("2 bytes"), std::string::npos) << *error;
  EXPECT_EQ(plan.phase.size(), 0u);

  // The same column blocks on both sides are fine: rows move whole, padded.
  BlockLayout to2 = gridLayout(4, 3, ElementType::F16, 2, 3, 1, 4);
  BlockLayout from2 = gridLayout(4, 3, ElementType::F16, 1, 3);
  ASSERT_FALSE(planRearrangement(from2, to2, 10, plan));
  simulate(from2, to2, 10, plan);

  // 3 f16 columns per block at a 12-byte row: starts at byte 6.
  BlockLayout wide = gridLayout(2, 6, ElementType::F16, 1, 2, 1, 1);
  BlockLayout whole = gridLayout(2, 6, ElementType::F16, 1, 1);
  EXPECT_TRUE(planRearrangement(whole, wide, 3, plan));
  EXPECT_TRUE(planRearrangement(wide, whole, 3, plan));
}

TEST(RearrangementTest, WordsAreTheTargets) {
  // A target whose exchange moves 8-byte words: rows pad to 8 bytes, and
  // rearrangements move 8-byte words at 8-byte offsets.
  auto eightByte = [](BlockLayout layout) {
    layout.wordBytes = 8;
    return layout;
  };
  BlockLayout l = eightByte(gridLayout(10, 3, ElementType::F16, 3, 1));
  EXPECT_EQ(l.rowPitchBytes(0), 8u); // 6 bytes -> 8.
  BlockLayout f32 = eightByte(gridLayout(4, 10, ElementType::F32, 1, 3));
  EXPECT_EQ(f32.rowPitchBytes(0), 16u);
  EXPECT_EQ(f32.rowPitchBytes(2), 16u); // 12 bytes; 12 with 4-byte words.
  EXPECT_EQ(f32.maxBlockBytes(), 64u);

  // 8 f16 columns into blocks of 4: 8-byte segments, one word each.
  BlockLayout from = eightByte(gridLayout(4, 8, ElementType::F16, 1, 1));
  BlockLayout to = eightByte(gridLayout(4, 8, ElementType::F16, 1, 2, 1, 1));
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(from, to, 4, plan));
  for (uint32_t words : plan.phase.words)
    EXPECT_EQ(words, 1u);
  simulate(from, to, 4, plan);

  // Into blocks of 2 columns: 4-byte segments, whole 32-bit words but not
  // 64-bit ones.
  BlockLayout narrow = eightByte(gridLayout(4, 8, ElementType::F16, 1, 4, 1, 1));
  auto error = planRearrangement(from, narrow, 5, plan);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("64-bit words"), std::string::npos) << *error;
  EXPECT_FALSE(planRearrangement(gridLayout(4, 8, ElementType::F16, 1, 1),
                                 gridLayout(4, 8, ElementType::F16, 1, 4, 1, 1), 5,
                                 plan));

  // Layouts of two words do not mix, and a word is a power of two.
  error = planRearrangement(from, gridLayout(4, 8, ElementType::F16, 1, 2, 1, 1), 4, plan);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("exchange words differ: 8 vs 4 bytes"), std::string::npos) << *error;
  BlockLayout odd = gridLayout(4, 8, ElementType::F16, 1, 1);
  odd.wordBytes = 3;
  ASSERT_TRUE(odd.validate(4));
  EXPECT_NE(odd.validate(4)->find("exchange word of 3 bytes"), std::string::npos);
}

TEST(RearrangementTest, RowEndSegmentsCarryPadding) {
  // 3 f16 columns (6 bytes, pitch 8) into blocks of 2 and 1 columns: the
  // 1-column segment ends both rows, so it moves with its padding as one
  // word.
  BlockLayout whole = gridLayout(4, 3, ElementType::F16, 1, 1);
  BlockLayout split = gridLayout(4, 3, ElementType::F16, 2, 2, 1, 1);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(whole, split, 5, plan));
  ASSERT_EQ(plan.phase.size(), 8u);
  for (size_t t = 0; t < plan.phase.size(); ++t)
    EXPECT_EQ(plan.phase.words[t], 1u);
  EXPECT_EQ(plan.sourceOffset[2], 4u); // Block (0, 1), row 0: bytes [4, 8).
  simulate(whole, split, 5, plan);
  ASSERT_FALSE(planRearrangement(split, whole, 5, plan));
  simulate(split, whole, 5, plan);

  // f8 with 11 columns over 3 blocks of 4, 4 and 3 bytes.
  BlockLayout f8Whole = gridLayout(3, 11, ElementType::F8E4M3FN, 1, 1);
  BlockLayout f8Split = gridLayout(3, 11, ElementType::F8E4M3FN, 1, 3, 1, 1);
  ASSERT_FALSE(planRearrangement(f8Whole, f8Split, 4, plan));
  simulate(f8Whole, f8Split, 4, plan);
}

TEST(RearrangementTest, RejectsMismatchedLayouts) {
  Rearrangement plan;
  BlockLayout a = gridLayout(4, 4, ElementType::F32, 2, 1);
  BlockLayout b = gridLayout(4, 8, ElementType::F32, 2, 1, 1, 2);
  EXPECT_NE(planRearrangement(a, b, 4, plan)->find("shapes differ"),
            std::string::npos);
  BlockLayout c = gridLayout(4, 4, ElementType::F16, 2, 1, 1, 2);
  EXPECT_NE(planRearrangement(a, c, 4, plan)->find("element types differ"),
            std::string::npos);
  BlockLayout d = gridLayout(4, 4, ElementType::F32, 2, 1, 1, 3);
  EXPECT_EQ(planRearrangement(a, d, 4, plan)->rfind("destination layout: ", 0),
            0u);
  EXPECT_EQ(planRearrangement(d, a, 4, plan)->rfind("source layout: ", 0), 0u);
}

TEST(RearrangementTest, SameTileMovesAreKept) {
  // A tile may be a destination of its own transfer: the layouts coincide.
  BlockLayout a = gridLayout(6, 4, ElementType::F32, 3, 1);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(a, a, 3, plan));
  ASSERT_EQ(plan.phase.size(), 3u);
  for (uint32_t t = 0; t < 3; ++t)
    EXPECT_EQ(*plan.phase.destinationsBegin(t), plan.phase.source[t]);
  simulate(a, a, 3, plan);
}

/// A random layout of [rows, cols] on `tiles` tiles, with one of several
/// tile orders.
BlockLayout randomLayout(std::mt19937 &rng, int64_t rows, int64_t cols,
                         ElementType type, uint32_t tiles) {
  while (true) {
    BlockLayout l;
    l.rows = rows;
    l.cols = cols;
    l.type = type;
    l.gridRows = 1 + rng() % std::min<int64_t>(rows, 6);
    l.gridCols = 1 + rng() % std::min<int64_t>(cols, 6);
    l.replicas = 1 + rng() % 3;
    uint32_t blocks = l.gridRows * l.gridCols * l.replicas;
    if (blocks > tiles)
      continue;
    l.tileBase = rng() % (tiles - blocks + 1);
    switch (rng() % 3) {
    case 0: // Replicas innermost.
      l.replicaStride = 1;
      l.tileColStride = l.replicas;
      l.tileRowStride = int64_t(l.gridCols) * l.replicas;
      break;
    case 1: // Replicas outermost, column-major blocks.
      l.tileRowStride = 1;
      l.tileColStride = l.gridRows;
      l.replicaStride = int64_t(l.gridRows) * l.gridCols;
      break;
    default: // Reversed rows.
      l.tileBase += (l.gridRows - 1) * l.gridCols;
      l.tileColStride = 1;
      l.tileRowStride = -int64_t(l.gridCols);
      l.replicaStride = int64_t(l.gridRows) * l.gridCols;
      break;
    }
    EXPECT_FALSE(l.validate(tiles));
    return l;
  }
}

/// True when every block of `l` starts on a 4-byte boundary of the row.
/// Then every row segment starts aligned and either ends at a block start
/// (aligned) or at the end of both rows (rounded up into the padding).
bool columnsAligned(const BlockLayout &l) {
  uint64_t elem = elementBytes(l.type);
  for (uint32_t j = 0; j < l.gridCols; ++j)
    if ((l.blockColBegin(j) * elem) % 4 != 0)
      return false;
  return true;
}

/// Plans the move of a random pair of layouts and checks it: a refusal only
/// for unaligned columns, else every destination byte written once with the
/// right element, every word received landing in a destination block, and
/// a legal schedule. Returns whether the pair planned.
bool checkRandomRearrangement(const BlockLayout &from, const BlockLayout &to,
                              uint32_t tiles) {
  Rearrangement plan;
  auto error = planRearrangement(from, to, tiles, plan);
  if (error) {
    EXPECT_NE(error->find("32-bit words"), std::string::npos) << *error;
    // Word-aligned column boundaries on both sides always plan.
    EXPECT_FALSE(columnsAligned(from) && columnsAligned(to)) << *error;
    return false;
  }
  simulate(from, to, tiles, plan);
  if (::testing::Test::HasFatalFailure())
    return true;
  uint64_t received = 0, expected = 0;
  for (uint64_t words : plan.phase.wordsReceivedPerTile())
    received += words;
  for (uint32_t b = 0; b < to.gridBatches; ++b)
    for (uint32_t i = 0; i < to.gridRows; ++i)
      for (uint32_t j = 0; j < to.gridCols; ++j)
        expected += to.blockBytes(b, i, j) / 4 * to.replicas;
  EXPECT_EQ(received, expected);
  ExchangeSchedule schedule = scheduleGreedy(plan.phase);
  EXPECT_FALSE(checkSchedule(plan.phase, schedule));
  return true;
}

TEST(RearrangementTest, RandomLayoutsWriteEveryElementOnce) {
  std::mt19937 rng(2024);
  const ElementType types[] = {ElementType::F32, ElementType::F16,
                               ElementType::F8E4M3FN, ElementType::F8E5M2};
  int planned = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    ElementType type = types[rng() % 4];
    int64_t rows = 1 + rng() % 30, cols = 1 + rng() % 40;
    // Bias towards word-multiple widths so narrow types plan often.
    if (rng() % 2)
      cols = std::max<int64_t>(4, cols & ~int64_t(7));
    uint32_t tiles = 64;
    BlockLayout from = randomLayout(rng, rows, cols, type, tiles);
    BlockLayout to = randomLayout(rng, rows, cols, type, tiles);
    SCOPED_TRACE("iteration " + std::to_string(iter));
    planned += checkRandomRearrangement(from, to, tiles);
    if (HasFatalFailure())
      return;
  }
  EXPECT_GT(planned, 400);
}

TEST(RearrangementTest, SiglipRowsToReplicatedBlocksScales) {
  // 729 x 1152 f16: one row per tile on 729 tiles, to 16 row blocks each
  // replicated on 92 tiles (all 1472).
  const uint32_t tiles = 1472;
  BlockLayout from = gridLayout(729, 1152, ElementType::F16, 729, 1);
  BlockLayout to = gridLayout(729, 1152, ElementType::F16, 16, 1, 92);
  Rearrangement plan;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_FALSE(planRearrangement(from, to, tiles, plan));
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_LT(std::chrono::duration<double>(t1 - t0).count(), 1.0);

  // One full-row transfer per source row, broadcast to 92 replicas.
  ASSERT_EQ(plan.phase.size(), 729u);
  uint64_t words = 0;
  for (size_t t = 0; t < plan.phase.size(); ++t) {
    EXPECT_EQ(plan.phase.words[t], 1152u * 2u / 4u);
    EXPECT_EQ(plan.phase.destinationsEnd(t) - plan.phase.destinationsBegin(t),
              92);
    words += plan.phase.words[t];
  }
  EXPECT_EQ(words, 729u * 576u);
  ASSERT_FALSE(plan.phase.validate());

  ScheduleReport report;
  ExchangeSchedule schedule = scheduleBest(plan.phase, &report);
  EXPECT_FALSE(checkSchedule(plan.phase, schedule));
  // Each destination tile receives its whole 46-row block.
  EXPECT_EQ(report.bound, 46u * 576u);
  EXPECT_EQ(report.horizon, report.bound);

  // The same move at a small scale, simulated byte by byte.
  BlockLayout smallFrom = gridLayout(45, 24, ElementType::F16, 45, 1);
  BlockLayout smallTo = gridLayout(45, 24, ElementType::F16, 4, 1, 23);
  ASSERT_FALSE(planRearrangement(smallFrom, smallTo, 92, plan));
  simulate(smallFrom, smallTo, 92, plan);
}

} // namespace

/// A layout with explicit split boundaries and a shuffled explicit tile map.
BlockLayout randomExplicitLayout(std::mt19937 &rng, int64_t rows, int64_t cols,
                                 ElementType type, uint32_t tiles) {
  auto boundaries = [&](int64_t extent, uint32_t parts) {
    std::vector<int64_t> all(extent - 1);
    std::iota(all.begin(), all.end(), 1);
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int64_t> splits(all.begin(), all.begin() + (parts - 1));
    splits.push_back(0);
    splits.push_back(extent);
    std::sort(splits.begin(), splits.end());
    return splits;
  };
  BlockLayout l;
  l.rows = rows;
  l.cols = cols;
  l.type = type;
  l.gridRows = 1 + rng() % std::min<int64_t>(rows, 5);
  l.gridCols = 1 + rng() % std::min<int64_t>(cols, 5);
  l.replicas = 1 + rng() % 2;
  l.rowSplits = boundaries(rows, l.gridRows);
  l.colSplits = boundaries(cols, l.gridCols);
  std::vector<uint32_t> order(tiles);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  l.tileMap.assign(order.begin(),
                   order.begin() + l.gridRows * l.gridCols * l.replicas);
  EXPECT_FALSE(l.validate(tiles));
  return l;
}

TEST(RearrangementTest, ExplicitSplitsAndTileMapsWriteEveryElementOnce) {
  std::mt19937 rng(77);
  int planned = 0;
  for (int iter = 0; iter < 500; ++iter) {
    // f32 keeps every column boundary word-aligned, so every pair plans.
    int64_t rows = 1 + rng() % 20, cols = 1 + rng() % 20;
    uint32_t tiles = 64;
    BlockLayout from = randomExplicitLayout(rng, rows, cols, ElementType::F32, tiles);
    BlockLayout to = rng() % 2
                         ? randomExplicitLayout(rng, rows, cols, ElementType::F32, tiles)
                         : randomLayout(rng, rows, cols, ElementType::F32, tiles);
    Rearrangement plan;
    auto error = planRearrangement(from, to, tiles, plan);
    SCOPED_TRACE("iteration " + std::to_string(iter));
    ASSERT_FALSE(error) << *error;
    ++planned;
    simulate(from, to, tiles, plan);
    if (HasFatalFailure())
      return;
  }
  EXPECT_EQ(planned, 500);
}

TEST(BlockLayoutTest, ExplicitSplitsAndTileMap) {
  BlockLayout l;
  l.rows = 10;
  l.cols = 8;
  l.type = ElementType::F16;
  l.gridRows = 3;
  l.gridCols = 2;
  l.rowSplits = {0, 2, 7, 10};
  l.colSplits = {0, 6, 8};
  l.tileMap = {5, 4, 3, 2, 1, 0};
  ASSERT_FALSE(l.validate(6));
  EXPECT_EQ(l.blockRowBegin(1), 2);
  EXPECT_EQ(l.blockRows(1), 5);
  EXPECT_EQ(l.blockCols(0), 6);
  EXPECT_EQ(l.blockRowOf(6), 1u);
  EXPECT_EQ(l.blockRowOf(7), 2u);
  EXPECT_EQ(l.blockColOf(5), 0u);
  EXPECT_EQ(l.tileOf(1, 0, 0), 3);
  // Largest rows (5) times widest pitch (6 f16 = 12 bytes).
  EXPECT_EQ(l.maxBlockBytes(), 60u);

  BlockLayout bad = l;
  bad.rowSplits = {0, 2, 2, 10};
  EXPECT_EQ(*bad.validate(6), "rowSplits boundary 2 (2) does not increase");
  bad = l;
  bad.colSplits = {0, 8};
  EXPECT_EQ(*bad.validate(6), "colSplits has 2 boundaries, the grid needs 3");
  bad = l;
  bad.rowSplits = {1, 2, 7, 10};
  EXPECT_EQ(*bad.validate(6), "rowSplits must run from 0 to 10");
  bad = l;
  bad.tileMap = {0, 1};
  EXPECT_EQ(*bad.validate(6), "tileMap has 2 tiles, the layout 6 blocks");
  bad = l;
  bad.tileMap = {0, 1, 2, 3, 4, 4};
  EXPECT_TRUE(bad.validate(6)->find("share tile 4") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Leading batch dimensions
//===----------------------------------------------------------------------===//

namespace {

/// Blocks in (b, i, j) order on consecutive tiles from `base`, replicas of a
/// block on consecutive tiles.
BlockLayout batchLayout(int64_t batches, int64_t rows, int64_t cols,
                        ElementType type, uint32_t gridBatches,
                        uint32_t gridRows, uint32_t gridCols,
                        uint32_t replicas = 1, uint32_t base = 0) {
  BlockLayout l =
      gridLayout(rows, cols, type, gridRows, gridCols, replicas, base);
  l.batches = batches;
  l.gridBatches = gridBatches;
  l.tileBatchStride = int64_t(gridRows) * gridCols * replicas;
  return l;
}

/// Balanced or explicit boundaries splitting `extent` into `parts`.
std::vector<int64_t> randomSplits(std::mt19937 &rng, int64_t extent,
                                  uint32_t parts) {
  std::vector<int64_t> all(extent - 1);
  std::iota(all.begin(), all.end(), 1);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<int64_t> splits(all.begin(), all.begin() + (parts - 1));
  splits.push_back(0);
  splits.push_back(extent);
  std::sort(splits.begin(), splits.end());
  return splits;
}

/// A random valid layout of [batches, rows, cols]: batch-local, distributed
/// or in between; balanced or explicit splits; a shuffled tile map or a
/// formula with a random nesting of (b, i, j, replica) and one reversed
/// dimension.
BlockLayout randomNdLayout(std::mt19937 &rng, int64_t batches, int64_t rows,
                           int64_t cols, ElementType type, uint32_t tiles) {
  while (true) {
    BlockLayout l;
    l.batches = batches;
    l.rows = rows;
    l.cols = cols;
    l.type = type;
    switch (rng() % 3) {
    case 0:
      l.gridBatches = 1;
      break;
    case 1:
      l.gridBatches = static_cast<uint32_t>(batches);
      break;
    default:
      l.gridBatches = 1 + rng() % batches;
      break;
    }
    l.gridRows = 1 + rng() % std::min<int64_t>(rows, 5);
    l.gridCols = 1 + rng() % std::min<int64_t>(cols, 5);
    l.replicas = 1 + rng() % 3;
    uint32_t blocks = l.gridBatches * l.gridRows * l.gridCols * l.replicas;
    if (blocks > tiles)
      continue;
    if (rng() % 3 == 0)
      l.batchSplits = randomSplits(rng, batches, l.gridBatches);
    if (rng() % 3 == 0)
      l.rowSplits = randomSplits(rng, rows, l.gridRows);
    if (rng() % 3 == 0)
      l.colSplits = randomSplits(rng, cols, l.gridCols);
    if (rng() % 3 == 0) {
      std::vector<uint32_t> order(tiles);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      l.tileMap.assign(order.begin(), order.begin() + blocks);
    } else {
      uint32_t extent[4] = {l.gridBatches, l.gridRows, l.gridCols, l.replicas};
      int64_t stride[4];
      uint32_t nesting[4] = {0, 1, 2, 3};
      std::shuffle(nesting, nesting + 4, rng);
      int64_t step = 1;
      for (uint32_t d : nesting) {
        stride[d] = step;
        step *= extent[d];
      }
      int64_t base = rng() % (tiles - blocks + 1);
      uint32_t reversed = rng() % 4;
      base += int64_t(extent[reversed] - 1) * stride[reversed];
      stride[reversed] = -stride[reversed];
      l.tileBase = static_cast<uint32_t>(base);
      l.tileBatchStride = stride[0];
      l.tileRowStride = stride[1];
      l.tileColStride = stride[2];
      l.replicaStride = stride[3];
    }
    EXPECT_FALSE(l.validate(tiles)) << *l.validate(tiles);
    return l;
  }
}

/// Every (b, i, j, replica) of `l` with its tile, in tileList order.
std::vector<int64_t> allTiles(const BlockLayout &l) {
  std::vector<int64_t> tiles;
  for (uint32_t b = 0; b < l.gridBatches; ++b)
    for (uint32_t i = 0; i < l.gridRows; ++i)
      for (uint32_t j = 0; j < l.gridCols; ++j)
        for (uint32_t r = 0; r < l.replicas; ++r)
          tiles.push_back(l.tileOf(b, i, j, r));
  return tiles;
}

TEST(BatchLayoutTest, Geometry) {
  // 16 batches in 3 parts of 6, 5, 5; 10 rows of 3 f16 (pitch 8).
  BlockLayout l = batchLayout(16, 10, 3, ElementType::F16, 3, 2, 1, 2, 4);
  ASSERT_FALSE(l.validate(16));
  EXPECT_EQ(l.batchBegin(1), 6);
  EXPECT_EQ(l.blockBatches(0), 6);
  EXPECT_EQ(l.blockBatches(2), 5);
  EXPECT_EQ(l.blockBatchOf(5), 0u);
  EXPECT_EQ(l.blockBatchOf(6), 1u);
  EXPECT_EQ(l.blockBatchOf(15), 2u);
  EXPECT_EQ(l.blockBytes(0, 0, 0), 6u * 5u * 8u);
  EXPECT_EQ(l.blockBytes(2, 1, 0), 5u * 5u * 8u);
  EXPECT_EQ(l.maxBlockBytes(), 6u * 5u * 8u);
  // (b, i, j, r) on 4 + 4b + 2i + r.
  EXPECT_EQ(l.tileOf(2, 1, 0, 1), 4 + 8 + 2 + 1);
  std::vector<uint32_t> list = l.tileList();
  ASSERT_EQ(list.size(), 12u);
  for (uint32_t k = 0; k < 12; ++k)
    EXPECT_EQ(list[k], 4 + k);
  // The 2-D accessors are block b = 0.
  EXPECT_EQ(l.blockBytes(1, 0), l.blockBytes(0, 1, 0));
  EXPECT_EQ(l.tileOf(1, 0, 1), l.tileOf(0, 1, 0, 1));

  // Explicit batch boundaries and a tile map indexed (b, i, j, r).
  BlockLayout e = l;
  e.batchSplits = {0, 1, 12, 16};
  e.replicas = 1;
  e.tileMap = {9, 8, 7, 6, 5, 4};
  ASSERT_FALSE(e.validate(10));
  EXPECT_EQ(e.blockBatches(1), 11);
  EXPECT_EQ(e.blockBatchOf(11), 1u);
  EXPECT_EQ(e.blockBatchOf(12), 2u);
  EXPECT_EQ(e.tileOf(1, 1, 0, 0), 6);
  EXPECT_EQ(e.tileOf(2, 0, 0, 0), 5);
  EXPECT_EQ(e.maxBlockBytes(), 11u * 5u * 8u);
  EXPECT_EQ(e.tileList(), (std::vector<uint32_t>{9, 8, 7, 6, 5, 4}));

  // Batches only scale a 2-D layout of one batch block.
  BlockLayout local = gridLayout(10, 3, ElementType::F16, 3, 1);
  local.batches = 4;
  EXPECT_EQ(local.blockBytes(0, 0), 4u * 4u * 8u);
  EXPECT_EQ(local.maxBlockBytes(), 4u * 4u * 8u);
  EXPECT_EQ(local.tileList(), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(BatchLayoutTest, ShardsPartitionTheTensor) {
  std::mt19937 rng(31);
  const ElementType types[] = {ElementType::F32, ElementType::F16,
                               ElementType::F8E4M3FN};
  for (int iter = 0; iter < 400; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    int64_t batches = 1 + rng() % 8, rows = 1 + rng() % 12,
            cols = 1 + rng() % 12;
    const uint32_t tiles = 128;
    BlockLayout l =
        randomNdLayout(rng, batches, rows, cols, types[rng() % 3], tiles);

    std::vector<int> owners(batches * rows * cols, 0);
    uint64_t largest = 0;
    for (uint32_t b = 0; b < l.gridBatches; ++b)
      for (uint32_t i = 0; i < l.gridRows; ++i)
        for (uint32_t j = 0; j < l.gridCols; ++j) {
          largest = std::max(largest, l.blockBytes(b, i, j));
          EXPECT_EQ(l.blockBytes(b, i, j), uint64_t(l.blockBatches(b)) *
                                               l.blockRows(i) *
                                               l.rowPitchBytes(j));
          std::vector<bool> seen(l.blockBytes(b, i, j), false);
          forEachElement(l, b, i, j,
                         [&](int64_t t, int64_t x, int64_t y, uint64_t offset) {
                           ++owners[(t * rows + x) * cols + y];
                           EXPECT_EQ(l.blockBatchOf(t), b);
                           EXPECT_EQ(l.blockRowOf(x), i);
                           EXPECT_EQ(l.blockColOf(y), j);
                           ASSERT_LT(offset, seen.size());
                           EXPECT_FALSE(seen[offset]);
                           seen[offset] = true;
                         });
        }
    for (size_t k = 0; k < owners.size(); ++k)
      ASSERT_EQ(owners[k], 1) << "element " << k;
    EXPECT_EQ(l.maxBlockBytes(), largest);

    std::vector<int64_t> all = allTiles(l);
    std::vector<uint32_t> list = l.tileList();
    ASSERT_EQ(list.size(), all.size());
    for (size_t k = 0; k < all.size(); ++k)
      EXPECT_EQ(int64_t(list[k]), all[k]);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    EXPECT_GE(all.front(), 0);
    EXPECT_LT(all.back(), int64_t(tiles));
  }
}

TEST(BatchLayoutTest, ValidateAgreesWithBruteForce) {
  // Perturbed strides and tile maps: validate fails exactly when some
  // (b, i, j, replica) is off the chip or shares a tile.
  std::mt19937 rng(8);
  int rejected = 0, collisions = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    const uint32_t tiles = 96;
    BlockLayout l = randomNdLayout(rng, 1 + rng() % 8, 1 + rng() % 8,
                                   1 + rng() % 8, ElementType::F32, tiles);
    if (!l.tileMap.empty()) {
      l.tileMap[rng() % l.tileMap.size()] = rng() % (tiles + 4);
    } else {
      int64_t *strides[] = {&l.tileBatchStride, &l.tileRowStride,
                            &l.tileColStride, &l.replicaStride};
      *strides[rng() % 4] += int64_t(rng() % 7) - 3;
    }
    std::vector<int64_t> all = allTiles(l);
    bool outside = false;
    for (int64_t t : all)
      outside |= t < 0 || t >= int64_t(tiles);
    std::sort(all.begin(), all.end());
    bool shared = std::adjacent_find(all.begin(), all.end()) != all.end();
    auto error = l.validate(tiles);
    ASSERT_EQ(bool(error), outside || shared);
    if (!error)
      continue;
    ++rejected;
    collisions += shared && !outside;
    bool named = error->find("outside") != std::string::npos ||
                 error->find("share tile") != std::string::npos;
    EXPECT_TRUE(named) << *error;
  }
  EXPECT_GT(rejected, 300);
  EXPECT_GT(collisions, 100);
}

TEST(BatchLayoutTest, ValidateRejectsBadBatches) {
  BlockLayout l = batchLayout(4, 4, 4, ElementType::F32, 2, 2, 1);
  ASSERT_FALSE(l.validate(4));
  auto message = [](BlockLayout bad, uint32_t tiles) {
    return bad.validate(tiles).value_or("");
  };

  BlockLayout bad = l;
  bad.batches = 0;
  EXPECT_EQ(message(bad, 4), "batches 0 is not positive");
  bad = l;
  bad.gridBatches = 0;
  EXPECT_EQ(message(bad, 4), "gridBatches 0 is not in [1, batches = 4]");
  bad = l;
  bad.gridBatches = 5;
  EXPECT_EQ(message(bad, 100), "gridBatches 5 is not in [1, batches = 4]");

  bad = l;
  bad.batchSplits = {0, 4};
  EXPECT_EQ(message(bad, 4), "batchSplits has 2 boundaries, the grid needs 3");
  bad.batchSplits = {0, 2, 3};
  EXPECT_EQ(message(bad, 4), "batchSplits must run from 0 to 4");
  bad.batchSplits = {0, 0, 4};
  EXPECT_EQ(message(bad, 4), "batchSplits boundary 1 (0) does not increase");
  bad.batchSplits = {0, 1, 4};
  EXPECT_EQ(message(bad, 4), "");

  // The tile map covers every batch block: the 2-D size is too small.
  bad = l;
  bad.tileMap = {0, 1};
  EXPECT_EQ(message(bad, 4), "tileMap has 2 tiles, the layout 4 blocks");
  bad.tileMap = {0, 1, 2, 1};
  EXPECT_EQ(message(bad, 4),
            "block (1, 1, 0) replica 0 and block (0, 1, 0) replica 0 share "
            "tile 1");
  bad.tileMap = {0, 1, 2, 4};
  EXPECT_EQ(message(bad, 4),
            "block (1, 1, 0) replica 0 is on tile 4, outside [0, 4)");

  // No batch stride puts every batch block on the tiles of the first.
  bad = l;
  bad.tileBatchStride = 0;
  EXPECT_EQ(message(bad, 4),
            "block (1, 0, 0) replica 0 and block (0, 0, 0) replica 0 share "
            "tile 0");
  bad.tileBatchStride = 3;
  EXPECT_EQ(message(bad, 4),
            "block (1, 1, 0) replica 0 is on tile 4, outside [0, 4)");
  EXPECT_EQ(message(l, 3),
            "2 x 2 x 1 blocks x 1 replicas need more than the 3 tiles");

  Rearrangement plan;
  BlockLayout two = batchLayout(2, 4, 4, ElementType::F32, 1, 2, 1, 1, 4);
  EXPECT_EQ(planRearrangement(l, two, 8, plan).value_or(""),
            "shapes differ: [4, 4, 4] vs [2, 4, 4]");
  EXPECT_EQ(
      planRearrangement(gridLayout(4, 4, ElementType::F32, 2, 1), two, 8, plan)
          .value_or(""),
      "shapes differ: [4, 4] vs [2, 4, 4]");
}

TEST(BatchRearrangementTest, WholeMatricesMergeAcrossBatches) {
  // 16 batches of 10 x 3 f16 (pitch 8), all on two row-block tiles, to 4
  // batch blocks of 4: the same row blocks, so each destination block is
  // 4 contiguous matrices of its source block and moves as one transfer.
  BlockLayout local = batchLayout(16, 10, 3, ElementType::F16, 1, 2, 1);
  BlockLayout spread = batchLayout(16, 10, 3, ElementType::F16, 4, 2, 1, 1, 2);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(local, spread, 10, plan));
  ASSERT_EQ(plan.phase.size(), 8u);
  for (uint32_t t = 0; t < 8; ++t) {
    uint32_t b = t / 2, i = t % 2;
    EXPECT_EQ(plan.phase.source[t], i);
    EXPECT_EQ(plan.phase.words[t], 4u * 5u * 8u / 4u);
    EXPECT_EQ(plan.sourceOffset[t], 4u * b * 5u * 8u);
    EXPECT_EQ(plan.destOffset[t], 0u);
    EXPECT_EQ(*plan.phase.destinationsBegin(t), 2 + t);
  }
  simulate(local, spread, 10, plan);
  ASSERT_FALSE(planRearrangement(spread, local, 10, plan));
  EXPECT_EQ(plan.phase.size(), 8u);
  simulate(spread, local, 10, plan);

  // Different row blocks: each matrix's rows are contiguous, but not
  // consecutive matrices, so one transfer per batch.
  BlockLayout byRows = batchLayout(16, 10, 3, ElementType::F16, 4, 1, 1, 1, 2);
  ASSERT_FALSE(planRearrangement(local, byRows, 10, plan));
  ASSERT_EQ(plan.phase.size(), 2u * 16u);
  // Destination (0, 0, 0) takes batch 1, rows 5..9, from tile 1.
  EXPECT_EQ(plan.phase.source[5], 1u);
  EXPECT_EQ(plan.phase.words[5], 5u * 8u / 4u);
  EXPECT_EQ(plan.sourceOffset[5], 1u * 5u * 8u);
  EXPECT_EQ(plan.destOffset[5], (1u * 10u + 5u) * 8u);
  simulate(local, byRows, 10, plan);

  // Split columns: one segment per row of every batch.
  BlockLayout byCols = batchLayout(4, 6, 8, ElementType::F16, 2, 1, 2, 2, 2);
  BlockLayout whole = batchLayout(4, 6, 8, ElementType::F16, 1, 1, 1);
  ASSERT_FALSE(planRearrangement(whole, byCols, 10, plan));
  EXPECT_EQ(plan.phase.size(), 4u * 6u * 2u);
  simulate(whole, byCols, 10, plan);
  ASSERT_FALSE(planRearrangement(byCols, whole, 10, plan));
  simulate(byCols, whole, 10, plan);
}

TEST(BatchRearrangementTest, RandomLayoutsWriteEveryElementOnce) {
  std::mt19937 rng(4096);
  const ElementType types[] = {ElementType::F32, ElementType::F16,
                               ElementType::F8E4M3FN, ElementType::F8E5M2};
  int planned = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    ElementType type = types[rng() % 4];
    int64_t batches = 1 + rng() % 8, rows = 1 + rng() % 16,
            cols = 1 + rng() % 24;
    // Bias towards word-multiple widths so narrow types plan often.
    if (rng() % 2)
      cols = std::max<int64_t>(4, cols & ~int64_t(7));
    const uint32_t tiles = 128;
    BlockLayout from = randomNdLayout(rng, batches, rows, cols, type, tiles);
    BlockLayout to = randomNdLayout(rng, batches, rows, cols, type, tiles);
    SCOPED_TRACE("iteration " + std::to_string(iter));
    planned += checkRandomRearrangement(from, to, tiles);
    if (HasFatalFailure())
      return;
  }
  EXPECT_GT(planned, 400);
}

TEST(BatchRearrangementTest, HeadsDistributedToBatchLocalRowsAtScale) {
  // 16 heads x 729 x 72 f16, each head on its own 92 tiles (all 1472).
  const uint32_t tiles = 1472;
  BlockLayout heads = batchLayout(16, 729, 72, ElementType::F16, 16, 92, 1);
  ASSERT_FALSE(heads.validate(tiles));
  const uint64_t totalWords = 16u * 729u * 72u * 2u / 4u;

  // To batch-local row blocks, each replicated on 16 tiles: every source
  // block is one whole matrix of its destination block.
  BlockLayout local = batchLayout(16, 729, 72, ElementType::F16, 1, 92, 1, 16);
  Rearrangement plan;
  ASSERT_FALSE(planRearrangement(heads, local, tiles, plan));
  ASSERT_EQ(plan.phase.size(), 16u * 92u);
  uint64_t words = 0;
  for (size_t t = 0; t < plan.phase.size(); ++t) {
    EXPECT_EQ(plan.phase.destinationsEnd(t) - plan.phase.destinationsBegin(t),
              16);
    words += plan.phase.words[t];
  }
  EXPECT_EQ(words, totalWords);
  ASSERT_FALSE(plan.phase.validate());
  ExchangeSchedule schedule = scheduleGreedy(plan.phase);
  EXPECT_FALSE(checkSchedule(plan.phase, schedule));

  // One token row per tile with all 16 heads: one 36-word row per head.
  BlockLayout rowsLocal = batchLayout(16, 729, 72, ElementType::F16, 1, 729, 1);
  ASSERT_FALSE(planRearrangement(heads, rowsLocal, tiles, plan));
  EXPECT_EQ(plan.phase.size(), 16u * 729u);
  simulate(heads, rowsLocal, tiles, plan);
  ASSERT_FALSE(planRearrangement(rowsLocal, heads, tiles, plan));
  EXPECT_EQ(plan.phase.size(), 16u * 729u);
  simulate(rowsLocal, heads, tiles, plan);

  // Split head columns: a segment per row of every head.
  BlockLayout halves = batchLayout(16, 729, 72, ElementType::F16, 1, 92, 2);
  ASSERT_FALSE(planRearrangement(heads, halves, tiles, plan));
  EXPECT_EQ(plan.phase.size(), 16u * 729u * 2u);
  simulate(heads, halves, tiles, plan);
}

} // namespace

TEST(BlockLayoutTest, TransposedLayoutHoldsEachBlockTransposedOnItsTiles) {
  // For random layouts (formula or tile map, split or balanced, batches):
  // block (b, j, i) of the transpose lives on the tiles of block (b, i, j),
  // with the shape swapped, and the transpose is as valid as the layout.
  std::mt19937 rng(77);
  unsigned checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    int64_t batches = 1 + rng() % 4, rows = 1 + rng() % 20, cols = 1 + rng() % 20;
    BlockLayout layout =
        randomNdLayout(rng, batches, rows, cols, ElementType::F32, 128);
    if (layout.validate(128))
      continue;
    BlockLayout t = transposedLayout(layout);
    ASSERT_FALSE(t.validate(128)) << *t.validate(128);
    ASSERT_EQ(t.rows, layout.cols);
    ASSERT_EQ(t.cols, layout.rows);
    for (uint32_t b = 0; b < layout.gridBatches; ++b)
      for (uint32_t i = 0; i < layout.gridRows; ++i)
        for (uint32_t j = 0; j < layout.gridCols; ++j) {
          EXPECT_EQ(t.blockRows(j), layout.blockCols(j));
          EXPECT_EQ(t.blockCols(i), layout.blockRows(i));
          for (uint32_t r = 0; r < layout.replicas; ++r)
            ASSERT_EQ(t.tileOf(b, j, i, r), layout.tileOf(b, i, j, r));
        }
    ++checked;
  }
  EXPECT_GT(checked, 100u);
}

//===----------------------------------------------------------------------===//
// Permutation
//===----------------------------------------------------------------------===//

namespace {

/// Applies `plan` (a planPermutation of `from` into `to`) to per-tile source
/// buffers tagged with each source byte's provenance and checks that every
/// byte of every replica of every block of `to` is written exactly once,
/// every transfer moves at least one word, and every destination element
/// holds the source element the permutation names. The expected source is
/// computed from the multi-index: destination flat index -> permuted view
/// index -> view index (view dim permutation[k] = permuted index k) -> source
/// flat index.
void simulatePermutation(const BlockLayout &from, const BlockLayout &to,
                         const Permutation &p, uint32_t tiles,
                         const Rearrangement &plan) {
  ASSERT_FALSE(plan.phase.validate()) << *plan.phase.validate();
  ASSERT_EQ(plan.phase.tiles, tiles);
  ASSERT_EQ(plan.sourceOffset.size(), plan.phase.size());
  ASSERT_EQ(plan.destOffset.size(), plan.phase.size());
  const size_t rank = p.view.size();
  const uint64_t elem = elementBytes(from.type);
  auto sourceTag = [&](int64_t t, int64_t x, int64_t y, uint64_t b) {
    return uint32_t(((t * from.rows + x) * from.cols + y) * elem + b + 1);
  };
  // The extents the destination reads: the window's, else the permuted
  // view's (written out here, not taken from Permutation).
  std::vector<int64_t> permuted(rank), offset(rank, 0);
  for (size_t k = 0; k < rank; ++k) {
    permuted[k] = p.sizes.empty() ? p.view[p.permutation[k]] : p.sizes[k];
    if (!p.offsets.empty())
      offset[k] = p.offsets[k];
  }
  auto expectedSource = [&](int64_t flat) {
    std::vector<int64_t> index(rank), viewIndex(rank);
    for (size_t k = rank; k-- > 0;) {
      index[k] = flat % permuted[k] + offset[k];
      flat /= permuted[k];
    }
    for (size_t k = 0; k < rank; ++k)
      viewIndex[p.permutation[k]] = index[k];
    int64_t source = 0;
    for (size_t d = 0; d < rank; ++d)
      source = source * p.view[d] + viewIndex[d];
    return source;
  };

  std::vector<Tags> source, dest;
  std::vector<std::vector<uint8_t>> writes;
  tagBlocks(from, to, tiles, sourceTag, source, dest, writes);

  applyTransfers(to, plan, source, dest, writes);

  // Destination element (t, x, y) holds the source element the
  // permutation names.
  checkDestinations(to, dest, writes, elem, [&](int64_t t, int64_t x, int64_t y, uint64_t b) {
    int64_t s = expectedSource((t * to.rows + x) * to.cols + y);
    return sourceTag(s / (from.rows * from.cols), (s / from.cols) % from.rows,
                     s % from.cols, b);
  });
}

/// [batches, rows, cols] folding `dims` (row-major): batches the dims before
/// `r`, rows those in [r, c), cols those from c on; 0 <= r <= c < size.
void foldShape(const std::vector<int64_t> &dims, size_t r, size_t c,
               int64_t &batches, int64_t &rows, int64_t &cols) {
  batches = rows = cols = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    (d < r ? batches : d < c ? rows : cols) *= dims[d];
}

/// A random fold of `dims` with the last dim in cols.
void randomFold(std::mt19937 &rng, const std::vector<int64_t> &dims,
                int64_t &batches, int64_t &rows, int64_t &cols) {
  size_t rank = dims.size();
  // cols: the last one or two dims (head merge), or more.
  size_t c = rank - 1 - rng() % std::min<size_t>(rank - 1, 2);
  size_t r = rng() % (c + 1);
  foldShape(dims, r, c, batches, rows, cols);
}

/// A random layout that validates on `tiles` and, when `aligned`, starts
/// every block column on a word.
BlockLayout randomPermuteLayout(std::mt19937 &rng, int64_t batches,
                                int64_t rows, int64_t cols, ElementType type,
                                uint32_t tiles, bool aligned) {
  while (true) {
    BlockLayout l = randomNdLayout(rng, batches, rows, cols, type, tiles);
    if (!aligned || columnsAligned(l))
      return l;
  }
}

} // namespace

TEST(PermutationTest, RandomPermutationsMoveEveryElementOnce) {
  std::mt19937 rng(0x9e3779b9);
  const uint32_t tiles = 16;
  int planned = 0, refused = 0, oddPlanned = 0;
  for (int iter = 0; iter < 400; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    size_t rank = 3 + rng() % 2;
    Permutation p;
    p.view.resize(rank);
    for (size_t d = 0; d + 1 < rank; ++d)
      p.view[d] = 1 + rng() % 4;
    p.permutation.resize(rank);
    std::iota(p.permutation.begin(), p.permutation.end(), 0);
    std::shuffle(p.permutation.begin(), p.permutation.end() - 1, rng);
    ElementType type = rng() % 2 ? ElementType::F32 : ElementType::F16;
    // f16: an even last extent (runs of whole words) with word-aligned
    // block columns must plan; an odd one (a quarter of the f16 cases) may
    // be refused.
    bool odd = type == ElementType::F16 && rng() % 4 == 0;
    if (type == ElementType::F32)
      p.view.back() = 1 + rng() % 6;
    else if (odd)
      p.view.back() = 1 + 2 * (rng() % 3);
    else
      p.view.back() = 2 + 2 * (rng() % 3);
    ASSERT_FALSE(p.validate());
    std::vector<int64_t> permuted(rank);
    for (size_t k = 0; k < rank; ++k)
      permuted[k] = p.view[p.permutation[k]];

    int64_t fb, fr, fc, tb, tr, tc;
    randomFold(rng, p.view, fb, fr, fc);
    randomFold(rng, permuted, tb, tr, tc);
    BlockLayout from = randomPermuteLayout(rng, fb, fr, fc, type, tiles, !odd);
    BlockLayout to = randomPermuteLayout(rng, tb, tr, tc, type, tiles, !odd);
    ASSERT_FALSE(from.validate(tiles));
    ASSERT_FALSE(to.validate(tiles));

    Rearrangement plan;
    auto error = planPermutation(from, to, p, tiles, plan);
    if (error) {
      ASSERT_TRUE(odd) << *error;
      EXPECT_NE(error->find("32-bit words"), std::string::npos) << *error;
      EXPECT_EQ(plan.phase.size(), 0u);
      ++refused;
      continue;
    }
    simulatePermutation(from, to, p, tiles, plan);
    if (HasFatalFailure()) {
      std::string view, perm;
      for (size_t d = 0; d < rank; ++d) {
        view += std::to_string(p.view[d]) + " ";
        perm += std::to_string(p.permutation[d]) + " ";
      }
      ADD_FAILURE() << "view " << view << "perm " << perm << "from [" << fb
                    << ", " << fr << ", " << fc << "] grid " << from.gridBatches
                    << "x" << from.gridRows << "x" << from.gridCols << " to ["
                    << tb << ", " << tr << ", " << tc << "] grid "
                    << to.gridBatches << "x" << to.gridRows << "x"
                    << to.gridCols << "x" << to.replicas;
      return;
    }
    ExchangeSchedule schedule = scheduleGreedy(plan.phase);
    EXPECT_FALSE(checkSchedule(plan.phase, schedule));
    ++planned;
    oddPlanned += odd;
  }
  EXPECT_GT(planned, 300);
  EXPECT_GT(refused, 5);
  EXPECT_GT(oddPlanned, 0);
}

TEST(PermutationTest, HeadSplitAndMerge) {
  // Attention at T = 8, H = 2, Dh = 8, f16: [8, 16] split 4 x 2 (block
  // (i, j): rows 2i..2i+1 of head j) to [2, 8, 8] with a head per batch
  // block, 2 row blocks of 4, replicated twice on tiles 8..15.
  const uint32_t tiles = 16;
  BlockLayout rows = gridLayout(8, 16, ElementType::F16, 4, 2);
  BlockLayout heads = batchLayout(2, 8, 8, ElementType::F16, 2, 2, 1, 2, 8);
  ASSERT_FALSE(rows.validate(tiles));
  ASSERT_FALSE(heads.validate(tiles));
  Permutation split{{1, 8, 2, 8}, {0, 2, 1, 3}};
  Rearrangement plan;
  ASSERT_FALSE(planPermutation(rows, heads, split, tiles, plan))
      << *planPermutation(rows, heads, split, tiles, plan);
  // Each destination row is one head's 8 f16 (4 words) of one source row;
  // a source block holds one head of two rows, which follow each other in
  // both blocks: one transfer of 8 words per source block.
  ASSERT_EQ(plan.phase.size(), 2u * 4u);
  for (uint32_t t = 0; t < plan.phase.size(); ++t) {
    uint32_t h = t / 4, x = 2 * (t % 4);
    EXPECT_EQ(plan.phase.words[t], 8u) << t;
    EXPECT_EQ(plan.phase.source[t], rows.tileOf(x / 2, h, 0)) << t;
    EXPECT_EQ(plan.sourceOffset[t], 0u) << t;
    EXPECT_EQ(plan.destOffset[t], (x % 4) * 16u) << t;
    ASSERT_EQ(plan.phase.destinationsEnd(t) - plan.phase.destinationsBegin(t), 2);
    EXPECT_EQ(plan.phase.destinationsBegin(t)[0], heads.tileOf(h, x / 4, 0, 0));
    EXPECT_EQ(plan.phase.destinationsBegin(t)[1], heads.tileOf(h, x / 4, 0, 1));
  }
  simulatePermutation(rows, heads, split, tiles, plan);

  // Batch-local arrival: every head on each of 4 row-block tiles.
  BlockLayout local = batchLayout(2, 8, 8, ElementType::F16, 1, 4, 1, 1, 8);
  ASSERT_FALSE(planPermutation(rows, local, split, tiles, plan));
  // Again one transfer per source block: its two rows of one head.
  EXPECT_EQ(plan.phase.size(), 8u);
  simulatePermutation(rows, local, split, tiles, plan);

  // The merge back: [H, T, Dh] -> [T, H, Dh] -> [8, 16].
  Permutation merge{{1, 2, 8, 8}, {0, 2, 1, 3}};
  BlockLayout back = gridLayout(8, 16, ElementType::F16, 2, 1, 1, 0);
  for (const BlockLayout *source : {&heads, &local}) {
    ASSERT_FALSE(planPermutation(*source, rows, merge, tiles, plan));
    EXPECT_EQ(plan.phase.size(), 8u);
    simulatePermutation(*source, rows, merge, tiles, plan);
    ASSERT_FALSE(planPermutation(*source, back, merge, tiles, plan));
    simulatePermutation(*source, back, merge, tiles, plan);
  }

  // f32 and an odd head size in f32 (whole words whatever the extent).
  BlockLayout rows32 = gridLayout(8, 14, ElementType::F32, 4, 1);
  BlockLayout heads32 = batchLayout(2, 8, 7, ElementType::F32, 2, 2, 1, 2, 8);
  Permutation split7{{1, 8, 2, 7}, {0, 2, 1, 3}};
  ASSERT_FALSE(planPermutation(rows32, heads32, split7, tiles, plan));
  simulatePermutation(rows32, heads32, split7, tiles, plan);
}

TEST(PermutationTest, WindowsOfAPermutedView) {
  // timm's qkv: [T = 16, 3 * H * Dh] (H = 4, Dh = 16) read as [1, 16, 3,
  // 4, 16], permuted to [3, 1, 4, 16, 16], and q, k and v each a window of
  // it: one of the 3 along the first permuted dim, into [4, 16, 16] with a
  // head per batch block.
  const uint32_t tiles = 16;
  BlockLayout rows = gridLayout(16, 192, ElementType::F32, 4, 2);
  BlockLayout heads = batchLayout(4, 16, 16, ElementType::F32, 4, 2, 1, 2, 0);
  ASSERT_FALSE(rows.validate(tiles));
  ASSERT_FALSE(heads.validate(tiles));
  for (int64_t part = 0; part < 3; ++part) {
    Permutation window{{1, 16, 3, 4, 16}, {2, 0, 3, 1, 4}, {part, 0, 0, 0, 0},
                       {1, 1, 4, 16, 16}};
    ASSERT_FALSE(window.validate());
    Rearrangement plan;
    ASSERT_FALSE(planPermutation(rows, heads, window, tiles, plan))
        << *planPermutation(rows, heads, window, tiles, plan);
    // Only that part's elements move: a third of the source.
    uint64_t words = 0;
    for (uint32_t t = 0; t < plan.phase.size(); ++t)
      words += plan.phase.words[t] *
               uint64_t(plan.phase.destinationsEnd(t) - plan.phase.destinationsBegin(t));
    EXPECT_EQ(words, 4u * 16 * 16 * 2) << part; // Two replicas.
    simulatePermutation(rows, heads, window, tiles, plan);
  }
  // A window of the last dim at whole words, and rows of it (nn.Multihead-
  // Attention's key and value halves of [S, 2D]; [:, 0] of a sequence).
  BlockLayout kv = gridLayout(8, 32, ElementType::F16, 2, 1);
  BlockLayout half = gridLayout(8, 16, ElementType::F16, 4, 1);
  Permutation value{{8, 32}, {0, 1}, {0, 16}, {8, 16}};
  Rearrangement plan;
  ASSERT_FALSE(planPermutation(kv, half, value, tiles, plan));
  simulatePermutation(kv, half, value, tiles, plan);
  BlockLayout first = gridLayout(1, 32, ElementType::F16, 1, 1);
  Permutation row{{8, 32}, {0, 1}, {3, 0}, {1, 32}};
  ASSERT_FALSE(planPermutation(kv, first, row, tiles, plan));
  simulatePermutation(kv, first, row, tiles, plan);
  // Not at whole words: 3 f16 elements from column 1.
  BlockLayout three = gridLayout(8, 3, ElementType::F16, 1, 1);
  auto error = planPermutation(kv, three, Permutation{{8, 32}, {0, 1}, {0, 1}, {8, 3}},
                               tiles, plan);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("in 32-bit words"), std::string::npos) << *error;
  // The destination must hold the window, not the view.
  error = planPermutation(kv, kv, value, tiles, plan);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("the view holds 256 and its window 128"), std::string::npos)
      << *error;
}

TEST(PermutationTest, ColumnIntoRowIsOneTransfer) {
  // A [7, 3] f32 tensor, one column per tile in row blocks of 4 and 3, to
  // its transpose [3, 7] with rows whole and columns split 4 + 3 (the view
  // [7, 3, 1] permuted to [3, 7, 1]): each source block's column lands in
  // a row segment of a destination block, contiguous on both sides, so it
  // is one transfer of its rows, however many one-element runs it holds.
  const uint32_t tiles = 16;
  BlockLayout columns = gridLayout(7, 3, ElementType::F32, 2, 3);
  BlockLayout rowsOf = gridLayout(3, 7, ElementType::F32, 1, 2, 1, 8);
  Permutation transpose{{7, 3, 1}, {1, 0, 2}};
  Rearrangement plan;
  ASSERT_FALSE(planPermutation(columns, rowsOf, transpose, tiles, plan))
      << *planPermutation(columns, rowsOf, transpose, tiles, plan);
  ASSERT_EQ(plan.phase.size(), 6u);
  uint64_t words = 0;
  for (uint32_t t = 0; t < plan.phase.size(); ++t) {
    EXPECT_EQ(plan.sourceOffset[t], 0u) << t;
    words += plan.phase.words[t];
  }
  EXPECT_EQ(words, 21u);
  simulatePermutation(columns, rowsOf, transpose, tiles, plan);
}

TEST(PermutationTest, OddHeadSizeInF16IsRefused) {
  // K's head split with Dh = 7 in f16: head 0 of a source row is 14 bytes,
  // not ending the row, so it is not whole words.
  const uint32_t tiles = 16;
  BlockLayout rows = gridLayout(8, 14, ElementType::F16, 4, 1);
  BlockLayout heads = batchLayout(2, 8, 7, ElementType::F16, 2, 2, 1, 2, 8);
  Permutation split{{1, 8, 2, 7}, {0, 2, 1, 3}};
  Rearrangement plan;
  auto error = planPermutation(rows, heads, split, tiles, plan);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "cannot permute [4, 1]x1 into [2, 2, 1]x2 in 32-bit words: "
                    "a run of 7 f16 elements at byte 0 of source block (0, 0) "
                    "and byte 0 of destination block (0, 0, 0)");
  // A failed plan leaves an empty phase over the tiles.
  EXPECT_EQ(plan.phase.size(), 0u);
  EXPECT_EQ(plan.phase.tiles, tiles);
  EXPECT_TRUE(plan.sourceOffset.empty());
  EXPECT_TRUE(plan.destOffset.empty());

  // The merge back is refused too: head 0's run is 14 bytes of a 28-byte
  // destination row.
  Rearrangement merged;
  auto back = planPermutation(heads, rows, Permutation{{1, 2, 8, 7}, {0, 2, 1, 3}},
                              tiles, merged);
  ASSERT_TRUE(back);
  EXPECT_NE(back->find("32-bit words"), std::string::npos) << *back;
  EXPECT_EQ(*back, "cannot permute [2, 2, 1]x2 into [4, 1]x1 in 32-bit words: "
                   "a run of 7 f16 elements at byte 0 of source block (0, 0, 0) "
                   "and byte 0 of destination block (0, 0)");
}

TEST(PermutationTest, ValidateRefusals) {
  auto message = [](Permutation p) { return p.validate().value_or(""); };
  EXPECT_EQ(message({{1, 8, 2, 8}, {0, 2, 1, 3}}), "");
  EXPECT_EQ(message({{5}, {0}}), "");
  EXPECT_EQ(message({{1, 8, 2, 8}, {0, 2, 1}}),
            "permutation of 3 dims for a view of 4");
  EXPECT_EQ(message({{}, {}}), "permutation of 0 dims for a view of 0");
  EXPECT_EQ(message({{2, 3, 4}, {1, 1, 2}}),
            "permutation is not one of the view's 3 dims");
  EXPECT_EQ(message({{2, 3, 4}, {0, 3, 2}}),
            "permutation is not one of the view's 3 dims");
  EXPECT_EQ(message({{2, 3, 4}, {-1, 1, 2}}),
            "permutation is not one of the view's 3 dims");
  EXPECT_EQ(message({{2, 3, 4}, {0, 2, 1}}),
            "permutation moves the last dim (1 last); only the leading dims "
            "permute");
  EXPECT_EQ(message({{2, 0, 4}, {1, 0, 2}}), "view extent 0 is not positive");
  EXPECT_EQ(message({{2, 3, -4}, {1, 0, 2}}), "view extent -4 is not positive");
  // Windows: both lists, one entry per dim, inside the permuted view.
  EXPECT_EQ(message({{2, 3, 4}, {1, 0, 2}, {0, 1, 0}, {3, 1, 4}}), "");
  EXPECT_EQ(message({{2, 3, 4}, {1, 0, 2}, {0, 0}, {3, 1, 4}}),
            "window of 2 offsets and 3 sizes for a view of 3 dims");
  EXPECT_EQ(message({{2, 3, 4}, {1, 0, 2}, {1, 0, 0}, {3, 1, 4}}),
            "window [1, +3) of permuted dim 0 is not inside its 3 elements");
  EXPECT_EQ(message({{2, 3, 4}, {1, 0, 2}, {0, 0, 0}, {3, 0, 4}}),
            "window [0, +0) of permuted dim 1 is not inside its 2 elements");
  EXPECT_EQ(message({{2, 3, 4}, {1, 0, 2}, {0, -1, 0}, {3, 1, 4}}),
            "window [-1, +1) of permuted dim 1 is not inside its 2 elements");

  // planPermutation passes the refusal on, and checks counts and types.
  const uint32_t tiles = 16;
  BlockLayout rows = gridLayout(8, 16, ElementType::F32, 4, 2);
  BlockLayout heads = batchLayout(2, 8, 8, ElementType::F32, 2, 2, 1, 2, 8);
  Rearrangement plan;
  EXPECT_EQ(planPermutation(rows, heads, {{1, 8, 2, 8}, {0, 3, 1, 2}}, tiles, plan)
                .value_or(""),
            "permutation moves the last dim (2 last); only the leading dims "
            "permute");
  EXPECT_EQ(planPermutation(rows, heads, {{1, 8, 2, 4}, {0, 2, 1, 3}}, tiles, plan)
                .value_or(""),
            "element counts differ: the view holds 64, the source [8, 16], the "
            "destination [2, 8, 8]");
  BlockLayout heads16 = heads;
  heads16.type = ElementType::F16;
  EXPECT_EQ(planPermutation(rows, heads16, {{1, 8, 2, 8}, {0, 2, 1, 3}}, tiles, plan)
                .value_or(""),
            "element types differ: f32 vs f16");
  EXPECT_EQ(plan.phase.size(), 0u);
}
