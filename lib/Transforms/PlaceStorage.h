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

namespace mlir::ipu {

struct ProgramStorage {
  ipu_tile::ProgramLiveness liveness;
  SmallVector<ipu_tile::BufferOp> buffers;
  std::vector<::ipu::BufferRequest> requests; ///< One per buffer.
  /// Exchange code, vertex state and kernel code on the busiest tile.
  uint32_t reservedBytes = 0;
  ::ipu::Placement placement;
  /// Set when the buffers do not fit, with `overflow` filled.
  std::optional<std::string> error;
  ::ipu::MemoryOverflow overflow;
};

/// Sizes the reserved area and places every buffer of a scheduled program.
/// Fails (with a diagnostic) only on IR the placement cannot read; an
/// overflow is `error`.
FailureOr<ProgramStorage> planProgramStorage(ipu_tile::ProgramOp program,
                                             const ::ipu::TargetModel &target);

} // namespace mlir::ipu

#endif // IPU_LIB_TRANSFORMS_PLACESTORAGE_H
