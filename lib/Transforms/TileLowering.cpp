//===- TileLowering.cpp - The program builder ops lower through -----------===//

#include "IPU/Transforms/TileLowering.h"
#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/Escape.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ipu::BlockLayout;

ProgramBuilder::ProgramBuilder(func::FuncOp func, ProgramOp program,
                               const ipu::TargetModel &target)
    : func(func), program(program), target(target), builder(func.getContext()) {
  Block &body = program.getBody().front();
  builder.setInsertionPointToEnd(&body);
  bufferInsertPoint = body.end();
  for (BlockArgument arg : func.getArguments())
    referenceOf[arg] = static_cast<int32_t>(arg.getArgNumber());
  // A value returned several times leaves by the last of its results.
  func::ReturnOp ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    streamOf[value] = static_cast<int32_t>(index);
    // Repeated layers return what the last one passes on: the reference op
    // of the body's value is that result's.
    if (auto repeat = value.getDefiningOp<RepeatOp>())
      streamOf.try_emplace(
          cast<CarryOp>(repeat.getBody().front().getTerminator()).getValue(),
          static_cast<int32_t>(index));
    // A reshape that moves nothing leaves by its source's stream: the
    // source is the result the reference computes.
    Value source = value;
    while (auto reshape = source.getDefiningOp<PermuteOp>()) {
      if (!isInPlaceReshape(reshape))
        break;
      source = reshape.getSource();
      if (!isa<BlockArgument>(source) && !streamOf.count(source))
        streamOf[source] = static_cast<int32_t>(index);
    }
  }
}

BufferOp ProgramBuilder::createBuffer(Location loc, StringRef name,
                                      Type elementType, ArrayRef<int64_t> shape,
                                      const BlockLayout &layout,
                                      ipu::MemoryClass memoryClass) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(&program.getBody().front(), bufferInsertPoint);
  auto type = RankedTensorType::get(shape, elementType,
                                    toLayoutAttr(getContext(), layout));
  return BufferOp::create(
      builder, loc, builder.getStringAttr(name), TypeAttr::get(type),
      MemoryClassAttr::get(getContext(), toIRClass(memoryClass)), IntegerAttr());
}

SmallVector<int64_t> mlir::ipu_tile::bufferShape(RankedTensorType type,
                                                 const BlockLayout &layout) {
  SmallVector<int64_t> shape;
  // The tensor's own batches, or a matrix's serial chunks.
  if (layout.batches > 1) {
    if (layoutBatches(type.getShape()) == layout.batches)
      llvm::append_range(shape, type.getShape().drop_back(2));
    else
      shape.push_back(layout.batches);
  }
  shape.append({layout.rows, layout.cols});
  return shape;
}

/// Whether `buffer` holds a value of `type` cut into serial chunks (its
/// batches are not the value's): the host then sees the value's shape.
static bool holdsSerialChunks(BufferOp buffer, RankedTensorType type) {
  std::optional<BlockLayout> layout =
      toBlockLayout(buffer.getTensorType(), exchangeWordBytes(buffer));
  return layout && layout->batches > 1 &&
         layoutBatches(type.getShape()) != layout->batches;
}

/// Streams `buffer` out as result `index` in `hostShape`; `declaredShape`,
/// when given, is the function's shape of the result.
static void createStreamOut(OpBuilder &builder, Location loc, BufferOp buffer,
                            int32_t index, ArrayRef<int64_t> hostShape,
                            std::optional<ArrayRef<int64_t>> declaredShape = {}) {
  auto stream = ipu_exchange::StreamOutOp::create(builder, loc, buffer.getSymName(),
                                                  index, /*host_shape=*/nullptr,
                                                  /*declared_shape=*/nullptr);
  if (buffer.getTensorType().getShape() != hostShape)
    stream.setHostShapeAttr(builder.getDenseI64ArrayAttr(hostShape));
  if (declaredShape && *declaredShape != hostShape)
    stream.setDeclaredShapeAttr(builder.getDenseI64ArrayAttr(*declaredShape));
}

SmallVector<int64_t> ProgramBuilder::hostShapeOf(Value value) const {
  auto it = hostShapes.find(value);
  if (it != hostShapes.end())
    return it->second;
  return SmallVector<int64_t>(cast<RankedTensorType>(value.getType()).getShape());
}

BufferOp ProgramBuilder::bufferIn(BufferOp current, RankedTensorType type,
                                  Location loc, const BlockLayout &layout,
                                  StringRef name,
                                  SmallVectorImpl<BufferCopy> &copies,
                                  ipu::MemoryClass memoryClass) {
  SmallVector<int64_t> shape = bufferShape(type, layout);
  auto wanted = RankedTensorType::get(shape, type.getElementType(),
                                      toLayoutAttr(getContext(), layout));
  if (current.getTensorType() == wanted &&
      current.getMemoryClass() == toIRClass(memoryClass))
    return current;
  BufferOp moved =
      createBuffer(loc, name, type.getElementType(), shape, layout, memoryClass);
  copies.push_back({current, moved});
  return moved;
}

