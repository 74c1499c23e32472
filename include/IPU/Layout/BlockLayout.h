//===- BlockLayout.h - Block layouts of tensors over tiles ---------------===//
//
// A block layout splits a [batches, rows, cols] tensor (the leading dims of
// an N-D tensor collapsed into `batches`; 1 for a 2-D tensor) into a
// gridBatches x gridRows x gridCols grid of blocks with balanced splits (the
// first `rows % gridRows` block rows get one row more; likewise for batches
// and columns). Block (b, i, j), replica r, lives on tile
//   tileBase + b * tileBatchStride + i * tileRowStride + j * tileColStride
//            + r * replicaStride
// stored as blockBatches(b) consecutive row-major matrices with each row
// padded to whole exchange words of the target (`wordBytes`), so that whole
// rows move as words. gridBatches = 1 keeps every batch of a block on its tile;
// gridBatches = batches gives each batch its own tiles.
//
// Two optional generalisations keep irregular layouts exact: explicit split
// boundaries (`batchSplits`, `rowSplits`, `colSplits`: grid + 1 increasing
// offsets from 0 to the extent) replace the balanced split, and an explicit
// `tileMap` (one tile per (b, i, j, replica), index
// ((b * gridRows + i) * gridCols + j) * replicas + replica) replaces the tile
// formula. Nested splits (a block row split again) and tile orders that no
// formula gives, such as those of reductions, need them.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_LAYOUT_BLOCKLAYOUT_H
#define IPU_LAYOUT_BLOCKLAYOUT_H

#include "IPU/Exchange/Phase.h"
#include "IPU/Support/ElementType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct BlockLayout {
  int64_t rows = 0, cols = 0;
  ElementType type = ElementType::F32;
  uint32_t gridRows = 1, gridCols = 1;
  uint32_t tileBase = 0;
  int64_t tileRowStride = 0, tileColStride = 0;
  uint32_t replicas = 1;
  int64_t replicaStride = 0;
  std::vector<int64_t> rowSplits, colSplits; ///< Empty: balanced.
  std::vector<uint32_t> tileMap;             ///< Empty: the formula.
  int64_t batches = 1;                       ///< Product of the leading dims.
  uint32_t gridBatches = 1;
  int64_t tileBatchStride = 0;
  std::vector<int64_t> batchSplits; ///< Empty: balanced.
  /// The target's exchange word (TargetModel::exchangeWordBytes): stored
  /// rows are padded to whole words, and rearrangements move whole words.
  /// A layout made for a target takes its word; 4 is ipu21's.
  uint32_t wordBytes = 4;

  /// Balanced split of `extent` into `parts`: start and size of part `index`.
  static int64_t splitBegin(int64_t extent, uint32_t parts, uint32_t index);
  static int64_t splitSize(int64_t extent, uint32_t parts, uint32_t index);

  int64_t batchBegin(uint32_t b) const {
    return batchSplits.empty() ? splitBegin(batches, gridBatches, b)
                               : batchSplits[b];
  }
  int64_t blockBatches(uint32_t b) const {
    return batchSplits.empty() ? splitSize(batches, gridBatches, b)
                               : batchSplits[b + 1] - batchSplits[b];
  }
  int64_t blockRowBegin(uint32_t i) const {
    return rowSplits.empty() ? splitBegin(rows, gridRows, i) : rowSplits[i];
  }
  int64_t blockRows(uint32_t i) const {
    return rowSplits.empty() ? splitSize(rows, gridRows, i)
                             : rowSplits[i + 1] - rowSplits[i];
  }
  int64_t blockColBegin(uint32_t j) const {
    return colSplits.empty() ? splitBegin(cols, gridCols, j) : colSplits[j];
  }
  int64_t blockCols(uint32_t j) const {
    return colSplits.empty() ? splitSize(cols, gridCols, j)
                             : colSplits[j + 1] - colSplits[j];
  }
  /// The block holding batch, row or column `x` along that dimension.
  uint32_t blockBatchOf(int64_t x) const;
  uint32_t blockRowOf(int64_t x) const;
  uint32_t blockColOf(int64_t x) const;
  /// Bytes of one stored row of block column j (padded to whole words).
  uint64_t rowPitchBytes(uint32_t j) const;
  uint64_t blockBytes(uint32_t b, uint32_t i, uint32_t j) const;
  /// Largest block: the bytes a buffer must hold on every tile it spans.
  uint64_t maxBlockBytes() const;
  int64_t tileOf(uint32_t b, uint32_t i, uint32_t j, uint32_t replica) const;
  /// Block (0, i, j), for 2-D callers: every block when gridBatches is 1.
  uint64_t blockBytes(uint32_t i, uint32_t j) const {
    return blockBytes(0, i, j);
  }
  int64_t tileOf(uint32_t i, uint32_t j, uint32_t replica) const {
    return tileOf(0, i, j, replica);
  }
  /// Every tile holding a block, in (b, i, j, replica) order.
  std::vector<uint32_t> tileList() const;
  /// Every tile in range [0, tiles) and no tile holding two blocks; a grid no
  /// larger than the tensor; explicit splits increasing from 0 to the extent
  /// with no empty block; a tile map of the right size; a word of a power
  /// of two bytes, at most 64. Returns a message naming the field at fault.
  std::optional<std::string> validate(uint32_t tiles) const;
};

