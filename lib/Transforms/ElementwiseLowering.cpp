//===- ElementwiseLowering.cpp - ipu_tile.elementwise as a generated kernel ===//
//
// An elementwise op runs where its first full input already is: its result
// takes that layout, other full inputs are brought to it, a row input (a
// bias) is laid out as one row per column block on every tile of the
// block's column, a scalar on every tile. It lowers to one compute set of a
// generated kernel (an ipu_tile.kernel holding its body, shared by every op
// with the same body), with no exchange when its inputs are in place.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Elementwise.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ::ipu::BlockLayout;

namespace {

/// Where `value` is or will be: its encoding; for a function argument the
/// layout it arrives in; for an op result the layout its op says.
std::optional<BlockLayout> producerLayout(Value value,
                                          const ::ipu::TargetModel &target) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getEncoding())
    return toBlockLayout(type);
  std::optional<::ipu::ElementType> element = toElementType(type.getElementType());
  if (!element || !type.hasStaticShape() || type.getRank() < 1)
    return std::nullopt;
  if (isa<BlockArgument>(value)) {
    const int64_t cols = type.getShape().back();
    return ::ipu::arrivalLayout(type.getNumElements() / cols, cols, *element,
                                target);
  }
  auto producer = value.getDefiningOp<TileLowerableOpInterface>();
  BlockLayout layout;
  if (!producer ||
      !producer.getResultLayout(cast<OpResult>(value).getResultNumber(), layout))
    return std::nullopt;
  return layout;
}

/// The layout of the op's result: its first full input's, retyped.
std::optional<BlockLayout> resultLayout(ElementwiseOp op) {
  std::optional<::ipu::TargetModel> target = lookupTarget(op);
  std::optional<unsigned> first = op.getFirstFullInput();
  if (!target || !first)
    return std::nullopt;
  std::optional<BlockLayout> layout = producerLayout(op.getInputs()[*first], *target);
  if (!layout)
    return std::nullopt;
  layout->type = *toElementType(op.getResult().getType().getElementType());
  return layout;
}

/// `out` with its rows folded to one: column block j on every tile that
/// holds a block (b, i, j) of `out`, for a row input of `type`.
BlockLayout rowLayout(const BlockLayout &out, ::ipu::ElementType type) {
  BlockLayout row;
  row.rows = 1;
  row.cols = out.cols;
  row.type = type;
  row.gridRows = 1;
  row.gridCols = out.gridCols;
  for (uint32_t j = 0; j <= out.gridCols; ++j)
    row.colSplits.push_back(j < out.gridCols ? out.blockColBegin(j) : out.cols);
  row.replicas = out.gridBatches * out.gridRows * out.replicas;
  for (uint32_t j = 0; j < out.gridCols; ++j)
    for (uint32_t b = 0; b < out.gridBatches; ++b)
      for (uint32_t i = 0; i < out.gridRows; ++i)
        for (uint32_t r = 0; r < out.replicas; ++r)
          row.tileMap.push_back(static_cast<uint32_t>(out.tileOf(b, i, j, r)));
  return row;
}

/// A single element on every tile of `out`.
BlockLayout scalarLayout(const BlockLayout &out, ::ipu::ElementType type) {
  BlockLayout scalar;
  scalar.rows = scalar.cols = 1;
  scalar.type = type;
  scalar.tileMap = out.tileList();
  scalar.replicas = static_cast<uint32_t>(scalar.tileMap.size());
  return scalar;
}

