//===- TileUtils.h - Bridges between the IR and plain C++ models -*- C++ -*-===//
//
// Passes adapt IR to the plain C++ libraries; these are the adapters.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DIALECT_TILE_IR_TILEUTILS_H
#define IPU_DIALECT_TILE_IR_TILEUTILS_H

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Target/TargetModel.h"

#include <optional>

namespace mlir::ipu_tile {

/// Every placed buffer starts on a multiple of this many bytes.
constexpr uint32_t kBufferAlignment = 8;

/// The target named by the nearest enclosing `ipu_tile.target` attribute.
std::optional<::ipu::TargetModel> lookupTarget(Operation *op);
/// Like lookupTarget, but emits an error on `op` when there is none.
FailureOr<::ipu::TargetModel> requireTarget(Operation *op);

/// The value of an integer attribute as int64_t, honouring its signedness,
/// or nothing when it does not fit.
std::optional<int64_t> toInt64(IntegerAttr attr);

/// The element type of an MLIR type, if the machine handles it.
std::optional<::ipu::ElementType> toElementType(Type type);
Type fromElementType(MLIRContext *context, ::ipu::ElementType type);

/// The block layout of a 2-D tensor type with a `#ipu_tile.layout` encoding.
std::optional<::ipu::BlockLayout> toBlockLayout(RankedTensorType type);
/// The encoding that describes `layout` (shape and type come from the tensor).
LayoutAttr toLayoutAttr(MLIRContext *context, const ::ipu::BlockLayout &layout);

} // namespace mlir::ipu_tile

#endif // IPU_DIALECT_TILE_IR_TILEUTILS_H
