//===- TileUtils.cpp - Bridges between the IR and plain C++ models --------===//

#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::ipu_tile;

std::optional<ipu::TargetModel> mlir::ipu_tile::lookupTarget(Operation *op) {
  for (Operation *current = op; current; current = current->getParentOp()) {
    if (auto target = current->getAttrOfType<TargetAttr>(
            IPUTileDialect::getTargetAttrName()))
      return ipu::TargetModel::byName(target.getName().str());
  }
  return std::nullopt;
}

FailureOr<ipu::TargetModel> mlir::ipu_tile::requireTarget(Operation *op) {
  if (std::optional<ipu::TargetModel> target = lookupTarget(op))
    return *target;
  return op->emitError("no target: set the module attribute '")
         << IPUTileDialect::getTargetAttrName()
         << "' or run with --ipu-set-target / --ipu-compile=\"target=...\"";
}

std::optional<int64_t> mlir::ipu_tile::toInt64(IntegerAttr attr) {
  const APInt &value = attr.getValue();
  if (attr.getType().isUnsignedInteger()) {
    if (value.getActiveBits() > 63)
      return std::nullopt;
    return static_cast<int64_t>(value.getZExtValue());
  }
  if (value.getSignificantBits() > 64)
    return std::nullopt;
  return value.getSExtValue();
}

std::optional<ipu::ElementType> mlir::ipu_tile::toElementType(Type type) {
  // The parser verifies an encoding even after the element type failed to
  // parse, with a null type (found by the compile fuzzer).
  if (!type)
    return std::nullopt;
  if (type.isF32())
    return ipu::ElementType::F32;
  if (type.isF16())
    return ipu::ElementType::F16;
  if (isa<Float8E4M3FNType>(type))
    return ipu::ElementType::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ipu::ElementType::F8E5M2;
  return std::nullopt;
}

Type mlir::ipu_tile::fromElementType(MLIRContext *context,
                                     ipu::ElementType type) {
  switch (type) {
  case ipu::ElementType::F32:
    return Float32Type::get(context);
  case ipu::ElementType::F16:
    return Float16Type::get(context);
  case ipu::ElementType::F8E4M3FN:
    return Float8E4M3FNType::get(context);
  case ipu::ElementType::F8E5M2:
    return Float8E5M2Type::get(context);
  }
  return {};
}

BufferOp mlir::ipu_tile::lookupBuffer(Operation *user, FlatSymbolRefAttr ref) {
  auto program = user ? user->getParentOfType<ProgramOp>() : ProgramOp();
  if (!program || !ref)
    return {};
  return dyn_cast_or_null<BufferOp>(SymbolTable::lookupSymbolIn(program, ref.getAttr()));
}

ProgramLiveness mlir::ipu_tile::computeLiveness(ProgramOp program) {
  ProgramLiveness liveness;
  for (auto buffer : program.getBody().getOps<BufferOp>()) {
    liveness.indexOf[buffer.getSymNameAttr()] = liveness.buffers.size();
    liveness.buffers.push_back(buffer);
  }
  liveness.live.assign(liveness.buffers.size(), {UINT32_MAX, 0});
  liveness.used.assign(liveness.buffers.size(), false);
  SmallVector<unsigned> resident;
  SmallVector<BufferAccess> accesses;
  // Every access: its buffer, the loop directly around its step (an index
  // into `loops`, or none) and whether it takes a chunk per iteration of
  // that loop; and every loop's steps [loop step, body's last] with the
  // accesses in them, [accessBegin, accessEnd).
  constexpr size_t kNoLoop = ~size_t(0);
  struct Access {
    unsigned buffer;
    size_t loop;
    bool serial;
  };
  SmallVector<Access> accessList;
  struct LoopSpan {
    uint32_t first, last;
    size_t accessBegin, accessEnd;
  };
  SmallVector<LoopSpan> loops;
  auto visit = [&](Operation &op, std::optional<size_t> loopIndex, auto &&self) -> void {
    if (isa<BufferOp, KernelOp>(op))
      return;
    uint32_t step = liveness.steps.size();
    liveness.steps.push_back(&op);
    if (auto loop = dyn_cast<LoopOp>(op)) {
      const size_t index = loops.size();
      loops.push_back({step, step, accessList.size(), 0});
      for (Operation &inner : loop.getBody().front())
        self(inner, index, self);
      loops[index].last = liveness.steps.size() - 1;
      loops[index].accessEnd = accessList.size();
      return;
    }
    auto stepOp = dyn_cast<ProgramStepOpInterface>(op);
    if (!stepOp)
      return;
    accesses.clear();
    stepOp.getBufferAccesses(accesses);
    for (const BufferAccess &access : accesses) {
      auto it = liveness.indexOf.find(access.buffer.getAttr());
      if (it == liveness.indexOf.end())
        continue;
      auto &[first, last] = liveness.live[it->second];
      first = std::min(first, step);
      last = std::max(last, step);
      liveness.used[it->second] = true;
      if (access.resident)
        resident.push_back(it->second);
      accessList.push_back({it->second, loopIndex.value_or(kNoLoop), access.serial});
    }
  };
  for (Operation &op : program.getBody().front())
    visit(op, std::nullopt, visit);
  // A buffer of a loop body that lives on across its iterations: used
  // outside the loop (before extending, its range leaves the loop's), or a
  // chunk at a time by a step directly in the body. Inner loops first
  // (they come later in `loops`), so that an outer loop sees the inner
  // loops' extensions.
  for (size_t l = loops.size(); l-- > 0;) {
    const LoopSpan &loop = loops[l];
    auto extend = [&](unsigned buffer) {
      auto &[first, last] = liveness.live[buffer];
      first = std::min(first, loop.first);
      last = std::max(last, loop.last);
    };
    for (size_t a = loop.accessBegin; a < loop.accessEnd; ++a) {
      const Access &access = accessList[a];
      auto [first, last] = liveness.live[access.buffer];
      if ((access.serial && access.loop == l) || first < loop.first || last > loop.last)
        extend(access.buffer);
    }
  }
  uint32_t lastStep = liveness.steps.empty() ? 0 : liveness.steps.size() - 1;
  for (unsigned index : resident)
    liveness.live[index] = {0, lastStep};
  for (auto [range, used] : llvm::zip(liveness.live, liveness.used))
    if (!used)
      range = {0, 0};
  return liveness;
}

