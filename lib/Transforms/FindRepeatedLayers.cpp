//===- FindRepeatedLayers.cpp - The layers an exporter unrolled -----------===//
//
// Describes each function's ops for ipu::findRepeatedLayers (Planning/
// RepeatedLayers.h): two ops share a signature when they compute the same
// thing from their operands, bodies included.
//
//===----------------------------------------------------------------------===//

#include "IPU/Planning/RepeatedLayers.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUFINDREPEATEDLAYERS
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {

/// Whether `a` and `b` compute the same thing from their operands: their
/// names, attributes, result types and bodies (wired alike) agree.
bool computeAlike(Operation *a, Operation *b) {
  // Values from outside an op (its operands) may differ; inside a body,
  // the comparison maps one op's values to the other's.
  Region *outsideA = a->getParentRegion();
  Region *outsideB = b->getParentRegion();
  llvm::DenseMap<Value, Value> inside;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value x, Value y) {
        if (x.getParentRegion() == outsideA && y.getParentRegion() == outsideB)
          return success();
        return success(inside.lookup(x) == y);
      },
      [&](Value x, Value y) { inside[x] = y; }, OperationEquivalence::IgnoreLocations);
}

/// What `value` is to the search: a function argument, or a result of the
/// op at its position.
ipu::SequenceValue valueOf(Value value, const llvm::DenseMap<Operation *, uint32_t> &position) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return ipu::SequenceValue::argument(argument.getArgNumber());
  auto result = cast<OpResult>(value);
  auto it = position.find(result.getOwner());
  return ipu::SequenceValue::resultOf(it == position.end() ? UINT32_MAX : it->second,
                                      result.getResultNumber());
}

/// The function's ops as the search sees them, and the ops by position.
ipu::Sequence describe(func::FuncOp func, SmallVectorImpl<Operation *> &ops) {
  ipu::Sequence sequence;
  llvm::DenseMap<Type, uint32_t> typeClass;
  for (BlockArgument argument : func.getArguments())
    sequence.argumentTypes.push_back(
        typeClass.try_emplace(argument.getType(), typeClass.size()).first->second);

  llvm::DenseMap<Operation *, uint32_t> position;
  // Ops bucketed by a hash of what computeAlike compares (no operands);
  // each bucket's classes listed by a representative.
  llvm::DenseMap<llvm::hash_code, SmallVector<std::pair<Operation *, uint32_t>>> classes;
  uint32_t signatures = 0;
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator()) {
    llvm::hash_code hash = OperationEquivalence::computeHash(
        &op, OperationEquivalence::ignoreHashValue, OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
    for (Region &region : op.getRegions())
      for (Block &block : region)
        hash = llvm::hash_combine(hash, block.getOperations().size());
    auto &bucket = classes[hash];
    uint32_t signature = UINT32_MAX;
    for (auto &[representative, id] : bucket)
      if (computeAlike(representative, &op)) {
        signature = id;
        break;
      }
    if (signature == UINT32_MAX) {
      signature = signatures++;
      bucket.push_back({&op, signature});
    }

    ipu::SequenceOp &described = sequence.ops.emplace_back();
    described.signature = signature;
    for (Value operand : op.getOperands())
      described.operands.push_back(valueOf(operand, position));
    position[&op] = static_cast<uint32_t>(ops.size());
    ops.push_back(&op);
  }
  for (Value returned : body.getTerminator()->getOperands())
    sequence.returned.push_back(valueOf(returned, position));
  return sequence;
}

} // namespace

