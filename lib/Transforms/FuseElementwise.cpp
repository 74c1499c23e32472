//===- FuseElementwise.cpp - Chains of ipu_tile.elementwise as one op -----===//
//
// A bias add, an activation and a cast, imported one op each, run as one
// kernel per tile when fused: the consumer's body computes its producers'
// values where it read them, so the intermediates never reach memory.
//
//===----------------------------------------------------------------------===//

#include "ImportElementwise.h"

#include "IPU/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
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
          (!uniform && (op.getBroadcast(index) != ipu::Broadcast::Full ||
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
