//===- ImportElementwise.cpp - Elementwise linalg ops to ipu_tile.elementwise ===//
//
// Exporters write a bias add, GELU, SiLU or a cast as an all-parallel
// linalg.generic (or linalg.map) whose body is arith and math on scalars,
// with scalar constants often defined outside it and a bias broadcast by
// an indexing map (torch-mlir) or a linalg.broadcast (StableHLO). Each
// becomes an ipu_tile.elementwise with the body in it; --ipu-fuse-elementwise
// (FuseElementwise.cpp) then fuses chains into one op each.
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
using mlir::ipu_compiler::copiedInput;
using mlir::ipu_compiler::simplifyElementwiseBody;
using mlir::ipu_compiler::truncatedConstant;

namespace {

/// How input `operand` of an elementwise linalg op reaches each element of
/// the result, or nothing when it is another broadcast: identity (full),
/// only the last loop dim (a row, as torch-mlir's bias map (d0, d1, d2) ->
/// (d2) reads it) or no dim (a scalar: constant indices into unit dims).
std::optional<ipu::Broadcast> broadcastOf(AffineMap map, RankedTensorType type,
                                            unsigned loops) {
  if (map.isIdentity())
    return ipu::Broadcast::Full;
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
      return ipu::Broadcast::Row;
  }
  if (type.hasStaticShape() && type.getNumElements() == 1 &&
      llvm::all_of(map.getResults(), [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
    return ipu::Broadcast::Scalar;
  // A column: every loop dim but the last, in order, and then either
  // nothing (a reduction's result without its reduced dim) or a 0 into a
  // unit dim (torch-mlir's keepdim broadcast (d0, d1, d2) -> (d0, d1, 0)).
  if (loops >= 2 && type.hasStaticShape()) {
    ArrayRef<AffineExpr> results = map.getResults();
    bool keepDim = results.size() == loops && type.getShape().back() == 1 &&
                   isa<AffineConstantExpr>(results.back()) &&
                   cast<AffineConstantExpr>(results.back()).getValue() == 0;
    if (keepDim)
      results = results.drop_back();
    if (results.size() == loops - 1 &&
        llvm::all_of(llvm::enumerate(results), [](auto entry) {
          auto dim = dyn_cast<AffineDimExpr>(entry.value());
          return dim && dim.getPosition() == entry.index();
        }))
      return ipu::Broadcast::Column;
  }
  return std::nullopt;
}

/// The source of a linalg.broadcast that repeats a row (a vector of the
/// result's last dimension, which it does not broadcast), one element, or
/// one value per row (StableHLO's broadcast_in_dim of a row statistic),
/// and which of them; null otherwise.
std::pair<Value, ipu::Broadcast> lookThroughBroadcastOp(Value value) {
  auto broadcast = value.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast)
    return {Value(), ipu::Broadcast::Full};
  auto source = cast<RankedTensorType>(broadcast.getInput().getType());
  auto result = cast<RankedTensorType>(broadcast.getInit().getType());
  if (!source.hasStaticShape() || !result.hasStaticShape() || result.getRank() < 1)
    return {Value(), ipu::Broadcast::Full};
  if (source.getNumElements() == 1)
    return {broadcast.getInput(), ipu::Broadcast::Scalar};
  if (source.getNumElements() == result.getShape().back() &&
      !llvm::is_contained(broadcast.getDimensions(), result.getRank() - 1))
    return {broadcast.getInput(), ipu::Broadcast::Row};
  if (broadcast.getDimensions() == ArrayRef<int64_t>{result.getRank() - 1} &&
      source.getShape() == result.getShape().drop_back())
    return {broadcast.getInput(), ipu::Broadcast::Column};
  return {Value(), ipu::Broadcast::Full};
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

/// The [..., R, 1] tensor a column input reads: `value` with its reshapes
/// stripped (a reduction's value is [..., R, 1], collapsed to [..., R] for
/// the ops that read it without the unit dim); null when it is not one.
Value columnSource(Value value, ArrayRef<int64_t> iteration) {
  Value source = stripReshapes(value);
  auto type = dyn_cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> want(iteration);
  want.back() = 1;
  if (!type || type.getShape() != ArrayRef<int64_t>(want))
    return Value();
  return source;
}

/// The value input `operand` of a linalg op over `iteration` reads, and
/// how: through a linalg.broadcast and reshapes for a row, a scalar or a
/// column, which must be a row statistic [..., R, 1]. Fails naming the
/// operand.
FailureOr<std::pair<Value, ipu::Broadcast>>
inputOf(linalg::LinalgOp op, OpOperand *operand, ArrayRef<int64_t> iteration) {
  Value value = operand->get();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return op.emitError("input ") << operand->getOperandNumber()
                                  << " is not a ranked tensor";
  AffineMap map = op.getMatchingIndexingMap(operand);
  std::optional<ipu::Broadcast> broadcast =
      broadcastOf(map, type, op.getNumLoops());
  // A splat constant stays what it is: the caller makes it a body constant.
  DenseElementsAttr splat;
  if (matchPattern(value, m_Constant(&splat)) && splat.isSplat())
    return std::make_pair(value, broadcast.value_or(ipu::Broadcast::Scalar));
  if (!broadcast)
    return op.emitError("input ")
           << operand->getOperandNumber() << " is read through "
           << AffineMapAttr::get(map)
           << "; only the whole tensor, a vector of the last dimension, a "
              "single element or one value per row broadcast onto the result";
  if (*broadcast == ipu::Broadcast::Full) {
    auto [source, through] = lookThroughBroadcastOp(value);
    if (source) {
      value = source;
      broadcast = through;
    }
  }
  if (*broadcast == ipu::Broadcast::Column) {
    Value column = columnSource(value, iteration);
    if (!column)
      return op.emitError("input ")
             << operand->getOperandNumber() << " is one value per row, but "
             << "not the [..., R, 1] value of a row reduction";
    value = column;
  } else if (*broadcast != ipu::Broadcast::Full) {
    value = stripReshapes(value);
  }
  return std::make_pair(value, *broadcast);
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
///
/// With `result` (a reduction: the value its combiner folds in), only the
/// ops `result` depends on are cloned, and it is what the body yields: the
/// rest (the combiner, an argmax's index arithmetic) is not part of it.
FailureOr<Value> cloneBody(Operation *owner, Block &source, ValueRange args,
                           OpBuilder &builder, IRMapping &mapping,
                           Value result = Value()) {
  for (auto [from, to] : llvm::zip(source.getArguments().take_front(args.size()), args))
    mapping.map(from, to);
  llvm::SmallPtrSet<Operation *, 16> needed;
  if (result) {
    SmallVector<Value> work{result};
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != &source || !needed.insert(def).second)
        continue;
      llvm::append_range(work, def->getOperands());
    }
  }
  for (Operation &op : source) {
    if (result && !needed.contains(&op) && !op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      Value yielded = result ? result : op.getOperand(0);
      if (Value mapped = mapping.lookupOrNull(yielded))
        return mapped;
      // A result that is a constant from outside (a fill written as a
      // generic): the constant, cloned in.
      auto constant = yielded.getDefiningOp<arith::ConstantOp>();
      if (constant && !isa<ShapedType>(constant.getType()))
        return builder.clone(*constant)->getResult(0);
      return owner->emitError("elementwise body yields a value from outside it "
                              "that is not a scalar constant");
    }
    // A value that depends on the element's position (torch-mlir writes
    // linalg.index for argmax and gathers) has no kernel form yet: refused
    // here, by name, rather than as an invalid rewrite.
    if (isa<linalg::IndexOp>(op))
      return op.emitError("'linalg.index' in an elementwise body is not "
                          "supported: the kernels compute each element from "
                          "its inputs alone, not from its position (argmax and "
                          "gathers over positions are not supported yet)");
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
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, truncatedConstant(value, type));
    return success();
  }
};

} // namespace

