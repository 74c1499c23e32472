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
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/IR/Verifier.h"

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
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
