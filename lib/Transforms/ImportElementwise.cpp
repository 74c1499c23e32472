//===- ImportElementwise.cpp - Elementwise linalg ops to ipu_tile.elementwise ===//
//
// Exporters write a bias add, GELU, SiLU or a cast as an all-parallel
// linalg.generic (or linalg.map) whose body is arith and math on scalars,
// with scalar constants often defined outside it and a bias broadcast by
// an indexing map (torch-mlir) or a linalg.broadcast (StableHLO). Each
// becomes an ipu_tile.elementwise with the body in it; then chains fuse
// into one op (one kernel per tile), a producer into its only consumer.
//
//===----------------------------------------------------------------------===//

#include "ImportElementwise.h"

#include "IPU/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

/// How input `operand` of an elementwise linalg op reaches each element of
/// the result, or nothing when it is another broadcast: identity (full),
/// only the last loop dim (a row, as torch-mlir's bias map (d0, d1, d2) ->
/// (d2) reads it) or no dim (a scalar: constant indices into unit dims).
std::optional<::ipu::Broadcast> broadcastOf(AffineMap map, RankedTensorType type,
                                            unsigned loops) {
  if (map.isIdentity())
    return ::ipu::Broadcast::Full;
  // A row: the last loop dim last, and before it only unit dims of the
  // input (StableHLO's bias, reshaped to [1, 1, N], reads (d0, 0, d2) with
  // d0 over one element).
  if (map.getNumResults() >= 1 && loops >= 1 && type.hasStaticShape() &&
      map.getResults().back() == getAffineDimExpr(loops - 1, map.getContext()) &&
      type.getNumElements() == type.getShape().back()) {
    bool unitDims = true;
    for (AffineExpr expr : map.getResults().drop_back())
      unitDims &= isa<AffineConstantExpr, AffineDimExpr>(expr) &&
                  !(isa<AffineDimExpr>(expr) &&
                    cast<AffineDimExpr>(expr).getPosition() == loops - 1);
    if (unitDims)
      return ::ipu::Broadcast::Row;
  }
  if (type.hasStaticShape() && type.getNumElements() == 1 &&
      llvm::all_of(map.getResults(), [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
    return ::ipu::Broadcast::Scalar;
  return std::nullopt;
}

/// The source of a linalg.broadcast that repeats a row (a vector of the
/// result's last dimension, which it does not broadcast) or one element;
/// null otherwise.
Value lookThroughBroadcastOp(Value value) {
  auto broadcast = value.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast)
    return Value();
  auto source = cast<RankedTensorType>(broadcast.getInput().getType());
  auto result = cast<RankedTensorType>(broadcast.getInit().getType());
  if (!source.hasStaticShape() || !result.hasStaticShape() || result.getRank() < 1)
    return Value();
  if (source.getNumElements() == 1)
    return broadcast.getInput();
  if (source.getNumElements() == result.getShape().back() &&
      !llvm::is_contained(broadcast.getDimensions(), result.getRank() - 1))
    return broadcast.getInput();
  return Value();
}

/// A vector or a single element read through reshapes is the same values:
/// the reshapes' source.
Value stripReshapes(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

/// Whether `op` is an elementwise op the import takes: a generic, map or
/// named elementwise op (linalg.add, linalg.exp, ...) with all-parallel
/// loops on tensors, one output whose value the body does not read.
/// Fills, transposes and broadcasts are not: they only feed other ops.
bool isElementwise(linalg::LinalgOp op) {
  if (isa<linalg::FillOp, linalg::TransposeOp, linalg::BroadcastOp>(op) ||
      !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() || op->getNumResults() != 1 ||
      op->getNumRegions() != 1 || op.getBlock() == nullptr)
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<RankedTensorType>(input->get().getType()))
      return false;
  Block *body = op.getBlock();
  if (body->getNumArguments() == op.getNumDpsInputs() + 1 &&
      !body->getArguments().back().use_empty())
    return false;
  return true;
}

/// Clones the scalar body of `source` into `block` (whose arguments are
/// `args`, one per source input), cloning the scalar constants the body
/// captures from outside; returns the yielded value or fails naming the op
/// that uses another outside value.
FailureOr<Value> cloneBody(Operation *owner, Block &source, ValueRange args,
                           OpBuilder &builder, IRMapping &mapping) {
  for (auto [from, to] : llvm::zip(source.getArguments().take_front(args.size()), args))
    mapping.map(from, to);
  for (Operation &op : source) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      Value yielded = op.getOperand(0);
      if (Value mapped = mapping.lookupOrNull(yielded))
        return mapped;
      return owner->emitError("elementwise body yields a value from outside it");
    }
    for (Value operand : op.getOperands()) {
      if (mapping.contains(operand))
        continue;
      auto constant = operand.getDefiningOp<arith::ConstantOp>();
      if (!constant || isa<ShapedType>(constant.getType()))
        return op.emitError("elementwise body op '")
               << op.getName() << "' uses a value defined outside the body "
               << "that is not a scalar constant";
      mapping.map(operand, builder.clone(*constant)->getResult(0));
    }
    builder.clone(op, mapping);
  }
  return owner->emitError("elementwise body has no terminator");
}

