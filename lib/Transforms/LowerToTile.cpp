//===- LowerToTile.cpp - Buffers, exchange phases and compute sets --------===//
//
// Turns each planned function into an ipu_tile.program. Every tensor value
// gets a buffer in the layout its consumer's plan wants; a value whose
// buffer has another layout is rearranged in an exchange phase first.
//
//===----------------------------------------------------------------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::ipu {
#define GEN_PASS_DEF_IPULOWERTOTILE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;
using ::ipu::BlockLayout;

namespace {

/// The layouts one matmul plan wants for its operands and result.
struct PlanLayouts {
  BlockLayout lhs, rhs, out;
};

PlanLayouts planLayouts(ipu_gemm::MatmulOp op, ipu_gemm::PlanAttr plan) {
  auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
  auto outType = op.getResult().getType();
  uint32_t rows = plan.getRows(), cols = plan.getCols();
  PlanLayouts layouts;
  // A: block row i on tiles i * cols + j for every j (a replica per column).
  layouts.lhs.rows = lhsType.getDimSize(0);
  layouts.lhs.cols = lhsType.getDimSize(1);
  layouts.lhs.type = *ipu_tile::toElementType(lhsType.getElementType());
  layouts.lhs.gridRows = rows;
  layouts.lhs.tileRowStride = cols;
  layouts.lhs.replicas = cols;
  layouts.lhs.replicaStride = 1;
  // B: block column j on tiles i * cols + j for every i.
  layouts.rhs.rows = rhsType.getDimSize(0);
  layouts.rhs.cols = rhsType.getDimSize(1);
  layouts.rhs.type = *ipu_tile::toElementType(rhsType.getElementType());
  layouts.rhs.gridCols = cols;
  layouts.rhs.tileColStride = 1;
  layouts.rhs.replicas = rows;
  layouts.rhs.replicaStride = cols;
  // C: block (i, j) on tile i * cols + j.
  layouts.out.rows = outType.getDimSize(0);
  layouts.out.cols = outType.getDimSize(1);
  layouts.out.type = *ipu_tile::toElementType(outType.getElementType());
  layouts.out.gridRows = rows;
  layouts.out.gridCols = cols;
  layouts.out.tileRowStride = cols;
  layouts.out.tileColStride = 1;
  return layouts;
}

/// Activations arrive split by rows over the first tiles, as a previous
/// operation or the host would leave them.
BlockLayout arrivalLayout(RankedTensorType type, const ::ipu::TargetModel &target) {
  BlockLayout layout;
  layout.rows = type.getDimSize(0);
  layout.cols = type.getDimSize(1);
  layout.type = *ipu_tile::toElementType(type.getElementType());
  layout.gridRows = static_cast<uint32_t>(
      std::min<int64_t>(layout.rows, static_cast<int64_t>(target.tiles)));
  layout.tileRowStride = 1;
  return layout;
}

class FunctionLowering {
public:
  FunctionLowering(func::FuncOp func, const ::ipu::TargetModel &target)
      : func(func), target(target), context(func.getContext()),
        builder(func.getContext()) {}

  LogicalResult lower();

private:
  ipu_tile::BufferOp createBuffer(StringRef name, Type elementType,
                                  ArrayRef<int64_t> shape,
                                  const BlockLayout &layout,
                                  ::ipu::MemoryClass memoryClass);
  LogicalResult lowerMatmul(ipu_gemm::MatmulOp op, unsigned index);
  /// The buffer holding `value` in `layout`, adding a copy into a new buffer
  /// named `name` to `copies` when the current buffer's layout differs.
  ipu_tile::BufferOp bufferIn(Value value, const BlockLayout &layout,
                              StringRef name,
                              SmallVectorImpl<std::pair<ipu_tile::BufferOp,
                                                        ipu_tile::BufferOp>> &copies);

  func::FuncOp func;
  const ::ipu::TargetModel &target;
  MLIRContext *context;
  OpBuilder builder;
  ipu_tile::ProgramOp program;
  Block::iterator bufferInsertPoint;
  DenseMap<Value, ipu_tile::BufferOp> bufferOf;
  SmallVector<Attribute> reference;
  int64_t flops = 0;
  int64_t estimatedCycles = 0;
};

ipu_tile::BufferOp FunctionLowering::createBuffer(StringRef name, Type elementType,
                                                  ArrayRef<int64_t> shape,
                                                  const BlockLayout &layout,
                                                  ::ipu::MemoryClass memoryClass) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(&program.getBody().front(), bufferInsertPoint);
  auto type = RankedTensorType::get(shape, elementType,
                                    ipu_tile::toLayoutAttr(context, layout));
  return ipu_tile::BufferOp::create(builder, func.getLoc(), builder.getStringAttr(name), TypeAttr::get(type),
      builder.getStringAttr(::ipu::memoryClassName(memoryClass)), IntegerAttr());
}

