//===- AssignLayouts.cpp - A layout for every tensor between ops ----------===//
//
// Every value gets the #ipu_tile.layout its producer leaves it in: function
// arguments come from the host through ipu_tile.from_host (arriving split by
// rows, or streamed in the layout an op wants them resident in), op results
// in the layout their op says. Where a consumer needs another layout or
// memory class, an ipu_tile.relayout stands in the IR, one per distinct
// (value, layout, class), shared by the consumers that want it.
//
//===----------------------------------------------------------------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUASSIGNLAYOUTS
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;
using ipu::BlockLayout;
using ipu_tile::OperandLayout;

namespace {

/// The tensor type of `type` with `layout` as its encoding.
RankedTensorType withLayout(RankedTensorType type, const BlockLayout &layout) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               ipu_tile::toLayoutAttr(type, layout));
}

/// Where a value lives: its encoding and the memory class its producer
/// put it in (results of ops other than the layout ops are standard).
ipu_tile::MemoryClass memoryClassOf(Value value) {
  // A repeated layer's weight is where its layers' streams put it.
  if (auto argument = dyn_cast<BlockArgument>(value))
    if (auto repeat = dyn_cast_or_null<ipu_tile::RepeatOp>(argument.getOwner()->getParentOp()))
      if (argument.getArgNumber() > 0)
        return memoryClassOf(repeat.getWeight(argument.getArgNumber() - 1, 0));
  if (auto fromHost = value.getDefiningOp<ipu_tile::FromHostOp>())
    return fromHost.getMemoryClass();
  if (auto relayout = value.getDefiningOp<ipu_tile::RelayoutOp>())
    return relayout.getMemoryClass();
  if (auto producer = value.getDefiningOp<ipu_tile::TileLowerableOpInterface>())
    return ipu_tile::toIRClass(
        producer.getResultMemoryClass(cast<OpResult>(value).getResultNumber()));
  return ipu_tile::MemoryClass::standard;
}

struct LayoutKey {
  Attribute encoding;
  ipu_tile::MemoryClass memoryClass;
  bool transpose, resident;
  bool operator==(const LayoutKey &other) const {
    return encoding == other.encoding && memoryClass == other.memoryClass &&
           transpose == other.transpose && resident == other.resident;
  }
};

class FunctionLayouts {
public:
  FunctionLayouts(func::FuncOp func, const ipu::TargetModel &target)
      : func(func), target(target), builder(func.getContext()) {}

  LogicalResult run() {
    // Only ops that say where their tensors live can take a layout.
    WalkResult walked = func.getBody().walk([&](Operation *op) {
      if (op->getParentOp() != func && !isa<ipu_tile::RepeatOp>(op->getParentOp()))
        return WalkResult::skip(); // Inside an op's own body.
      if (!isa<ipu_tile::TileLowerableOpInterface, ipu_tile::FromHostOp,
               ipu_tile::RelayoutOp, ipu_tile::RepeatOp, ipu_tile::CarryOp,
               func::ReturnOp>(op)) {
        ipu_tile::emitNotLowerable(op);
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted() || failed(assignArguments()))
      return failure();
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      if (auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op))
        assignOp(lowerable);
      else if (auto repeat = dyn_cast<ipu_tile::RepeatOp>(op))
        assignRepeat(repeat);
    }
    joinParameterRelayouts(func.getBody().front());
    func.getBody().walk([&](ipu_tile::RepeatOp repeat) {
      joinParameterRelayouts(repeat.getBody().front());
    });
    // The function now returns values with layouts.
    func.setType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(),
        func.getBody().front().getTerminator()->getOperandTypes()));
    return success();
  }

