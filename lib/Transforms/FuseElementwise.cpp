//===- FuseElementwise.cpp - Chains of ipu_tile.elementwise as one op -----===//
//
// A bias add, an activation and a cast, imported one op each, run as one
// kernel per tile when fused: the consumer's body computes its producers'
// values where it read them, so the intermediates never reach memory.
//
//===----------------------------------------------------------------------===//

#include "ImportElementwise.h"

#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUFUSEELEMENTWISE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;
using namespace mlir::ipu_compiler;

namespace {

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
  fused.setReduceAttr(consumer.getReduceAttr());
  fused.setInitAttr(consumer.getInitAttr());
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

/// Whether `producer` only converts inputs of its own result's shape (an
/// f16 bias widened to f32): a reader that reads it broadcast can read
/// those inputs as it read the result and convert them itself. A
/// conversion per element read costs less than the widened copy, which
/// is computed on the tiles that hold the narrow one and then sent to
/// every tile that reads it.
bool onlyConvertsInputsOfItsShape(ipu_tile::ElementwiseOp producer) {
  auto shape = cast<RankedTensorType>(producer.getResult().getType()).getShape();
  if (producer.getInputs().empty() ||
      llvm::any_of(producer.getInputs(), [&](Value input) {
        return cast<RankedTensorType>(input.getType()).getShape() != shape;
      }))
    return false;
  return llvm::all_of(producer.getBody().front().without_terminator(),
                      [](Operation &op) {
                        return isa<arith::ExtFOp, arith::TruncFOp>(op);
                      });
}

} // namespace

ipu_tile::ElementwiseOp mlir::ipu_compiler::fuseProducers(
    ipu_tile::ElementwiseOp op, function_ref<bool(ipu_tile::ElementwiseOp)> accept) {
  for (bool fusedOne = true; fusedOne;) {
    fusedOne = false;
    for (auto [index, input] : llvm::enumerate(op.getInputs())) {
      auto producer = input.getDefiningOp<ipu_tile::ElementwiseOp>();
      // A producer of one value everywhere (no inputs: a constant, such as
      // an f16 bias of zeros widened to f32) fuses however it is read.
      const bool uniform = producer && producer.getInputs().empty();
      if (!producer || producer.getReduce() ||
          (!uniform && !onlyConvertsInputsOfItsShape(producer) &&
           (op.getBroadcast(index) != ipu::Broadcast::Full ||
            producer.getResult().getType().getShape() !=
                ArrayRef<int64_t>(op.getIterationShape()))) ||
          !accept(producer))
        continue;
      op = fuse(producer, op, static_cast<unsigned>(index));
      fusedOne = true;
      break;
    }
  }
  return op;
}

namespace {

/// The source of `value` when it is a reshape (ipu_tile.permute that keeps
/// every dim in place), or null.
Value reshapeSource(Value value) {
  auto permute = value.getDefiningOp<ipu_tile::PermuteOp>();
  if (!permute || permute.getSizes() ||
      permute.getView() != permute.getSource().getType().getShape() ||
      !llvm::equal(permute.getPermutation(),
                   llvm::seq<int64_t>(0, permute.getPermutation().size())))
    return nullptr;
  return permute.getSource();
}

/// A reshape of `value` to `type`: `value` itself when it has that type, or
/// the source of a reshape it already is.
Value reshapeTo(OpBuilder &builder, Location loc, Value value, RankedTensorType type) {
  while (Value source = reshapeSource(value))
    value = source;
  if (value.getType() == type)
    return value;
  auto from = cast<RankedTensorType>(value.getType());
  return ipu_tile::PermuteOp::create(
      builder, loc, type, value, builder.getDenseI64ArrayAttr(from.getShape()),
      builder.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, from.getRank()))),
      /*offsets=*/nullptr, /*sizes=*/nullptr);
}

