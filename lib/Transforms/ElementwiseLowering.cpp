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
using ipu::BlockLayout;

namespace {

/// Where `value` is or will be: its encoding; for a function argument the
/// layout it arrives in; for an op result the layout its op says.
std::optional<BlockLayout> producerLayout(Value value,
                                          const ipu::TargetModel &target) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getEncoding())
    return toBlockLayout(type, target.exchangeWordBytes());
  std::optional<ipu::ElementType> element = toElementType(type.getElementType());
  if (!element || !type.hasStaticShape() || type.getRank() < 1)
    return std::nullopt;
  // A repeated layer reads the previous one's value where the first layer
  // reads its input.
  if (RepeatOp repeat = carriedBy(value))
    return producerLayout(repeat.getInput(), target);
  // Repeated layers leave their value where their input arrived.
  if (auto repeat = value.getDefiningOp<RepeatOp>())
    return producerLayout(repeat.getInput(), target);
  if (isa<BlockArgument>(value)) {
    const int64_t cols = type.getShape().back();
    return ipu::arrivalLayout(type.getNumElements() / cols, cols, *element,
                                target);
  }
  auto producer = value.getDefiningOp<TileLowerableOpInterface>();
  BlockLayout layout;
  if (!producer ||
      !producer.getResultLayout(cast<OpResult>(value).getResultNumber(), layout))
    return std::nullopt;
  return layout;
}

/// The layout the op iterates in: its first full input's, retyped to
/// `type`.
std::optional<BlockLayout> iterationLayout(ElementwiseOp op, ipu::ElementType type) {
  std::optional<ipu::TargetModel> target = lookupTarget(op);
  std::optional<unsigned> first = op.getFirstFullInput();
  if (!target || !first)
    return std::nullopt;
  std::optional<BlockLayout> layout = producerLayout(op.getInputs()[*first], *target);
  if (!layout)
    return std::nullopt;
  layout->type = type;
  return layout;
}

/// The tiles of every row block (b, i) of `in`, one per column block (the
/// first replica's), in (b, i, j) order: a row group's replicas.
std::vector<uint32_t> rowGroupTiles(const BlockLayout &in) {
  std::vector<uint32_t> tiles;
  for (uint32_t b = 0; b < in.gridBatches; ++b)
    for (uint32_t i = 0; i < in.gridRows; ++i)
      for (uint32_t j = 0; j < in.gridCols; ++j)
        tiles.push_back(static_cast<uint32_t>(in.tileOf(b, i, j, 0)));
  return tiles;
}

/// Every row block (b, i) of `in` as one block of `cols` columns of `type`
/// on each tile that holds a part of it (the first replica's tiles, one
/// replica per column block): where a row statistic (cols 1) or a row's
/// partials (cols = in's column blocks) are on every tile that needs them.
BlockLayout rowGroupLayout(const BlockLayout &in, int64_t cols, ipu::ElementType type) {
  BlockLayout out;
  out.wordBytes = in.wordBytes;
  out.rows = in.rows;
  out.cols = cols;
  out.type = type;
  out.gridRows = in.gridRows;
  out.rowSplits = in.rowSplits;
  out.batches = in.batches;
  out.gridBatches = in.gridBatches;
  out.batchSplits = in.batchSplits;
  if (in.gridCols == 1 && in.replicas == 1) {
    out.tileBase = in.tileBase;
    out.tileRowStride = in.tileRowStride;
    out.tileBatchStride = in.tileBatchStride;
    out.tileMap = in.tileMap;
    return out;
  }
  out.replicas = in.gridCols;
  out.tileMap = rowGroupTiles(in);
  return out;
}

/// The f32 partials of a row reduction split over `in`'s column blocks,
/// gathered transposed, as [..., column blocks, R]: on every tile of row
/// group (b, i), a block of one row per column block holding that part's
/// values for the group's rows. Each part's values arrive as one contiguous
/// row, one message per source, where the untransposed [R, column blocks]
/// would scatter them one word apart.
BlockLayout gatheredPartialsLayout(const BlockLayout &in) {
  BlockLayout out;
  out.wordBytes = in.wordBytes;
  out.rows = in.gridCols;
  out.cols = in.rows;
  out.type = ipu::ElementType::F32;
  out.gridCols = in.gridRows;
  for (uint32_t i = 0; i <= in.gridRows; ++i)
    out.colSplits.push_back(i < in.gridRows ? in.blockRowBegin(i) : in.rows);
  out.batches = in.batches;
  out.gridBatches = in.gridBatches;
  out.batchSplits = in.batchSplits;
  out.replicas = in.gridCols;
  out.tileMap = rowGroupTiles(in);
  return out;
}