private:
  /// A from_host per argument: the arrival layout for its activation uses,
  /// and one per distinct layout its users want it resident or transposed
  /// in, in that order (the streams' order).
  LogicalResult assignArguments();
  /// Relayouts for the operands of `op` that are not where it needs them,
  /// and its results' layouts.
  void assignOp(ipu_tile::TileLowerableOpInterface op);
  /// Where the body of `repeat` wants weight slot `slot` resident: where
  /// every op of the body that reads it wants it (the same place for all).
  FailureOr<OperandLayout> weightSlotLayout(ipu_tile::RepeatOp repeat, unsigned slot);
  FailureOr<OperandLayout> findWeightSlotLayout(ipu_tile::RepeatOp repeat, unsigned slot);
  /// The body's ops, with the previous layer's value where the input is,
  /// and what the body passes on moved there when it is elsewhere: every
  /// layer reads and writes one buffer.
  void assignRepeat(ipu_tile::RepeatOp repeat);
  /// Moves each relayout of a parameter vector (a value from outside
  /// `block` or one of its arguments, read only as elementwise ops' row
  /// inputs: a bias, a norm's scale or shift) to the end of the run of
  /// relayouts before its own run: it joins that phase instead of paying
  /// for one of its own (a phase's fixed cost, about 1,000 cycles, for a
  /// few hundred bytes).
  void joinParameterRelayouts(Block &block);

  func::FuncOp func;
  const ipu::TargetModel &target;
  OpBuilder builder;
  /// Each repeated layer's weight slot's layout, once found.
  DenseMap<std::pair<Operation *, unsigned>, OperandLayout> slotLayouts;
  /// The relayout of a value into a layout and class, once made.
  DenseMap<std::pair<Value, Attribute>, SmallVector<ipu_tile::RelayoutOp>> relayoutsOf;
};

LogicalResult FunctionLayouts::assignArguments() {
  Block &body = func.getBody().front();
  builder.setInsertionPointToStart(&body);
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() < 1 || !type.hasStaticShape() ||
        !ipu_tile::toElementType(type.getElementType()) || type.getEncoding())
      return func.emitError("argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; only static tensors of rank >= 1 of f32, f16 or f8 (without "
                "an encoding) are supported";
    SmallVector<OpOperand *> activationUses;
    SmallVector<std::pair<OpOperand *, OperandLayout>> residentUses;
    std::optional<bool> leadingDimsAsBatches;
    // Every reader in program order: the function's ops, and after each
    // repeated layer's own operands the ops of its body, which read values
    // from before the layers (a bias or weight all layers share) as any op.
    SmallVector<Operation *> readers;
    for (Operation &op : body) {
      readers.push_back(&op);
      if (auto repeat = dyn_cast<ipu_tile::RepeatOp>(op))
        for (Operation &inner : repeat.getBody().front())
          readers.push_back(&inner);
    }
    for (Operation *reader : readers) {
      Operation &op = *reader;
      for (OpOperand &use : op.getOpOperands()) {
        if (use.get() != arg)
          continue;
        OperandLayout resident;
        if (auto repeat = dyn_cast<ipu_tile::RepeatOp>(op)) {
          const unsigned weight = use.getOperandNumber() - 1;
          if (use.getOperandNumber() == 0) {
            activationUses.push_back(&use);
            continue;
          }
          FailureOr<OperandLayout> slot =
              weightSlotLayout(repeat, weight / static_cast<unsigned>(repeat.getCount()));
          if (failed(slot))
            return failure();
          residentUses.push_back({&use, *slot});
          continue;
        }
        auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op);
        if (lowerable && lowerable.getResidentLayout(use.getOperandNumber(), resident)) {
          residentUses.push_back({&use, resident});
          continue;
        }
        if (isa<func::ReturnOp>(op))
          continue; // Refused by the lowering: a result must be computed.
        activationUses.push_back(&use);
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
    // Activations (and unused arguments, which are still streamed) arrive
    // split by rows.
    if (!activationUses.empty() || (arg.use_empty() && residentUses.empty())) {
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
      BlockLayout layout = ipu::arrivalLayout(
          rows, cols, *ipu_tile::toElementType(type.getElementType()), target,
          batches);
      auto arrived = ipu_tile::FromHostOp::create(
          builder, arg.getLoc(), withLayout(type, layout), arg,
          ipu_tile::MemoryClass::standard,
          /*resident=*/false, /*transpose=*/false);
      for (OpOperand *use : activationUses)
        use->set(arrived);
    }
    SmallVector<std::pair<LayoutKey, ipu_tile::FromHostOp>> streams;
    for (auto &[use, wanted] : residentUses) {
      RankedTensorType streamed = type;
      if (wanted.transpose) {
        SmallVector<int64_t> shape(type.getShape());
        std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
        streamed = RankedTensorType::get(shape, type.getElementType());
      }
      RankedTensorType resultType = withLayout(streamed, wanted.layout);
      LayoutKey key{resultType.getEncoding(),
                    ipu_tile::toIRClass(wanted.memoryClass),
                    wanted.transpose, wanted.weight};
      auto same = llvm::find_if(streams, [&](auto &entry) { return entry.first == key; });
      ipu_tile::FromHostOp stream;
      if (same != streams.end()) {
        stream = same->second;
      } else {
        stream = ipu_tile::FromHostOp::create(
            builder, use->getOwner()->getLoc(), resultType, arg,
            key.memoryClass, key.resident, key.transpose);
        streams.push_back({key, stream});
      }
      Operation *user = use->getOwner();
      unsigned operand = use->getOperandNumber();
      use->set(stream);
      if (auto repeat = dyn_cast<ipu_tile::RepeatOp>(user)) {
        // The body reads the slot as each layer's stream has it.
        BlockArgument slot = repeat.getWeightArgument(
            (operand - 1) / static_cast<unsigned>(repeat.getCount()));
        if (slot.getType() != stream.getType()) {
          slot.setType(stream.getType());
          if (wanted.transpose)
            for (OpOperand &read : slot.getUses())
              cast<ipu_tile::TileLowerableOpInterface>(read.getOwner())
                  .noteOperandTransposed(read.getOperandNumber());
        }
        continue;
      }
      if (wanted.transpose)
        cast<ipu_tile::TileLowerableOpInterface>(user).noteOperandTransposed(operand);
    }
  }
  return success();
}