ComputeSetOp ProgramBuilder::createComputeSet(Location loc, StringRef name,
                                              StringRef kernel,
                                              ArrayRef<BufferOp> operands,
                                              ArrayRef<int32_t> tiles,
                                              Type accType,
                                              std::optional<int32_t> inputScale) {
  SmallVector<Attribute> refs;
  for (BufferOp buffer : operands)
    refs.push_back(FlatSymbolRefAttr::get(buffer.getSymNameAttr()));
  // The vertices usually run on the tiles of an operand, the output first:
  // then the set is written as that buffer's (`tiles of @out`).
  FlatSymbolRefAttr tilesOf;
  for (BufferOp buffer : llvm::reverse(operands)) {
    std::optional<ipu::BlockLayout> layout =
        toBlockLayout(buffer.getTensorType(), target.exchangeWordBytes());
    if (!layout)
      continue;
    std::vector<uint32_t> held = layout->tileList();
    if (llvm::equal(held, tiles, [](uint32_t a, int32_t b) { return int64_t(a) == b; })) {
      tilesOf = FlatSymbolRefAttr::get(buffer.getSymNameAttr());
      break;
    }
  }
  return ComputeSetOp::create(builder, loc, builder.getStringAttr(name),
                              builder.getStringAttr(kernel),
                              builder.getArrayAttr(refs),
                              tilesOf ? DenseI32ArrayAttr() : builder.getDenseI32ArrayAttr(tiles),
                              tilesOf, DenseI64ArrayAttr(),
                              accType ? TypeAttr::get(accType) : TypeAttr(),
                              /*serial_operands=*/DenseI32ArrayAttr(),
                              inputScale ? builder.getI32IntegerAttr(*inputScale)
                                         : IntegerAttr());
}

FailureOr<KernelOp>
ProgramBuilder::getOrCreateKernel(Location loc, StringRef name, Block &body,
                                  ArrayRef<ipu::Broadcast> broadcasts,
                                  ipu::RowReduction reduction, double init) {
  FailureOr<ipu::ElementwiseBody> plain =
      buildElementwiseBody(body.getParentOp(), body, broadcasts, reduction, init);
  if (failed(plain))
    return failure();
  uint64_t hash = ipu::bodyHash(*plain);
  if (KernelOp existing = kernels.lookup(hash))
    return existing;
  OpBuilder::InsertionGuard guard(builder);
  // Kernels come first in the program, in the order ops need them.
  Block &programBody = program.getBody().front();
  auto firstOther = llvm::find_if(programBody, [](Operation &op) { return !isa<KernelOp>(op); });
  builder.setInsertionPoint(&programBody, firstOther);
  SmallVector<StringRef> names;
  for (ipu::Broadcast broadcast : broadcasts)
    names.push_back(ipu::broadcastName(broadcast));
  // Names are unique in the program: a second kernel for one op (the two
  // halves of a split reduction) takes a suffix.
  std::string symbol = name.str() + ".kernel";
  for (unsigned n = 1; SymbolTable::lookupSymbolIn(program, symbol); ++n)
    symbol = name.str() + ".kernel" + std::to_string(n);
  RowReductionAttr reduce;
  FloatAttr initAttr;
  if (reduction != ipu::RowReduction::None) {
    reduce = RowReductionAttr::get(getContext(), static_cast<RowReduction>(reduction));
    initAttr = builder.getF64FloatAttr(init);
  }
  auto kernel = KernelOp::create(builder, loc, builder.getStringAttr(symbol),
                                 builder.getStrArrayAttr(names), reduce, initAttr);
  IRMapping mapping;
  body.getParent()->cloneInto(&kernel.getBody(), kernel.getBody().end(), mapping);
  kernels[hash] = kernel;
  return kernel;
}

FailureOr<BufferOp> ProgramBuilder::operandBuffer(Operation *op, unsigned operand,
                                                  const OperandLayout &wanted) {
  Value value = op->getOperand(operand);
  BufferOp buffer = lookupBuffer(value);
  auto type = cast<RankedTensorType>(value.getType());
  auto wantedType = RankedTensorType::get(
      bufferShape(type, wanted.layout), type.getElementType(),
      toLayoutAttr(getContext(), wanted.layout));
  // A repeated layer's weight: every layer's block in that layout.
  if (openRepeat && buffer && openRepeat->weightBuffers.contains(buffer) &&
      wanted.layout.batches == 1) {
    BlockLayout layers = wanted.layout;
    layers.batches = openRepeat->op.getCount();
    wantedType = RankedTensorType::get(
        {layers.batches, wanted.layout.rows, wanted.layout.cols}, type.getElementType(),
        toLayoutAttr(getContext(), layers));
  }
  if (!buffer || buffer.getTensorType() != wantedType ||
      buffer.getMemoryClass() != toIRClass(wanted.memoryClass))
    return op->emitError("operand ")
           << operand << " is not in the layout and memory class the op needs ("
           << wantedType << " in " << ipu::memoryClassName(wanted.memoryClass)
           << "): run --ipu-assign-layouts first";
  return buffer;
}

