//===- ExchangeDialect.cpp - ipu_exchange dialect and verifiers -----------===//

#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::ipu_exchange;

#include "IPU/Dialect/Exchange/IR/ExchangeOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Exchange/IR/ExchangeOpsAttributes.cpp.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Exchange/IR/ExchangeOps.cpp.inc"

namespace {
/// Schedules in bytecode: a run's transfer and start as signed deltas from
/// the previous run's, its word offset and count as varints. Runs go in
/// transfer and start order, so most take 4 to 6 bytes instead of 16.
struct ExchangeBytecodeInterface : public BytecodeDialectInterface {
  explicit ExchangeBytecodeInterface(Dialect *dialect)
      : BytecodeDialectInterface(dialect) {}
  enum AttributeCode : uint64_t { kSchedule = 0 };

  LogicalResult writeAttribute(Attribute attr,
                               DialectBytecodeWriter &writer) const override {
    auto schedule = dyn_cast<ScheduleAttr>(attr);
    // Runs in the data file stay a reference: the generic encoding.
    if (!schedule || !isa<DenseIntElementsAttr>(schedule.getRuns()))
      return failure();
    writer.writeVarInt(kSchedule);
    writer.writeVarInt(static_cast<uint64_t>(schedule.getStrategy()));
    writer.writeVarInt(static_cast<uint64_t>(schedule.getTransfers()));
    writer.writeVarInt(static_cast<uint64_t>(schedule.getBound()));
    writer.writeVarInt(static_cast<uint64_t>(schedule.getHorizon()));
    auto runs = cast<DenseIntElementsAttr>(schedule.getRuns()).getValues<int32_t>();
    writer.writeVarInt(runs.size() / kScheduleRunFields);
    int64_t transfer = 0, start = 0;
    for (auto it = runs.begin(), end = runs.end(); it != end;) {
      int64_t value[kScheduleRunFields];
      for (int64_t &v : value)
        v = *it++;
      writer.writeSignedVarInt(value[0] - transfer);
      writer.writeVarInt(static_cast<uint64_t>(value[1]));
      writer.writeVarInt(static_cast<uint64_t>(value[2]));
      writer.writeSignedVarInt(value[3] - start);
      writer.writeVarInt(static_cast<uint64_t>(value[4]));
      transfer = value[0];
      start = value[3];
    }
    return success();
  }

  Attribute readAttribute(DialectBytecodeReader &reader) const override {
    uint64_t code = 0, strategyCode = 0, transfers = 0, bound = 0, horizon = 0,
             count = 0;
    if (failed(reader.readVarInt(code)))
      return Attribute();
    if (code != kSchedule) {
      reader.emitError() << "unknown ipu_exchange attribute code " << code;
      return Attribute();
    }
    if (failed(reader.readVarInt(strategyCode)) || failed(reader.readVarInt(transfers)) ||
        failed(reader.readVarInt(bound)) || failed(reader.readVarInt(horizon)) ||
        failed(reader.readVarInt(count)))
      return Attribute();
    std::optional<Strategy> strategy =
        strategyCode <= UINT32_MAX ? symbolizeStrategy(static_cast<uint32_t>(strategyCode))
                                   : std::nullopt;
    if (!strategy) {
      reader.emitError() << "unknown exchange strategy code " << strategyCode;
      return Attribute();
    }
    auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
    SmallVector<int32_t> runs;
    int64_t transfer = 0, start = 0;
    for (uint64_t r = 0; r < count; ++r) {
      int64_t transferDelta = 0, startDelta = 0;
      uint64_t offset = 0, words = 0, paired = 0;
      if (failed(reader.readSignedVarInt(transferDelta)) ||
          failed(reader.readVarInt(offset)) || failed(reader.readVarInt(words)) ||
          failed(reader.readSignedVarInt(startDelta)) ||
          failed(reader.readVarInt(paired)))
        return Attribute();
      transfer += transferDelta;
      start += startDelta;
      if (!fits(transfer) || !fits(start) || offset > INT32_MAX || words > INT32_MAX ||
          paired > 1) {
        reader.emitError() << "schedule run " << r << " is out of range";
        return Attribute();
      }
      runs.append({int32_t(transfer), int32_t(offset), int32_t(words), int32_t(start),
                   int32_t(paired)});
    }
    MLIRContext *context = getContext();
    auto type = RankedTensorType::get({int64_t(runs.size())},
                                      IntegerType::get(context, 32));
    return ScheduleAttr::getChecked(
        [&] { return reader.emitError(); }, context, *strategy,
        static_cast<int64_t>(transfers), static_cast<int64_t>(bound),
        static_cast<int64_t>(horizon),
        DenseIntElementsAttr::get(type, ArrayRef<int32_t>(runs)));
  }
};
} // namespace