FailureOr<OperandLayout> FunctionLayouts::weightSlotLayout(ipu_tile::RepeatOp repeat,
                                                           unsigned slot) {
  // Asked once per layer: the first answer stands (the body's readers of a
  // transposed slot change once the first layer's stream is made).
  auto known = slotLayouts.find({repeat, slot});
  if (known != slotLayouts.end())
    return known->second;
  FailureOr<OperandLayout> found = findWeightSlotLayout(repeat, slot);
  if (succeeded(found))
    slotLayouts[{repeat, slot}] = *found;
  return found;
}

FailureOr<OperandLayout> FunctionLayouts::findWeightSlotLayout(ipu_tile::RepeatOp repeat,
                                                               unsigned slot) {
  BlockArgument argument = repeat.getWeightArgument(slot);
  std::optional<OperandLayout> wanted;
  std::optional<LayoutKey> wantedKey;
  for (OpOperand &use : argument.getUses()) {
    auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(use.getOwner());
    OperandLayout resident;
    if (!lowerable || !lowerable.getResidentLayout(use.getOperandNumber(), resident))
      return use.getOwner()->emitError("reads weight slot ")
             << slot << " of a repeated layer where it is not resident (operand "
             << use.getOperandNumber()
             << "); a repeated layer only reads its weights where they stay";
    auto type = cast<RankedTensorType>(argument.getType());
    LayoutKey key{withLayout(type, resident.layout).getEncoding(),
                  ipu_tile::toIRClass(resident.memoryClass), resident.transpose,
                  resident.weight};
    if (wantedKey && !(*wantedKey == key))
      return use.getOwner()->emitError("reads weight slot ")
             << slot << " of a repeated layer in another layout than an op before "
                "it; a repeated layer keeps each weight in one layout";
    wanted = resident;
    wantedKey = key;
  }
  if (!wanted)
    return repeat.emitError("weight slot ") << slot << " is read by no op of the body";
  return *wanted;
}

void FunctionLayouts::assignRepeat(ipu_tile::RepeatOp repeat) {
  Block &body = repeat.getBody().front();
  BlockArgument carried = body.getArgument(0);
  carried.setType(repeat.getInput().getType());
  for (Operation &op : llvm::make_early_inc_range(body))
    if (auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op))
      assignOp(lowerable);
  auto carry = cast<ipu_tile::CarryOp>(body.getTerminator());
  Value passed = carry.getValue();
  if (passed.getType() != carried.getType() ||
      memoryClassOf(passed) != ipu_tile::MemoryClass::standard) {
    builder.setInsertionPoint(carry);
    auto relayout = ipu_tile::RelayoutOp::create(
        builder, carry.getLoc(), cast<RankedTensorType>(carried.getType()), passed,
        ipu_tile::MemoryClass::standard);
    carry.getValueMutable().assign(relayout);
    relayout.emitRemark("relayout of what a repeated layer passes on into the "
                        "layout its input arrives in");
  }
  repeat.getResult().setType(cast<RankedTensorType>(carried.getType()));
}

