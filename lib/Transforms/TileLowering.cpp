//===- TileLowering.cpp - The program builder ops lower through -----------===//

#include "IPU/Transforms/TileLowering.h"
#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmLayouts.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ::ipu::BlockLayout;

ProgramBuilder::ProgramBuilder(func::FuncOp func, ProgramOp program,
                               const ::ipu::TargetModel &target)
    : func(func), program(program), target(target), builder(func.getContext()) {
  Block &body = program.getBody().front();
  builder.setInsertionPointToEnd(&body);
  bufferInsertPoint = body.end();
  for (BlockArgument arg : func.getArguments())
    referenceOf[arg] = static_cast<int32_t>(arg.getArgNumber());
  // A value returned several times leaves by the last of its results.
  func::ReturnOp ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    streamOf[value] = static_cast<int32_t>(index);
}

BufferOp ProgramBuilder::createBuffer(Location loc, StringRef name,
                                      Type elementType, ArrayRef<int64_t> shape,
                                      const BlockLayout &layout,
                                      ::ipu::MemoryClass memoryClass) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(&program.getBody().front(), bufferInsertPoint);
  auto type = RankedTensorType::get(shape, elementType,
                                    toLayoutAttr(getContext(), layout));
  return BufferOp::create(
      builder, loc, builder.getStringAttr(name), TypeAttr::get(type),
      builder.getStringAttr(::ipu::memoryClassName(memoryClass)), IntegerAttr());
}

SmallVector<int64_t> mlir::ipu_tile::bufferShape(RankedTensorType type,
                                                 const BlockLayout &layout) {
  SmallVector<int64_t> shape;
  if (layout.batches > 1)
    llvm::append_range(shape, type.getShape().drop_back(2));
  shape.append({layout.rows, layout.cols});
  return shape;
}

BufferOp ProgramBuilder::bufferIn(Value value, const BlockLayout &layout,
                                  StringRef name,
                                  SmallVectorImpl<BufferCopy> &copies,
                                  ::ipu::MemoryClass memoryClass) {
  return bufferIn(bufferOf.lookup(value), cast<RankedTensorType>(value.getType()),
                  value.getLoc(), layout, name, copies, memoryClass);
}

BufferOp ProgramBuilder::bufferIn(BufferOp current, RankedTensorType type,
                                  Location loc, const BlockLayout &layout,
                                  StringRef name,
                                  SmallVectorImpl<BufferCopy> &copies,
                                  ::ipu::MemoryClass memoryClass) {
  SmallVector<int64_t> shape = bufferShape(type, layout);
  auto wanted = RankedTensorType::get(shape, type.getElementType(),
                                      toLayoutAttr(getContext(), layout));
  if (current.getTensorType() == wanted &&
      current.getMemoryClass() == StringRef(::ipu::memoryClassName(memoryClass)))
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
                                              ArrayRef<int64_t> params) {
  SmallVector<Attribute> refs;
  for (BufferOp buffer : operands)
    refs.push_back(FlatSymbolRefAttr::get(buffer.getSymNameAttr()));
  return ComputeSetOp::create(builder, loc, builder.getStringAttr(name),
                              builder.getStringAttr(kernel),
                              builder.getArrayAttr(refs),
                              builder.getDenseI32ArrayAttr(tiles),
                              builder.getDenseI64ArrayAttr(params));
}

void ProgramBuilder::createPhase(Location loc, StringRef name,
                                 ArrayRef<BufferCopy> copies) {
  ipu_exchange::SyncOp::create(builder, loc);
  auto phase = ipu_exchange::PhaseOp::create(builder, loc, name);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&phase.getBody().front());
    for (auto [from, to] : copies)
      ipu_exchange::CopyOp::create(builder, loc, from.getSymName(), to.getSymName());
  }
  ipu_exchange::SyncOp::create(builder, loc);
}