std::optional<int64_t> mlir::ipu_tile::layoutBatches(ArrayRef<int64_t> shape) {
  if (shape.size() < 2)
    return shape.empty() ? std::nullopt : std::optional<int64_t>(1);
  int64_t batches = 1;
  for (int64_t extent : shape.drop_back(2))
    if (extent < 0 || __builtin_mul_overflow(batches, extent, &batches))
      return std::nullopt;
  return batches;
}

uint32_t mlir::ipu_tile::exchangeWordBytes(Operation *scope) {
  std::optional<ipu::TargetModel> target = lookupTarget(scope);
  return (target ? *target : ipu::TargetModel::ipu21()).exchangeWordBytes();
}

std::optional<ipu::BlockLayout>
mlir::ipu_tile::toBlockLayout(RankedTensorType type, uint32_t wordBytes) {
  auto layout = dyn_cast_or_null<LayoutAttr>(type.getEncoding());
  std::optional<ipu::ElementType> element = toElementType(type.getElementType());
  if (!layout || !element || type.getRank() < 1 || !type.hasStaticShape() ||
      layout.getGrid().size() != 2 || layout.getStrides().size() != 2)
    return std::nullopt;
  std::optional<int64_t> batches = layoutBatches(type.getShape());
  if (!batches)
    return std::nullopt;
  ipu::BlockLayout result;
  result.wordBytes = wordBytes;
  result.batches = *batches;
  // A vector is one row.
  result.rows = type.getRank() == 1 ? 1 : type.getDimSize(type.getRank() - 2);
  if (layout.getFolded()) {
    if (type.getRank() < 3 || __builtin_mul_overflow(result.rows, *batches, &result.rows))
      return std::nullopt;
    result.batches = 1;
  }
  // A serial layout is the matrix's row chunks as batch-local batches (the
  // verifier holds the rows to a multiple of the chunks).
  if (layout.getSerial() > 1) {
    if (result.batches != 1 || result.rows % layout.getSerial() != 0)
      return std::nullopt;
    result.batches = layout.getSerial();
    result.rows /= layout.getSerial();
  }
  result.cols = type.getDimSize(type.getRank() - 1);
  result.type = *element;
  result.gridBatches = layout.getBatchGrid();
  result.gridRows = layout.getGrid()[0];
  result.gridCols = layout.getGrid()[1];
  result.tileBase = layout.getBase();
  result.tileBatchStride = layout.getBatchStride();
  result.tileRowStride = layout.getStrides()[0];
  result.tileColStride = layout.getStrides()[1];
  result.replicas = layout.getReplicas();
  result.replicaStride = layout.getReplicaStride();
  result.batchSplits.assign(layout.getBatchSplits().begin(),
                            layout.getBatchSplits().end());
  result.rowSplits.assign(layout.getRowSplits().begin(),
                          layout.getRowSplits().end());
  result.colSplits.assign(layout.getColSplits().begin(),
                          layout.getColSplits().end());
  result.tileMap.assign(layout.getTileMap().begin(), layout.getTileMap().end());
  return result;
}

