//===- BlockLayout.cpp - Block layouts and rearrangement planning ---------===//

#include "IPU/Layout/BlockLayout.h"

#include <algorithm>

using namespace ipu;
using std::to_string;

int64_t BlockLayout::splitBegin(int64_t extent, uint32_t parts,
                                uint32_t index) {
  if (parts == 0)
    return 0;
  int64_t base = extent / parts, rem = extent % parts;
  return int64_t(index) * base + std::min<int64_t>(index, rem);
}

int64_t BlockLayout::splitSize(int64_t extent, uint32_t parts, uint32_t index) {
  if (parts == 0)
    return 0;
  int64_t base = extent / parts, rem = extent % parts;
  return base + (int64_t(index) < rem ? 1 : 0);
}

uint64_t BlockLayout::rowPitchBytes(uint32_t j) const {
  uint64_t bytes = uint64_t(blockCols(j)) * elementBytes(type);
  return (bytes + 3) & ~uint64_t(3);
}

uint64_t BlockLayout::blockBytes(uint32_t i, uint32_t j) const {
  return uint64_t(blockRows(i)) * rowPitchBytes(j);
}

uint64_t BlockLayout::maxBlockBytes() const {
  if (gridRows == 0 || gridCols == 0)
    return 0;
  // Balanced splits put the largest block row and column first.
  if (rowSplits.empty() && colSplits.empty())
    return blockBytes(0, 0);
  // Rows and pitch vary independently, so the largest block pairs the
  // largest of each.
  int64_t mostRows = 0;
  uint64_t widestPitch = 0;
  for (uint32_t i = 0; i < gridRows; ++i)
    mostRows = std::max(mostRows, blockRows(i));
  for (uint32_t j = 0; j < gridCols; ++j)
    widestPitch = std::max(widestPitch, rowPitchBytes(j));
  return uint64_t(mostRows) * widestPitch;
}

int64_t BlockLayout::tileOf(uint32_t i, uint32_t j, uint32_t replica) const {
  if (!tileMap.empty())
    return tileMap[(size_t(i) * gridCols + j) * replicas + replica];
  return int64_t(tileBase) + int64_t(i) * tileRowStride +
         int64_t(j) * tileColStride + int64_t(replica) * replicaStride;
}

std::vector<uint32_t> BlockLayout::tileList() const {
  std::vector<uint32_t> list;
  list.reserve(size_t(gridRows) * gridCols * replicas);
  for (uint32_t i = 0; i < gridRows; ++i)
    for (uint32_t j = 0; j < gridCols; ++j)
      for (uint32_t r = 0; r < replicas; ++r)
        list.push_back(static_cast<uint32_t>(tileOf(i, j, r)));
  return list;
}

namespace {

std::string blockName(uint32_t i, uint32_t j) {
  return "block (" + to_string(i) + ", " + to_string(j) + ")";
}

} // namespace