struct ElementwiseLowering
    : public TileLowerableOpInterface::ExternalModel<ElementwiseLowering,
                                                     ElementwiseOp> {
  StringRef getTileNamePrefix(Operation *) const { return "ew"; }
  StringRef getOperandName(Operation *, unsigned operand) const {
    static const char *const names[] = {"in0", "in1", "in2", "in3",
                                        "in4", "in5", "in6", "in7"};
    return operand < 8 ? names[operand] : "in";
  }
  void noteOperandTransposed(Operation *, unsigned) const {}

  bool getOperandLayout(Operation *operation, unsigned operand,
                        OperandLayout &layout) const {
    auto op = cast<ElementwiseOp>(operation);
    std::optional<BlockLayout> out = resultLayout(op);
    std::optional<::ipu::Broadcast> broadcast = op.getBroadcast(operand);
    if (!out || !broadcast)
      return false;
    ::ipu::ElementType type =
        *toElementType(cast<ShapedType>(op.getInputs()[operand].getType()).getElementType());
    switch (*broadcast) {
    case ::ipu::Broadcast::Full:
      layout.layout = *out;
      layout.layout.type = type;
      break;
    case ::ipu::Broadcast::Row:
      layout.layout = rowLayout(*out, type);
      break;
    case ::ipu::Broadcast::Scalar:
      layout.layout = scalarLayout(*out, type);
      break;
    }
    layout.memoryClass = ::ipu::MemoryClass::Standard;
    return true;
  }

  bool getResultLayout(Operation *operation, unsigned, BlockLayout &layout) const {
    std::optional<BlockLayout> out = resultLayout(cast<ElementwiseOp>(operation));
    if (!out)
      return false;
    layout = *out;
    return true;
  }

  /// Inputs other than the first full one stream from the host straight
  /// into the layout the op needs; a bias or scalar stays resident.
  bool getResidentLayout(Operation *operation, unsigned operand,
                         OperandLayout &resident) const {
    auto op = cast<ElementwiseOp>(operation);
    if (op.getFirstFullInput() == operand ||
        !getOperandLayout(operation, operand, resident))
      return false;
    resident.weight = op.getBroadcast(operand) != ::ipu::Broadcast::Full;
    return true;
  }

  LogicalResult lowerToTile(Operation *operation, ProgramBuilder &program,
                            StringRef name) const;
};

LogicalResult ElementwiseLowering::lowerToTile(Operation *operation,
                                               ProgramBuilder &program,
                                               StringRef name) const {
  auto op = cast<ElementwiseOp>(operation);
  std::optional<BlockLayout> out = resultLayout(op);
  if (!out)
    return op.emitError("the layout of the result cannot be derived from its "
                        "first full input: run --ipu-assign-layouts first");
  SmallVector<BufferOp> operands;
  SmallVector<::ipu::Broadcast> broadcasts;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    OperandLayout wanted;
    getOperandLayout(op, index, wanted);
    FailureOr<BufferOp> buffer = program.operandBuffer(op, index, wanted);
    if (failed(buffer))
      return failure();
    if (program.isTransposedFromHost(input))
      return op.emitError("input ") << index << " holds its argument transposed";
    operands.push_back(*buffer);
    broadcasts.push_back(*op.getBroadcast(index));
  }
  auto resultType = op.getResult().getType();
  BufferOp result = program.createBuffer(
      op.getLoc(), name.str() + ".out", resultType.getElementType(),
      bufferShape(resultType, *out), *out, ::ipu::MemoryClass::Standard);
  operands.push_back(result);
  FailureOr<KernelOp> kernel =
      program.getOrCreateKernel(op.getLoc(), name, op.getBody().front(), broadcasts);
  if (failed(kernel))
    return failure();
  std::vector<uint32_t> tiles = out->tileList();
  program.createComputeSet(op.getLoc(), name, kernel->getSymName(), operands,
                           SmallVector<int32_t>(tiles.begin(), tiles.end()));
  program.setResultBuffer(op.getResult(), result);
  OpBuilder &builder = program.getBuilder();
  program.addReference(
      "elementwise", op.getInputs(), op.getResult(),
      {builder.getNamedAttr("type", TypeAttr::get(resultType.getElementType())),
       builder.getNamedAttr("kernel", kernel->getSymNameAttr())});
  // The busiest tile's block sets the compute set's time.
  FailureOr<std::unique_ptr<::ipu::ElementwiseKernel>> built = kernel->buildKernel();
  if (failed(built))
    return failure();
  uint64_t cycles = 0;
  for (uint32_t b = 0; b < out->gridBatches; ++b)
    for (uint32_t i = 0; i < out->gridRows; ++i)
      for (uint32_t j = 0; j < out->gridCols; ++j)
        cycles = std::max(cycles, ::ipu::estimateElementwise(
                                      program.getTarget(), (*built)->body(),
                                      out->blockBatches(b) * out->blockRows(i),
                                      out->blockCols(j))
                                      .total);
  program.addEstimatedCycles(static_cast<int64_t>(cycles));
  return success();
}

} // namespace

void mlir::ipu_tile::registerElementwiseLoweringModel(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, IPUTileDialect *) {
    ElementwiseOp::attachInterface<ElementwiseLowering>(*context);
  });
}
