//===- LowerToTile.cpp - Graph ops to an ipu_tile program -----------------===//
//
// A driver over TileLowerableOpInterface: arguments become host streams,
// each op lowers itself through the ProgramBuilder in program order, and the
// results are streamed out.
//
//===----------------------------------------------------------------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::ipu {
#define GEN_PASS_DEF_IPULOWERTOTILE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;

namespace {

LogicalResult lowerFunction(func::FuncOp func, const ::ipu::TargetModel &target) {
  OpBuilder builder(func);
  auto program = ipu_tile::ProgramOp::create(builder, func.getLoc(), func.getSymName());
  ipu_tile::ProgramBuilder lowering(func, program, target);
  if (failed(lowering.lowerArguments()))
    return failure();
  llvm::StringMap<unsigned> opsOfPrefix;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(lowering.lowerReturn(ret)))
        return failure();
      continue;
    }
    auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op);
    if (!lowerable)
      return op.emitError("cannot lower '")
             << op.getName()
             << "' to tiles: it implements no TileLowerableOpInterface";
    StringRef prefix = lowerable.getTileNamePrefix();
    std::string name = (prefix + Twine(opsOfPrefix[prefix]++)).str();
    if (failed(lowerable.lowerToTile(lowering, name)))
      return failure();
  }
  lowering.finish();
  return success();
}

struct LowerToTilePass : public mlir::ipu::impl::IPULowerToTileBase<LowerToTilePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    IPULowerToTileBase::getDependentDialects(registry);
    ipu_tile::registerTileLoweringModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration())
        funcs.push_back(func);
    // A package holds one program: the translation needs exactly one.
    if (funcs.empty() && module.getOps<ipu_tile::ProgramOp>().empty()) {
      module.emitError("module has no function to compile");
      return signalPassFailure();
    }
    if (funcs.size() > 1) {
      funcs[1].emitError("module has ")
          << funcs.size()
          << " functions; one function per module is supported: '@"
          << funcs[1].getSymName()
          << "' would need a package of its own (compile it from a module "
             "of its own)";
      return signalPassFailure();
    }
    for (func::FuncOp func : funcs) {
      if (!func.getBody().hasOneBlock()) {
        func.emitError("functions with control flow are not supported");
        return signalPassFailure();
      }
      if (failed(lowerFunction(func, *target)))
        return signalPassFailure();
      func.erase();
    }
  }
};
} // namespace