void IPUExchangeDialect::initialize() {
  addInterfaces<ExchangeBytecodeInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "IPU/Dialect/Exchange/IR/ExchangeOpsAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "IPU/Dialect/Exchange/IR/ExchangeOps.cpp.inc"
      >();
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Strategy strategy, int64_t transfers,
                                   int64_t bound, int64_t horizon,
                                   Attribute runsAttr) {
  if (transfers < 0 || bound < 0 || horizon < 0)
    return emitError() << "transfers, bound and horizon must not be negative";
  if (horizon < bound)
    return emitError() << "horizon " << horizon
                       << " is below the lower bound " << bound;
  ShapedType type = ipu_tile::constantType(runsAttr);
  if (!type || type.getRank() != 1 || !type.getElementType().isSignlessInteger(32))
    return emitError() << "runs must be a 1-D tensor of i32";
  if (type.getNumElements() % static_cast<int64_t>(kScheduleRunFields) != 0)
    return emitError() << "runs must be quintuples (transfer, first word, "
                          "words, start, paired), got "
                       << type.getNumElements() << " integers";
  // Runs in the data file are checked when they are read (scheduleRuns).
  if (isa<ipu_tile::DataAttr>(runsAttr))
    return success();
  auto dense = dyn_cast<DenseIntElementsAttr>(runsAttr);
  if (!dense)
    return emitError() << "runs must be dense elements or a #ipu_tile.data block, got "
                       << runsAttr;
  SmallVector<int32_t> runs(dense.getValues<int32_t>());
  return verifyScheduleRuns(emitError, strategy, transfers, horizon, runs);
}

LogicalResult mlir::ipu_exchange::verifyScheduleRuns(
    function_ref<InFlightDiagnostic()> emitError, Strategy strategy,
    int64_t transfers, int64_t horizon, ArrayRef<int32_t> runs) {
  const size_t fields = kScheduleRunFields;
  if (runs.size() % fields != 0)
    return emitError() << "runs must be quintuples (transfer, first word, "
                          "words, start, paired), got "
                       << runs.size() << " integers";
  for (size_t i = 0; i < runs.size(); i += fields) {
    if (runs[i] < 0 || runs[i] >= transfers)
      return emitError() << "run " << i / fields << " names transfer " << runs[i]
                         << ", the phase has " << transfers;
    if (runs[i + 1] < 0 || runs[i + 2] <= 0 || runs[i + 3] < 0)
      return emitError() << "run " << i / fields
                         << " needs a non-negative first word and start and a "
                            "positive word count";
    if (runs[i + 4] != 0 && runs[i + 4] != 1)
      return emitError() << "run " << i / fields << " has paired = " << runs[i + 4]
                         << "; it is 0 or 1";
    // A timed schedule's horizon is its last receiver's end, which the
    // timing model checks (a run that only copies to its own tile ends
    // nowhere on the exchange); an untimed one's is its last send.
    const int64_t events = runs[i + 4] ? runs[i + 2] / 2 : runs[i + 2];
    if (strategy != Strategy::timed &&
        static_cast<int64_t>(runs[i + 3]) + events > horizon)
      return emitError() << "run " << i / fields << " sends until event "
                         << runs[i + 3] + events << ", after the horizon "
                         << horizon;
  }
  return success();
}

