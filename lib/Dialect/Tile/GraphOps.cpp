//===- GraphOps.cpp - Verifiers of the graph-level layout ops -------------===//

#include "IPU/Dialect/Tile/IR/Tile.h"

using namespace mlir;
using namespace mlir::ipu_tile;

static bool hasLayout(Type type) {
  return isa_and_nonnull<LayoutAttr>(cast<RankedTensorType>(type).getEncoding());
}

LogicalResult FromHostOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (!isa<BlockArgument>(getSource()))
    return emitOpError("source must be a function argument (a host tensor)");
  if (source.getEncoding())
    return emitOpError("source is a host tensor and has no layout, got ")
           << source;
  if (!hasLayout(result))
    return emitOpError("result must have a #ipu_tile.layout encoding, got ")
           << result;
  if (source.getElementType() != result.getElementType())
    return emitOpError("element types differ: ")
           << source.getElementType() << " and " << result.getElementType();
  SmallVector<int64_t> shape(source.getShape());
  // A transposing stream transposes each matrix: the last two dims.
  if (getTranspose())
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  if (ArrayRef<int64_t>(shape) != result.getShape())
    return emitOpError("result shape must be the argument's")
           << (getTranspose() ? " transposed" : "") << ", got " << result;
  return success();
}

LogicalResult RelayoutOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (!hasLayout(source) || !hasLayout(result))
    return emitOpError("source and result must have #ipu_tile.layout "
                       "encodings, got ")
           << source << " and " << result;
  if (source.getShape() != result.getShape() ||
      source.getElementType() != result.getElementType())
    return emitOpError("changes the tensor, not only its layout: ")
           << source << " to " << result;
  return success();
}

//===----------------------------------------------------------------------===//
// PermuteOp
//===----------------------------------------------------------------------===//

ipu::Permutation PermuteOp::getPlainPermutation() {
  ipu::Permutation permutation{
      std::vector<int64_t>(getView().begin(), getView().end()),
      std::vector<int64_t>(getPermutation().begin(), getPermutation().end()), {}, {}};
  if (getOffsets())
    permutation.offsets.assign(getOffsets()->begin(), getOffsets()->end());
  if (getSizes())
    permutation.sizes.assign(getSizes()->begin(), getSizes()->end());
  return permutation;
}

LogicalResult PermuteOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (!source.hasStaticShape() || !result.hasStaticShape())
    return emitOpError("source and result must have static shapes, got ")
           << source << " and " << result;
  if (source.getElementType() != result.getElementType())
    return emitOpError("source and result hold different element types: ")
           << source.getElementType() << " and " << result.getElementType();
  if (getOffsets().has_value() != getSizes().has_value())
    return emitOpError("takes `offsets` and `sizes` together");
  ipu::Permutation permutation = getPlainPermutation();
  if (std::optional<std::string> error = permutation.validate())
    return emitOpError(*error);
  int64_t elements = 1, windowElements = 1;
  for (int64_t extent : permutation.view)
    elements *= extent;
  const std::vector<int64_t> extents = permutation.resultExtents();
  for (int64_t extent : extents)
    windowElements *= extent;
  if (source.getNumElements() != elements || result.getNumElements() != windowElements) {
    InFlightDiagnostic diagnostic = emitOpError("view of ") << elements << " elements";
    if (getSizes())
      diagnostic << " (a window of " << windowElements << ")";
    return diagnostic << " for a source of " << source.getNumElements()
                      << " and a result of " << result.getNumElements();
  }
  // Runs along the last dim must not straddle the result's rows.
  if (result.getRank() < 1 || result.getShape().back() % extents.back() != 0)
    return emitOpError("the result's rows of ")
           << (result.getRank() < 1 ? 1 : result.getShape().back())
           << " elements are not whole runs of the view's last dim (" << extents.back()
           << ")";
  return success();
}

LogicalResult RepeatOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() < 1)
    return emitOpError("body must take the previous layer's value as its first argument");
  Type carried = body.getArgument(0).getType();
  if (getInput().getType() != carried)
    return emitOpError("input has type ")
           << getInput().getType() << ", but the body reads the previous layer's value as "
           << carried;
  if (getResult().getType() != carried)
    return emitOpError("result has type ")
           << getResult().getType() << ", but the body passes on " << carried;
  const unsigned slots = getNumWeightSlots();
  const int64_t count = getCount();
  if (int64_t(getWeights().size()) != int64_t(slots) * count)
    return emitOpError("has ") << getWeights().size() << " weights; its body takes "
                               << slots << " weight slots, so " << count
                               << " layers need " << int64_t(slots) * count;
  for (unsigned slot = 0; slot < slots; ++slot)
    for (int64_t layer = 0; layer < count; ++layer) {
      Value weight = getWeight(slot, static_cast<unsigned>(layer));
      if (weight.getType() != getWeightArgument(slot).getType())
        return emitOpError("weight slot ")
               << slot << " of layer " << layer << " has type " << weight.getType()
               << ", but the body reads the slot as " << getWeightArgument(slot).getType();
    }
  auto carry = dyn_cast<CarryOp>(body.getTerminator());
  if (!carry)
    return emitOpError("body must end with ipu_tile.carry");
  if (carry.getValue().getType() != carried)
    return carry.emitOpError("passes on ")
           << carry.getValue().getType() << ", but the next layer reads " << carried;
  return success();
}