void ProgramBuilder::setResultBuffer(Value value, BufferOp buffer) {
  bufferOf[value] = buffer;
  if (streamOf.count(value))
    return;
  int32_t index = static_cast<int32_t>(func.getNumResults()) + checkpoints++;
  streamOf[value] = index;
  ipu_exchange::StreamOutOp::create(builder, value.getLoc(), buffer.getSymName(),
                                    index);
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

LogicalResult ProgramBuilder::lowerArguments() {
  // A host stream per buffer; buffers created later go in before the first.
  struct Stream {
    BufferOp buffer;
    bool weight, transpose;
  };
  SmallVector<std::pair<unsigned, Stream>> streams;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() < 2 || !type.hasStaticShape() ||
        !toElementType(type.getElementType()))
      return func.emitError("argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; only static tensors of rank >= 2 of f32, f16 or f8 are "
                "supported";
    // Streams its users want (weights resident in the layout each user
    // wants, as the planner assumed; an argument resident for several users
    // is streamed once per layout). Any other use takes it as an activation,
    // arriving split by rows.
    bool activation = arg.use_empty();
    std::optional<bool> leadingDimsAsBatches;
    SmallVector<std::pair<OpOperand *, ResidentLayout>> residentUses;
    for (Operation &op : func.getBody().front()) {
      for (OpOperand &use : op.getOpOperands()) {
        if (use.get() != arg)
          continue;
        ResidentLayout resident;
        auto lowerable = dyn_cast<TileLowerableOpInterface>(op);
        if (lowerable && lowerable.getResidentLayout(use.getOperandNumber(), resident)) {
          residentUses.push_back({&use, resident});
          continue;
        }
        activation = true;
        bool batches = type.getRank() > 2 && lowerable &&
                       lowerable.keepsLeadingDims(use.getOperandNumber());
        if (leadingDimsAsBatches && *leadingDimsAsBatches != batches)
          return op.emitError("argument ")
                 << arg.getArgNumber()
                 << " is read with its leading dims as batches by one op and "
                    "folded into rows by another; a relayout between the two "
                    "is not supported yet";
        leadingDimsAsBatches = batches;
      }
    }
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    unsigned buffers = 0;
    auto nextName = [&] {
      return buffers++ ? name + "." + std::to_string(buffers - 1) : name;
    };
    if (activation) {
      const int64_t rank = type.getRank();
      int64_t batches = 1;
      if (leadingDimsAsBatches.value_or(false))
        for (int64_t dim : type.getShape().drop_back(2))
          batches *= dim;
      if (batches > int64_t(target.tiles))
        return func.emitError("argument ")
               << arg.getArgNumber() << " has " << batches
               << " batches, more than the " << target.tiles
               << " tiles it would arrive on";
      int64_t cols = type.getDimSize(rank - 1);
      int64_t rows = type.getNumElements() / (cols * batches);
      BlockLayout layout = ::ipu::arrivalLayout(
          rows, cols, *toElementType(type.getElementType()), target, batches);
      bufferOf[arg] = createBuffer(arg.getLoc(), nextName(), type.getElementType(),
                                   bufferShape(type, layout), layout,
                                   ::ipu::MemoryClass::Standard);
      streams.push_back({arg.getArgNumber(), {bufferOf[arg], false, false}});
    }
    SmallVector<Stream> resident;
    for (auto &[use, wantedLayout] : residentUses) {
      bool transpose = wantedLayout.transpose, weight = wantedLayout.weight;
      SmallVector<int64_t> shape = bufferShape(type, wantedLayout.layout);
      auto wanted = RankedTensorType::get(
          shape, type.getElementType(),
          toLayoutAttr(getContext(), wantedLayout.layout));
      StringRef memoryClass = ::ipu::memoryClassName(wantedLayout.memoryClass);
      auto same = llvm::find_if(resident, [&](Stream &stream) {
        return stream.buffer.getTensorType() == wanted &&
               stream.buffer.getMemoryClass() == memoryClass &&
               stream.transpose == transpose && stream.weight == weight;
      });
      Operation *user = use->getOwner();
      if (same != resident.end()) {
        residentOf[{user, use->getOperandNumber()}] = same->buffer;
        continue;
      }
      BufferOp buffer =
          createBuffer(user->getLoc(), nextName(), type.getElementType(), shape,
                       wantedLayout.layout, wantedLayout.memoryClass);
      residentOf[{user, use->getOperandNumber()}] = buffer;
      resident.push_back({buffer, weight, transpose});
      streams.push_back({arg.getArgNumber(), resident.back()});
    }
  }
  for (auto [index, stream] : streams) {
    auto op = ipu_exchange::StreamInOp::create(
        builder, func.getLoc(), stream.buffer.getSymName(), index);
    if (stream.weight)
      op.setWeight(true);
    if (stream.transpose)
      op.setTranspose(true);
    if (bufferInsertPoint == program.getBody().front().end())
      bufferInsertPoint = op->getIterator();
  }
  return success();
}

LogicalResult ProgramBuilder::lowerReturn(func::ReturnOp ret) {
  ipu_exchange::SyncOp::create(builder, ret.getLoc());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    BufferOp buffer = bufferOf.lookup(value);
    if (!buffer || isa<BlockArgument>(value))
      return ret.emitError("result ") << index << " must be computed by the function";
    ipu_exchange::StreamOutOp::create(builder, ret.getLoc(), buffer.getSymName(),
                                      index);
  }
  return success();
}

void ProgramBuilder::finish() {
  if (!reference.empty())
    program.setReferenceAttr(builder.getArrayAttr(reference));
  program.setFlopsAttr(builder.getI64IntegerAttr(flops));
  program->setAttr("estimated_cycles", builder.getI64IntegerAttr(estimatedCycles));
}