FloatAttr mlir::ipu_compiler::truncatedConstant(FloatAttr value, FloatType type) {
  APFloat narrowed = value.getValue();
  bool losesInfo = false;
  narrowed.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return FloatAttr::get(type, narrowed);
}

void mlir::ipu_compiler::simplifyElementwiseBody(ipu_tile::ElementwiseOp op,
                                                RewriterBase *rewriter) {
  RewriterBase::Listener *listener =
      rewriter ? dyn_cast_or_null<RewriterBase::Listener>(rewriter->getListener()) : nullptr;
  RewritePatternSet patterns(op.getContext());
  populateMathAlgebraicSimplificationPatterns(patterns);
  patterns.add<FoldConstantTruncation>(op.getContext());
  GreedyRewriteConfig config;
  config.setListener(listener);
  (void)applyPatternsGreedily(op.getBody(), std::move(patterns), config);
  // Constants left without a user (folded away) are not part of the body.
  IRRewriter eraser(op.getContext(), listener);
  for (Operation &inner : llvm::make_early_inc_range(llvm::reverse(op.getBody().front())))
    if (isOpTriviallyDead(&inner))
      eraser.eraseOp(&inner);
}

Value mlir::ipu_compiler::copiedInput(ipu_tile::ElementwiseOp op) {
  Block &body = op.getBody().front();
  if (op.getReduce() || body.getOperations().size() != 1)
    return Value();
  auto arg = dyn_cast<BlockArgument>(cast<ipu_tile::YieldOp>(body.back()).getValue());
  if (!arg)
    return Value();
  Value input = op.getInputs()[arg.getArgNumber()];
  return input.getType() == op.getResult().getType() ? input : Value();
}

