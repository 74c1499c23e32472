//===- BlockLayout.cpp - Block layouts and rearrangement planning ---------===//

#include "IPU/Layout/BlockLayout.h"
#include "IPU/Support/Numbers.h"

#include <algorithm>

using namespace ipu;

/// `bytes` rounded up to whole words of `word` bytes.
static uint64_t toWords(uint64_t bytes, uint64_t word) {
  return (bytes + word - 1) / word * word;
}
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
  return toWords(uint64_t(blockCols(j)) * elementBytes(type), wordBytes);
}

uint64_t BlockLayout::blockBytes(uint32_t b, uint32_t i, uint32_t j) const {
  return uint64_t(blockBatches(b)) * uint64_t(blockRows(i)) * rowPitchBytes(j);
}

uint64_t BlockLayout::maxBlockBytes() const {
  if (gridBatches == 0 || gridRows == 0 || gridCols == 0)
    return 0;
  // Balanced splits put the largest block first in every dimension.
  if (batchSplits.empty() && rowSplits.empty() && colSplits.empty())
    return blockBytes(0, 0, 0);
  // Batches, rows and pitch vary independently, so the largest block pairs
  // the largest of each.
  int64_t mostBatches = 0, mostRows = 0;
  uint64_t widestPitch = 0;
  for (uint32_t b = 0; b < gridBatches; ++b)
    mostBatches = std::max(mostBatches, blockBatches(b));
  for (uint32_t i = 0; i < gridRows; ++i)
    mostRows = std::max(mostRows, blockRows(i));
  for (uint32_t j = 0; j < gridCols; ++j)
    widestPitch = std::max(widestPitch, rowPitchBytes(j));
  return uint64_t(mostBatches) * uint64_t(mostRows) * widestPitch;
}

int64_t BlockLayout::tileOf(uint32_t b, uint32_t i, uint32_t j,
                            uint32_t replica) const {
  if (!tileMap.empty())
    return tileMap[((size_t(b) * gridRows + i) * gridCols + j) * replicas +
                   replica];
  return int64_t(tileBase) + int64_t(b) * tileBatchStride +
         int64_t(i) * tileRowStride + int64_t(j) * tileColStride +
         int64_t(replica) * replicaStride;
}

std::vector<uint32_t> BlockLayout::tileList() const {
  std::vector<uint32_t> list;
  list.reserve(size_t(gridBatches) * gridRows * gridCols * replicas);
  for (uint32_t b = 0; b < gridBatches; ++b)
    for (uint32_t i = 0; i < gridRows; ++i)
      for (uint32_t j = 0; j < gridCols; ++j)
        for (uint32_t r = 0; r < replicas; ++r)
          list.push_back(static_cast<uint32_t>(tileOf(b, i, j, r)));
  return list;
}

namespace {

/// 2-D names for layouts of one batch block, as before batches existed.
std::string blockName(const BlockLayout &l, uint32_t b, uint32_t i,
                      uint32_t j) {
  std::string name = "block (";
  if (l.gridBatches != 1)
    name += to_string(b) + ", ";
  return name + to_string(i) + ", " + to_string(j) + ")";
}


} // namespace