/// The layout of the transposed tensor (each matrix transposed) that puts
/// block (j, i) of the transpose on the tiles of block (i, j): a tile holds
/// the transpose of the block it holds in `layout`.
BlockLayout transposedLayout(const BlockLayout &layout);

/// A rearrangement between two layouts of the same tensor, as one exchange
/// phase plus the byte offsets each transfer reads and writes within the
/// source and destination tile buffers.
struct Rearrangement {
  ExchangePhase phase;
  std::vector<uint32_t> sourceOffset; ///< Per transfer, bytes.
  std::vector<uint32_t> destOffset;   ///< Per transfer, same on every dest.
};

/// Moves every element of `from` to every replica of `to`. A block of `to`
/// takes each of its elements from the first replica of `from`; transfers of
/// the same bytes to several replicas become one broadcast transfer.
/// Whole rows contiguous on both sides move as one transfer, across batches
/// too. A row segment that ends both its source and its destination row
/// extends into the row padding, so every byte of every destination block
/// (padding included) is written exactly once. A block that stays on its
/// tile is still a transfer (to the tile itself). Fails (with a message) when
/// shapes, types or words differ or a row segment is not a whole number of
/// words.
std::optional<std::string> planRearrangement(const BlockLayout &from,
                                             const BlockLayout &to,
                                             uint32_t tiles,
                                             Rearrangement &result);

/// A permutation of a tensor's dims that keeps the last one last (attention's
/// head split [T, H, Dh] -> [H, T, Dh] and merge): the source, read as
/// `view` (same elements, row-major), has its dims permuted by
/// `permutation` (result dim k is view dim permutation[k]); the result is
/// the permuted view read row-major in the destination's shape. With a
/// window, only a static slice of the permuted view (unit strides) is read:
/// timm's qkv split and nn.MultiheadAttention's key/value split.
struct Permutation {
  std::vector<int64_t> view;
  std::vector<int64_t> permutation;
  /// The window: permuted dim k from offsets[k], sizes[k] elements. Both
  /// empty: the whole permuted view.
  std::vector<int64_t> offsets = {}, sizes = {};
  /// A message naming the field at fault, or nothing: a permutation of
  /// 0..rank-1 ending with rank-1, extents at least 1, a window inside the
  /// permuted view.
  std::optional<std::string> validate() const;
  /// The extents read row-major: the window's, or the permuted view's.
  std::vector<int64_t> resultExtents() const;
};

/// The view element (row-major index) that element `flat` of a valid
/// permutation's result reads.
class PermutedIndex {
public:
  explicit PermutedIndex(const Permutation &permutation);
  int64_t operator()(int64_t flat) const;

private:
  std::vector<int64_t> extent, offset, stride; ///< Per result dim.
};

/// Moves every element of `from` to its permuted position in every replica
/// of `to` (the two layouts' batches x rows x cols each the view's element
/// count): runs along the last view dim that stay in one source and one
/// destination block are one transfer, and consecutive runs that continue
/// each other in both blocks' memory join it (a column of one-element rows
/// gathered into a row is one transfer). Fails (with a message) when the
/// element counts, types or words differ or a run is not a whole number of
/// words at word offsets.
std::optional<std::string> planPermutation(const BlockLayout &from,
                                           const BlockLayout &to,
                                           const Permutation &permutation,
                                           uint32_t tiles, Rearrangement &result);

} // namespace ipu

#endif // IPU_LAYOUT_BLOCKLAYOUT_H
