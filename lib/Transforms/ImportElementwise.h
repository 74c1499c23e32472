//===- ImportElementwise.h - Part of --ipu-import-linalg and fusion -*- C++ -*-===//

#ifndef IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H
#define IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H

#include "IPU/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ipu_compiler {

/// Turns every elementwise linalg.generic and linalg.map of `module` into an
/// ipu_tile.elementwise (--ipu-fuse-elementwise then fuses chains of them);
/// fails (with errors on the ops) when a body holds something no tile
/// kernel runs.
LogicalResult importElementwise(ModuleOp module);

/// The ops an import stage refused, each with its error emitted once.
struct ImportRefusals {
  llvm::SmallPtrSet<Operation *, 4> ops;
};

/// Applies one import stage's patterns to `module` in program order until
/// none applies, without folding or constant merging: the IR changes only
/// where a pattern says. Fails when `refusals` holds an op (its error is
/// emitted).
LogicalResult applyImportStage(ModuleOp module, RewritePatternSet &&patterns,
                               const ImportRefusals &refusals);

/// A pattern that imports the ops `takes` accepts (all, when null) with
/// `import`, which checks every condition (emitting its error) before it
/// changes the IR; an op it refuses is recorded and, offered again after
/// its neighbours change, skipped. `Base` is OpRewritePattern or
/// OpInterfaceRewritePattern.
template <typename OpTy, template <typename> class Base>
struct ImportOrRefuse : Base<OpTy> {
  using Takes = bool (*)(OpTy);
  using Import = LogicalResult (*)(OpTy, PatternRewriter &);
  ImportOrRefuse(MLIRContext *context, Takes takes, Import import,
                 ImportRefusals &refusals)
      : Base<OpTy>(context), takes(takes), import(import), refusals(refusals) {}
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    if ((takes && !takes(op)) || refusals.ops.contains(op))
      return failure();
    if (succeeded(import(op, rewriter)))
      return success();
    refusals.ops.insert(op);
    return failure();
  }
  Takes takes;
  Import import;
  ImportRefusals &refusals;
};

/// `value` narrowed to `type` as arith.truncf rounds (to nearest even);
/// upstream folds only exact truncations.
FloatAttr truncatedConstant(FloatAttr value, FloatType type);

/// x^3 as x * x * x, and the like, and constant truncations folded: the
/// kernel then computes what the body says at the cost the estimator
/// counts. Inside a pattern, `rewriter` is the pattern's: the greedy
/// driver that runs it hears of every op the simplification replaces or
/// erases, which would otherwise stay on its worklist, freed.
void simplifyElementwiseBody(ipu_tile::ElementwiseOp op, RewriterBase *rewriter = nullptr);

/// Fuses into `op`, until none is left, each elementwise producer of an input
/// it reads in full (of its iteration shape, no reduction) that `accept`
/// takes: the fused op computes the producer's value where `op` read it.
/// Returns the op that results (`op` itself when nothing fused).
ipu_tile::ElementwiseOp fuseProducers(ipu_tile::ElementwiseOp op,
                                      function_ref<bool(ipu_tile::ElementwiseOp)> accept);

/// The input an op only copies (StableHLO's keepdims broadcast of [..., R]
/// to [..., R, 1]; max(x, -inf) once simplified), or null.
Value copiedInput(ipu_tile::ElementwiseOp op);

} // namespace mlir::ipu_compiler

#endif // IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H