/// Computes `op` in the shape its full inputs had before a reshape, when
/// one of them is an elementwise op's only value: exporters wrap a rank-3
/// activation (GELU on [N, T, C]) around a rank-2 matmul and its bias
/// ([N*T, C]), and the reshape between them would keep the two apart. Only
/// its result is reshaped (in place: the same rows of the same columns).
/// Row and scalar inputs read the same in either shape; an op with a
/// column input or a reduction stays as it is.
ipu_tile::ElementwiseOp computeBeforeReshapes(ipu_tile::ElementwiseOp op) {
  if (op.getReduce())
    return op;
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  RankedTensorType sourceType;
  bool feedsFusion = false;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    std::optional<ipu::Broadcast> broadcast = op.getBroadcast(index);
    if (broadcast == ipu::Broadcast::Column || !broadcast)
      return op;
    if (broadcast != ipu::Broadcast::Full)
      continue;
    Value source = reshapeSource(input);
    if (!source)
      return op;
    auto type = cast<RankedTensorType>(source.getType());
    if (sourceType && type.getShape() != sourceType.getShape())
      return op;
    sourceType = type;
    auto producer = source.getDefiningOp<ipu_tile::ElementwiseOp>();
    feedsFusion |= producer && !producer.getReduce() && source.hasOneUse() &&
                   input.hasOneUse();
  }
  if (!feedsFusion || sourceType.getShape().back() != resultType.getShape().back())
    return op;

  OpBuilder builder(op);
  SmallVector<Value> inputs;
  for (auto [index, input] : llvm::enumerate(op.getInputs()))
    inputs.push_back(op.getBroadcast(index) == ipu::Broadcast::Full
                         ? reshapeSource(input)
                         : input);
  auto computed = ipu_tile::ElementwiseOp::create(
      builder, op.getLoc(),
      RankedTensorType::get(sourceType.getShape(), resultType.getElementType()),
      inputs);
  Block &block = computed.getBody().front();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(op.getBody().front().getArguments(), block.getArguments()))
    mapping.map(from, to);
  builder.setInsertionPointToStart(&block);
  for (Operation &bodyOp : op.getBody().front())
    builder.clone(bodyOp, mapping);
  builder.setInsertionPoint(op);
  Value reshaped = reshapeTo(builder, op.getLoc(), computed.getResult(), resultType);
  // A reader that reshapes the result back reads the computed value.
  for (Operation *user : llvm::make_early_inc_range(op.getResult().getUsers()))
    if (auto permute = dyn_cast<ipu_tile::PermuteOp>(user))
      if (reshapeSource(permute.getResult()) &&
          permute.getResult().getType() == computed.getResult().getType()) {
        permute.getResult().replaceAllUsesWith(computed.getResult());
        permute.erase();
      }
  op.getResult().replaceAllUsesWith(reshaped);
  llvm::SetVector<Operation *> inputReshapes;
  for (Value input : op.getInputs())
    if (auto permute = input.getDefiningOp<ipu_tile::PermuteOp>())
      inputReshapes.insert(permute);
  op.erase();
  for (Operation *permute : inputReshapes)
    if (permute->use_empty())
      permute->erase();
  if (Operation *reshape = reshaped.getDefiningOp(); reshape && reshape->use_empty())
    reshape->erase();
  return computed;
}

/// Whether `value` is a row reduction `kind` of one input, from `init` (a
/// NaN init: any NaN), whose body yields that input as it is; the input, or
/// null.
Value reducedInput(Value value, ipu::RowReduction kind, double init) {
  auto op = value.getDefiningOp<ipu_tile::ElementwiseOp>();
  const double from = op ? op.getInitValue() : 0.0;
  if (!op || op.getRowReduction() != kind ||
      (std::isnan(init) ? !std::isnan(from) : from != init) || op.getInputs().size() != 1)
    return {};
  Block &body = op.getBody().front();
  auto yield = cast<ipu_tile::YieldOp>(body.back());
  if (yield.getValue() != body.getArgument(0))
    return {};
  return op.getInputs()[0];
}

/// Whether `sums` holds the row sums of exp(x - max(x)) (softmax's
/// denominators): each at least exp(0) = 1, at most the row's length (or
/// NaN where x is), so its reciprocal is a normal f32.
bool isSumOfExpBelowRowMax(Value sums) {
  Value exps = reducedInput(sums, ipu::RowReduction::Add, 0.0);
  auto exp = exps ? exps.getDefiningOp<ipu_tile::ElementwiseOp>() : nullptr;
  if (!exp || exp.getRowReduction() != ipu::RowReduction::None)
    return false;
  Block &body = exp.getBody().front();
  auto mathExp = cast<ipu_tile::YieldOp>(body.back()).getValue().getDefiningOp<math::ExpOp>();
  auto sub = mathExp ? mathExp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  auto x = sub ? dyn_cast<BlockArgument>(sub.getLhs()) : nullptr;
  auto max = sub ? dyn_cast<BlockArgument>(sub.getRhs()) : nullptr;
  if (!x || !max || x.getOwner() != &body || max.getOwner() != &body ||
      exp.getBroadcast(x.getArgNumber()) != ipu::Broadcast::Full ||
      exp.getBroadcast(max.getArgNumber()) != ipu::Broadcast::Column)
    return false;
  // The row's maximum from an identity: -inf, or for maxnum also NaN (as
  // linalg.softmax's decomposition starts it).
  Value xValue = exp.getInputs()[x.getArgNumber()], maxValue = exp.getInputs()[max.getArgNumber()];
  return reducedInput(maxValue, ipu::RowReduction::Max, -INFINITY) == xValue ||
         reducedInput(maxValue, ipu::RowReduction::MaxNum, -INFINITY) == xValue ||
         reducedInput(maxValue, ipu::RowReduction::MaxNum, NAN) == xValue;
}