std::optional<std::string> BlockLayout::validate(uint32_t tiles) const {
  if (wordBytes < 1 || wordBytes > 64 || (wordBytes & (wordBytes - 1)))
    return "exchange word of " + to_string(wordBytes) +
           " bytes is not a power of two in [1, 64]";
  if (rows < 1 || cols < 1)
    return "tensor shape [" + to_string(rows) + ", " + to_string(cols) +
           "] is empty";
  if (batches < 1)
    return "batches " + to_string(batches) + " is not positive";
  if (gridBatches < 1 || gridBatches > batches)
    return "gridBatches " + to_string(gridBatches) +
           " is not in [1, batches = " + to_string(batches) + "]";
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
  if (auto error =
          checkSplits(batchSplits, gridBatches, batches, "batchSplits"))
    return error;
  if (auto error = checkSplits(rowSplits, gridRows, rows, "rowSplits"))
    return error;
  if (auto error = checkSplits(colSplits, gridCols, cols, "colSplits"))
    return error;
  uint64_t blocks = saturatingMultiply(
      saturatingMultiply(saturatingMultiply(gridBatches, gridRows), gridCols), replicas);
  if (!tileMap.empty() && tileMap.size() != blocks)
    return "tileMap has " + to_string(tileMap.size()) + " tiles, the layout " +
           to_string(blocks) + " blocks";

  // Every block and replica needs a tile of its own: this bounds the loop
  // below and keeps tileOf's products far from overflow.
  if (blocks > tiles)
    return (gridBatches != 1 ? to_string(gridBatches) + " x " : "") +
           to_string(gridRows) + " x " + to_string(gridCols) + " blocks x " +
           to_string(replicas) + " replicas need more than the " +
           to_string(tiles) + " tiles";

  // Owner of each tile as a flat (b, i, j, replica) index: a bitmap-sized
  // table finds collisions in O(blocks * replicas).
  std::vector<uint64_t> owner(tiles, UINT64_MAX);
  uint64_t flat = 0;
  for (uint32_t b = 0; b < gridBatches; ++b)
    for (uint32_t i = 0; i < gridRows; ++i)
      for (uint32_t j = 0; j < gridCols; ++j)
        for (uint32_t r = 0; r < replicas; ++r, ++flat) {
          int64_t tile = tileOf(b, i, j, r);
          if (tile < 0 || tile >= int64_t(tiles))
            return blockName(*this, b, i, j) + " replica " + to_string(r) +
                   " is on tile " + to_string(tile) + ", outside [0, " +
                   to_string(tiles) + ")";
          uint64_t &slot = owner[tile];
          if (slot != UINT64_MAX) {
            uint64_t pr = slot % replicas, pb = slot / replicas;
            uint64_t pj = pb % gridCols, pi = pb / gridCols % gridRows,
                     pbatch = pb / gridCols / gridRows;
            return blockName(*this, b, i, j) + " replica " + to_string(r) +
                   " and " + blockName(*this, pbatch, pi, pj) + " replica " +
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
  std::string name = "[";
  if (l.gridBatches != 1)
    name += to_string(l.gridBatches) + ", ";
  return name + to_string(l.gridRows) + ", " + to_string(l.gridCols) + "]x" +
         to_string(l.replicas);
}

std::string shapeName(const BlockLayout &l) {
  std::string name = "[";
  if (l.batches != 1)
    name += to_string(l.batches) + ", ";
  return name + to_string(l.rows) + ", " + to_string(l.cols) + "]";
}

} // namespace

uint32_t BlockLayout::blockBatchOf(int64_t x) const {
  return batchSplits.empty() ? splitIndexOf(batches, gridBatches, x)
                             : boundaryIndexOf(batchSplits, x);
}

uint32_t BlockLayout::blockRowOf(int64_t x) const {
  return rowSplits.empty() ? splitIndexOf(rows, gridRows, x)
                           : boundaryIndexOf(rowSplits, x);
}

uint32_t BlockLayout::blockColOf(int64_t x) const {
  return colSplits.empty() ? splitIndexOf(cols, gridCols, x)
                           : boundaryIndexOf(colSplits, x);
}

namespace {

/// The batches, rows and columns of one block, as half-open ranges.
struct Box {
  uint32_t b, i, j;
  int64_t t0, t1, r0, r1, c0, c1;
};

Box boxOf(const BlockLayout &l, uint32_t b, uint32_t i, uint32_t j) {
  Box box;
  box.b = b;
  box.i = i;
  box.j = j;
  box.t0 = l.batchBegin(b);
  box.t1 = box.t0 + l.blockBatches(b);
  box.r0 = l.blockRowBegin(i);
  box.r1 = box.r0 + l.blockRows(i);
  box.c0 = l.blockColBegin(j);
  box.c1 = box.c0 + l.blockCols(j);
  return box;
}

/// Moves the overlap of source block `s` and destination block `d` to
/// `destinations` (the replicas of d).
std::optional<std::string> movePiece(const BlockLayout &from,
                                     const BlockLayout &to, const Box &s,
                                     const Box &d,
                                     const std::vector<uint32_t> &destinations,
                                     Rearrangement &out) {
  const uint64_t elem = elementBytes(from.type), word = from.wordBytes;
  int64_t t0 = std::max(s.t0, d.t0), t1 = std::min(s.t1, d.t1);
  int64_t r0 = std::max(s.r0, d.r0), r1 = std::min(s.r1, d.r1);
  int64_t c0 = std::max(s.c0, d.c0), c1 = std::min(s.c1, d.c1);
  uint64_t sPitch = from.rowPitchBytes(s.j), dPitch = to.rowPitchBytes(d.j);
  uint64_t sMatrix = uint64_t(s.r1 - s.r0) * sPitch;
  uint64_t dMatrix = uint64_t(d.r1 - d.r0) * dPitch;
  uint32_t sourceTile = static_cast<uint32_t>(from.tileOf(s.b, s.i, s.j, 0));
  uint64_t sCol = uint64_t(c0 - s.c0) * elem;
  uint64_t dCol = uint64_t(c0 - d.c0) * elem;
  // A segment that ends both rows carries the row padding too: it is
  // padding on both sides, and it rounds the segment up to words.
  bool endsBothRows = c1 == s.c1 && c1 == d.c1;
  uint64_t bytes = uint64_t(c1 - c0) * elem;
  if (endsBothRows)
    bytes = toWords(bytes, word);

  // Offsets of row x of matrix t within each block.
  auto sAt = [&](int64_t t, int64_t x) {
    return uint64_t(t - s.t0) * sMatrix + uint64_t(x - s.r0) * sPitch;
  };
  auto dAt = [&](int64_t t, int64_t x) {
    return uint64_t(t - d.t0) * dMatrix + uint64_t(x - d.r0) * dPitch;
  };
  auto emit = [&](uint64_t sOff, uint64_t dOff, uint64_t n) {
    out.phase.addTransfer(sourceTile, static_cast<uint32_t>(n / word),
                          destinations);
    out.sourceOffset.push_back(static_cast<uint32_t>(sOff));
    out.destOffset.push_back(static_cast<uint32_t>(dOff));
  };

  // Full-width on both sides: the rows are contiguous in both buffers and
  // move as one transfer per matrix; whole matrices on both sides are
  // contiguous too and move as one.
  bool fullWidth =
      c0 == s.c0 && c1 == s.c1 && c0 == d.c0 && c1 == d.c1 && sPitch == dPitch;
  if (fullWidth) {
    uint64_t n = uint64_t(r1 - r0) * sPitch;
    if (r0 == s.r0 && r1 == s.r1 && r0 == d.r0 && r1 == d.r1) {
      emit(sAt(t0, r0), dAt(t0, r0), uint64_t(t1 - t0) * n);
      return std::nullopt;
    }
    for (int64_t t = t0; t < t1; ++t)
      emit(sAt(t, r0), dAt(t, r0), n);
    return std::nullopt;
  }
  if (bytes % word != 0 || sCol % word != 0 || dCol % word != 0)
    return "cannot move " + layoutName(from) + " " +
           blockName(from, s.b, s.i, s.j) + " to " + layoutName(to) + " " +
           blockName(to, d.b, d.i, d.j) + " in " + to_string(word * 8) +
           "-bit words: " + std::string(elementTypeName(from.type)) +
           " columns [" + to_string(c0) + ", " + to_string(c1) + ") are " +
           to_string(bytes) + " bytes at byte " + to_string(sCol) +
           " of each source row and byte " + to_string(dCol) +
           " of each destination row";
  for (int64_t t = t0; t < t1; ++t)
    for (int64_t x = r0; x < r1; ++x)
      emit(sAt(t, x) + sCol, dAt(t, x) + dCol, bytes);
  return std::nullopt;
}

/// What a move between two layouts needs of them, whatever it moves: one
/// element type, valid layouts, blocks whose offsets fit the phase's 32 bits.
std::optional<std::string> checkMoveLayouts(const BlockLayout &from,
                                            const BlockLayout &to, uint32_t tiles) {
  if (from.type != to.type)
    return "element types differ: " + std::string(elementTypeName(from.type)) +
           " vs " + std::string(elementTypeName(to.type));
  if (from.wordBytes != to.wordBytes)
    return "exchange words differ: " + to_string(from.wordBytes) + " vs " +
           to_string(to.wordBytes) + " bytes";
  if (auto error = from.validate(tiles))
    return "source layout: " + *error;
  if (auto error = to.validate(tiles))
    return "destination layout: " + *error;
  if (from.maxBlockBytes() > UINT32_MAX || to.maxBlockBytes() > UINT32_MAX)
    return "a block exceeds 4 GiB";
  return std::nullopt;
}

/// Calls `f(d, replicaTiles)` for every block d of `to`, in (b, i, j)
/// order, with the tiles of its replicas: every replica receives the same
/// bytes at the same offsets, so each transfer goes once to all of them.
/// Stops at, and returns, the first error `f` returns.
template <typename F>
std::optional<std::string> forEachDestinationBlock(const BlockLayout &to, F f) {
  std::vector<uint32_t> replicaTiles(to.replicas);
  for (uint32_t db = 0; db < to.gridBatches; ++db)
    for (uint32_t di = 0; di < to.gridRows; ++di)
      for (uint32_t dj = 0; dj < to.gridCols; ++dj) {
        for (uint32_t r = 0; r < to.replicas; ++r)
          replicaTiles[r] = static_cast<uint32_t>(to.tileOf(db, di, dj, r));
        if (auto error = f(boxOf(to, db, di, dj), replicaTiles))
          return error;
      }
  return std::nullopt;
}

std::optional<std::string> plan(const BlockLayout &from, const BlockLayout &to,
                                uint32_t tiles, Rearrangement &out) {
  out.phase.tiles = tiles;
  if (from.batches != to.batches || from.rows != to.rows ||
      from.cols != to.cols)
    return "shapes differ: " + shapeName(from) + " vs " + shapeName(to);
  if (auto error = checkMoveLayouts(from, to, tiles))
    return error;

  return forEachDestinationBlock(
      to, [&](const Box &d, const std::vector<uint32_t> &replicaTiles)
              -> std::optional<std::string> {
        // The source blocks overlapping d, in (b, i, j) order.
        uint32_t sb1 = from.blockBatchOf(d.t1 - 1);
        uint32_t si0 = from.blockRowOf(d.r0), si1 = from.blockRowOf(d.r1 - 1);
        uint32_t sj0 = from.blockColOf(d.c0), sj1 = from.blockColOf(d.c1 - 1);
        for (uint32_t sb = from.blockBatchOf(d.t0); sb <= sb1; ++sb)
          for (uint32_t si = si0; si <= si1; ++si)
            for (uint32_t sj = sj0; sj <= sj1; ++sj)
              if (auto error = movePiece(from, to, boxOf(from, sb, si, sj), d,
                                         replicaTiles, out))
                return error;
        return std::nullopt;
      });
}

} // namespace

std::optional<std::string> ipu::planRearrangement(const BlockLayout &from,
                                                  const BlockLayout &to,
                                                  uint32_t tiles,
                                                  Rearrangement &result) {
  result = Rearrangement();
  // The same matrix cut into other batches (a serial layout's row chunks
  // against whole rows): the elements keep their row-major order, which the
  // identity permutation of the rows moves.
  if (from.cols == to.cols && from.batches != to.batches &&
      from.batches * from.rows == to.batches * to.rows) {
    Permutation rows;
    rows.view = {from.batches * from.rows, from.cols};
    rows.permutation = {0, 1};
    return planPermutation(from, to, rows, tiles, result);
  }
  auto error = plan(from, to, tiles, result);
  // A failed plan leaves no half-built phase behind.
  if (error) {
    result = Rearrangement();
    result.phase.tiles = tiles;
  }
  return error;
}

BlockLayout ipu::transposedLayout(const BlockLayout &layout) {
  BlockLayout t = layout;
  std::swap(t.rows, t.cols);
  std::swap(t.gridRows, t.gridCols);
  std::swap(t.tileRowStride, t.tileColStride);
  std::swap(t.rowSplits, t.colSplits);
  if (!layout.tileMap.empty()) {
    // Index (b, j, i, r) of the transpose is (b, i, j, r) of the layout.
    for (uint32_t b = 0; b < layout.gridBatches; ++b)
      for (uint32_t i = 0; i < layout.gridRows; ++i)
        for (uint32_t j = 0; j < layout.gridCols; ++j)
          for (uint32_t r = 0; r < layout.replicas; ++r)
            t.tileMap[((size_t(b) * t.gridRows + j) * t.gridCols + i) * t.replicas + r] =
                static_cast<uint32_t>(layout.tileOf(b, i, j, r));
  }
  return t;
}

std::optional<std::string> ipu::Permutation::validate() const {
  const size_t rank = view.size();
  if (rank == 0 || permutation.size() != rank)
    return "permutation of " + to_string(permutation.size()) +
           " dims for a view of " + to_string(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t d : permutation) {
    if (d < 0 || d >= int64_t(rank) || seen[d])
      return "permutation is not one of the view's " + to_string(rank) + " dims";
    seen[d] = true;
  }
  if (permutation.back() != int64_t(rank) - 1)
    return "permutation moves the last dim (" + to_string(permutation.back()) +
           " last); only the leading dims permute";
  for (int64_t extent : view)
    if (extent < 1)
      return "view extent " + to_string(extent) + " is not positive";
  if (offsets.empty() && sizes.empty())
    return std::nullopt;
  if (offsets.size() != rank || sizes.size() != rank)
    return "window of " + to_string(offsets.size()) + " offsets and " +
           to_string(sizes.size()) + " sizes for a view of " + to_string(rank) + " dims";
  for (size_t k = 0; k < rank; ++k) {
    const int64_t extent = view[permutation[k]];
    if (offsets[k] < 0 || sizes[k] < 1 || offsets[k] > extent - sizes[k])
      return "window [" + to_string(offsets[k]) + ", +" + to_string(sizes[k]) +
             ") of permuted dim " + to_string(k) + " is not inside its " +
             to_string(extent) + " elements";
  }
  return std::nullopt;
}

std::vector<int64_t> ipu::Permutation::resultExtents() const {
  if (!sizes.empty())
    return sizes;
  std::vector<int64_t> extents;
  for (int64_t d : permutation)
    extents.push_back(view[d]);
  return extents;
}

ipu::PermutedIndex::PermutedIndex(const Permutation &p) {
  const size_t rank = p.view.size();
  std::vector<int64_t> viewStride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d)
    viewStride[d - 1] = viewStride[d] * p.view[d];
  extent = p.resultExtents();
  offset = p.offsets.empty() ? std::vector<int64_t>(rank, 0) : p.offsets;
  for (size_t k = 0; k < rank; ++k)
    stride.push_back(viewStride[p.permutation[k]]);
}