std::optional<std::string> BlockLayout::validate(uint32_t tiles) const {
  if (rows < 1 || cols < 1)
    return "tensor shape [" + to_string(rows) + ", " + to_string(cols) +
           "] is empty";
  if (gridRows < 1 || gridRows > rows)
    return "gridRows " + to_string(gridRows) +
           " is not in [1, rows = " + to_string(rows) + "]";
  if (gridCols < 1 || gridCols > cols)
    return "gridCols " + to_string(gridCols) +
           " is not in [1, cols = " + to_string(cols) + "]";
  if (replicas < 1)
    return "replicas is 0";
  auto checkSplits = [](const std::vector<int64_t> &splits, uint32_t grid,
                        int64_t extent,
                        const char *name) -> std::optional<std::string> {
    if (splits.empty())
      return std::nullopt;
    if (splits.size() != size_t(grid) + 1)
      return std::string(name) + " has " + to_string(splits.size()) +
             " boundaries, the grid needs " + to_string(grid + 1);
    if (splits.front() != 0 || splits.back() != extent)
      return std::string(name) + " must run from 0 to " + to_string(extent);
    for (size_t k = 1; k < splits.size(); ++k)
      if (splits[k] <= splits[k - 1])
        return std::string(name) + " boundary " + to_string(k) + " (" +
               to_string(splits[k]) + ") does not increase";
    return std::nullopt;
  };
  if (auto error = checkSplits(rowSplits, gridRows, rows, "rowSplits"))
    return error;
  if (auto error = checkSplits(colSplits, gridCols, cols, "colSplits"))
    return error;
  if (!tileMap.empty() &&
      tileMap.size() != size_t(gridRows) * gridCols * replicas)
    return "tileMap has " + to_string(tileMap.size()) + " tiles, the layout " +
           to_string(uint64_t(gridRows) * gridCols * replicas) + " blocks";

  // Every block and replica needs a tile of its own: this bounds the loop
  // below and keeps tileOf's products far from overflow.
  if (uint64_t(gridRows) * gridCols > tiles ||
      uint64_t(gridRows) * gridCols * replicas > tiles)
    return to_string(gridRows) + " x " + to_string(gridCols) + " blocks x " +
           to_string(replicas) + " replicas need more than the " +
           to_string(tiles) + " tiles";

  // Owner of each tile as a flat (i, j, replica) index: a bitmap-sized table
  // finds collisions in O(blocks * replicas).
  std::vector<uint64_t> owner(tiles, UINT64_MAX);
  uint64_t flat = 0;
  for (uint32_t i = 0; i < gridRows; ++i)
    for (uint32_t j = 0; j < gridCols; ++j)
      for (uint32_t r = 0; r < replicas; ++r, ++flat) {
        int64_t tile = tileOf(i, j, r);
        if (tile < 0 || tile >= int64_t(tiles))
          return blockName(i, j) + " replica " + to_string(r) + " is on tile " +
                 to_string(tile) + ", outside [0, " + to_string(tiles) + ")";
        uint64_t &slot = owner[tile];
        if (slot != UINT64_MAX) {
          uint64_t pr = slot % replicas, pb = slot / replicas;
          return blockName(i, j) + " replica " + to_string(r) + " and " +
                 blockName(pb / gridCols, pb % gridCols) + " replica " +
                 to_string(pr) + " share tile " + to_string(tile);
        }
        slot = flat;
      }
  return std::nullopt;
}

namespace {

/// Inverse of the balanced split: the part holding element x.
uint32_t splitIndexOf(int64_t extent, uint32_t parts, int64_t x) {
  int64_t base = extent / parts, rem = extent % parts;
  int64_t boundary = rem * (base + 1);
  if (x < boundary)
    return static_cast<uint32_t>(x / (base + 1));
  return static_cast<uint32_t>(rem + (x - boundary) / base);
}

/// The part of explicit boundaries holding element x.
uint32_t boundaryIndexOf(const std::vector<int64_t> &splits, int64_t x) {
  auto it = std::upper_bound(splits.begin(), splits.end(), x);
  return static_cast<uint32_t>(it - splits.begin() - 1);
}

std::string layoutName(const BlockLayout &l) {
  return "[" + to_string(l.gridRows) + ", " + to_string(l.gridCols) + "]x" +
         to_string(l.replicas);
}

} // namespace

uint32_t BlockLayout::blockRowOf(int64_t x) const {
  return rowSplits.empty() ? splitIndexOf(rows, gridRows, x)
                           : boundaryIndexOf(rowSplits, x);
}

uint32_t BlockLayout::blockColOf(int64_t x) const {
  return colSplits.empty() ? splitIndexOf(cols, gridCols, x)
                           : boundaryIndexOf(colSplits, x);
}

