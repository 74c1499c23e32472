//===- Tile.h - The ipu_tile dialect ---------------------------*- C++ -*-===//

#ifndef IPU_DIALECT_TILE_IR_TILE_H
#define IPU_DIALECT_TILE_IR_TILE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "IPU/Device/Elementwise.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Dialect/Tile/IR/ProgramStep.h"
#include "IPU/Dialect/Tile/IR/TileEnums.h.inc"
#include "IPU/Dialect/Tile/IR/TileInterfaces.h.inc"

#include <memory>

namespace mlir::ipu_tile {
/// The data files a context has read (lib/Dialect/Tile/DataFile.cpp).
struct DataFileCache;
} // namespace mlir::ipu_tile

#include "IPU/Dialect/Tile/IR/TileOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Tile/IR/TileOpsAttributes.h.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Tile/IR/TileOps.h.inc"

#endif