void FunctionLayouts::joinParameterRelayouts(Block &block) {
  auto isParameter = [&](ipu_tile::RelayoutOp relayout) {
    Value source = relayout.getSource();
    if (source.getParentBlock() == &block && !isa<BlockArgument>(source))
      return false;
    if (relayout->use_empty())
      return false;
    for (OpOperand &use : relayout->getUses()) {
      auto reader = dyn_cast<ipu_tile::ElementwiseOp>(use.getOwner());
      if (!reader || reader.getBroadcast(use.getOperandNumber()) != ipu::Broadcast::Row)
        return false;
    }
    return true;
  };
  SmallVector<ipu_tile::RelayoutOp> parameters;
  for (auto relayout : block.getOps<ipu_tile::RelayoutOp>())
    if (isParameter(relayout))
      parameters.push_back(relayout);
  for (ipu_tile::RelayoutOp relayout : parameters) {
    // Past the relayouts right before it (its own run), to the last of the
    // run before that.
    Operation *before = relayout->getPrevNode();
    while (before && isa<ipu_tile::RelayoutOp>(before))
      before = before->getPrevNode();
    while (before && !isa<ipu_tile::RelayoutOp>(before))
      before = before->getPrevNode();
    if (before)
      relayout->moveAfter(before);
  }
}

void FunctionLayouts::assignOp(ipu_tile::TileLowerableOpInterface op) {
  // Relayouts go right before the op, in operand order: the lowering moves
  // consecutive ones in one phase.
  builder.setInsertionPoint(op);
  for (OpOperand &use : op->getOpOperands()) {
    OperandLayout wanted;
    if (!op.getOperandLayout(use.getOperandNumber(), wanted))
      continue;
    Value value = use.get();
    auto type = cast<RankedTensorType>(value.getType());
    RankedTensorType wantedType = withLayout(type, wanted.layout);
    ipu_tile::MemoryClass wantedClass = ipu_tile::toIRClass(wanted.memoryClass);
    if (type == wantedType && memoryClassOf(value) == wantedClass)
      continue;
    SmallVector<ipu_tile::RelayoutOp> &made =
        relayoutsOf[{value, wantedType.getEncoding()}];
    auto same = llvm::find_if(made, [&](ipu_tile::RelayoutOp relayout) {
      return relayout.getMemoryClass() == wantedClass;
    });
    if (same != made.end()) {
      use.set(*same);
      continue;
    }
    auto relayout = ipu_tile::RelayoutOp::create(builder, op->getLoc(), wantedType,
                                                 value, wantedClass);
    made.push_back(relayout);
    use.set(relayout);
    // What the relayout costs, as the lowering will emit it.
    ipu::RelayoutCost cost;
    std::optional<BlockLayout> from = ipu_tile::toBlockLayout(type, target.exchangeWordBytes());
    std::optional<std::string> why =
        from ? ipu::relayoutCost(*from, wanted.layout, target, cost)
             : std::optional<std::string>("the source has no layout");
    if (why)
      relayout.emitRemark("relayout of operand ")
          << use.getOperandNumber() << " of '" << op->getName()
          << "' cannot be costed: " << *why;
    else
      relayout.emitRemark("relayout of operand ")
          << use.getOperandNumber() << " of '" << op->getName()
          << "' into " << ipu_tile::stringifyMemoryClass(wantedClass)
          << ": transfers=" << cost.transfers
          << " boundCycles=" << cost.boundCycles << " cycles=" << cost.cycles;
  }
  for (OpResult result : op->getResults()) {
    BlockLayout layout;
    if (!op.getResultLayout(result.getResultNumber(), layout))
      continue;
    result.setType(withLayout(cast<RankedTensorType>(result.getType()), layout));
  }
}

struct AssignLayoutsPass
    : public mlir::ipu_compiler::impl::IPUAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    FailureOr<SmallVector<func::FuncOp>> funcs = ipu_tile::functionsToCompile(module);
    if (failed(funcs))
      return signalPassFailure();
    for (func::FuncOp func : *funcs)
      if (failed(FunctionLayouts(func, *target).run()))
        return signalPassFailure();
  }
};
} // namespace