namespace {

/// A row statistic without its unit dim: the [..., R, 1] value of an
/// ipu_tile.elementwise that `value` collapses to `shape`; null otherwise.
Value collapsedColumn(Value value, ArrayRef<int64_t> shape) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return Value();
  Value source = collapse.getSrc();
  SmallVector<int64_t> want(shape);
  want.push_back(1);
  if (cast<RankedTensorType>(source.getType()).getShape() != ArrayRef<int64_t>(want) ||
      !source.getDefiningOp<ipu_tile::ElementwiseOp>())
    return Value();
  return source;
}

/// The inputs of an elementwise op of `resultType` ([..., R]) as inputs of
/// the op on [..., R, 1], when it computes on row statistics: some input is
/// a collapsed [..., R, 1] statistic, and the others are too, or scalars,
/// or broadcasts of scalars (rebuilt at [..., R, 1]). Nothing otherwise.
std::optional<SmallVector<Value>>
liftedColumnInputs(OpBuilder &builder, ArrayRef<Value> inputs,
                   RankedTensorType resultType) {
  ArrayRef<int64_t> shape = resultType.getShape();
  if (!llvm::any_of(inputs, [&](Value v) { return collapsedColumn(v, shape); }))
    return std::nullopt;
  SmallVector<int64_t> liftedShape(shape);
  liftedShape.push_back(1);
  SmallVector<Value> lifted;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    if (Value column = collapsedColumn(input, shape)) {
      lifted.push_back(column);
    } else if (type.getNumElements() == 1) {
      lifted.push_back(input);
    } else if (auto broadcast = input.getDefiningOp<ipu_tile::ElementwiseOp>();
               broadcast && type.getShape() == shape &&
               llvm::all_of(broadcast.getInputs(), [](Value v) {
                 return cast<RankedTensorType>(v.getType()).getNumElements() == 1;
               })) {
      auto copy = cast<ipu_tile::ElementwiseOp>(builder.clone(*broadcast));
      copy.getResult().setType(RankedTensorType::get(liftedShape, type.getElementType()));
      lifted.push_back(copy.getResult());
    } else {
      return std::nullopt;
    }
  }
  return lifted;
}