ComputeSetOp ProgramBuilder::createCopy(Location loc, StringRef name, BufferOp from,
                                        BufferOp to, const BlockLayout &layout) {
  std::vector<uint32_t> tiles = layout.tileList();
  return createComputeSet(loc, name, "copy", {from, to},
                          SmallVector<int32_t>(tiles.begin(), tiles.end()));
}

void ProgramBuilder::createPhase(Location loc, StringRef name,
                                 ArrayRef<BufferCopy> copies,
                                 const ipu::Permutation *samePermutation,
                                 ArrayRef<const ipu::Permutation *> permutations) {
  ipu_exchange::SyncOp::create(builder, loc);
  auto phase = ipu_exchange::PhaseOp::create(builder, loc, name);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&phase.getBody().front());
    for (auto [index, copy] : llvm::enumerate(copies)) {
      auto [from, to] = copy;
      const ipu::Permutation *permutation =
          permutations.empty() ? samePermutation : permutations[index];
      DenseI64ArrayAttr view, order, offsets, sizes;
      if (permutation) {
        view = builder.getDenseI64ArrayAttr(permutation->view);
        order = builder.getDenseI64ArrayAttr(permutation->permutation);
        if (!permutation->sizes.empty()) {
          offsets = builder.getDenseI64ArrayAttr(permutation->offsets);
          sizes = builder.getDenseI64ArrayAttr(permutation->sizes);
        }
      }
      ipu_exchange::CopyOp::create(builder, loc, FlatSymbolRefAttr::get(from.getSymNameAttr()),
                                   FlatSymbolRefAttr::get(to.getSymNameAttr()), view, order,
                                   offsets, sizes);
    }
  }
  ipu_exchange::SyncOp::create(builder, loc);
}

void ProgramBuilder::setResultBuffer(Value value, BufferOp buffer, Value shapeLike) {
  bufferOf[value] = buffer;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> host(buffer.getTensorType().getShape());
  if (holdsSerialChunks(buffer, type)) {
    const int64_t cols = type.getShape().back();
    host = {type.getNumElements() / cols, cols};
    if (shapeLike) {
      SmallVector<int64_t> like = hostShapeOf(shapeLike);
      like.back() = cols;
      int64_t elements = 1;
      for (int64_t extent : like)
        elements *= extent;
      if (elements == type.getNumElements())
        host = std::move(like);
    }
  }
  hostShapes[value] = host;
  if (streamOf.count(value))
    return;
  int32_t index = static_cast<int32_t>(func.getNumResults()) + checkpoints++;
  streamOf[value] = index;
  createStreamOut(builder, value.getLoc(), buffer, index, host);
}

void ProgramBuilder::aliasResult(Value value, Value source) {
  bufferOf[value] = bufferOf.lookup(source);
  hostShapes[value] = hostShapeOf(source);
  if (auto reference = referenceOf.find(source); reference != referenceOf.end())
    referenceOf[value] = reference->second;
  if (auto stream = streamOf.find(source); stream != streamOf.end())
    streamOf[value] = stream->second;
  if (transposedFromHost.contains(source))
    transposedFromHost.insert(value);
}

void ProgramBuilder::addReference(StringRef opName, ValueRange operands,
                                  Value result, ArrayRef<NamedAttribute> fields) {
  SmallVector<int32_t> arguments;
  for (Value operand : operands)
    arguments.push_back(referenceOf.lookup(operand));
  SmallVector<NamedAttribute> entries = {
      builder.getNamedAttr("op", builder.getStringAttr(opName)),
      builder.getNamedAttr("arguments", builder.getDenseI32ArrayAttr(arguments)),
      builder.getNamedAttr("result", builder.getI32IntegerAttr(streamOf.lookup(result)))};
  entries.append(fields.begin(), fields.end());
  referenceOf[result] = -1 - static_cast<int32_t>(reference.size());
  reference.push_back(builder.getDictionaryAttr(entries));
}

void ProgramBuilder::referenceAsDeviceHolds(Value value) {
  SmallVector<int64_t> host = hostShapeOf(value);
  if (!transposedFromHost.contains(value) || host.size() != 2)
    return;
  SmallVector<int64_t> device{host[1], host[0]};
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<NamedAttribute> entries = {
      builder.getNamedAttr("op", builder.getStringAttr("permute")),
      builder.getNamedAttr("arguments",
                           builder.getDenseI32ArrayAttr({referenceOf.lookup(value)})),
      builder.getNamedAttr("result", builder.getI32IntegerAttr(-1)),
      builder.getNamedAttr("type", TypeAttr::get(type.getElementType())),
      // (The permute reference keeps the last dim in place: a unit one.)
      builder.getNamedAttr("view", builder.getDenseI64ArrayAttr({host[0], host[1], 1})),
      builder.getNamedAttr("permutation", builder.getDenseI64ArrayAttr({1, 0, 2})),
      builder.getNamedAttr("offsets", builder.getDenseI64ArrayAttr({})),
      builder.getNamedAttr("sizes", builder.getDenseI64ArrayAttr({})),
      builder.getNamedAttr("shape", builder.getDenseI64ArrayAttr(device))};
  referenceOf[value] = -1 - static_cast<int32_t>(reference.size());
  reference.push_back(builder.getDictionaryAttr(entries));
  hostShapes[value] = device;
  transposedFromHost.erase(value);
}