namespace {

std::optional<std::string> plan(const BlockLayout &from, const BlockLayout &to,
                                uint32_t tiles, Rearrangement &out) {
  out.phase.tiles = tiles;
  if (from.rows != to.rows || from.cols != to.cols)
    return "shapes differ: [" + to_string(from.rows) + ", " +
           to_string(from.cols) + "] vs [" + to_string(to.rows) + ", " +
           to_string(to.cols) + "]";
  if (from.type != to.type)
    return "element types differ: " + std::string(elementTypeName(from.type)) +
           " vs " + std::string(elementTypeName(to.type));
  if (auto error = from.validate(tiles))
    return "source layout: " + *error;
  if (auto error = to.validate(tiles))
    return "destination layout: " + *error;
  // Offsets and word counts are 32-bit in the phase.
  if (from.maxBlockBytes() > UINT32_MAX || to.maxBlockBytes() > UINT32_MAX)
    return "a block exceeds 4 GiB";

  const uint64_t elem = elementBytes(from.type);
  std::vector<uint32_t> replicaTiles(to.replicas);

  for (uint32_t di = 0; di < to.gridRows; ++di) {
    int64_t dr0 = to.blockRowBegin(di), dr1 = dr0 + to.blockRows(di);
    uint32_t siFirst = from.blockRowOf(dr0);
    uint32_t siLast = from.blockRowOf(dr1 - 1);
    for (uint32_t dj = 0; dj < to.gridCols; ++dj) {
      int64_t dc0 = to.blockColBegin(dj), dc1 = dc0 + to.blockCols(dj);
      uint64_t dPitch = to.rowPitchBytes(dj);
      uint32_t sjFirst = from.blockColOf(dc0);
      uint32_t sjLast = from.blockColOf(dc1 - 1);
      // Every replica receives the same bytes at the same offsets, so each
      // transfer goes once to all of them.
      for (uint32_t r = 0; r < to.replicas; ++r)
        replicaTiles[r] = static_cast<uint32_t>(to.tileOf(di, dj, r));

      for (uint32_t si = siFirst; si <= siLast; ++si) {
        int64_t sr0 = from.blockRowBegin(si), sr1 = sr0 + from.blockRows(si);
        int64_t r0 = std::max(sr0, dr0), r1 = std::min(sr1, dr1);
        for (uint32_t sj = sjFirst; sj <= sjLast; ++sj) {
          int64_t sc0 = from.blockColBegin(sj), sc1 = sc0 + from.blockCols(sj);
          int64_t c0 = std::max(sc0, dc0), c1 = std::min(sc1, dc1);
          uint64_t sPitch = from.rowPitchBytes(sj);
          uint32_t sourceTile = static_cast<uint32_t>(from.tileOf(si, sj, 0));
          uint64_t sCol = uint64_t(c0 - sc0) * elem;
          uint64_t dCol = uint64_t(c0 - dc0) * elem;
          // A segment that ends both rows carries the row padding too: it is
          // padding on both sides, and it rounds the segment up to words.
          bool endsBothRows = c1 == sc1 && c1 == dc1;
          uint64_t bytes = uint64_t(c1 - c0) * elem;
          if (endsBothRows)
            bytes = (bytes + 3) & ~uint64_t(3);

          auto emit = [&](uint64_t sOff, uint64_t dOff, uint64_t n) {
            out.phase.addTransfer(sourceTile, static_cast<uint32_t>(n / 4),
                                  replicaTiles);
            out.sourceOffset.push_back(static_cast<uint32_t>(sOff));
            out.destOffset.push_back(static_cast<uint32_t>(dOff));
          };

          // Full-width on both sides: the rows are contiguous in both
          // buffers and move as one transfer.
          bool fullWidth = c0 == sc0 && c1 == sc1 && c0 == dc0 && c1 == dc1 &&
                           sPitch == dPitch;
          if (fullWidth) {
            emit(uint64_t(r0 - sr0) * sPitch, uint64_t(r0 - dr0) * dPitch,
                 uint64_t(r1 - r0) * sPitch);
            continue;
          }
          if (bytes % 4 != 0 || sCol % 4 != 0 || dCol % 4 != 0)
            return "cannot move " + layoutName(from) + " " + blockName(si, sj) +
                   " to " + layoutName(to) + " " + blockName(di, dj) +
                   " in 32-bit words: " +
                   std::string(elementTypeName(from.type)) + " columns [" +
                   to_string(c0) + ", " + to_string(c1) + ") are " +
                   to_string(bytes) + " bytes at byte " + to_string(sCol) +
                   " of each source row and byte " + to_string(dCol) +
                   " of each destination row";
          for (int64_t row = r0; row < r1; ++row)
            emit(uint64_t(row - sr0) * sPitch + sCol,
                 uint64_t(row - dr0) * dPitch + dCol, bytes);
        }
      }
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> ipu::planRearrangement(const BlockLayout &from,
                                                  const BlockLayout &to,
                                                  uint32_t tiles,
                                                  Rearrangement &result) {
  result = Rearrangement();
  auto error = plan(from, to, tiles, result);
  // A failed plan leaves no half-built phase behind.
  if (error) {
    result = Rearrangement();
    result.phase.tiles = tiles;
  }
  return error;
}
