//===- MemoryProfile.h - The placed memory of a program as JSON ----------===//
//
// Written by --ipu-place-storage="memory-profile=FILE"; the schema is in
// docs/MemoryProfile.md.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_LIB_TRANSFORMS_MEMORYPROFILE_H
#define IPU_LIB_TRANSFORMS_MEMORYPROFILE_H

#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Storage/Allocator.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::ipu_compiler {

/// Writes the profile of a placed `program`: per memory class the peak, the
/// max-live bound and what is reserved; per tile group and class the tile and
/// step where the most bytes are live and every buffer live there.
void writeMemoryProfile(llvm::raw_ostream &os, ipu_tile::ProgramOp program,
                        const ipu_tile::ProgramLiveness &liveness,
                        const std::vector<ipu::BufferRequest> &requests,
                        const ipu::Placement &placement,
                        uint32_t reservedBytes, const ipu::TargetModel &target);

} // namespace mlir::ipu_compiler

#endif // IPU_LIB_TRANSFORMS_MEMORYPROFILE_H