LayoutAttr mlir::ipu_tile::toLayoutAttr(MLIRContext *context,
                                        const ipu::BlockLayout &layout) {
  int64_t grid[] = {layout.gridRows, layout.gridCols};
  // A stride over a dimension of one block never applies: print it as 0 so
  // that equal layouts have equal attributes.
  int64_t strides[] = {layout.gridRows > 1 ? layout.tileRowStride : 0,
                       layout.gridCols > 1 ? layout.tileColStride : 0};
  int64_t replicaStride = layout.replicas > 1 ? layout.replicaStride : 0;
  int64_t batchStride = layout.gridBatches > 1 ? layout.tileBatchStride : 0;
  if (!layout.tileMap.empty())
    strides[0] = strides[1] = replicaStride = batchStride = 0;
  SmallVector<int64_t> tileMap(layout.tileMap.begin(), layout.tileMap.end());
  return LayoutAttr::get(context, grid, layout.tileBase, strides,
                         layout.replicas, replicaStride, layout.rowSplits,
                         layout.colSplits, tileMap, layout.gridBatches,
                         batchStride, layout.batchSplits, /*folded=*/false,
                         /*serial=*/1);
}

LayoutAttr mlir::ipu_tile::toLayoutAttr(RankedTensorType type,
                                        const ipu::BlockLayout &layout) {
  LayoutAttr attr = toLayoutAttr(type.getContext(), layout);
  // The tensor's own batches (its leading dims), or its matrix folded,
  // perhaps cut in serial chunks (batch-local batches of a matrix).
  const int64_t typeBatches = layoutBatches(type.getShape()).value_or(1);
  if (layout.batches == typeBatches && (type.getRank() <= 2 || layout.batches > 1))
    return attr;
  const bool folded = type.getRank() > 2;
  const int64_t serial = layout.batches == typeBatches ? 1 : layout.batches;
  return LayoutAttr::get(type.getContext(), attr.getGrid(), attr.getBase(),
                         attr.getStrides(), attr.getReplicas(),
                         attr.getReplicaStride(), attr.getRowSplits(),
                         attr.getColSplits(), attr.getTileMap(),
                         serial > 1 ? 1 : attr.getBatchGrid(),
                         serial > 1 ? 0 : attr.getBatchStride(),
                         serial > 1 ? ArrayRef<int64_t>() : attr.getBatchSplits(),
                         folded, serial);
}

FailureOr<std::vector<char>> mlir::ipu_tile::constantBytes(ElementsAttr value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return failure();
  const unsigned bits = type.getElementTypeBitWidth();
  // Sub-byte elements (i1) are bit-packed in a DenseElementsAttr.
  if (bits % 8 != 0)
    return failure();
  const uint64_t elementBytes = bits / 8;
  const uint64_t bytes = uint64_t(type.getNumElements()) * elementBytes;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes)
      return failure();
    ArrayRef<char> data = blob->getData();
    return std::vector<char>(data.begin(), data.end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return failure();
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    if (raw.size() != elementBytes)
      return failure();
    std::vector<char> repeated;
    repeated.reserve(bytes);
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      repeated.insert(repeated.end(), raw.begin(), raw.end());
    return repeated;
  }
  if (raw.size() != bytes)
    return failure();
  return std::vector<char>(raw.begin(), raw.end());
}

bool mlir::ipu_tile::isFunctionArgument(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && isa_and_nonnull<FunctionOpInterface>(argument.getOwner()->getParentOp());
}

bool mlir::ipu_tile::isStreamedArgument(Value value) {
  if (isFunctionArgument(value))
    return true;
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getArgNumber() > 0 &&
         isa_and_nonnull<RepeatOp>(argument.getOwner()->getParentOp());
}

Value mlir::ipu_tile::expandedWeight(Value value) {
  auto op = value.getDefiningOp<ElementwiseOp>();
  if (!op || op.getReduce() || op.getInputs().size() != 1 || !value.hasOneUse())
    return nullptr;
  // The argument, or once --ipu-assign-layouts ran, its resident stream.
  Value input = op.getInputs().front();
  auto stream = input.getDefiningOp<FromHostOp>();
  if (!(isStreamedArgument(input) || (stream && stream.getResident())) ||
      op.getBroadcast(0) != ipu::Broadcast::Full)
    return nullptr;
  return input;
}

RepeatOp mlir::ipu_tile::carriedBy(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || argument.getArgNumber() != 0)
    return nullptr;
  return dyn_cast_or_null<RepeatOp>(argument.getOwner()->getParentOp());
}

bool mlir::ipu_tile::readsInOrder(PermuteOp op) {
  for (auto [index, dim] : llvm::enumerate(op.getPermutation()))
    if (dim != static_cast<int64_t>(index))
      return false;
  return !op.getOffsets() && !op.getSizes();
}