FailureOr<SmallVector<int32_t>>
mlir::ipu_exchange::scheduleRuns(ScheduleAttr schedule, Operation *user) {
  if (auto dense = dyn_cast<DenseIntElementsAttr>(schedule.getRuns()))
    return SmallVector<int32_t>(dense.getValues<int32_t>());
  FailureOr<ArrayRef<char>> bytes =
      ipu_tile::dataBlockBytes(cast<ipu_tile::DataAttr>(schedule.getRuns()), user);
  if (failed(bytes))
    return failure();
  SmallVector<int32_t> runs(bytes->size() / sizeof(int32_t));
  std::memcpy(runs.data(), bytes->data(), runs.size() * sizeof(int32_t));
  if (failed(verifyScheduleRuns([&] { return user->emitError("schedule in the data file: "); },
                                schedule.getStrategy(), schedule.getTransfers(),
                                schedule.getHorizon(), runs)))
    return failure();
  return runs;
}

void PhaseOp::build(OpBuilder &builder, OperationState &state, StringRef name) {
  state.addAttribute(::mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->emplaceBlock();
}

LogicalResult PhaseOp::verify() {
  for (Operation &op : getBody().front())
    if (!isa<CopyOp>(op))
      return emitOpError("body may only hold ipu_exchange.copy, got ")
             << op.getName();
  if (getBody().front().empty())
    return emitOpError("has no copies");
  return success();
}

LogicalResult PhaseOp::verifyRegions() {
  // Two copies into one buffer would write its bytes twice in one phase,
  // in an order only the schedule decides.
  DenseMap<Attribute, CopyOp> writerOf;
  for (auto copy : getBody().getOps<CopyOp>()) {
    auto [it, inserted] = writerOf.try_emplace(copy.getDestAttr(), copy);
    if (!inserted)
      return copy.emitOpError("writes ")
             << copy.getDestAttr() << ", which the copy from "
             << it->second.getSourceAttr() << " already writes in phase @"
             << getSymName();
  }
  return success();
}

/// Resolves `ref` to a buffer of the enclosing program.
static FailureOr<ipu_tile::BufferOp> lookupBuffer(Operation *user,
                                                  FlatSymbolRefAttr ref,
                                                  StringRef role,
                                                  SymbolTableCollection &table) {
  auto buffer = ipu_tile::lookupBuffer(user, ref);
  if (!buffer)
    return user->emitOpError() << role << " " << ref
                               << " is not an ipu_tile.buffer";
  return buffer;
}

//===----------------------------------------------------------------------===//
// ProgramStepOpInterface
//===----------------------------------------------------------------------===//

ipu_tile::StepKind StreamInOp::getStepKind() {
  return ipu_tile::StepKind::HostStream;
}

void StreamInOp::getBufferAccesses(
    SmallVectorImpl<ipu_tile::BufferAccess> &accesses) {
  accesses.push_back({getBufferAttr(), /*reads=*/false, /*writes=*/true,
                      /*resident=*/getWeight(), getOperation()});
}

ipu_tile::StepKind StreamOutOp::getStepKind() {
  return ipu_tile::StepKind::HostStream;
}

void StreamOutOp::getBufferAccesses(
    SmallVectorImpl<ipu_tile::BufferAccess> &accesses) {
  accesses.push_back({getBufferAttr(), /*reads=*/true, /*writes=*/false,
                      /*resident=*/false, getOperation()});
}

ipu_tile::StepKind SyncOp::getStepKind() { return ipu_tile::StepKind::Sync; }

void SyncOp::getBufferAccesses(SmallVectorImpl<ipu_tile::BufferAccess> &) {}

ipu_tile::StepKind PhaseOp::getStepKind() {
  return ipu_tile::StepKind::Exchange;
}

void PhaseOp::getBufferAccesses(
    SmallVectorImpl<ipu_tile::BufferAccess> &accesses) {
  for (auto copy : getBody().getOps<CopyOp>()) {
    accesses.push_back({copy.getSourceAttr(), /*reads=*/true,
                        /*writes=*/false, /*resident=*/false, copy});
    accesses.push_back({copy.getDestAttr(), /*reads=*/false, /*writes=*/true,
                        /*resident=*/false, copy});
  }
}

//===----------------------------------------------------------------------===//
// Symbol uses
//===----------------------------------------------------------------------===//

/// A stream's host shape holds as many elements as its buffer's tensor.
/// A shape attribute (`name`) of a host stream: the buffer's elements.
static LogicalResult checkHostShape(Operation *op, ipu_tile::BufferOp buffer,
                                    std::optional<ArrayRef<int64_t>> hostShape,
                                    StringRef name = "host_shape",
                                    int64_t batches = 1) {
  if (!hostShape)
    return success();
  int64_t elements = 1;
  for (int64_t extent : *hostShape)
    if (extent < 1 || __builtin_mul_overflow(elements, extent, &elements))
      return op->emitOpError()
             << name << " must have positive extents whose product fits in 64 bits";
  const int64_t held = buffer.getTensorType().getNumElements() / batches;
  if (hostShape->empty() || elements != held)
    return op->emitOpError()
           << name << " holds " << elements << " elements, buffer @"
           << buffer.getSymName() << (batches > 1 ? "'s batch" : "") << " holds "
           << held;
  return success();
}

LogicalResult StreamInOp::verifySymbolUses(SymbolTableCollection &table) {
  if (getIndexAttr().getInt() < 0)
    return emitOpError("argument index must not be negative");
  // A transposing stream transposes each matrix: the last two dims.
  FailureOr<ipu_tile::BufferOp> buffer =
      lookupBuffer(*this, getBufferAttr(), "buffer", table);
  if (failed(buffer))
    return failure();
  if (getHostShape() && getTranspose())
    return emitOpError("a transposing stream takes its host shape from its "
                       "buffer: host_shape does not apply");
  // A chunk is one batch of a buffer that holds its batches where its
  // blocks are.
  int64_t batches = 1;
  if (std::optional<int64_t> chunk = getChunk()) {
    RankedTensorType bufferType = buffer->getTensorType();
    std::optional<ipu::BlockLayout> layout =
        ipu_tile::toBlockLayout(bufferType, ipu_tile::exchangeWordBytes(*this));
    if (!layout || layout->gridBatches != 1 || layout->batches < 1 ||
        bufferType.getRank() < 3)
      return emitOpError("chunk needs a buffer that holds its batches on the "
                         "tiles of its blocks; @")
             << buffer->getSymName() << " is " << bufferType;
    if (*chunk < 0 || *chunk >= layout->batches)
      return emitOpError("chunk ") << *chunk << " is not a batch of @"
                                   << buffer->getSymName() << "'s "
                                   << layout->batches;
    batches = layout->batches;
  }
  if (std::optional<Attribute> constant = getConstant()) {
    RankedTensorType bufferType = buffer->getTensorType();
    const int64_t held = bufferType.getNumElements() / batches;
    ShapedType type = ipu_tile::constantType(*constant);
    if (!type || !type.hasStaticShape() ||
        type.getElementType() != bufferType.getElementType() ||
        type.getNumElements() != held)
      return emitOpError("constant of type ")
             << type << " is not the " << held << " elements of "
             << bufferType.getElementType() << " buffer @" << buffer->getSymName()
             << (batches > 1 ? "'s batch" : "") << " holds";
    // A data block's bytes are read, and checked, by whoever needs them.
    auto elements = dyn_cast<ElementsAttr>(*constant);
    if (elements && failed(ipu_tile::constantBytes(elements)))
      return emitOpError("constant has no data (an elided or missing resource blob)");
  }
  if (failed(checkHostShape(*this, *buffer, getDeclaredShape(), "declared_shape", batches)))
    return failure();
  if (std::optional<int64_t> batchDim = getBatchDim()) {
    // A dimension of the function's shape of the argument.
    const size_t rank = getDeclaredShape() ? getDeclaredShape()->size()
                        : getHostShape()   ? getHostShape()->size()
                                           : size_t(buffer->getTensorType().getRank());
    if (*batchDim >= static_cast<int64_t>(rank))
      return emitOpError("batch_dim ")
             << *batchDim << " is not a dimension of the argument's " << rank << "-d shape";
  }
  if (std::optional<ArrayRef<int32_t>> layers = getLayerArguments()) {
    auto loop = dyn_cast<ipu_tile::LoopOp>((*this)->getParentOp());
    if (!loop || static_cast<int64_t>(layers->size()) != loop.getCount())
      return emitOpError("streams ")
             << layers->size() << " layers, one per iteration: it must lie "
             << "directly in an ipu_tile.loop of that count";
    if (layers->front() != getIndexAttr().getInt() || getChunk() || getWeight() ||
        getConstant())
      return emitOpError("a stream of layers starts at its index, streams no "
                         "chunk, is no initialisation weight and carries its "
                         "constants in layer_constants");
    if (llvm::any_of(*layers, [](int32_t index) { return index < 0; }))
      return emitOpError("argument index must not be negative");
    if (std::optional<ArrayAttr> constants = getLayerConstants()) {
      if (constants->size() != layers->size())
        return emitOpError("layer_constants has ")
               << constants->size() << " entries for " << layers->size() << " layers";
      RankedTensorType bufferType = buffer->getTensorType();
      for (Attribute entry : *constants) {
        if (isa<UnitAttr>(entry))
          continue;
        ShapedType type = ipu_tile::constantType(entry);
        if (!type || !type.hasStaticShape() ||
            type.getElementType() != bufferType.getElementType() ||
            type.getNumElements() != bufferType.getNumElements())
          return emitOpError("layer constant ")
                 << entry << " is not the elements buffer @" << buffer->getSymName()
                 << " holds";
      }
    }
  } else if (getLayerConstants()) {
    return emitOpError("layer_constants without layer_arguments");
  }
  return checkHostShape(*this, *buffer, getHostShape(), "host_shape", batches);
}

LogicalResult StreamOutOp::verifySymbolUses(SymbolTableCollection &table) {
  if (getIndexAttr().getInt() < 0)
    return emitOpError("result index must not be negative");
  FailureOr<ipu_tile::BufferOp> buffer =
      lookupBuffer(*this, getBufferAttr(), "buffer", table);
  if (failed(buffer))
    return failure();
  if (failed(checkHostShape(*this, *buffer, getDeclaredShape(), "declared_shape")))
    return failure();
  return checkHostShape(*this, *buffer, getHostShape());
}

/// The same matrix, one side cut into serial chunks: [S, M / S, N] held
/// batch-local (a serial layout's buffer) against [M, N] (or two
/// chunkings), row-major alike. Batches on tiles of their own are batches.
static bool sameMatrixInChunks(RankedTensorType a, RankedTensorType b) {
  if (a.getRank() < 2 || b.getRank() < 2 || a.getShape().back() != b.getShape().back() ||
      a.getNumElements() != b.getNumElements())
    return false;
  // Only the batches are compared, which no word changes: bytes (1) will do.
  const uint32_t word = 1;
  std::optional<ipu::BlockLayout> from = ipu_tile::toBlockLayout(a, word);
  std::optional<ipu::BlockLayout> to = ipu_tile::toBlockLayout(b, word);
  return from && to && from->batches != to->batches && from->gridBatches == 1 &&
         to->gridBatches == 1;
}

LogicalResult CopyOp::verifySymbolUses(SymbolTableCollection &table) {
  FailureOr<ipu_tile::BufferOp> source =
      lookupBuffer(*this, getSourceAttr(), "source", table);
  FailureOr<ipu_tile::BufferOp> dest =
      lookupBuffer(*this, getDestAttr(), "dest", table);
  if (failed(source) || failed(dest))
    return failure();
  RankedTensorType from = source->getTensorType(), to = dest->getTensorType();
  if (getView().has_value() != getPermutation().has_value())
    return emitOpError("takes `view` and `permutation` together");
  if (getOffsets().has_value() != getSizes().has_value() || (getOffsets() && !getView()))
    return emitOpError("takes `offsets` and `sizes` together, with a `view`");
  if (getView()) {
    ipu::Permutation permutation{
        std::vector<int64_t>(getView()->begin(), getView()->end()),
        std::vector<int64_t>(getPermutation()->begin(), getPermutation()->end()), {}, {}};
    if (getOffsets()) {
      permutation.offsets.assign(getOffsets()->begin(), getOffsets()->end());
      permutation.sizes.assign(getSizes()->begin(), getSizes()->end());
    }
    if (std::optional<std::string> error = permutation.validate())
      return emitOpError(*error);
    int64_t elements = 1, windowElements = 1;
    for (int64_t extent : permutation.view)
      elements *= extent;
    for (int64_t extent : permutation.resultExtents())
      windowElements *= extent;
    if (from.getElementType() != to.getElementType() ||
        from.getNumElements() != elements || to.getNumElements() != windowElements) {
      InFlightDiagnostic diagnostic = emitOpError("a permuted copy moves the ");
      if (getOffsets())
        diagnostic << windowElements << " elements of the window of its view of "
                   << elements;
      else
        diagnostic << elements << " elements of its view";
      return diagnostic << " between buffers of one element type, not " << from << " and "
                        << to;
    }
  } else if ((from.getShape() != to.getShape() &&
              !sameMatrixInChunks(from, to)) ||
             from.getElementType() != to.getElementType()) {
    return emitOpError("source and dest hold different tensors: ")
           << from << " and " << to;
  }
  if (*source == *dest)
    return emitOpError("copies buffer ") << getSourceAttr() << " onto itself";
  // Once placed, the destination must not overwrite its source on a tile
  // both span: the phase would read words it has already replaced.
  std::optional<uint64_t> sourceAt = source->getAddress();
  std::optional<uint64_t> destAt = dest->getAddress();
  const uint32_t word = ipu_tile::exchangeWordBytes(getOperation());
  std::optional<ipu::BlockLayout> fromLayout = ipu_tile::toBlockLayout(from, word);
  std::optional<ipu::BlockLayout> toLayout = ipu_tile::toBlockLayout(to, word);
  if (!sourceAt || !destAt || !fromLayout || !toLayout)
    return success();
  uint64_t sourceEnd = *sourceAt + fromLayout->maxBlockBytes();
  uint64_t destEnd = *destAt + toLayout->maxBlockBytes();
  if (*destAt >= sourceEnd || *sourceAt >= destEnd)
    return success();
  std::vector<uint32_t> sourceTiles = fromLayout->tileList();
  std::vector<uint32_t> destTiles = toLayout->tileList();
  llvm::sort(sourceTiles);
  llvm::sort(destTiles);
  std::vector<uint32_t> shared;
  std::set_intersection(sourceTiles.begin(), sourceTiles.end(),
                        destTiles.begin(), destTiles.end(),
                        std::back_inserter(shared));
  if (shared.empty())
    return success();
  return emitOpError("destination ")
         << getDestAttr() << " [" << *destAt << ", " << destEnd
         << ") overlaps its source " << getSourceAttr() << " [" << *sourceAt
         << ", " << sourceEnd << ") on tile " << shared.front();
}