LogicalResult importOne(linalg::LinalgOp op, PatternRewriter &builder) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  // A comparison's i1 (or an integer) can be a value inside a body, but no
  // tile buffer holds one.
  if (!isa<FloatType>(resultType.getElementType()))
    return op.emitError("an elementwise result of ")
           << resultType
           << ": tile buffers hold floats (f32, f16, f8E4M3FN, f8E5M2); use a "
              "comparison or integer inside the elementwise op that reads it "
              "(arith.select on an arith.cmpf), not as a value of its own";
  SmallVector<Value> inputs;
  SmallVector<std::pair<unsigned, DenseElementsAttr>> constants;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    FailureOr<std::pair<Value, ipu::Broadcast>> input =
        inputOf(op, operand, resultType.getShape());
    if (failed(input))
      return failure();
    Value value = input->first;
    // A splat constant (StableHLO broadcasts each scalar of GELU) is a
    // scalar constant of the body.
    DenseElementsAttr splat;
    if (matchPattern(value, m_Constant(&splat)) && splat.isSplat()) {
      constants.push_back({operand->getOperandNumber(), splat});
      continue;
    }
    inputs.push_back(value);
  }
  builder.setInsertionPoint(op);
  // An op on row statistics without their unit dim ([..., R], StableHLO's
  // max(reduce, -inf)) runs on them as [..., R, 1], and is collapsed after.
  RankedTensorType opType = resultType;
  if (std::optional<SmallVector<Value>> lifted = liftedColumnInputs(builder, inputs, resultType)) {
    inputs = std::move(*lifted);
    SmallVector<int64_t> shape(resultType.getShape());
    shape.push_back(1);
    opType = RankedTensorType::get(shape, resultType.getElementType());
  }
  auto elementwise =
      ipu_tile::ElementwiseOp::create(builder, op.getLoc(), opType, inputs);
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
    builder.eraseOp(elementwise);
    return failure();
  }
  ipu_tile::YieldOp::create(builder, op.getLoc(), *yielded);
  simplifyElementwiseBody(elementwise, &builder);
  // A pure broadcast (StableHLO's constants and biases) has no full input:
  // it only lives until it fuses into the ops that read it.
  if (elementwise.getFirstFullInput() && failed(mlir::verify(elementwise))) {
    builder.eraseOp(elementwise);
    return failure();
  }
  Value result = elementwise.getResult();
  if (Value copied = copiedInput(elementwise)) {
    result = copied;
    builder.eraseOp(elementwise);
  }
  if (opType != resultType) {
    builder.setInsertionPoint(op);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < resultType.getRank(); ++d)
      groups.push_back({d});
    groups.push_back({resultType.getRank() - 1, resultType.getRank()});
    result = tensor::CollapseShapeOp::create(builder, op.getLoc(), resultType, result, groups);
  }
  builder.replaceOp(op, result);
  return success();
}

/// The init of a reduction: a constant fill or a splat constant.
std::optional<double> constantInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    FloatAttr value;
    if (matchPattern(fill.getInputs()[0], m_Constant(&value)))
      return value.getValueAsDouble();
    return std::nullopt;
  }
  DenseElementsAttr splat;
  if (matchPattern(init, m_Constant(&splat)) && splat.isSplat() &&
      isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// The result of a row reduction that is used, when the others are not
/// (torch-mlir's max.dim computes an argmax nobody reads beside the max).
unsigned reducedResult(linalg::LinalgOp op) {
  for (OpResult result : op->getResults())
    if (!result.use_empty())
      return result.getResultNumber();
  return 0;
}

/// Whether `op` reduces only its last loop: a linalg op on tensors with
/// parallel loops but the last, which reduces, and one used result (the
/// outputs' maps are checked on import).
bool isRowReduction(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op) || !op.hasPureTensorSemantics() ||
      op.getNumDpsInits() < 1 || op->getNumResults() != op.getNumDpsInits() ||
      op.getNumReductionLoops() != 1 || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != op.getNumLoops() - 1 || op.getBlock() == nullptr)
    return false;
  unsigned used = 0;
  for (OpResult result : op->getResults())
    used += !result.use_empty();
  return used <= 1 &&
         op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
}

