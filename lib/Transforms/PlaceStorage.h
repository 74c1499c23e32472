//===- PlaceStorage.h - Placing a lowered program's buffers ---*- C++ -*-===//
//
// What --ipu-place-storage computes for one program, without touching the
// IR: the planner runs it on a lowered copy of the module to check that its
// plans' memory model holds before it commits to them.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_LIB_TRANSFORMS_PLACESTORAGE_H
#define IPU_LIB_TRANSFORMS_PLACESTORAGE_H

#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Storage/Allocator.h"

#include <optional>
#include <string>

namespace mlir::ipu_compiler {

/// The busiest tile of a reserved area and what it keeps there.
struct ReservedAreaParts {
  uint32_t tile = 0;
  uint64_t exchangeCodeBytes = 0, vertexStateBytes = 0, kernelCodeBytes = 0;
  /// Each phase's exchange code on that tile, by the phase's name.
  std::vector<std::pair<std::string, uint64_t>> exchangeCodeByPhase;
  /// "tile T: E of exchange code, V of vertex state, K of kernel code".
  std::string str() const;
};

struct ProgramStorage {
  ipu_tile::ProgramLiveness liveness;
  SmallVector<ipu_tile::BufferOp> buffers;
  std::vector<ipu::BufferRequest> requests; ///< One per buffer.
  /// Exchange code, vertex state and kernel code on the busiest tile.
  uint32_t reservedBytes = 0;
  /// That tile and its three parts.
  ReservedAreaParts reservedParts;
  ipu::Placement placement;
  /// Set when the buffers do not fit, with `overflow` filled.
  std::optional<std::string> error;
  ipu::MemoryOverflow overflow;
};

/// The most bytes of exchange code, vertex state and generated kernel code
/// any tile of `steps` keeps. Each phase's code comes from a timed schedule:
/// its own #ipu_exchange.schedule on its buffers' addresses when `placed`,
/// else one made here on provisional packed addresses (before placement).
/// `parts`, when given, says which tile that is and what it keeps.
FailureOr<uint32_t> reservedAreaBytes(ArrayRef<Operation *> steps,
                                      const ipu::TargetModel &target,
                                      bool placed, ReservedAreaParts *parts = nullptr);

/// Sizes the reserved area and places every buffer of a lowered program.
/// Fails (with a diagnostic) only on IR the placement cannot read; an
/// overflow is `error`.
/// `leastReservedBytes` raises the reserved area (ScheduleExchange asks for
/// it when the real schedules' code needs more than provisional ones did).
FailureOr<ProgramStorage> planProgramStorage(ipu_tile::ProgramOp program,
                                             const ipu::TargetModel &target,
                                             uint32_t leastReservedBytes = 0);

/// What --ipu-place-storage does to one program: plans its storage, sets
/// every buffer's address and the program's reserved bytes, peaks and
/// bounds, logs and remarks; an overflow is an error naming the tile and
/// buffers. With `memoryProfile`, writes the placed memory there.
LogicalResult placeProgram(ipu_tile::ProgramOp program,
                           const ipu::TargetModel &target,
                           StringRef memoryProfile = "",
                           uint32_t leastReservedBytes = 0);

} // namespace mlir::ipu_compiler

#endif // IPU_LIB_TRANSFORMS_PLACESTORAGE_H
