//===- ImportLinalg.cpp - linalg.matmul on tensors to ipu_gemm.matmul ------===//

#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::ipu {
#define GEN_PASS_DEF_IPUIMPORTLINALG
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;

/// Whether `init` is known to hold zeros: a tensor.empty (linalg.matmul then
/// accumulates into undefined data, which we read as zero) or a fill of 0.
static bool isZeroAccumulator(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Value value = fill.getDpsInputs()[0];
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

namespace {
struct ImportLinalgPass
    : public mlir::ipu::impl::IPUImportLinalgBase<ImportLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::MatmulOp> matmuls;
    bool failedAny = false;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
        matmuls.push_back(matmul);
        return WalkResult::skip();
      }
      // Fills are accepted here and must die with the matmuls they feed.
      if (isa<linalg::FillOp>(op))
        return WalkResult::skip();
      if (op->getDialect() && isa<linalg::LinalgDialect>(op->getDialect())) {
        op->emitError("unsupported op '")
            << op->getName()
            << "': the IPU compiler imports linalg.matmul on tensors only";
        failedAny = true;
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (linalg::MatmulOp matmul : matmuls)
      failedAny |= failed(importMatmul(matmul));
    if (failedAny)
      return signalPassFailure();
    foldTruncations(module);
    // Remove fills, empties and constants left without users, to a fixpoint.
    for (bool erased = true; erased;) {
      erased = false;
      SmallVector<Operation *> dead;
      module.walk([&](Operation *op) {
        if (isa<linalg::FillOp, tensor::EmptyOp, arith::ConstantOp>(op) &&
            op->use_empty())
          dead.push_back(op);
      });
      for (Operation *op : dead)
        op->erase();
      erased = !dead.empty();
    }
    module.walk([&](linalg::FillOp fill) {
      fill.emitError("linalg.fill survives the import: only fills feeding "
                     "linalg.matmul accumulators are supported");
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  /// A matmul accumulating in f32 whose only use narrows the result
  /// (`arith.truncf` on the tensor) stores the narrow type directly: the AMP
  /// accumulates in f32 and rounds once on the way out.
  void foldTruncations(ModuleOp module) {
    SmallVector<arith::TruncFOp> truncations;
    module.walk([&](arith::TruncFOp op) { truncations.push_back(op); });
    for (arith::TruncFOp truncation : truncations) {
      auto matmul = truncation.getIn().getDefiningOp<ipu_gemm::MatmulOp>();
      auto type = dyn_cast<RankedTensorType>(truncation.getType());
      if (!matmul || !matmul->hasOneUse() || !type ||
          (!type.getElementType().isF16() && !type.getElementType().isF32()) ||
          truncation.getRoundingmodeAttr())
        continue;
      OpBuilder builder(matmul);
      auto narrowed = ipu_gemm::MatmulOp::create(
          builder, matmul.getLoc(), type, matmul.getLhs(), matmul.getRhs(),
          matmul.getAccTypeAttr(), matmul.getPlanAttr(),
          matmul.getConstraintsAttr());
      truncation.getResult().replaceAllUsesWith(narrowed.getResult());
      truncation.erase();
      matmul.erase();
    }
  }

  /// The attributes of `matmul` the imported op honours: `constraints`
  /// (a #ipu_gemm.constraints) and `plan` (a #ipu_gemm.plan, kept by the
  /// planner when it can be lowered). An ipu_gemm attribute under another
  /// name, or one of those names holding something else, is an error; any
  /// other discardable attribute but linalg's own is dropped with a warning.
  FailureOr<std::pair<ipu_gemm::PlanAttr, ipu_gemm::ConstraintsAttr>>
  carriedAttributes(linalg::MatmulOp matmul) {
    ipu_gemm::PlanAttr plan;
    ipu_gemm::ConstraintsAttr constraints;
    for (NamedAttribute attr : matmul->getDiscardableAttrs()) {
      StringRef name = attr.getName().strref();
      Attribute value = attr.getValue();
      if (name == "constraints") {
        constraints = dyn_cast<ipu_gemm::ConstraintsAttr>(value);
        if (!constraints)
          return matmul.emitError("attribute 'constraints' must be a "
                                  "#ipu_gemm.constraints, got ")
                 << value;
        continue;
      }
      if (name == "plan") {
        plan = dyn_cast<ipu_gemm::PlanAttr>(value);
        if (!plan)
          return matmul.emitError("attribute 'plan' must be a #ipu_gemm.plan, got ")
                 << value;
        continue;
      }
      if (isa<ipu_gemm::IPUGemmDialect>(value.getDialect()))
        return matmul.emitError("attribute '")
               << name << "' holds " << value
               << ", which the import honours only as 'constraints' or 'plan'";
      if (!name.starts_with("linalg."))
        matmul.emitWarning("attribute '")
            << name << "' is dropped by the import to ipu_gemm.matmul";
    }
    return std::make_pair(plan, constraints);
  }

  LogicalResult importMatmul(linalg::MatmulOp matmul) {
    if (!matmul.hasPureTensorSemantics())
      return matmul.emitError("linalg.matmul must work on tensors, not buffers");
    if (matmul.hasUserDefinedMaps())
      return matmul.emitError(
          "linalg.matmul with user-defined indexing maps (transposes or "
          "broadcasts) is not supported yet");
    Value init = matmul.getDpsInits()[0];
    if (!isZeroAccumulator(init))
      return matmul.emitError(
          "linalg.matmul accumulates into non-zero data; only a zero "
          "linalg.fill or tensor.empty accumulator is supported");
    FailureOr<std::pair<ipu_gemm::PlanAttr, ipu_gemm::ConstraintsAttr>>
        carried = carriedAttributes(matmul);
    if (failed(carried))
      return failure();
    auto resultType = cast<RankedTensorType>(matmul.getResult(0).getType());
    OpBuilder builder(matmul);
    auto imported = ipu_gemm::MatmulOp::create(
        builder, matmul.getLoc(), resultType, matmul.getDpsInputs()[0],
        matmul.getDpsInputs()[1], TypeAttr::get(resultType.getElementType()),
        carried->first, carried->second);
    matmul.getResult(0).replaceAllUsesWith(imported.getResult());
    matmul.erase();
    return success();
  }
};
} // namespace