LogicalResult ProgramBuilder::lowerFromHost(FromHostOp op, StringRef name) {
  auto arg = cast<BlockArgument>(op.getSource());
  auto type = op.getResult().getType();
  std::optional<BlockLayout> layout = toBlockLayout(type, target.exchangeWordBytes());
  if (!layout)
    return op.emitError("cannot lower a stream of ") << type;
  ipu::MemoryClass memoryClass = toMachineClass(op.getMemoryClass());
  // Buffers go before the first stream: the first one sets the point.
  BufferOp buffer = createBuffer(op.getLoc(), name, type.getElementType(),
                                 bufferShape(type, *layout), *layout, memoryClass);
  auto stream = ipu_exchange::StreamInOp::create(
      builder, op.getLoc(), buffer.getSymName(), arg.getArgNumber(),
      /*weight=*/false, /*transpose=*/false, /*host_shape=*/nullptr,
      /*declared_shape=*/nullptr, /*constant=*/nullptr, /*chunk=*/nullptr,
      /*layer_arguments=*/nullptr, /*layer_constants=*/nullptr, /*batch_dim=*/nullptr);
  // The host holds the argument as it is: a buffer of its rows in serial
  // chunks says so.
  if (!op.getTranspose() && holdsSerialChunks(buffer, type))
    stream.setHostShapeAttr(builder.getDenseI64ArrayAttr(type.getShape()));
  hostShapes[op.getResult()] =
      stream.getHostShape() ? SmallVector<int64_t>(*stream.getHostShape())
      : op.getTranspose()   ? SmallVector<int64_t>(cast<RankedTensorType>(arg.getType()).getShape())
                            : SmallVector<int64_t>(buffer.getTensorType().getShape());
  // The function's own shape, in which a user's framework holds it.
  ArrayRef<int64_t> declared = cast<RankedTensorType>(arg.getType()).getShape();
  if (declared != ArrayRef<int64_t>(hostShapes[op.getResult()]))
    stream.setDeclaredShapeAttr(builder.getDenseI64ArrayAttr(declared));
  if (op.getResident())
    stream.setWeight(true);
  if (op.getTranspose()) {
    stream.setTranspose(true);
    transposedFromHost.insert(op.getResult());
  }
  finishArgumentStream(stream, arg);
  bufferOf[op.getResult()] = buffer;
  referenceOf[op.getResult()] = static_cast<int32_t>(arg.getArgNumber());
  return success();
}

void ProgramBuilder::finishArgumentStream(ipu_exchange::StreamInOp stream,
                                          BlockArgument arg) {
  if (auto constant = func.getArgAttrOfType<ElementsAttr>(
          arg.getArgNumber(), IPUTileDialect::getConstantAttrName()))
    stream.setConstantAttr(constant);
  if (auto batchDim = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                         IPUTileDialect::getBatchDimAttrName()))
    stream.setBatchDimAttr(builder.getI64IntegerAttr(batchDim.getInt()));
  if (bufferInsertPoint == program.getBody().front().end())
    bufferInsertPoint = stream->getIterator();
}

