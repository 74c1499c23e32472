//===- LayoutStreams.h - Host stream pieces of a layout --------*- C++ -*-===//
//
// How a host tensor and a buffer in a BlockLayout meet: the pieces of the
// HostStream that copies one into the other. The package translation emits
// them and tests build packages with them, so both agree by construction.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PACKAGE_LAYOUTSTREAMS_H
#define IPU_PACKAGE_LAYOUTSTREAMS_H

#include "IPU/Layout/BlockLayout.h"
#include "IPU/Package/Package.h"

#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// Appends to `pieces` the pieces that copy a row-major host tensor of
/// shape [..., rows, cols] (its leading dimensions multiplying to
/// layout.batches) to or from the buffer at `address` on every tile of
/// `layout`: element (t, x, y) is at host element ((t * rows) + x) * cols + y
/// and in block (blockBatchOf(t), blockRowOf(x), blockColOf(y)). Pieces come
/// in (b, i, j, replica) order, one per block and replica when the block
/// holds whole matrices (its batches then follow one another at one pitch on
/// both sides), else one per batch of the block. `allReplicas` false reads
/// the first replica only (results). `transpose` makes the host tensor
/// [..., cols, rows], each matrix transposed: each tile row gathers a host
/// column, one piece per batch. Fails, naming what is wrong, on a piece
/// whose counts do not fit the piece's 32-bit fields. With `onlyBatch`, the
/// host tensor is that batch's matrix alone (a repeated layer's weights, one
/// host tensor per layer, each into its batch of one buffer).
std::optional<std::string> layoutStreamPieces(const BlockLayout &layout,
                                              uint32_t address,
                                              bool allReplicas, bool transpose,
                                              std::vector<StreamPiece> &pieces,
                                              std::optional<int64_t> onlyBatch = {});

} // namespace ipu

#endif // IPU_PACKAGE_LAYOUTSTREAMS_H
