//===- LayoutStreams.cpp - Host stream pieces of a block layout ----------===//

#include "IPU/Package/LayoutStreams.h"

using namespace ipu;
using std::to_string;

std::optional<std::string>
ipu::layoutStreamPieces(const BlockLayout &layout, uint32_t address,
                        bool allReplicas, bool transpose,
                        std::vector<StreamPiece> &pieces,
                        std::optional<int64_t> onlyBatch) {
  const uint64_t bytes = elementBytes(layout.type);
  // The host tensor's rows: [cols, rows] when transposed.
  const uint64_t hostRowBytes =
      uint64_t(transpose ? layout.rows : layout.cols) * bytes;
  const uint64_t hostMatrixBytes = uint64_t(layout.rows) * layout.cols * bytes;
  const uint32_t replicas = allReplicas ? layout.replicas : 1;
  for (uint32_t b = 0; b < layout.gridBatches; ++b)
    for (uint32_t i = 0; i < layout.gridRows; ++i)
      for (uint32_t j = 0; j < layout.gridCols; ++j)
        for (uint32_t r = 0; r < replicas; ++r) {
          const uint64_t row = layout.blockRowBegin(i);
          const uint64_t col = layout.blockColBegin(j);
          const uint64_t pitch = layout.rowPitchBytes(j);
          const int64_t batches = layout.blockBatches(b);
          // A block of every row holds its matrices back to back at the
          // tile pitch, as the host does at its own: one piece moves them.
          // (A transposed batch starts a host matrix further on, not a row:
          // one piece per batch.)
          const bool whole =
              layout.blockRows(i) == layout.rows && !transpose && !onlyBatch;
          const uint64_t pieceRows =
              uint64_t(layout.blockRows(i)) * (whole ? batches : 1);
          const uint64_t rowBytes = uint64_t(layout.blockCols(j)) * bytes;
          if (pieceRows > UINT32_MAX || rowBytes > UINT32_MAX ||
              pitch > UINT32_MAX)
            return "block (" + to_string(b) + ", " + to_string(i) + ", " +
                   to_string(j) + ") of " + to_string(pieceRows) + " rows of " +
                   to_string(rowBytes) +
                   " bytes does not fit a stream piece's 32-bit counts";
          const uint64_t matrixTileBytes = layout.blockRows(i) * pitch;
          for (int64_t t = 0; t < (whole ? 1 : batches); ++t) {
            if (onlyBatch && layout.batchBegin(b) + t != *onlyBatch)
              continue;
            StreamPiece piece;
            piece.tile = static_cast<uint32_t>(layout.tileOf(b, i, j, r));
            // Offsets within the block fit: validated blocks lie in tile
            // memory.
            piece.address =
                address + static_cast<uint32_t>(uint64_t(t) * matrixTileBytes);
            piece.rows = static_cast<uint32_t>(pieceRows);
            piece.rowBytes = static_cast<uint32_t>(rowBytes);
            piece.tilePitch = static_cast<uint32_t>(pitch);
            const uint64_t batch =
                onlyBatch ? 0 : uint64_t(layout.batchBegin(b)) + uint64_t(t);
            if (transpose) {
              // Tile row `row` is host column `row`; its elements go down it.
              piece.hostOffset =
                  batch * hostMatrixBytes + col * hostRowBytes + row * bytes;
              piece.hostPitch = bytes;
              piece.hostElementStride = hostRowBytes;
            } else {
              piece.hostOffset =
                  batch * hostMatrixBytes + row * hostRowBytes + col * bytes;
              piece.hostPitch = hostRowBytes;
            }
            pieces.push_back(piece);
          }
        }
  return std::nullopt;
}