LogicalResult ProgramBuilder::lowerRelayouts(ArrayRef<RelayoutOp> ops,
                                             ArrayRef<std::string> bufferNames,
                                             StringRef phaseName) {
  SmallVector<BufferCopy> copies;
  // Relayouts of a reshape's result that aliases its source's buffer (of
  // the source's shape): each moves as that buffer read in the value's
  // shape, a permuted copy of its own.
  SmallVector<std::tuple<BufferCopy, ipu::Permutation, Location>> reshaped;
  for (auto [index, constOp] : llvm::enumerate(ops)) {
    RelayoutOp op = constOp;
    const std::string &name = bufferNames[index];
    BufferOp source = bufferOf.lookup(op.getSource());
    auto type = op.getResult().getType();
    std::optional<BlockLayout> layout = toBlockLayout(type, target.exchangeWordBytes());
    if (!source || !layout)
      return op.emitError("cannot lower the relayout of a value without a "
                          "buffer into ")
             << type;
    const size_t before = copies.size();
    bufferOf[op.getResult()] =
        bufferIn(source, type, op.getLoc(), *layout, name, copies,
                 toMachineClass(op.getMemoryClass()));
    std::optional<BlockLayout> from =
        toBlockLayout(source.getTensorType(), target.exchangeWordBytes());
    auto sourceType = cast<RankedTensorType>(op.getSource().getType());
    if (copies.size() > before && from &&
        (from->rows != layout->rows || from->cols != layout->cols ||
         from->batches != layout->batches)) {
      ipu::Permutation view;
      view.view.assign(sourceType.getShape().begin(), sourceType.getShape().end());
      for (int64_t d = 0; d < sourceType.getRank(); ++d)
        view.permutation.push_back(d);
      reshaped.push_back({copies.back(), view, op.getLoc()});
      copies.pop_back();
    }
    referenceOf[op.getResult()] = referenceOf.lookup(op.getSource());
    hostShapes[op.getResult()] = hostShapeOf(op.getSource());
    if (transposedFromHost.contains(op.getSource()))
      transposedFromHost.insert(op.getResult());
  }
  // One phase for all of them: each copy carries its own view, and one
  // phase pays the exchange's fixed cost once (a layer norm's scale and
  // shift, broadcast from their homes, share it).
  SmallVector<const ipu::Permutation *> permutations(copies.size(), nullptr);
  for (auto &[copy, view, loc] : reshaped) {
    copies.push_back(copy);
    permutations.push_back(&view);
  }
  if (!copies.empty())
    createPhase(RelayoutOp(ops.front()).getLoc(), phaseName, copies, nullptr, permutations);
  return success();
}