ipu_tile::BufferOp FunctionLowering::bufferIn(
    Value value, const BlockLayout &layout, StringRef name,
    SmallVectorImpl<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> &copies) {
  ipu_tile::BufferOp current = bufferOf.lookup(value);
  auto type = cast<RankedTensorType>(value.getType());
  auto wanted = RankedTensorType::get(type.getShape(), type.getElementType(),
                                      ipu_tile::toLayoutAttr(context, layout));
  if (current.getTensorType() == wanted)
    return current;
  ipu_tile::BufferOp moved = createBuffer(name, type.getElementType(),
                                          type.getShape(), layout,
                                          ::ipu::MemoryClass::Standard);
  copies.push_back({current, moved});
  return moved;
}

LogicalResult FunctionLowering::lowerMatmul(ipu_gemm::MatmulOp op, unsigned index) {
  ipu_gemm::PlanAttr plan = op.getPlanAttr();
  if (!plan)
    return op.emitError("matmul has no plan: run --ipu-plan-gemm first");
  if (plan.getInner() != 1 || plan.getOrientation() != "normal")
    return op.emitError("plan ")
           << plan << " is not lowered yet: only inner = 1 and normal "
           << "orientation are";
  PlanLayouts layouts = planLayouts(op, plan);
  std::string prefix = "mm" + std::to_string(index);
  SmallVector<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> copies;
  ipu_tile::BufferOp lhs = bufferIn(op.getLhs(), layouts.lhs, prefix + ".lhs", copies);
  ipu_tile::BufferOp rhs = bufferIn(op.getRhs(), layouts.rhs, prefix + ".rhs", copies);
  if (!copies.empty()) {
    ipu_exchange::SyncOp::create(builder, op.getLoc());
    auto phase = ipu_exchange::PhaseOp::create(builder, op.getLoc(), prefix + ".gather");
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&phase.getBody().front());
    for (auto [from, to] : copies)
      ipu_exchange::CopyOp::create(builder, op.getLoc(), from.getSymName(),
                                           to.getSymName());
  }
  auto outType = op.getResult().getType();
  ipu_tile::BufferOp out =
      createBuffer(prefix + ".out", outType.getElementType(), outType.getShape(),
                   layouts.out, ::ipu::MemoryClass::Standard);
  bufferOf[op.getResult()] = out;

  // One gemm vertex per tile of the plan, on its blocks.
  const ::ipu::BlockLayout &c = layouts.out;
  int64_t k = op.getLhs().getType().getDimSize(1);
  int64_t inType = static_cast<int64_t>(layouts.lhs.type);
  int64_t accType =
      static_cast<int64_t>(*ipu_tile::toElementType(op.getAccumulatorType()));
  int64_t outCode = static_cast<int64_t>(c.type);
  SmallVector<int32_t> tiles;
  SmallVector<int64_t> params;
  for (uint32_t i = 0; i < c.gridRows; ++i)
    for (uint32_t j = 0; j < c.gridCols; ++j) {
      tiles.push_back(static_cast<int32_t>(c.tileOf(i, j, 0)));
      params.append({c.blockRows(i), k, c.blockCols(j), inType, accType, outCode});
    }
  SmallVector<Attribute> operands = {
      FlatSymbolRefAttr::get(lhs.getSymNameAttr()),
      FlatSymbolRefAttr::get(rhs.getSymNameAttr()),
      FlatSymbolRefAttr::get(out.getSymNameAttr())};
  ipu_tile::ComputeSetOp::create(builder, op.getLoc(), prefix + ".partials", "gemm", builder.getArrayAttr(operands),
      builder.getDenseI32ArrayAttr(tiles), builder.getDenseI64ArrayAttr(params));
  flops += 2 * op.getLhs().getType().getDimSize(0) * k * outType.getDimSize(1);
  estimatedCycles += plan.getCycles();
  return success();
}

