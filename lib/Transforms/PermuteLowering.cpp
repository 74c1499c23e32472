//===- PermuteLowering.cpp - ipu_tile.permute as one exchange phase --------===//
//
// A permute reads its source wherever it is and leaves its result in the
// layout activations arrive in (rows split over the tiles; batches side by
// side, each on tiles of its own), which the consumers' plans gather from as
// from a host stream. Its one phase moves each run along the last dim whole.
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Exchange/Phase.h"
#include "IPU/Exchange/Timing.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ipu::BlockLayout;

namespace {

/// The arrival layout of the permute's result: batched when its leading
/// dims hold several matrices, else its rows folded.
std::optional<BlockLayout> permuteResultLayout(PermuteOp op) {
  std::optional<ipu::TargetModel> target = lookupTarget(op);
  RankedTensorType type = op.getResult().getType();
  std::optional<ipu::ElementType> element = toElementType(type.getElementType());
  if (!target || !element || type.getRank() < 1)
    return std::nullopt;
  int64_t batches = 1;
  if (type.getRank() > 2)
    for (int64_t extent : type.getShape().drop_back(2))
      batches *= extent;
  const int64_t cols = type.getShape().back();
  if (type.getRank() == 1) {
    // A vector (a row reduction's values) is one row, its columns spread in
    // blocks of whole words of every element type (4 elements), which an
    // f16 or f8 value computed from it keeps: a row no tile could hold
    // fits, and each tile keeps the values of the rows it reduced.
    ipu::BlockLayout layout = ipu::arrivalLayout(1, cols, *element, *target);
    constexpr int64_t grain = 4;
    const int64_t grains = (cols + grain - 1) / grain;
    layout.gridCols = static_cast<uint32_t>(
        std::max<int64_t>(1, std::min<int64_t>(target->tiles, grains)));
    if (layout.gridCols > 1) {
      for (uint32_t j = 0; j < layout.gridCols; ++j)
        layout.colSplits.push_back(ipu::BlockLayout::splitBegin(grains, layout.gridCols, j) *
                                   grain);
      layout.colSplits.push_back(cols);
    }
    layout.tileColStride = 1;
    return layout;
  }
  const int64_t rows = type.getShape()[type.getRank() - 2];
  if (batches > 1)
    return ipu::arrivalLayout(rows, cols, *element, *target, batches);
  return ipu::arrivalLayout(rows, cols, *element, *target);
}

/// Whether `op` only reshapes: it reads in order, its view the source's
/// shape.
bool isReshape(PermuteOp op) {
  return readsInOrder(op) && op.getView() == op.getSource().getType().getShape();
}

/// The layout a reshape's result has in its source's buffer, when the
/// source's layout already holds it: no batches, and the same rows of the
/// same columns (only unit or leading dims regrouped).
std::optional<BlockLayout> layoutInPlace(PermuteOp op, uint32_t wordBytes) {
  if (!isReshape(op))
    return std::nullopt;
  std::optional<BlockLayout> from = toBlockLayout(op.getSource().getType(), wordBytes);
  RankedTensorType type = op.getResult().getType();
  if (!from || from->batches != 1 || type.getRank() < 2 || from->gridBatches != 1)
    return std::nullopt;
  const int64_t cols = type.getShape().back();
  if (from->cols != cols || from->rows != type.getNumElements() / cols)
    return std::nullopt;
  return from;
}

bool sameLayout(const BlockLayout &a, const BlockLayout &b) {
  return a.rows == b.rows && a.cols == b.cols && a.type == b.type &&
         a.gridRows == b.gridRows && a.gridCols == b.gridCols &&
         a.tileBase == b.tileBase && a.tileRowStride == b.tileRowStride &&
         a.tileColStride == b.tileColStride && a.replicas == b.replicas &&
         a.replicaStride == b.replicaStride && a.rowSplits == b.rowSplits &&
         a.colSplits == b.colSplits && a.tileMap == b.tileMap &&
         a.batches == b.batches && a.gridBatches == b.gridBatches &&
         a.tileBatchStride == b.tileBatchStride && a.batchSplits == b.batchSplits &&
         a.wordBytes == b.wordBytes;
}

} // namespace

bool mlir::ipu_tile::isInPlaceReshape(PermuteOp op) {
  if (!isReshape(op))
    return false;
  const uint32_t word = exchangeWordBytes(op);
  RankedTensorType sourceType = op.getSource().getType(), resultType = op.getResult().getType();
  std::optional<BlockLayout> from = toBlockLayout(sourceType, word);
  std::optional<BlockLayout> to = toBlockLayout(resultType, word);
  return from && to && sameLayout(*from, *to) &&
         bufferShape(resultType, *to) == bufferShape(sourceType, *from);
}