LogicalResult ProgramBuilder::beginRepeat(RepeatOp repeat, StringRef name) {
  if (openRepeat)
    return repeat.emitError("a repeated layer inside another is not supported");
  Location loc = repeat.getLoc();
  // Its result would be the value streamed in as the last layer's input,
  // which no reference op computes from the inputs.
  if (cast<CarryOp>(repeat.getBody().front().getTerminator()).getValue() ==
      repeat.getBody().getArgument(0))
    return repeat.emitError("a repeated layer that passes on its input unchanged "
                            "repeats nothing: remove the repeat (--ipu-find-repeated-"
                            "layers does)");
  const int64_t count = repeat.getCount();
  const uint32_t word = target.exchangeWordBytes();
  OpenRepeat state;
  state.op = repeat;
  // Streamed: each slot holds one layer, which the host streams at the top
  // of every iteration, once the loop exists.
  const bool streamed = repeat.getStreamed();
  struct LayerStream {
    BufferOp buffer;
    bool transpose;
    SmallVector<int32_t> arguments;
    SmallVector<Attribute> constants;
    bool anyConstant = false;
    DenseI64ArrayAttr declared;
  };
  SmallVector<LayerStream> layerStreams;
  // Each weight slot: every layer's block, one after another on the tiles
  // of the slot's layout (or one layer's, streamed).
  for (unsigned slot = 0; slot < repeat.getNumWeightSlots(); ++slot) {
    BlockArgument argument = repeat.getWeightArgument(slot);
    auto type = cast<RankedTensorType>(argument.getType());
    std::optional<BlockLayout> block = toBlockLayout(type, word);
    if (!block || block->batches != 1)
      return repeat.emitError("weight slot ")
             << slot << " has no layout one layer's block can take: " << type;
    BlockLayout layers = *block;
    layers.batches = streamed ? 1 : count;
    auto first = repeat.getWeight(slot, 0).getDefiningOp<FromHostOp>();
    if (!first)
      return repeat.emitError("weight slot ")
             << slot << " is not streamed from the host (run --ipu-assign-layouts first)";
    SmallVector<int64_t> shape{block->rows, block->cols};
    if (!streamed)
      shape.insert(shape.begin(), count);
    BufferOp buffer =
        createBuffer(argument.getLoc(), (name + ".w" + Twine(slot)).str(),
                     type.getElementType(), shape, layers,
                     toMachineClass(first.getMemoryClass()));
    if (streamed)
      layerStreams.push_back({buffer, first.getTranspose(), {}, {}, false, nullptr});
    for (int64_t layer = 0; layer < count; ++layer) {
      auto fromHost = repeat.getWeight(slot, static_cast<unsigned>(layer))
                          .getDefiningOp<FromHostOp>();
      auto source = dyn_cast_or_null<BlockArgument>(fromHost ? fromHost.getSource() : Value());
      if (!source)
        return repeat.emitError("layer ")
               << layer << "'s weight slot " << slot << " is not a function argument";
      if (streamed) {
        LayerStream &pending = layerStreams.back();
        pending.arguments.push_back(static_cast<int32_t>(source.getArgNumber()));
        auto constant = func.getArgAttrOfType<ElementsAttr>(
            source.getArgNumber(), IPUTileDialect::getConstantAttrName());
        pending.anyConstant |= bool(constant);
        pending.constants.push_back(constant ? Attribute(constant)
                                             : Attribute(builder.getUnitAttr()));
        SmallVector<int64_t> host{block->rows, block->cols};
        if (fromHost.getTranspose())
          std::swap(host[0], host[1]);
        ArrayRef<int64_t> declared = cast<RankedTensorType>(source.getType()).getShape();
        if (declared != ArrayRef<int64_t>(host))
          pending.declared = builder.getDenseI64ArrayAttr(declared);
        if (layer + 1 == count) {
          referenceOf[argument] = static_cast<int32_t>(source.getArgNumber());
          hostShapes[argument] = host;
          if (fromHost.getTranspose())
            transposedFromHost.insert(argument);
        }
        continue;
      }
      auto stream = ipu_exchange::StreamInOp::create(
          builder, loc, buffer.getSymName(), source.getArgNumber(),
          /*weight=*/fromHost.getResident(), /*transpose=*/fromHost.getTranspose(),
          /*host_shape=*/nullptr, /*declared_shape=*/nullptr, /*constant=*/nullptr,
          builder.getI64IntegerAttr(layer), /*layer_arguments=*/nullptr,
          /*layer_constants=*/nullptr, /*batch_dim=*/nullptr);
      SmallVector<int64_t> host{block->rows, block->cols};
      if (fromHost.getTranspose())
        std::swap(host[0], host[1]);
      ArrayRef<int64_t> declared = cast<RankedTensorType>(source.getType()).getShape();
      if (declared != ArrayRef<int64_t>(host))
        stream.setDeclaredShapeAttr(builder.getDenseI64ArrayAttr(declared));
      finishArgumentStream(stream, source);
      // The host reference checks the last layer.
      if (layer + 1 == count) {
        referenceOf[argument] = static_cast<int32_t>(source.getArgNumber());
        hostShapes[argument] = host;
        if (fromHost.getTranspose())
          transposedFromHost.insert(argument);
      }
    }
    bufferOf[argument] = buffer;
    if (!streamed)
      state.weightBuffers.insert(buffer);
  }

  // The buffer every layer reads and writes, holding the input at first.
  Block &body = repeat.getBody().front();
  BlockArgument carried = body.getArgument(0);
  BufferOp input = bufferOf.lookup(repeat.getInput());
  std::optional<BlockLayout> layout =
      toBlockLayout(cast<RankedTensorType>(carried.getType()), word);
  if (!input || !layout)
    return repeat.emitError("the repeated layers' input has no buffer with a layout");
  state.carried = createBuffer(loc, (name + ".carried").str(),
                               input.getTensorType().getElementType(),
                               input.getTensorType().getShape(), *layout,
                               ipu::MemoryClass::Standard);
  createCopy(loc, (name + ".enter").str(), input, state.carried, *layout);
  bufferOf[carried] = state.carried;
  hostShapes[carried] = hostShapeOf(repeat.getInput());

  state.loop = LoopOp::create(builder, loc, (name + ".layers").str(), count);
  state.after = builder.saveInsertionPoint();
  builder.setInsertionPointToStart(&state.loop.getBody().front());
  ipu_exchange::SyncOp::create(builder, loc);
  // This layer's weights, streamed while the tiles wait: after the sync
  // that ends the last layer's reads of them.
  for (LayerStream &pending : layerStreams)
    ipu_exchange::StreamInOp::create(
        builder, loc, pending.buffer.getSymName(), pending.arguments.front(),
        /*weight=*/false, pending.transpose, /*host_shape=*/nullptr, pending.declared,
        /*constant=*/nullptr, /*chunk=*/nullptr,
        builder.getDenseI32ArrayAttr(pending.arguments),
        pending.anyConstant ? builder.getArrayAttr(pending.constants) : ArrayAttr(),
        /*batch_dim=*/nullptr);
  // The value the last layer reads, as the device carried it: the host
  // reference checks that layer's ops on it.
  int32_t index = static_cast<int32_t>(func.getNumResults()) + checkpoints++;
  streamOf[carried] = index;
  createStreamOut(builder, loc, state.carried, index, hostShapes[carried]);
  addReference("streamed", {}, carried,
               {builder.getNamedAttr("type", TypeAttr::get(
                                                 input.getTensorType().getElementType()))});
  state.flopsBefore = flops;
  state.estimatedCyclesBefore = estimatedCycles;
  openRepeat = std::move(state);
  return success();
}

/// Whether `op`'s own attributes name the buffer `symbol`.
static bool namesBuffer(Operation *op, StringAttr symbol) {
  bool named = false;
  op->getAttrDictionary().walk([&](FlatSymbolRefAttr ref) {
    named |= ref.getAttr() == symbol;
  });
  return named;
}