/// A row reduction as an ipu_tile.elementwise with `reduce`: its body yields
/// the value the linalg body folds into its accumulator (the combiner,
/// arith.addf / maximumf / maxnumf of that value and the accumulator, is
/// the reduction). A reduction in f16 accumulates in f32 and is truncated
/// after; the result keeps its reduced dim as a unit dim and is collapsed
/// for the linalg ops that read it without.
LogicalResult importReduction(linalg::LinalgOp op, PatternRewriter &builder) {
  const unsigned loops = op.getNumLoops();
  const unsigned kept = reducedResult(op);
  OpOperand *initOperand = op.getDpsInitOperand(kept);
  auto resultType = cast<RankedTensorType>(op->getResult(kept).getType());
  AffineMap outMap = op.getMatchingIndexingMap(initOperand);
  // The output map names every parallel dim in order (kept unit dims as 0).
  std::optional<ipu::Broadcast> outForm =
      broadcastOf(outMap, resultType, loops);
  if (outForm != ipu::Broadcast::Column)
    return op.emitError("reduces a dimension other than the last: only row "
                        "reductions (along the last dimension) compile, got "
                        "the output map ")
           << AffineMapAttr::get(outMap);
  Block *block = op.getBlock();
  BlockArgument acc = op.getMatchingBlockArgument(initOperand);
  auto yield = block->getTerminator();
  Operation *combiner = yield->getOperand(kept).getDefiningOp();
  ipu::RowReduction kind = ipu::RowReduction::None;
  if (combiner && combiner->getBlock() == block && combiner->getNumOperands() == 2 &&
      llvm::is_contained(combiner->getOperands(), Value(acc))) {
    if (isa<arith::AddFOp>(combiner))
      kind = ipu::RowReduction::Add;
    else if (isa<arith::MaximumFOp>(combiner))
      kind = ipu::RowReduction::Max;
    else if (isa<arith::MaxNumFOp>(combiner))
      kind = ipu::RowReduction::MaxNum;
  }
  if (kind == ipu::RowReduction::None)
    return op.emitError("a row reduction's body must fold one value into its "
                        "accumulator with arith.addf, arith.maximumf or "
                        "arith.maxnumf");
  Value folded = combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                                : combiner->getOperand(0);
  // The folded value depends on the element only, not on the accumulator.
  SmallVector<Value> work{folded};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (value == acc)
      return op.emitError("a row reduction's body must fold one value into its "
                          "accumulator with arith.addf, arith.maximumf or "
                          "arith.maxnumf, and read the accumulator nowhere else");
    if (Operation *def = value.getDefiningOp())
      if (def->getBlock() == block && seen.insert(def).second)
        llvm::append_range(work, def->getOperands());
  }
  std::optional<double> init = constantInit(initOperand->get());
  if (!init)
    return op.emitError("the init of a row reduction must be a constant "
                        "(linalg.fill of a scalar or a splat)");
  Type accType = acc.getType();
  if (!accType.isF32() && !accType.isF16())
    return op.emitError("a row reduction accumulates in ")
           << accType << "; only f32 and f16 reductions compile";

  SmallVector<int64_t> iteration = op.getStaticLoopRanges();
  SmallVector<Value> inputs;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    FailureOr<std::pair<Value, ipu::Broadcast>> input =
        inputOf(op, operand, iteration);
    if (failed(input))
      return failure();
    DenseElementsAttr splat;
    if (matchPattern(input->first, m_Constant(&splat)))
      return op.emitError("row reduction input ")
             << operand->getOperandNumber() << " is a constant";
    inputs.push_back(input->first);
  }
  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  SmallVector<int64_t> columnShape(iteration);
  columnShape.back() = 1;
  Type f32 = builder.getF32Type();
  auto reduced = ipu_tile::ElementwiseOp::create(
      builder, loc, RankedTensorType::get(columnShape, f32), inputs);
  reduced.setReduceAttr(
      ipu_tile::RowReductionAttr::get(context, static_cast<ipu_tile::RowReduction>(kind)));
  reduced.setInitAttr(builder.getF64FloatAttr(*init));
  Block &body = reduced.getBody().front();
  builder.setInsertionPointToStart(&body);
  IRMapping mapping;
  FailureOr<Value> value =
      cloneBody(op, *block, body.getArguments(), builder, mapping, folded);
  if (failed(value)) {
    builder.eraseOp(reduced);
    return failure();
  }
  Value yielded = *value;
  if (!yielded.getType().isF32())
    yielded = arith::ExtFOp::create(builder, loc, f32, yielded);
  ipu_tile::YieldOp::create(builder, loc, yielded);
  simplifyElementwiseBody(reduced, &builder);
  if (failed(mlir::verify(reduced))) {
    builder.eraseOp(reduced);
    return failure();
  }
  Value result = reduced.getResult();
  builder.setInsertionPointAfter(reduced);
  if (!accType.isF32()) {
    // The f16 value the graph reduces to, from the f32 accumulation.
    auto narrowed = ipu_tile::ElementwiseOp::create(
        builder, loc, RankedTensorType::get(columnShape, accType), ValueRange{result});
    Block &narrowBody = narrowed.getBody().front();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&narrowBody);
    ipu_tile::YieldOp::create(
        builder, loc,
        arith::TruncFOp::create(builder, loc, accType, narrowBody.getArgument(0)));
    result = narrowed.getResult();
  }
  if (resultType.getRank() != static_cast<int64_t>(columnShape.size())) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 2 < static_cast<int64_t>(columnShape.size()); ++d)
      groups.push_back({d});
    groups.push_back({static_cast<int64_t>(columnShape.size()) - 2,
                      static_cast<int64_t>(columnShape.size()) - 1});
    result = tensor::CollapseShapeOp::create(builder, loc, resultType, result, groups);
  } else if (resultType.getShape() != ArrayRef<int64_t>(columnShape)) {
    return op.emitError("a row reduction's result ")
           << resultType << " is not its rows' values";
  }
  builder.replaceAllUsesWith(op->getResult(kept), result);
  builder.eraseOp(op);
  return success();
}

