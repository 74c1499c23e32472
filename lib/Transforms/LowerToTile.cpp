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

#include <functional>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPULOWERTOTILE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {

LogicalResult lowerFunction(func::FuncOp func, const ipu::TargetModel &target) {
  Block &body = func.getBody().front();
  // Names: ops by prefix and program order; a relayout's buffer after the
  // operand of its first user, its phase after that user; streams after
  // their argument, in order.
  DenseMap<Operation *, std::string> nameOf;
  llvm::StringMap<unsigned> opsOfPrefix;
  // In program order, a repeated layer's body where the layers are.
  func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getParentOp() != func && !isa<ipu_tile::RepeatOp>(op->getParentOp()))
      return WalkResult::skip();
    StringRef prefix;
    if (auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op))
      prefix = lowerable.getTileNamePrefix();
    else if (isa<ipu_tile::RepeatOp>(op))
      prefix = "repeat";
    if (!prefix.empty())
      nameOf[op] = (prefix + Twine(opsOfPrefix[prefix]++)).str();
    return WalkResult::advance();
  });
  // Each layer's weights stream into their block of the layers' buffer.
  auto streamsIntoLayers = [](ipu_tile::FromHostOp op) {
    return !op->use_empty() && llvm::all_of(op->getUses(), [](OpOperand &use) {
      return isa<ipu_tile::RepeatOp>(use.getOwner()) && use.getOperandNumber() > 0;
    });
  };
  auto firstUse = [&](Value value) -> OpOperand * {
    OpOperand *first = nullptr;
    for (OpOperand &use : value.getUses())
      if (!first || use.getOwner()->isBeforeInBlock(first->getOwner()) ||
          (use.getOwner() == first->getOwner() &&
           use.getOperandNumber() < first->getOperandNumber()))
        first = &use;
    return first;
  };
  auto relayoutName = [&](ipu_tile::RelayoutOp op, unsigned index) {
    OpOperand *use = firstUse(op.getResult());
    auto user = use ? dyn_cast<ipu_tile::TileLowerableOpInterface>(use->getOwner())
                    : ipu_tile::TileLowerableOpInterface();
    if (!user)
      return std::make_pair("relayout" + std::to_string(index),
                            "relayout" + std::to_string(index));
    std::string userName = nameOf[user];
    return std::make_pair(
        userName + "." + user.getOperandName(use->getOperandNumber()).str(),
        userName);
  };

  OpBuilder builder(func);
  auto program = ipu_tile::ProgramOp::create(builder, func.getLoc(), func.getSymName());
  if (auto images = func->getAttrOfType<IntegerAttr>("ipu.images"))
    program.setImagesAttr(builder.getI64IntegerAttr(images.getInt()));
  ipu_tile::ProgramBuilder lowering(func, program, target);
  DenseMap<unsigned, unsigned> streamsOfArgument;
  unsigned relayouts = 0;
  std::function<LogicalResult(Block &)> lowerBlock = [&](Block &block) -> LogicalResult {
  for (auto it = block.begin(), end = block.end(); it != end;) {
    Operation &op = *it;
    if (auto fromHost = dyn_cast<ipu_tile::FromHostOp>(op);
        fromHost && streamsIntoLayers(fromHost)) {
      ++it;
      continue;
    }
    if (auto repeat = dyn_cast<ipu_tile::RepeatOp>(op)) {
      ++it;
      if (failed(lowering.beginRepeat(repeat, nameOf[&op])) ||
          failed(lowerBlock(repeat.getBody().front())) ||
          failed(lowering.endRepeat(repeat)))
        return failure();
      continue;
    }
    if (isa<ipu_tile::CarryOp>(op)) {
      ++it;
      continue; // endRepeat copies what it passes on.
    }
    if (auto fromHost = dyn_cast<ipu_tile::FromHostOp>(op)) {
      unsigned arg = cast<BlockArgument>(fromHost.getSource()).getArgNumber();
      unsigned index = streamsOfArgument[arg]++;
      std::string name = "arg" + std::to_string(arg);
      if (index > 0)
        name += "." + std::to_string(index);
      if (failed(lowering.lowerFromHost(fromHost, name)))
        return failure();
      ++it;
      continue;
    }
    if (isa<ipu_tile::RelayoutOp>(op)) {
      // Consecutive relayouts move in one phase, named after the first
      // one's consumer.
      SmallVector<ipu_tile::RelayoutOp> run;
      SmallVector<std::string> names;
      std::string phaseName;
      for (; it != end && isa<ipu_tile::RelayoutOp>(*it); ++it) {
        run.push_back(cast<ipu_tile::RelayoutOp>(*it));
        auto [buffer, user] = relayoutName(run.back(), relayouts++);
        names.push_back(buffer);
        if (phaseName.empty())
          phaseName = user + ".gather";
      }
      if (failed(lowering.lowerRelayouts(run, names, phaseName)))
        return failure();
      continue;
    }
    ++it;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(lowering.lowerReturn(ret)))
        return failure();
      continue;
    }
    auto lowerable = dyn_cast<ipu_tile::TileLowerableOpInterface>(op);
    if (!lowerable)
      return ipu_tile::emitNotLowerable(&op);
    if (failed(lowerable.lowerToTile(lowering, nameOf[&op])))
      return failure();
  }
  return success();
  };
  if (failed(lowerBlock(body)))
    return failure();
  lowering.finish();
  return success();
}

struct LowerToTilePass : public mlir::ipu_compiler::impl::IPULowerToTileBase<LowerToTilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    FailureOr<SmallVector<func::FuncOp>> compiled = ipu_tile::functionsToCompile(module);
    if (failed(compiled))
      return signalPassFailure();
    SmallVector<func::FuncOp> &funcs = *compiled;
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
      if (failed(lowerFunction(func, *target)))
        return signalPassFailure();
      func.erase();
    }
  }
};
} // namespace