/// The layout of the op's result: the iteration layout, or for a reduction
/// one value per row on every tile of the row.
std::optional<BlockLayout> resultLayout(ElementwiseOp op) {
  ipu::ElementType type = *toElementType(op.getResult().getType().getElementType());
  std::optional<BlockLayout> layout = iterationLayout(op, type);
  if (layout && op.getReduce())
    return rowGroupLayout(*layout, 1, type);
  return layout;
}

/// `out` with its rows folded to one: column block j on every tile that
/// holds a block (b, i, j) of `out`, for a row input of `type`.
BlockLayout rowLayout(const BlockLayout &out, ipu::ElementType type) {
  BlockLayout row;
  row.wordBytes = out.wordBytes;
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
BlockLayout scalarLayout(const BlockLayout &out, ipu::ElementType type) {
  BlockLayout scalar;
  scalar.wordBytes = out.wordBytes;
  scalar.rows = scalar.cols = 1;
  scalar.type = type;
  scalar.tileMap = out.tileList();
  scalar.replicas = static_cast<uint32_t>(scalar.tileMap.size());
  return scalar;
}

/// Whether `value` is a weight slot of a repeated layer's body. Its long
/// rows stay in a home whether every layer's stays on the tiles or each
/// layer's streams in: streamed, the home takes one copy over the host
/// link where the readers' replicas would take one each.
bool isRepeatWeightSlot(Value value) {
  return isStreamedArgument(value) && !isFunctionArgument(value);
}

/// The op that reads a weight expansion's result, and as which operand,
/// when it takes it as a weight; the expansion runs where that op wants the
/// weight resident (expandedWeight).
std::optional<std::pair<TileLowerableOpInterface, unsigned>>
expansionReader(ElementwiseOp op, OperandLayout *resident = nullptr) {
  if (!expandedWeight(op.getResult()))
    return std::nullopt;
  OpOperand *use = &*op.getResult().use_begin();
  // A gathered weight's expansion runs in its home, and the gather (a
  // relayout) brings the expanded blocks to the reader.
  if (auto gather = dyn_cast<RelayoutOp>(use->getOwner()))
    if (gather.getResult().hasOneUse())
      use = &*gather.getResult().use_begin();
  auto reader = dyn_cast<TileLowerableOpInterface>(use->getOwner());
  OperandLayout wanted;
  if (!reader || !reader.getResidentLayout(use->getOperandNumber(), wanted) ||
      !wanted.weight)
    return std::nullopt;
  if (resident)
    *resident = wanted;
  return std::make_pair(reader, use->getOperandNumber());
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
  /// A weight expansion's input streamed in transposed: its result is the
  /// transpose too, which its reader then reads. (Only an expansion asks
  /// for a transposed stream; its input's shape has already changed, so it
  /// is not recognised by shape here.)
  void noteOperandTransposed(Operation *operation, unsigned) const {
    auto op = cast<ElementwiseOp>(operation);
    if (op.getInputs().size() != 1 || !op.getResult().hasOneUse())
      return;
    OpOperand &use = *op.getResult().use_begin();
    auto reader = dyn_cast<TileLowerableOpInterface>(use.getOwner());
    if (!reader)
      return;
    auto type = op.getResult().getType();
    SmallVector<int64_t> shape(type.getShape());
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
    op.getResult().setType(RankedTensorType::get(shape, type.getElementType()));
    reader.noteOperandTransposed(use.getOperandNumber());
  }

  bool getOperandLayout(Operation *operation, unsigned operand,
                        OperandLayout &layout) const {
    auto op = cast<ElementwiseOp>(operation);
    ipu::ElementType type =
        *toElementType(cast<ShapedType>(op.getInputs()[operand].getType()).getElementType());
    std::optional<BlockLayout> iteration = iterationLayout(op, type);
    std::optional<ipu::Broadcast> broadcast = op.getBroadcast(operand);
    if (!iteration || !broadcast)
      return false;
    switch (*broadcast) {
    case ipu::Broadcast::Full:
      layout.layout = *iteration;
      break;
    case ipu::Broadcast::Row:
      layout.layout = rowLayout(*iteration, type);
      break;
    case ipu::Broadcast::Scalar:
      layout.layout = scalarLayout(*iteration, type);
      break;
    case ipu::Broadcast::Column:
      layout.layout = rowGroupLayout(*iteration, 1, type);
      break;
    }
    // A bias, scale or scalar streamed from the host stays resident for
    // the program, replicated over the op's tiles: in interleaved memory,
    // which the weights share, so that standard memory (the only class
    // that holds code and the AMP's partials) keeps its room.
    layout.memoryClass = isResidentArgument(op, operand)
                             ? ipu::MemoryClass::Interleaved
                             : ipu::MemoryClass::Standard;
    // A weight expansion reads the weight where it stays.
    OperandLayout resident;
    if (expansionReader(op, &resident))
      layout.memoryClass = resident.memoryClass;
    return true;
  }

  /// A weight expansion leaves the weight in the class its reader wants it
  /// in (the AMP's weights class); other results are in standard memory.
  ipu::MemoryClass getResultMemoryClass(Operation *operation, unsigned) const {
    auto reader = expansionReader(cast<ElementwiseOp>(operation));
    OperandLayout wanted;
    if (reader && reader->first.getOperandLayout(reader->second, wanted))
      return wanted.memoryClass;
    return ipu::MemoryClass::Standard;
  }

  static bool isResidentArgument(ElementwiseOp op, unsigned operand) {
    std::optional<ipu::Broadcast> broadcast = op.getBroadcast(operand);
    // An argument, or once --ipu-assign-layouts ran, its stream (a
    // repeated layer's row broadcast from its home: its relayout).
    Value input = op.getInputs()[operand];
    if (auto relayout = input.getDefiningOp<RelayoutOp>())
      input = relayout.getSource();
    return (isStreamedArgument(input) || input.getDefiningOp<FromHostOp>()) &&
           broadcast &&
           (*broadcast == ipu::Broadcast::Row ||
            *broadcast == ipu::Broadcast::Scalar);
  }

  bool getResultLayout(Operation *operation, unsigned, BlockLayout &layout) const {
    std::optional<BlockLayout> out = resultLayout(cast<ElementwiseOp>(operation));
    if (!out)
      return false;
    layout = *out;
    return true;
  }

  /// Inputs other than the first full one stream from the host straight
  /// into the layout the op needs; a bias or scalar stays resident (a
  /// repeated layer's row in its home, rowHomeLayout). A
  /// weight expansion's weight streams, in its own type, into where the
  /// expansion's reader wants the weight (transposed if it wants it so).
  bool getResidentLayout(Operation *operation, unsigned operand,
                         OperandLayout &resident) const {
    auto op = cast<ElementwiseOp>(operation);
    if (expansionReader(op, &resident)) {
      resident.layout.type =
          *toElementType(cast<RankedTensorType>(op.getInputs().front().getType()).getElementType());
      return true;
    }
    if (op.getFirstFullInput() == operand ||
        !getOperandLayout(operation, operand, resident))
      return false;
    resident.weight = isResidentArgument(op, operand);
    Value input = op.getInputs()[operand];
    std::optional<ipu::TargetModel> target = lookupTarget(op);
    auto type = cast<RankedTensorType>(input.getType());
    if (resident.weight && isRepeatWeightSlot(input) && target &&
        op.getBroadcast(operand) == ipu::Broadcast::Row && rowStaysInHome(type)) {
      resident.layout = rowHomeLayout(
          type.getShape().back(), *toElementType(type.getElementType()),
          cast<BlockArgument>(input).getArgNumber() - 1, *target);
    }
    return true;
  }

  LogicalResult lowerToTile(Operation *operation, ProgramBuilder &program,
                            StringRef name) const;
};

/// The largest estimate of `kernel`'s vertices over the blocks of `layout`
/// (the block the vertex iterates over): the compute set's time.
uint64_t slowestVertex(const ipu::TargetModel &target, const ipu::ElementwiseBody &body,
                       const BlockLayout &layout) {
  uint64_t cycles = 0;
  for (uint32_t b = 0; b < layout.gridBatches; ++b)
    for (uint32_t i = 0; i < layout.gridRows; ++i)
      for (uint32_t j = 0; j < layout.gridCols; ++j)
        cycles = std::max(cycles, ipu::estimateElementwise(
                                      target, body, layout.blockBatches(b) * layout.blockRows(i),
                                      layout.blockCols(j))
                                      .total);
  return cycles;
}

LogicalResult ElementwiseLowering::lowerToTile(Operation *operation,
                                               ProgramBuilder &program,
                                               StringRef name) const {
  auto op = cast<ElementwiseOp>(operation);
  std::optional<BlockLayout> out = resultLayout(op);
  if (!out)
    return op.emitError("the layout of the result cannot be derived from its "
                        "first full input: run --ipu-assign-layouts first");
  SmallVector<BufferOp> operands;
  SmallVector<ipu::Broadcast> broadcasts;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    OperandLayout wanted;
    getOperandLayout(op, index, wanted);
    FailureOr<BufferOp> buffer = program.operandBuffer(op, index, wanted);
    if (failed(buffer))
      return failure();
    // A weight expansion of a transposed stream computes the transpose of
    // what it would on the host's value: its reference reads the stream as
    // the device holds it.
    if (program.isTransposedFromHost(input) && expandedWeight(op.getResult()))
      program.referenceAsDeviceHolds(input);
    if (program.isTransposedFromHost(input))
      return op.emitError("input ") << index << " holds its argument transposed";
    operands.push_back(*buffer);
    broadcasts.push_back(*op.getBroadcast(index));
  }
  auto resultType = op.getResult().getType();
  BufferOp result = program.createBuffer(
      op.getLoc(), name.str() + ".out", resultType.getElementType(),
      bufferShape(resultType, *out), *out, getResultMemoryClass(op, 0));
  const ipu::RowReduction reduction = op.getRowReduction();
  const ipu::TargetModel &target = program.getTarget();
  // A reduction of rows split over column blocks first reduces each tile's
  // part, from the identity (the op's init is applied once, at the end).
  BlockLayout iteration = *iterationLayout(op, ipu::ElementType::F32);
  const bool split = reduction != ipu::RowReduction::None && iteration.gridCols > 1;
  const double partialInit = split && reduction == ipu::RowReduction::Add
                                 ? ipu::reductionIdentity(reduction)
                                 : op.getInitValue();
  FailureOr<KernelOp> kernel = program.getOrCreateKernel(
      op.getLoc(), name, op.getBody().front(), broadcasts, reduction, partialInit);
  if (failed(kernel))
    return failure();
  FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> built = kernel->buildKernel();
  if (failed(built))
    return failure();
  std::vector<uint32_t> tiles = iteration.tileList();
  uint64_t cycles = slowestVertex(target, (*built)->body(), iteration);
  KernelOp referenceKernel = *kernel;
  if (!split) {
    operands.push_back(result);
    program.createComputeSet(op.getLoc(), name, kernel->getSymName(), operands,
                             SmallVector<int32_t>(tiles.begin(), tiles.end()));
  } else {
    // Each tile's partials, one per row of its block, as column j of a
    // [..., R, column blocks] tensor; one phase gives every tile of a row
    // group all of them, and each combines them into the row's value.
    SmallVector<int64_t> shape(resultType.getShape());
    shape.back() = iteration.gridCols;
    auto partialsType = RankedTensorType::get(shape, resultType.getElementType());
    BlockLayout partials = iteration;
    partials.cols = iteration.gridCols;
    partials.colSplits.clear();
    for (uint32_t j = 0; j <= iteration.gridCols; ++j)
      partials.colSplits.push_back(j);
    Type f32 = Float32Type::get(op.getContext());
    BufferOp partialBuffer = program.createBuffer(
        op.getLoc(), name.str() + ".partials", f32, bufferShape(partialsType, partials),
        partials, ipu::MemoryClass::Standard);
    operands.push_back(partialBuffer);
    program.createComputeSet(op.getLoc(), name, kernel->getSymName(),
                             operands, SmallVector<int32_t>(tiles.begin(), tiles.end()));
    // They arrive transposed, a row per part ([..., column blocks, R]), for
    // a column reduction from the identity; a sum from another init keeps
    // them [..., R, column blocks] for a generated kernel that adds it.
    const bool byColumns = ipu::combinesByColumns(reduction, op.getInitValue());
    BlockLayout gathered = byColumns ? gatheredPartialsLayout(iteration)
                                     : rowGroupLayout(iteration, iteration.gridCols,
                                                      ipu::ElementType::F32);
    ipu::Permutation transpose{{iteration.batches, iteration.rows, iteration.gridCols, 1},
                               {0, 2, 1, 3}};
    const ipu::Permutation *permutation = byColumns ? &transpose : nullptr;
    BufferOp gatheredBuffer = program.createBuffer(
        op.getLoc(), name.str() + ".gathered", f32, bufferShape(partialsType, gathered),
        gathered, ipu::MemoryClass::Standard);
    program.createPhase(op.getLoc(), name.str() + ".partials.gather",
                        {{partialBuffer, gatheredBuffer}},
                        permutation);
    ipu::RelayoutCost phase;
    if (std::optional<std::string> error =
            ipu::relayoutCost(partials, gathered, target, phase, permutation))
      return op.emitError("the partials of a split row reduction cannot be "
                          "gathered: ") << *error;
    std::vector<uint32_t> combineTiles = out->tileList();
    cycles += phase.cycles;
    uint64_t combineCycles = 0;
    for (uint32_t b = 0; b < iteration.gridBatches; ++b)
      for (uint32_t i = 0; i < iteration.gridRows; ++i)
        combineCycles = std::max(
            combineCycles, ipu::estimateSplitRowCombine(
                               target, reduction, op.getInitValue(), iteration.blockBatches(b),
                               iteration.blockRows(i), iteration.gridCols, out->type));
    cycles += combineCycles;
    if (byColumns) {
      program.createComputeSet(op.getLoc(), name.str() + ".combine",
                               *ipu::columnReductionKernel(reduction), {gatheredBuffer, result},
                               SmallVector<int32_t>(combineTiles.begin(), combineTiles.end()));
    } else {
      // The partials' reduction, from the op's init. Its body is the
      // identity, held by a scratch op for as long as the kernel takes to
      // copy it.
      OpBuilder scratchBuilder(op);
      auto scratch = ElementwiseOp::create(scratchBuilder, op.getLoc(),
                                           op.getResult().getType(),
                                           ValueRange{op.getResult()});
      Block &block = scratch.getBody().front();
      scratchBuilder.setInsertionPointToStart(&block);
      YieldOp::create(scratchBuilder, op.getLoc(), block.getArgument(0));
      FailureOr<KernelOp> combine = program.getOrCreateKernel(
          op.getLoc(), name, block, {ipu::Broadcast::Full}, reduction, op.getInitValue());
      scratch.erase();
      if (failed(combine))
        return failure();
      FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> combineBuilt = combine->buildKernel();
      if (failed(combineBuilt))
        return failure();
      program.createComputeSet(op.getLoc(), name.str() + ".combine", combine->getSymName(),
                               {gatheredBuffer, result},
                               SmallVector<int32_t>(combineTiles.begin(), combineTiles.end()));
    }
    // The reference evaluates the op as the graph states it.
    if (partialInit != op.getInitValue()) {
      FailureOr<KernelOp> whole = program.getOrCreateKernel(
          op.getLoc(), name, op.getBody().front(), broadcasts, reduction, op.getInitValue());
      if (failed(whole))
        return failure();
      referenceKernel = *whole;
    }
  }
  std::optional<unsigned> shapeLike = op.getFirstFullInput();
  program.setResultBuffer(op.getResult(), result,
                          shapeLike ? op->getOperand(*shapeLike) : Value());
  OpBuilder &builder = program.getBuilder();
  program.addReference(
      "elementwise", op.getInputs(), op.getResult(),
      {builder.getNamedAttr("type", TypeAttr::get(resultType.getElementType())),
       builder.getNamedAttr("kernel", referenceKernel.getSymNameAttr())});
  program.addEstimatedCycles(static_cast<int64_t>(cycles));
  return success();
}

} // namespace