/// A constant narrowed by arith.truncf (torch-mlir's f64 scalars: 1.702 for
/// quick GELU) is the narrow constant, rounded to nearest even as truncf
/// rounds; upstream folds only exact truncations.
struct FoldConstantTruncation : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    FloatAttr value;
    if (!matchPattern(op.getIn(), m_Constant(&value)) ||
        (op.getRoundingmodeAttr() &&
         *op.getRoundingmode() != arith::RoundingMode::to_nearest_even))
      return failure();
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return failure();
    APFloat narrowed = value.getValue();
    bool losesInfo = false;
    narrowed.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                     &losesInfo);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, type, rewriter.getFloatAttr(type, narrowed));
    return success();
  }
};

/// x^3 as x * x * x, and the like: the kernel then computes what the body
/// says at the cost the estimator counts.
void simplifyBody(ipu_tile::ElementwiseOp op) {
  RewritePatternSet patterns(op.getContext());
  populateMathAlgebraicSimplificationPatterns(patterns);
  patterns.add<FoldConstantTruncation>(op.getContext());
  (void)applyPatternsGreedily(op.getBody(), std::move(patterns));
  // Constants left without a user (folded away) are not part of the body.
  for (Operation &inner : llvm::make_early_inc_range(llvm::reverse(op.getBody().front())))
    if (isOpTriviallyDead(&inner))
      inner.erase();
}

LogicalResult importOne(linalg::LinalgOp op) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  const unsigned loops = op.getNumLoops();
  SmallVector<Value> inputs;
  SmallVector<std::pair<unsigned, DenseElementsAttr>> constants;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    Value value = operand->get();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return op.emitError("elementwise input ")
             << operand->getOperandNumber() << " is not a ranked tensor";
    std::optional<::ipu::Broadcast> broadcast =
        broadcastOf(op.getMatchingIndexingMap(operand), type, loops);
    if (broadcast == ::ipu::Broadcast::Full)
      if (Value row = lookThroughBroadcastOp(value))
        value = row;
    if (broadcast && *broadcast != ::ipu::Broadcast::Full)
      value = stripReshapes(value);
    else if (value != operand->get())
      value = stripReshapes(value);
    // A splat constant (StableHLO broadcasts each scalar of GELU) is a
    // scalar constant of the body.
    DenseElementsAttr splat;
    if (matchPattern(value, m_Constant(&splat)) && splat.isSplat()) {
      constants.push_back({operand->getOperandNumber(), splat});
      continue;
    }
    if (!broadcast)
      return op.emitError("elementwise input ")
             << operand->getOperandNumber() << " is read through "
             << AffineMapAttr::get(op.getMatchingIndexingMap(operand))
             << "; only the whole tensor, a vector of the last dimension or "
                "a single element broadcast onto the result";
    inputs.push_back(value);
  }
  OpBuilder builder(op);
  auto elementwise =
      ipu_tile::ElementwiseOp::create(builder, op.getLoc(), resultType, inputs);
  Block &block = elementwise.getBody().front();
  builder.setInsertionPointToStart(&block);
  IRMapping mapping;
  // The body's arguments: the op's inputs, each splat constant as itself.
  SmallVector<Value> args;
  unsigned next = 0;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto constant = llvm::find_if(constants, [&](auto &entry) {
      return entry.first == operand->getOperandNumber();
    });
    if (constant == constants.end()) {
      args.push_back(block.getArgument(next++));
      continue;
    }
    args.push_back(arith::ConstantOp::create(
        builder, op.getLoc(), constant->second.getSplatValue<TypedAttr>()));
  }
  FailureOr<Value> yielded = cloneBody(op, *op.getBlock(), args, builder, mapping);
  if (failed(yielded)) {
    elementwise.erase();
    return failure();
  }
  ipu_tile::YieldOp::create(builder, op.getLoc(), *yielded);
  simplifyBody(elementwise);
  // A pure broadcast (StableHLO's constants and biases) has no full input:
  // it only lives until it fuses into the ops that read it.
  if (elementwise.getFirstFullInput() && failed(mlir::verify(elementwise))) {
    elementwise.erase();
    return failure();
  }
  op->getResult(0).replaceAllUsesWith(elementwise.getResult());
  op->erase();
  return success();
}

