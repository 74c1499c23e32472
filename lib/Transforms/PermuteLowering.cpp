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
  if (!target || !element || type.getRank() < 2)
    return std::nullopt;
  int64_t batches = 1;
  for (int64_t extent : type.getShape().drop_back(2))
    batches *= extent;
  const int64_t rows = type.getShape()[type.getRank() - 2];
  const int64_t cols = type.getShape().back();
  if (batches > 1)
    return ipu::arrivalLayout(rows, cols, *element, *target, batches);
  return ipu::arrivalLayout(rows, cols, *element, *target);
}

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
    std::optional<BlockLayout> result = permuteResultLayout(cast<PermuteOp>(operation));
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
    std::optional<BlockLayout> to = permuteResultLayout(op);
    if (!from || !to)
      return op.emitError("the source has no buffer with a layout, or the "
                          "result no arrival layout: run --ipu-assign-layouts first");
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
