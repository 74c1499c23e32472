//===- SetTarget.cpp - Name the target of a module ------------------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Target/TargetModel.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUSETTARGET
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {
struct SetTargetPass : public mlir::ipu_compiler::impl::IPUSetTargetBase<SetTargetPass> {
  using IPUSetTargetBase::IPUSetTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef attrName = ipu_tile::IPUTileDialect::getTargetAttrName();
    if (auto existing = module->getAttrOfType<ipu_tile::TargetAttr>(attrName)) {
      if (existing.getName() != target) {
        module.emitError("module names target '")
            << existing.getName() << "' but the pipeline asks for '" << target
            << "'";
        signalPassFailure();
      }
      return;
    }
    std::string why;
    if (!ipu::TargetModel::byName(target, &why)) {
      module.emitError(why);
      signalPassFailure();
      return;
    }
    module->setAttr(attrName, ipu_tile::TargetAttr::get(&getContext(), target));
  }
};
} // namespace