namespace {

struct PermuteLowering
    : public TileLowerableOpInterface::ExternalModel<PermuteLowering, PermuteOp> {
  StringRef getTileNamePrefix(Operation *) const { return "permute"; }
  StringRef getOperandName(Operation *, unsigned) const { return "in"; }
  void noteOperandTransposed(Operation *, unsigned) const {}
  bool getResidentLayout(Operation *, unsigned, OperandLayout &) const { return false; }
  /// Any layout will do: the phase reads the source where it is.
  bool getOperandLayout(Operation *, unsigned, OperandLayout &) const { return false; }
  bool keepsLeadingDims(Operation *operation, unsigned) const {
    std::optional<BlockLayout> layout = permuteResultLayout(cast<PermuteOp>(operation));
    return layout && layout->batches > 1;
  }
  bool getResultLayout(Operation *operation, unsigned, BlockLayout &layout) const {
    auto op = cast<PermuteOp>(operation);
    // A reshape stays where its source is when that layout holds it.
    std::optional<BlockLayout> result = layoutInPlace(op, exchangeWordBytes(op));
    if (!result)
      result = permuteResultLayout(op);
    if (!result)
      return false;
    layout = *result;
    return true;
  }

  LogicalResult lowerToTile(Operation *operation, ProgramBuilder &program,
                            StringRef name) const {
    auto op = cast<PermuteOp>(operation);
    BufferOp source = program.lookupBuffer(op.getSource());
    std::optional<BlockLayout> from =
        source ? toBlockLayout(source.getTensorType(), program.getTarget().exchangeWordBytes())
               : std::nullopt;
    std::optional<BlockLayout> to =
        toBlockLayout(op.getResult().getType(), program.getTarget().exchangeWordBytes());
    if (!from || !to)
      return op.emitError("the source has no buffer with a layout, or the "
                          "result no arrival layout: run --ipu-assign-layouts first");
    // A reshape whose result its source's buffer already holds moves
    // nothing.
    RankedTensorType resultType = op.getResult().getType();
    if (isInPlaceReshape(op) && ArrayRef<int64_t>(bufferShape(resultType, *to)) ==
                                    source.getTensorType().getShape()) {
      program.aliasResult(op.getResult(), op.getSource());
      return success();
    }
    ipu::Permutation permutation = op.getPlainPermutation();
    const ipu::TargetModel &target = program.getTarget();
    ipu::Rearrangement moves;
    if (std::optional<std::string> error =
            ipu::planPermutation(*from, *to, permutation, target.tiles, moves))
      return op.emitError("cannot permute: ") << *error;
    RankedTensorType type = op.getResult().getType();
    BufferOp result = program.createBuffer(op.getLoc(), name.str() + ".out",
                                           type.getElementType(), bufferShape(type, *to),
                                           *to, ipu::MemoryClass::Standard);
    program.createPhase(op.getLoc(), name, {{source, result}}, &permutation);
    // The phase timed as the compiler will schedule it (on buffer-like
    // addresses: placement comes later) and a sync on each side.
    ipu::ExchangePhase timed;
    timed.tiles = target.tiles;
    ipu::TransferAddresses addresses;
    uint32_t next = target.allocatableBase(ipu::MemoryClass::Standard);
    ipu::appendMove(target, moves, timed, addresses, next);
    program.addEstimatedCycles(static_cast<int64_t>(
        ipu::plannedPhaseCost(target, timed, addresses).cycles +
        2 * uint64_t(target.syncCycles)));
    program.setResultBuffer(op.getResult(), result);
    OpBuilder &builder = program.getBuilder();
    program.addReference(
        "permute", op.getSource(), op.getResult(),
        {builder.getNamedAttr("type", TypeAttr::get(type.getElementType())),
         builder.getNamedAttr("view", op.getViewAttr()),
         builder.getNamedAttr("permutation", op.getPermutationAttr()),
         builder.getNamedAttr("offsets", op.getOffsetsAttr()
                                             ? op.getOffsetsAttr()
                                             : builder.getDenseI64ArrayAttr({})),
         builder.getNamedAttr("sizes", op.getSizesAttr() ? op.getSizesAttr()
                                                         : builder.getDenseI64ArrayAttr({})),
         // The value as its buffer streams it (leading dims folded into
         // the rows when the layout has no batches).
         builder.getNamedAttr("shape", builder.getDenseI64ArrayAttr(bufferShape(type, *to)))});
    return success();
  }
};

} // namespace

void mlir::ipu_tile::registerPermuteLoweringModel(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, IPUTileDialect *) {
    PermuteOp::attachInterface<PermuteLowering>(*context);
  });
}