int64_t ipu::PermutedIndex::operator()(int64_t flat) const {
  int64_t index = 0;
  for (size_t k = extent.size(); k-- > 0;) {
    index += (flat % extent[k] + offset[k]) * stride[k];
    flat /= extent[k];
  }
  return index;
}

std::optional<std::string> ipu::planPermutation(const BlockLayout &from,
                                                const BlockLayout &to,
                                                const Permutation &permutation,
                                                uint32_t tiles,
                                                Rearrangement &result) {
  result = Rearrangement();
  result.phase.tiles = tiles;
  auto fail = [&](std::string message) {
    result = Rearrangement();
    result.phase.tiles = tiles;
    return std::optional<std::string>(std::move(message));
  };
  if (auto error = permutation.validate())
    return fail(*error);
  if (auto error = checkMoveLayouts(from, to, tiles))
    return fail(*error);
  int64_t elements = 1, windowElements = 1;
  for (int64_t extent : permutation.view)
    elements *= extent;
  const std::vector<int64_t> extents = permutation.resultExtents();
  for (int64_t extent : extents)
    windowElements *= extent;
  if (from.batches * from.rows * from.cols != elements ||
      to.batches * to.rows * to.cols != windowElements)
    return fail("element counts differ: the view holds " + to_string(elements) +
                (permutation.sizes.empty() ? ""
                                           : " and its window " + to_string(windowElements)) +
                ", the source " + shapeName(from) + ", the destination " + shapeName(to));
  const uint64_t elem = elementBytes(from.type), word = from.wordBytes;
  const int64_t runLength = extents.back();
  // The source element of destination element `flat` (row-major index
  // into the window of the permuted view).
  const PermutedIndex sourceOf(permutation);
  std::optional<std::string> error = forEachDestinationBlock(
      to, [&](const Box &d, const std::vector<uint32_t> &replicaTiles)
              -> std::optional<std::string> {
        const uint32_t db = d.b, di = d.i, dj = d.j;
        const uint64_t dPitch = to.rowPitchBytes(dj);
        // The block's last transfer, which a run continuing it on both
        // sides extends: a column gathered into a row moves as one message.
        std::optional<size_t> last;
        const uint64_t dMatrix = uint64_t(d.r1 - d.r0) * dPitch;
        for (int64_t t = d.t0; t < d.t1; ++t)
          for (int64_t x = d.r0; x < d.r1; ++x)
            for (int64_t c = d.c0; c < d.c1;) {
              const int64_t flat = (t * to.rows + x) * to.cols + c;
              const int64_t source = sourceOf(flat);
              const int64_t sb = source / (from.rows * from.cols);
              const int64_t sr = (source / from.cols) % from.rows;
              const int64_t sc = source % from.cols;
              uint32_t bb = from.blockBatchOf(sb), bi = from.blockRowOf(sr),
                       bj = from.blockColOf(sc);
              Box s = boxOf(from, bb, bi, bj);
              // The run: to the end of the view's last dim, of the
              // destination block's row and of the source block's row.
              const int64_t length = std::min(
                  {runLength - flat % runLength, d.c1 - c, s.c1 - sc});
              const uint64_t sPitch = from.rowPitchBytes(bj);
              const uint64_t sOffset = uint64_t(sb - s.t0) * uint64_t(s.r1 - s.r0) * sPitch +
                                       uint64_t(sr - s.r0) * sPitch + uint64_t(sc - s.c0) * elem;
              const uint64_t dOffset = uint64_t(t - d.t0) * dMatrix +
                                       uint64_t(x - d.r0) * dPitch + uint64_t(c - d.c0) * elem;
              uint64_t bytes = uint64_t(length) * elem;
              // A run ending both rows carries their padding, as whole
              // rows do in planRearrangement.
              if (c + length == d.c1 && sc + length == s.c1)
                bytes = toWords(bytes, word);
              if (bytes % word != 0 || sOffset % word != 0 || dOffset % word != 0)
                return std::optional<std::string>("cannot permute " + layoutName(from) + " into " + layoutName(to) +
                            " in " + to_string(word * 8) + "-bit words: a run of " + to_string(length) + " " +
                            std::string(elementTypeName(from.type)) + " elements at byte " +
                            to_string(sOffset) + " of source " +
                            blockName(from, bb, bi, bj) + " and byte " + to_string(dOffset) +
                            " of destination " + blockName(to, db, di, dj));
              const auto sourceTile = static_cast<uint32_t>(from.tileOf(bb, bi, bj, 0));
              if (last && result.phase.source[*last] == sourceTile &&
                  result.sourceOffset[*last] + uint64_t(result.phase.words[*last]) * word ==
                      sOffset &&
                  result.destOffset[*last] + uint64_t(result.phase.words[*last]) * word ==
                      dOffset) {
                result.phase.words[*last] += static_cast<uint32_t>(bytes / word);
              } else {
                last = result.phase.addTransfer(sourceTile, static_cast<uint32_t>(bytes / word),
                                                replicaTiles);
                result.sourceOffset.push_back(static_cast<uint32_t>(sOffset));
                result.destOffset.push_back(static_cast<uint32_t>(dOffset));
              }
              c += length;
            }
        return std::nullopt;
      });
  if (error)
    return fail(*error);
  return std::nullopt;
}