/// Fuses `producer` (whose only use is input `index` of `consumer`, read
/// whole) into `consumer`: one op whose inputs are the consumer's others
/// and the producer's, and whose body computes the producer's value where
/// the consumer read it.
ipu_tile::ElementwiseOp fuse(ipu_tile::ElementwiseOp producer,
                             ipu_tile::ElementwiseOp consumer, unsigned index) {
  SmallVector<Value> inputs;
  auto slotOf = [&](Value value) {
    auto it = llvm::find(inputs, value);
    if (it != inputs.end())
      return static_cast<unsigned>(it - inputs.begin());
    inputs.push_back(value);
    return static_cast<unsigned>(inputs.size() - 1);
  };
  SmallVector<unsigned> consumerSlot(consumer.getInputs().size());
  for (auto [i, input] : llvm::enumerate(consumer.getInputs()))
    if (i != index)
      consumerSlot[i] = slotOf(input);
  SmallVector<unsigned> producerSlot;
  for (Value input : producer.getInputs())
    producerSlot.push_back(slotOf(input));

  OpBuilder builder(consumer);
  auto fused = ipu_tile::ElementwiseOp::create(builder, consumer.getLoc(),
                                               consumer.getResult().getType(), inputs);
  Block &block = fused.getBody().front();
  builder.setInsertionPointToStart(&block);
  IRMapping mapping;
  Block &producerBody = producer.getBody().front();
  for (auto [i, arg] : llvm::enumerate(producerBody.getArguments()))
    mapping.map(arg, block.getArgument(producerSlot[i]));
  for (Operation &op : producerBody.without_terminator())
    builder.clone(op, mapping);
  Value produced = mapping.lookup(
      cast<ipu_tile::YieldOp>(producerBody.back()).getValue());
  Block &consumerBody = consumer.getBody().front();
  for (auto [i, arg] : llvm::enumerate(consumerBody.getArguments()))
    mapping.map(arg, i == index ? produced : block.getArgument(consumerSlot[i]));
  for (Operation &op : consumerBody)
    builder.clone(op, mapping);
  consumer.getResult().replaceAllUsesWith(fused.getResult());
  consumer.erase();
  if (producer->use_empty())
    producer.erase();
  return fused;
}

} // namespace

LogicalResult mlir::ipu::importElementwise(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (isElementwise(op))
      ops.push_back(op);
  });
  bool failedAny = false;
  for (linalg::LinalgOp op : ops)
    failedAny |= failed(importOne(op));
  if (failedAny)
    return failure();

  // Fuse in program order: a consumer's producers have already taken in
  // theirs, so one pass fuses whole chains.
  SmallVector<ipu_tile::ElementwiseOp> chain;
  module.walk([&](ipu_tile::ElementwiseOp op) { chain.push_back(op); });
  for (ipu_tile::ElementwiseOp op : chain) {
    for (bool fusedOne = true; fusedOne;) {
      fusedOne = false;
      for (auto [index, input] : llvm::enumerate(op.getInputs())) {
        auto producer = input.getDefiningOp<ipu_tile::ElementwiseOp>();
        // A broadcast fuses into every reader; computed values only into
        // their one reader.
        if (!producer ||
            (!producer->hasOneUse() && producer.getFirstFullInput()) ||
            op.getBroadcast(index) != ::ipu::Broadcast::Full ||
            producer.getResult().getType().getShape() !=
                op.getResult().getType().getShape())
          continue;
        op = fuse(producer, op, static_cast<unsigned>(index));
        fusedOne = true;
        break;
      }
    }
    simplifyBody(op);
  }
  bool failedAny2 = false;
  module.walk([&](ipu_tile::ElementwiseOp op) {
    if (!op.getFirstFullInput()) {
      op.emitError("a broadcast that no elementwise op reads in full; only "
                   "elementwise ops on a tensor of the result's shape compile");
      failedAny2 = true;
    } else if (failed(mlir::verify(op))) {
      failedAny2 = true;
    }
  });
  return failure(failedAny2);
}
