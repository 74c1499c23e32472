//===- Allocator.h - Placing buffers in tile memory ----------------------===//
//
// Every buffer spans a set of tiles and is placed at the same address on all
// of them. Two buffers conflict when their live ranges (inclusive program
// step indices) overlap and their tile sets intersect; conflicting buffers
// must not overlap in memory. Placement is first fit in decreasing size.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_STORAGE_ALLOCATOR_H
#define IPU_STORAGE_ALLOCATOR_H

#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct BufferRequest {
  std::string name;
  MemoryClass memoryClass = MemoryClass::Standard;
  uint64_t bytes = 0;
  uint32_t alignment = 8;
  uint32_t firstUse = 0, lastUse = 0; ///< Inclusive program steps.
  std::vector<uint32_t> tiles;        ///< Sorted, unique.
  /// Requests this one should share no SRAM conflict unit with on a tile
  /// they share (an exchange phase reads one and writes the other, and the
  /// hardware serialises a send's reads and a receive's writes in one
  /// unit). A preference: placement keeps them apart where the class has
  /// room, and packs them as before where it has not.
  std::vector<uint32_t> apartFrom;
};

struct Placement {
  std::vector<uint32_t> address; ///< Per request.
  /// Per memory class: the highest end address minus the first address
  /// handed out (allocatable base, plus the reserved bytes for standard
  /// memory), over all tiles: comparable with boundBytes.
  uint64_t peakBytes[2] = {0, 0};
  /// Per memory class: the max-live bound (most bytes live at once on one
  /// tile, ignoring alignment and fragmentation).
  uint64_t boundBytes[2] = {0, 0};
  uint32_t peakTile[2] = {0, 0};
};

/// Why a placement failed, for a memory map a person can act on.
struct MemoryOverflow {
  uint32_t request = 0; ///< The request that does not fit.
  uint32_t tile = 0;    ///< Where the others take the most bytes.
  uint32_t step = 0;    ///< When most of them are live there.
  MemoryClass memoryClass = MemoryClass::Standard;
  uint64_t bytesNeeded = 0;
  uint64_t bytesAvailable = 0; ///< In the class, on that tile.
  /// The requests live on that tile at that step with their addresses,
  /// largest first.
  std::vector<std::pair<uint32_t, uint32_t>> live;
};

/// Places every request in its memory class of `target`, with
/// `reservedBytesPerTile` extra bytes kept free at the bottom of standard
/// memory (exchange tables, vertex state). On overflow returns a message that
/// names the tile, the memory class, the bytes needed and available, and the
/// buffers live on that tile (a memory map), and fills `overflow` with the
/// same facts when given.
std::optional<std::string> placeBuffers(const TargetModel &target,
                                        const std::vector<BufferRequest> &requests,
                                        uint32_t reservedBytesPerTile,
                                        Placement &placement,
                                        MemoryOverflow *overflow = nullptr);

} // namespace ipu

#endif // IPU_STORAGE_ALLOCATOR_H
