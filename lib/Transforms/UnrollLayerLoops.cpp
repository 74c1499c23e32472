//===- UnrollLayerLoops.cpp - Layers written as a loop, unrolled ----------===//
//
// An exporter may write N identical layers as one scf.for over stacked
// weights. Unrolled, with each iteration's index folded into its slices,
// they are the layers an exporter unrolls itself: import takes each layer's
// slice of a frozen stacked weight as a weight of its own, and
// --ipu-find-repeated-layers compiles the N layers as one body again.
//
//===----------------------------------------------------------------------===//

#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUUNROLLLAYERLOOPS
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {
struct UnrollLayerLoopsPass
    : public mlir::ipu_compiler::impl::IPUUnrollLayerLoopsBase<UnrollLayerLoopsPass> {
  using IPUUnrollLayerLoopsBase::IPUUnrollLayerLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Innermost first: an outer loop unrolls copies of bodies already flat.
    SmallVector<scf::ForOp> loops;
    module.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) { loops.push_back(loop); });
    if (loops.empty())
      return;
    for (scf::ForOp loop : loops) {
      // scf.for's step must be positive: a step of 0 (or below) would run
      // the body forever, so no count of layers comes of it.
      APInt step;
      if (matchPattern(loop.getStep(), m_ConstantInt(&step)) &&
          (step.isZero() || (!loop.getUnsignedCmp() && step.isNegative()))) {
        if (step.isZero())
          loop.emitError("a loop whose step is 0 never ends: give it a positive step");
        else
          loop.emitError("a loop whose step is ")
              << step.getSExtValue()
              << " counts down, which scf.for does not (its step must be "
                 "positive): give it a positive step";
        return signalPassFailure();
      }
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (!trips) {
        loop.emitError("cannot unroll a loop whose bounds and step are not "
                       "constants: layers written as a loop need a known count");
        return signalPassFailure();
      }
      if (trips->ugt(maximumIterations)) {
        loop.emitError("a loop of ")
            << trips->getZExtValue() << " iterations is more layers than "
            << static_cast<uint64_t>(maximumIterations) << " (maximum-iterations)";
        return signalPassFailure();
      }
      // Nested loops multiply: bound the ops unrolling makes, not only
      // each loop's count.
      uint64_t bodyOps = 0;
      loop.getBody()->walk([&](Operation *) { ++bodyOps; });
      constexpr uint64_t kMaxUnrolledOps = 1u << 18;
      if (bodyOps * trips->getZExtValue() > kMaxUnrolledOps) {
        loop.emitError("unrolling this loop would make ")
            << bodyOps * trips->getZExtValue() << " ops, more than "
            << kMaxUnrolledOps;
        return signalPassFailure();
      }
      auto func = loop->getParentOfType<FunctionOpInterface>();
      // A loop of no iterations yields its initial values: no layers.
      if (trips->isZero()) {
        mlir::emitRemark(loop.getLoc(), "a loop of 0 iterations (its lower bound is not below "
                        "its upper bound): its results are its initial values");
        loop.replaceAllUsesWith(loop.getInitArgs());
        loop.erase();
        continue;
      }
      // The values each iteration slices at its index: stacked weights,
      // frozen (constants) or streamed (arguments).
      unsigned frozen = 0, arguments = 0;
      for (auto slice : loop.getBody()->getOps<tensor::ExtractSliceOp>()) {
        if (slice.getSource().getParentRegion() == &loop.getRegion() ||
            !llvm::is_contained(slice.getOffsets(), loop.getInductionVar()))
          continue;
        if (slice.getSource().getDefiningOp<arith::ConstantOp>())
          ++frozen;
        else if (isa<BlockArgument>(slice.getSource()))
          ++arguments;
      }
      const uint64_t iterations = trips->getZExtValue();
      if (failed(loopUnrollFull(loop))) {
        loop.emitError("cannot unroll this loop");
        return signalPassFailure();
      }
      if (!func)
        continue;
      // mlir::emitRemark, not the op's: an op's remark carries the whole
      // function as a note.
      InFlightDiagnostic remark = mlir::emitRemark(func.getLoc());
      remark << "unrolls a loop of " << iterations << " iterations that slices "
             << frozen + arguments << " stacked weights per iteration (" << frozen
             << " frozen, " << arguments << " arguments)";
      // A frozen slice becomes a weight of its layer's own at import; a
      // slice of an argument stays a slice, which no two layers share.
      if (arguments)
        remark << ": layers that read slices of stacked arguments compile one "
                  "by one";
    }
    // The unrolled indices are constants: fold them into the slices' static
    // offsets, where import reads them.
    RewritePatternSet patterns(&getContext());
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::InsertSliceOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns)))) {
      module.emitError("the unrolled layers' slices did not settle");
      return signalPassFailure();
    }
  }
};
} // namespace