/// Softmax's division by its row sums as a multiply by their reciprocal,
/// which the kernel computes once a row (rowInvariantValues): a divide an
/// element is the costliest op of attention's softmax. Only where the sums
/// are softmax's, whose reciprocals are normal: there x * (1 / s) is within
/// 1.5 f32 ulp of x / s.
void divideBySoftmaxSumsAsReciprocal(ipu_tile::ElementwiseOp op) {
  if (op.getRowReduction() != ipu::RowReduction::None)
    return;
  Block &body = op.getBody().front();
  SmallVector<arith::DivFOp> divides;
  for (auto divide : body.getOps<arith::DivFOp>()) {
    auto sums = dyn_cast<BlockArgument>(divide.getRhs());
    if (sums && sums.getOwner() == &body && divide.getType().isF32() &&
        op.getBroadcast(sums.getArgNumber()) == ipu::Broadcast::Column &&
        isSumOfExpBelowRowMax(op.getInputs()[sums.getArgNumber()]))
      divides.push_back(divide);
  }
  for (arith::DivFOp divide : divides) {
    OpBuilder builder(divide);
    Location loc = divide.getLoc();
    Value one = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(1.0f));
    Value reciprocal = arith::DivFOp::create(builder, loc, one, divide.getRhs());
    Value product = arith::MulFOp::create(builder, loc, divide.getLhs(), reciprocal);
    divide.replaceAllUsesWith(product);
    divide.erase();
    mlir::emitRemark(op.getLoc(), "softmax: divides by the row sums of exp(x - max x) as a "
                  "multiply by their reciprocal, once a row (each sum is in "
                  "[1, the row's length])");
  }
}

/// Whether each reader of `producer` can compute its value again where it
/// reads it: a conversion and at most one add, subtract or multiply per
/// element of one full input (others broadcast), read in full by at most
/// three elementwise ops of its shape. The value then never reaches
/// memory, and the intermediate can be large (attention's scaled scores
/// widened to f32, [heads, tokens, tokens]; layer norm's rows widened,
/// then centred). In time, per vector: the pass costs its op, its input's
/// load, a store and a load in each of k readers; computing it again
/// costs k ops and k loads of the input, no wider than the value. That is
/// no more for k <= 3 (one instruction each), and each further reader
/// would add an op and a load. A sum of two full inputs (a residual)
/// stays: each reader would read, and its layout gather, both.
bool recomputedByEveryReader(ipu_tile::ElementwiseOp producer) {
  constexpr unsigned kMostReaders = 3;
  if (producer.getReduce() ||
      producer.getResult().hasNUsesOrMore(kMostReaders + 1))
    return false;
  unsigned fullInputs = 0;
  for (unsigned i = 0; i < producer.getInputs().size(); ++i)
    if (producer.getBroadcast(i) == ipu::Broadcast::Full && ++fullInputs > 1)
      return false;
  unsigned arithmetic = 0;
  for (Operation &op : producer.getBody().front().without_terminator()) {
    if (isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp>(op))
      continue;
    if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op) || ++arithmetic > 1)
      return false;
  }
  ArrayRef<int64_t> shape = producer.getResult().getType().getShape();
  for (OpOperand &use : producer.getResult().getUses()) {
    auto reader = dyn_cast<ipu_tile::ElementwiseOp>(use.getOwner());
    if (!reader)
      return false;
    const unsigned index =
        use.getOperandNumber() - reader.getInputs().getBeginOperandIndex();
    if (reader.getBroadcast(index) != ipu::Broadcast::Full ||
        ArrayRef<int64_t>(reader.getIterationShape()) != shape)
      return false;
  }
  return true;
}

struct FuseElementwisePass
    : public mlir::ipu_compiler::impl::IPUFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // In program order: a consumer's producers have already taken in
    // theirs, so one pass fuses whole chains. Broadcasts were folded into
    // their readers at import; a computed value fuses into its one reader.
    SmallVector<ipu_tile::ElementwiseOp> chain;
    module.walk([&](ipu_tile::ElementwiseOp op) { chain.push_back(op); });
    bool failedAny = false;
    for (ipu_tile::ElementwiseOp op : chain) {
      op = computeBeforeReshapes(op);
      op = fuseProducers(op, [](ipu_tile::ElementwiseOp producer) {
        return producer->hasOneUse();
      });
      simplifyElementwiseBody(op);
      if (Value copied = copiedInput(op)) {
        op.getResult().replaceAllUsesWith(copied);
        op.erase();
      } else if (failed(mlir::verify(op))) {
        failedAny = true;
      }
    }
    module.walk([](ipu_tile::ElementwiseOp op) { divideBySoftmaxSumsAsReciprocal(op); });
    // Then cheap values of several readers, into each: after the softmax
    // rewrite, which recognises the max and the exp by their inputs. A
    // producer whose other readers took it in has one use left.
    chain.clear();
    module.walk([&](ipu_tile::ElementwiseOp op) { chain.push_back(op); });
    for (ipu_tile::ElementwiseOp op : chain) {
      ipu_tile::ElementwiseOp fused = fuseProducers(op, [](ipu_tile::ElementwiseOp producer) {
        return recomputedByEveryReader(producer);
      });
      if (fused == op)
        continue;
      simplifyElementwiseBody(fused);
      if (failed(mlir::verify(fused)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