/// linalg.softmax as MLIR decomposes it: a max, exp(x - max), a sum and a
/// division, which import like an exporter's.
LogicalResult decomposeSoftmax(linalg::SoftmaxOp op, PatternRewriter &rewriter) {
  FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
  if (failed(values))
    return op.emitError("linalg.softmax could not be decomposed");
  rewriter.replaceOp(op, *values);
  return success();
}

/// An elementwise generic or map (importOne) or a row reduction
/// (importReduction).
bool isElementwiseOrRowReduction(linalg::LinalgOp op) {
  return isRowReduction(op) || isElementwise(op);
}
LogicalResult importElementwiseOrRowReduction(linalg::LinalgOp op,
                                              PatternRewriter &rewriter) {
  return isRowReduction(op) ? importReduction(op, rewriter) : importOne(op, rewriter);
}

} // namespace

LogicalResult mlir::ipu_compiler::applyImportStage(ModuleOp module,
                                                  RewritePatternSet &&patterns,
                                                  const ImportRefusals &refusals) {
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true)
      .enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  // Every stage reaches its fixpoint in a few rounds; an op an unconverged
  // one left is named by the import's final check.
  (void)applyPatternsGreedily(module, std::move(patterns), config);
  return failure(!refusals.ops.empty());
}

LogicalResult mlir::ipu_compiler::importElementwise(ModuleOp module) {
  MLIRContext *context = module.getContext();
  ImportRefusals refusals;
  RewritePatternSet softmaxes(context);
  softmaxes.add<ImportOrRefuse<linalg::SoftmaxOp, OpRewritePattern>>(
      context, nullptr, decomposeSoftmax, refusals);
  if (failed(applyImportStage(module, std::move(softmaxes), refusals)))
    return failure();
  RewritePatternSet elementwise(context);
  elementwise.add<ImportOrRefuse<linalg::LinalgOp, OpInterfaceRewritePattern>>(
      context, isElementwiseOrRowReduction, importElementwiseOrRowReduction, refusals);
  if (failed(applyImportStage(module, std::move(elementwise), refusals)))
    return failure();
  // Reshapes the column inputs looked through, and the reductions' inits,
  // are dead now; a dead user would stop a fusion.
  for (bool erased = true; erased;) {
    erased = false;
    module.walk([&](Operation *op) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, linalg::FillOp,
              linalg::BroadcastOp, tensor::EmptyOp, ipu_tile::ElementwiseOp>(op) &&
          op->use_empty()) {
        op->erase();
        erased = true;
      }
    });
  }

  // A broadcast (an op with no full input: a splat, a bias broadcast to the
  // result's shape) computes nothing: it folds into every reader, where it
  // becomes a row, column or scalar input. In program order, so that a
  // reader that became a broadcast folds into its own readers.
  SmallVector<ipu_tile::ElementwiseOp> imported;
  module.walk([&](ipu_tile::ElementwiseOp op) { imported.push_back(op); });
  for (ipu_tile::ElementwiseOp op : imported)
    if (!op->use_empty() || op.getFirstFullInput())
      fuseProducers(op, [](ipu_tile::ElementwiseOp producer) {
        return !producer.getFirstFullInput();
      });
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