LogicalResult FunctionLowering::lower() {
  builder.setInsertionPoint(func);
  program = ipu_tile::ProgramOp::create(builder, func.getLoc(), func.getSymName());
  Block &body = program.getBody().front();
  builder.setInsertionPointToEnd(&body);
  bufferInsertPoint = body.end();

  SmallVector<bool> weightArgs;
  // Arguments: weights (the rhs of a matmul) are resident in the layout the
  // plan wants; activations arrive split by rows.
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
        !ipu_tile::toElementType(type.getElementType()))
      return func.emitError("argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; only static 2-D tensors of f32, f16 or f8 are supported";
    ipu_gemm::MatmulOp weightUser;
    for (Operation *user : arg.getUsers())
      if (auto matmul = dyn_cast<ipu_gemm::MatmulOp>(user))
        if (matmul.getRhs() == arg && matmul.getPlanAttr()) {
          weightUser = matmul;
          break;
        }
    BlockLayout layout = arrivalLayout(type, target);
    ::ipu::MemoryClass memoryClass = ::ipu::MemoryClass::Standard;
    if (weightUser) {
      layout = planLayouts(weightUser, weightUser.getPlanAttr()).rhs;
      memoryClass = *::ipu::parseMemoryClass(
          weightUser.getPlanAttr().getWeights().str());
    }
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    bufferOf[arg] = createBuffer(name, type.getElementType(), type.getShape(),
                                 layout, memoryClass);
    weightArgs.push_back(static_cast<bool>(weightUser));
  }
  // Steps follow the buffers; later buffers go in before the first step.
  for (BlockArgument arg : func.getArguments()) {
    auto stream = ipu_exchange::StreamInOp::create(builder, func.getLoc(), bufferOf[arg].getSymName(), arg.getArgNumber());
    if (weightArgs[arg.getArgNumber()])
      stream.setWeight(true);
    if (arg.getArgNumber() == 0)
      bufferInsertPoint = stream->getIterator();
  }

  unsigned matmulIndex = 0;
  for (Operation &op : func.getBody().front()) {
    if (auto matmul = dyn_cast<ipu_gemm::MatmulOp>(op)) {
      if (failed(lowerMatmul(matmul, matmulIndex++)))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      ipu_exchange::SyncOp::create(builder, ret.getLoc());
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        ipu_tile::BufferOp buffer = bufferOf.lookup(value);
        if (!buffer || isa<BlockArgument>(value))
          return ret.emitError("result ")
                 << index << " must be computed by the function";
        ipu_exchange::StreamOutOp::create(builder, ret.getLoc(),
                                                  buffer.getSymName(), index);
      }
      continue;
    }
    return op.emitError("cannot lower '")
           << op.getName() << "' to tiles: only ipu_gemm.matmul is supported";
  }

  // The host reference covers matmuls that read arguments and whose result
  // is returned: what `ipu-run --check` can recompute from streams alone.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    auto matmul = value.getDefiningOp<ipu_gemm::MatmulOp>();
    auto lhsArg = matmul ? dyn_cast<BlockArgument>(matmul.getLhs()) : nullptr;
    auto rhsArg = matmul ? dyn_cast<BlockArgument>(matmul.getRhs()) : nullptr;
    if (!lhsArg || !rhsArg)
      continue;
    int32_t arguments[] = {static_cast<int32_t>(lhsArg.getArgNumber()),
                           static_cast<int32_t>(rhsArg.getArgNumber())};
    reference.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("op", builder.getStringAttr("matmul")),
         builder.getNamedAttr("arguments", builder.getDenseI32ArrayAttr(arguments)),
         builder.getNamedAttr("result", builder.getI32IntegerAttr(index))}));
  }
  if (!reference.empty())
    program.setReferenceAttr(builder.getArrayAttr(reference));
  program.setFlopsAttr(builder.getI64IntegerAttr(flops));
  program->setAttr("estimated_cycles", builder.getI64IntegerAttr(estimatedCycles));
  return success();
}

struct LowerToTilePass : public mlir::ipu::impl::IPULowerToTileBase<LowerToTilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isDeclaration())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("functions with control flow are not supported");
        return signalPassFailure();
      }
      FunctionLowering lowering(func, *target);
      if (failed(lowering.lower()))
        return signalPassFailure();
      func.erase();
    }
  }
};
} // namespace