bool mlir::ipu_tile::rowStaysInHome(RankedTensorType type) {
  return uint64_t(type.getNumElements()) * ipu::elementBytes(*toElementType(type.getElementType())) >
         rowHomeBlockBytes;
}

ipu::BlockLayout mlir::ipu_tile::rowHomeLayout(int64_t cols, ipu::ElementType type,
                                               unsigned slot,
                                               const ipu::TargetModel &target) {
  const int64_t bytes = static_cast<int64_t>(ipu::elementBytes(type));
  const int64_t word = target.exchangeWordBytes();
  // Blocks start on exchange words: the broadcast moves whole words.
  const int64_t wordElements = std::max<int64_t>(1, word / bytes);
  int64_t perBlock = std::max<int64_t>(wordElements, static_cast<int64_t>(rowHomeBlockBytes) / bytes);
  if ((cols + perBlock - 1) / perBlock > int64_t(target.tiles))
    perBlock = ((cols + target.tiles - 1) / target.tiles + wordElements - 1) /
               wordElements * wordElements;
  const int64_t blocks = (cols + perBlock - 1) / perBlock;
  BlockLayout home;
  home.wordBytes = static_cast<uint32_t>(word);
  home.rows = 1;
  home.cols = cols;
  home.type = type;
  home.gridRows = 1;
  home.gridCols = static_cast<uint32_t>(blocks);
  for (int64_t j = 0; j < blocks; ++j)
    home.colSplits.push_back(j * perBlock);
  home.colSplits.push_back(cols);
  // Slots on consecutive tiles, so that no tile holds every slot's blocks.
  for (int64_t j = 0; j < blocks; ++j)
    home.tileMap.push_back(static_cast<uint32_t>((uint64_t(slot) * blocks + j) % target.tiles));
  return home;
}

void mlir::ipu_tile::registerElementwiseLoweringModel(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, IPUTileDialect *) {
    ElementwiseOp::attachInterface<ElementwiseLowering>(*context);
  });
}