bool ProgramBuilder::canCarryInPlace(OpenRepeat &state, BufferOp passed) {
  BufferOp carried = state.carried;
  if (passed == carried || passed.getTensorType() != carried.getTensorType() ||
      passed.getMemoryClass() != carried.getMemoryClass())
    return false;
  // Only the body names it (a value of this layer)...
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(passed.getSymNameAttr(), program.getOperation());
  if (!uses || llvm::any_of(*uses, [&](const SymbolTable::SymbolUse &use) {
        return !state.loop->isProperAncestor(use.getUser());
      }))
    return false;
  // ...and every step that reads the layer's input runs before the first
  // step that names what it passes on: the body's steps in program order.
  bool passedSeen = false, overlap = false;
  state.loop.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    passedSeen |= namesBuffer(op, passed.getSymNameAttr());
    overlap |= passedSeen && namesBuffer(op, carried.getSymNameAttr());
  });
  return passedSeen && !overlap;
}

LogicalResult ProgramBuilder::endRepeat(RepeatOp repeat) {
  if (!openRepeat || openRepeat->op != repeat)
    return repeat.emitError("closes a repeated layer that is not open");
  OpenRepeat &state = *openRepeat;
  Location loc = repeat.getLoc();
  auto carry = cast<CarryOp>(repeat.getBody().front().getTerminator());
  BufferOp passed = bufferOf.lookup(carry.getValue());
  if (!passed)
    return carry.emitError("passes on a value without a buffer");
  // In place, as the user's stack carries it: what the body passes on is
  // written straight into the layers' buffer, once nothing of this layer
  // reads its input any more. Otherwise a copy at the end of the body.
  if (canCarryInPlace(state, passed)) {
    (void)SymbolTable::replaceAllSymbolUses(passed.getSymNameAttr(),
                                            state.carried.getSymNameAttr(),
                                            &state.loop.getBody());
    for (auto &entry : bufferOf)
      if (entry.second == passed)
        entry.second = state.carried;
    passed.erase();
  } else {
    std::optional<BlockLayout> layout =
        toBlockLayout(state.carried.getTensorType(), target.exchangeWordBytes());
    createCopy(loc, (state.loop.getSymName() + ".carry").str(), passed, state.carried,
               *layout);
  }
  // An exchange's addresses are fixed: weights it moves (a gathered plan's
  // home share) are first copied out of this layer's block, once per slot
  // and iteration. So are weights a loop inside the body reads (a serial
  // split's GEMM): a compute set advances per iteration of its innermost
  // loop only.
  DenseMap<Operation *, BufferOp> layerOf;
  auto layerBufferOf = [&](BufferOp weights) -> BufferOp {
    BufferOp &layer = layerOf[weights];
    if (layer)
      return layer;
    std::optional<BlockLayout> block =
        toBlockLayout(weights.getTensorType(), target.exchangeWordBytes());
    block->batches = 1;
    layer = createBuffer(weights.getLoc(), (weights.getSymName() + ".layer").str(),
                         weights.getTensorType().getElementType(),
                         {block->rows, block->cols}, *block,
                         toMachineClass(weights.getMemoryClass()));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(&state.loop.getBody().front().front());
    ComputeSetOp slice = createCopy(weights.getLoc(),
                                    (weights.getSymName() + ".slice").str(), weights,
                                    layer, *block);
    slice.setSerialOperandsAttr(builder.getDenseI32ArrayAttr({0}));
    return layer;
  };
  auto weightsOf = [&](Operation *user, Attribute ref) -> BufferOp {
    BufferOp buffer = mlir::ipu_tile::lookupBuffer(user, cast<FlatSymbolRefAttr>(ref));
    return buffer && state.weightBuffers.contains(buffer) ? buffer : BufferOp();
  };
  SmallVector<ipu_exchange::CopyOp> moved;
  state.loop.walk([&](ipu_exchange::CopyOp copy) {
    if (weightsOf(copy, copy.getSourceAttr()))
      moved.push_back(copy);
  });
  for (ipu_exchange::CopyOp copy : moved)
    copy.setSourceAttr(FlatSymbolRefAttr::get(
        layerBufferOf(weightsOf(copy, copy.getSourceAttr())).getSymNameAttr()));
  SmallVector<ComputeSetOp> nested;
  state.loop.walk([&](ComputeSetOp computeSet) {
    if (computeSet->getParentOp() != state.loop.getOperation() &&
        llvm::any_of(computeSet.getOperands(),
                     [&](Attribute ref) { return bool(weightsOf(computeSet, ref)); }))
      nested.push_back(computeSet);
  });
  for (ComputeSetOp computeSet : nested) {
    SmallVector<Attribute> operands;
    for (Attribute ref : computeSet.getOperands()) {
      BufferOp weights = weightsOf(computeSet, ref);
      operands.push_back(weights ? FlatSymbolRefAttr::get(layerBufferOf(weights).getSymNameAttr())
                                 : ref);
    }
    computeSet.setOperandsAttr(builder.getArrayAttr(operands));
  }
  // Each layer's steps read that layer's block of every weight slot.
  for (ComputeSetOp computeSet : state.loop.getBody().front().getOps<ComputeSetOp>()) {
    SmallVector<int32_t> serial;
    for (auto [index, ref] : llvm::enumerate(computeSet.getOperands()))
      if (weightsOf(computeSet, ref))
        serial.push_back(static_cast<int32_t>(index));
    if (!serial.empty())
      computeSet.setSerialOperandsAttr(builder.getDenseI32ArrayAttr(serial));
  }
  builder.restoreInsertionPoint(*state.after);
  // The body's work runs once per layer.
  const int64_t count = repeat.getCount();
  flops = state.flopsBefore + (flops - state.flopsBefore) * count;
  estimatedCycles =
      state.estimatedCyclesBefore + (estimatedCycles - state.estimatedCyclesBefore) * count;
  // After the last layer, the layers' buffer holds what it passed on.
  bufferOf[repeat.getResult()] = state.carried;
  hostShapes[repeat.getResult()] = hostShapeOf(carry.getValue());
  if (auto reference = referenceOf.find(carry.getValue()); reference != referenceOf.end())
    referenceOf[repeat.getResult()] = reference->second;
  openRepeat.reset();
  return success();
}

