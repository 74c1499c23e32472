//===- DataFileCache.h - The data files a context has read ------*- C++ -*-===//

#ifndef IPU_LIB_DIALECT_TILE_DATAFILECACHE_H
#define IPU_LIB_DIALECT_TILE_DATAFILECACHE_H

#include "IPU/Support/DataFile.h"

#include "llvm/ADT/StringMap.h"

#include <mutex>

namespace mlir::ipu_tile {

/// Owned by the ipu_tile dialect, so one context reads a file once however
/// many ops (and threads) ask. Keyed by resolved path and checksum.
struct DataFileCache {
  std::mutex mutex;
  llvm::StringMap<std::unique_ptr<ipu::DataFile>> files;
};

} // namespace mlir::ipu_tile

#endif // IPU_LIB_DIALECT_TILE_DATAFILECACHE_H