namespace {

/// Rewrites `layers` of `func` (whose ops by position are `ops`) as one
/// ipu_tile.repeat with the first layer's ops as its body.
LogicalResult outlineLayers(func::FuncOp func, ArrayRef<Operation *> ops,
                      const ipu::RepeatedLayers &layers, bool streamed) {
  auto valueOf = [&](const ipu::SequenceValue &value) -> Value {
    if (value.kind == ipu::SequenceValue::Kind::Argument)
      return func.getArgument(value.index);
    return ops[value.index]->getResult(value.result);
  };
  Value input = valueOf(layers.input);
  auto outputOf = [&](uint32_t layer) {
    return ops[layers.first + layer * layers.opsPerLayer + layers.output.index]->getResult(
        layers.output.result);
  };
  Value lastOutput = outputOf(layers.layers - 1);
  // Without weights of their own, the layers share nothing a loop would
  // save (their code is already one kernel per distinct body).
  if (layers.weights.empty()) {
    mlir::emitRemark(func.getLoc(),
                     "leaves the layers as they are: they have no weights of their own");
    return success();
  }
  // A repeat inside a repeat has no lowering: layers that hold one stay.
  for (uint32_t position = layers.first; position < layers.end(); ++position)
    if (isa<ipu_tile::RepeatOp>(ops[position])) {
      mlir::emitRemark(func.getLoc(), "leaves the layers as they are: each holds "
                                      "repeated layers of its own");
      return success();
    }
  if (input.getType() != lastOutput.getType()) {
    mlir::emitRemark(func.getLoc(), "leaves the layers as they are: each reads ")
        << input.getType() << " but passes on " << lastOutput.getType();
    return success();
  }

  Operation *firstOp = ops[layers.first];
  OpBuilder builder(firstOp);
  SmallVector<Value> weights;
  SmallVector<Type> argumentTypes{input.getType()};
  SmallVector<Location> argumentLocations{input.getLoc()};
  for (const std::vector<uint32_t> &slot : layers.weights) {
    for (uint32_t argument : slot)
      weights.push_back(func.getArgument(argument));
    argumentTypes.push_back(func.getArgument(slot.front()).getType());
    argumentLocations.push_back(func.getArgument(slot.front()).getLoc());
  }
  auto repeat = ipu_tile::RepeatOp::create(builder, firstOp->getLoc(), input.getType(),
                                           builder.getI64IntegerAttr(layers.layers),
                                           input, weights,
                                           streamed ? builder.getUnitAttr() : UnitAttr());
  Block *body = builder.createBlock(&repeat.getBody(), {}, argumentTypes, argumentLocations);
  IRMapping mapping;
  mapping.map(input, body->getArgument(0));
  for (auto [slot, arguments] : llvm::enumerate(layers.weights))
    mapping.map(func.getArgument(arguments.front()), body->getArgument(slot + 1));
  for (uint32_t j = 0; j < layers.opsPerLayer; ++j)
    builder.clone(*ops[layers.first + j], mapping);
  ipu_tile::CarryOp::create(builder, repeat.getLoc(), mapping.lookup(outputOf(0)));

  lastOutput.replaceAllUsesWith(repeat.getResult());
  for (uint32_t position = layers.end(); position-- > layers.first;)
    ops[position]->erase();
  return success();
}

struct FindRepeatedLayersPass
    : public mlir::ipu_compiler::impl::IPUFindRepeatedLayersBase<FindRepeatedLayersPass> {
  using IPUFindRepeatedLayersBase::IPUFindRepeatedLayersBase;
  void runOnOperation() override {
    // Layers that pass on their input unchanged repeat nothing: the repeat
    // is its input (upstream folds a loop that yields its argument alike).
    getOperation().walk([&](ipu_tile::RepeatOp repeat) {
      auto carry = cast<ipu_tile::CarryOp>(repeat.getBody().front().getTerminator());
      if (carry.getValue() != repeat.getBody().getArgument(0) ||
          repeat.getInput().getType() != repeat.getResult().getType())
        return;
      mlir::emitRemark(repeat.getLoc(), "a repeated layer that passes on its input "
                                        "unchanged repeats nothing: removed, its "
                                        "input is its result");
      repeat.getResult().replaceAllUsesWith(repeat.getInput());
      repeat.erase();
    });
    getOperation().walk([&](func::FuncOp func) {
      if (func.isDeclaration() || !func.getBody().hasOneBlock())
        return;
      SmallVector<Operation *> ops;
      ipu::Sequence sequence = describe(func, ops);
      std::optional<ipu::RepeatedLayers> layers = ipu::findRepeatedLayers(sequence);
      if (!layers)
        return;
      mlir::emitRemark(func.getLoc()) << "repeats one layer: " << ipu::describe(*layers)
                        << (outline ? "" : " (each layer compiled on its own for now)");
      if (outline && failed(outlineLayers(func, ops, *layers, streamWeights)))
        signalPassFailure();
    });
  }
};

} // namespace