LogicalResult ProgramBuilder::lowerReturn(func::ReturnOp ret) {
  ipu_exchange::SyncOp::create(builder, ret.getLoc());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    BufferOp buffer = bufferOf.lookup(value);
    if (auto argument = dyn_cast<BlockArgument>(value))
      // Also what a loop of no iterations, or layers that pass on their
      // input unchanged, leave.
      return ret.emitError("result ")
             << index << " must be computed by the function: it is argument "
             << argument.getArgNumber()
             << " unchanged, which the device would only copy; return what the "
                "function computes from it";
    if (!buffer)
      return ret.emitError("result ") << index << " must be computed by the function";
    SmallVector<int64_t> host =
        hostShapes.count(value)
            ? hostShapes.lookup(value)
            : SmallVector<int64_t>(buffer.getTensorType().getShape());
    createStreamOut(builder, ret.getLoc(), buffer, static_cast<int32_t>(index), host,
                    cast<RankedTensorType>(value.getType()).getShape());
    // A value returned again leaves by each of its results; the reference
    // op that computes it names one of them (or a checkpoint: the last
    // layer's value, of which a repeat's result is a copy), and each other
    // one is its identity permute, compared exactly with that one as
    // streamed out.
    auto owner = referenceOf.find(value);
    if (owner == referenceOf.end() || owner->second >= 0)
      continue;
    auto computed = cast<DictionaryAttr>(reference[-1 - owner->second]);
    if (computed.getAs<IntegerAttr>("result").getInt() == static_cast<int64_t>(index))
      continue;
    SmallVector<int64_t> identity(host.size());
    for (size_t d = 0; d < host.size(); ++d)
      identity[d] = static_cast<int64_t>(d);
    reference.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("op", builder.getStringAttr("permute")),
         builder.getNamedAttr("arguments",
                              builder.getDenseI32ArrayAttr({referenceOf.lookup(value)})),
         builder.getNamedAttr("result",
                              builder.getI32IntegerAttr(static_cast<int32_t>(index))),
         builder.getNamedAttr("type", TypeAttr::get(buffer.getTensorType().getElementType())),
         builder.getNamedAttr("view", builder.getDenseI64ArrayAttr(host)),
         builder.getNamedAttr("permutation", builder.getDenseI64ArrayAttr(identity)),
         builder.getNamedAttr("shape", builder.getDenseI64ArrayAttr(host))}));
  }
  return success();
}

void ProgramBuilder::finish() {
  if (!reference.empty())
    program.setReferenceAttr(builder.getArrayAttr(reference));
  program.setFlopsAttr(builder.getI64IntegerAttr(flops));
  program.setResultsAttr(builder.getI32IntegerAttr(static_cast<int32_t>(func.getNumResults())));
  program.setEstimatedCyclesAttr(builder.getI64IntegerAttr(estimatedCycles));
  if (!planFinalists.empty())
    program.setPlanFinalistsAttr(builder.getDictionaryAttr(planFinalists));
}

InFlightDiagnostic mlir::ipu_tile::emitNotLowerable(Operation *op) {
  // The name as the input spelled it: an unregistered op's is any text.
  return op->emitError("cannot lower '")
         << ipu::escapeText(op->getName().getStringRef())
         << "' to tiles: the IPU compiler compiles linalg on tensors as "
            "torch-mlir and StableHLO-to-linalg emit it (contractions, "
            "patch-embedding convolutions, elementwise generics and maps, row "
            "reductions, and the transposes, broadcasts, reshapes and slices "
            "around them), elementwise arith and math ops on whole tensors, and "
            "layers written as an scf.for loop; express it as a linalg op on "
            "tensors, or file it as a missing op family";
}

FailureOr<SmallVector<func::FuncOp>>
mlir::ipu_tile::functionsToCompile(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    if (!func.getBody().hasOneBlock())
      return func.emitError("functions with control flow are not supported");
    funcs.push_back(func);
  }
  return funcs;
}
