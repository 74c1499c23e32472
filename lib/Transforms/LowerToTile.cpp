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
#include "IPU/Planning/GemmLayouts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::ipu {
#define GEN_PASS_DEF_IPULOWERTOTILE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;
using ::ipu::BlockLayout;

namespace {

::ipu::GemmProblem toGemmProblem(ipu_gemm::MatmulOp op) {
  ::ipu::GemmProblem problem;
  problem.m = op.getLhs().getType().getDimSize(0);
  problem.k = op.getLhs().getType().getDimSize(1);
  problem.n = op.getRhs().getType().getDimSize(1);
  problem.inType = *ipu_tile::toElementType(op.getLhs().getType().getElementType());
  problem.accType = *ipu_tile::toElementType(op.getAccumulatorType());
  problem.outType =
      *ipu_tile::toElementType(op.getResult().getType().getElementType());
  return problem;
}

::ipu::GemmLayouts planLayouts(ipu_gemm::MatmulOp op, ipu_gemm::PlanAttr plan) {
  return ::ipu::gemmLayouts(toGemmProblem(op), plan.toGemmPlan());
}

class FunctionLowering {
public:
  FunctionLowering(func::FuncOp func, const ::ipu::TargetModel &target)
      : func(func), target(target), context(func.getContext()),
        builder(func.getContext()) {}

  LogicalResult lower();

private:
  /// A buffer at `loc`, the op (or argument) whose value it holds, so that
  /// diagnostics about it (a memory map) point at the source.
  ipu_tile::BufferOp createBuffer(Location loc, StringRef name, Type elementType,
                                  ArrayRef<int64_t> shape,
                                  const BlockLayout &layout,
                                  ::ipu::MemoryClass memoryClass);
  LogicalResult lowerMatmul(ipu_gemm::MatmulOp op, unsigned index);
  ipu_tile::ComputeSetOp createComputeSet(Location loc, StringRef name,
                                          StringRef kernel,
                                          ArrayRef<ipu_tile::BufferOp> operands,
                                          ArrayRef<int32_t> tiles,
                                          ArrayRef<int64_t> params);
  /// A sync, one exchange phase running `copies`, and a sync.
  void createPhase(Location loc, StringRef name,
                   ArrayRef<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> copies);
  /// The buffer holding `value` in `layout` and `memoryClass`, adding a copy
  /// into a new buffer named `name` to `copies` when the current buffer's
  /// layout or class differs.
  ipu_tile::BufferOp bufferIn(Value value, const BlockLayout &layout,
                              StringRef name,
                              SmallVectorImpl<std::pair<ipu_tile::BufferOp,
                                                        ipu_tile::BufferOp>> &copies,
                              ::ipu::MemoryClass memoryClass =
                                  ::ipu::MemoryClass::Standard);
  /// Buffers and host streams for the function's arguments.
  LogicalResult lowerArguments();

  func::FuncOp func;
  const ::ipu::TargetModel &target;
  MLIRContext *context;
  OpBuilder builder;
  ipu_tile::ProgramOp program;
  Block::iterator bufferInsertPoint;
  /// The buffer of every value used as an activation: arguments in the
  /// arrival layout, matmul results in their plan's layout.
  DenseMap<Value, ipu_tile::BufferOp> bufferOf;
  /// The resident weights of every matmul whose B is an argument, in the
  /// layout and class of its plan: what the planner took for granted.
  DenseMap<Operation *, ipu_tile::BufferOp> weightsOf;
  DenseMap<Value, int32_t> checkpointOf; ///< Stream index of checkpoints.
  SmallVector<Attribute> reference;
  int64_t flops = 0;
  int64_t estimatedCycles = 0;
};

ipu_tile::BufferOp FunctionLowering::createBuffer(Location loc, StringRef name,
                                                  Type elementType,
                                                  ArrayRef<int64_t> shape,
                                                  const BlockLayout &layout,
                                                  ::ipu::MemoryClass memoryClass) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(&program.getBody().front(), bufferInsertPoint);
  auto type = RankedTensorType::get(shape, elementType,
                                    ipu_tile::toLayoutAttr(context, layout));
  return ipu_tile::BufferOp::create(builder, loc, builder.getStringAttr(name), TypeAttr::get(type),
      builder.getStringAttr(::ipu::memoryClassName(memoryClass)), IntegerAttr());
}

ipu_tile::BufferOp FunctionLowering::bufferIn(
    Value value, const BlockLayout &layout, StringRef name,
    SmallVectorImpl<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> &copies,
    ::ipu::MemoryClass memoryClass) {
  ipu_tile::BufferOp current = bufferOf.lookup(value);
  auto type = cast<RankedTensorType>(value.getType());
  auto wanted = RankedTensorType::get(type.getShape(), type.getElementType(),
                                      ipu_tile::toLayoutAttr(context, layout));
  if (current.getTensorType() == wanted &&
      current.getMemoryClass() == StringRef(::ipu::memoryClassName(memoryClass)))
    return current;
  ipu_tile::BufferOp moved = createBuffer(value.getLoc(), name, type.getElementType(),
                                          type.getShape(), layout, memoryClass);
  copies.push_back({current, moved});
  return moved;
}

/// One vertex per block of `layout` (first replica), with the parameters
/// `paramsOf(i, j)` gives.
template <typename ParamsFn>
static void collectVertices(const BlockLayout &layout, SmallVectorImpl<int32_t> &tiles,
                            SmallVectorImpl<int64_t> &params, ParamsFn paramsOf) {
  for (uint32_t i = 0; i < layout.gridRows; ++i)
    for (uint32_t j = 0; j < layout.gridCols; ++j) {
      tiles.push_back(static_cast<int32_t>(layout.tileOf(i, j, 0)));
      paramsOf(i, j, params);
    }
}

ipu_tile::ComputeSetOp FunctionLowering::createComputeSet(
    Location loc, StringRef name, StringRef kernel,
    ArrayRef<ipu_tile::BufferOp> operands, ArrayRef<int32_t> tiles,
    ArrayRef<int64_t> params) {
  SmallVector<Attribute> refs;
  for (ipu_tile::BufferOp buffer : operands)
    refs.push_back(FlatSymbolRefAttr::get(buffer.getSymNameAttr()));
  return ipu_tile::ComputeSetOp::create(
      builder, loc, builder.getStringAttr(name), builder.getStringAttr(kernel),
      builder.getArrayAttr(refs), builder.getDenseI32ArrayAttr(tiles),
      builder.getDenseI64ArrayAttr(params));
}

void FunctionLowering::createPhase(
    Location loc, StringRef name,
    ArrayRef<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> copies) {
  ipu_exchange::SyncOp::create(builder, loc);
  auto phase = ipu_exchange::PhaseOp::create(builder, loc, name);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&phase.getBody().front());
    for (auto [from, to] : copies)
      ipu_exchange::CopyOp::create(builder, loc, from.getSymName(),
                                   to.getSymName());
  }
  // BSP: the compute that uses the phase's result starts after a sync too.
  ipu_exchange::SyncOp::create(builder, loc);
}

LogicalResult FunctionLowering::lowerMatmul(ipu_gemm::MatmulOp op, unsigned index) {
  ipu_gemm::PlanAttr plan = op.getPlanAttr();
  if (!plan)
    return op.emitError("matmul has no plan: run --ipu-plan-gemm first");
  const bool swapped = plan.getOrientation() == "swapped";
  Location loc = op.getLoc();
  ::ipu::GemmLayouts layouts = planLayouts(op, plan);
  std::string prefix = "mm" + std::to_string(index);
  const uint32_t inner = plan.getInner();
  auto outType = op.getResult().getType();

  SmallVector<std::pair<ipu_tile::BufferOp, ipu_tile::BufferOp>> copies;
  ipu_tile::BufferOp lhs = bufferIn(op.getLhs(), layouts.lhs, prefix + ".lhs", copies);
  ipu_tile::BufferOp rhs = weightsOf.lookup(op);
  if (swapped || rhs) {
    // Weights were streamed in this plan's layout, B^T when swapped; B^T
    // exists only so.
    auto wanted = RankedTensorType::get(
        {layouts.rhs.rows, layouts.rhs.cols},
        op.getRhs().getType().getElementType(),
        ipu_tile::toLayoutAttr(context, layouts.rhs));
    if (!rhs || rhs.getTensorType() != wanted)
      return op.emitError("plan ")
             << plan << " needs B stored transposed: B must be a function "
             << "argument that no other plan stores differently";
  } else {
    // An activation B is gathered into the plan's layout and weight class.
    rhs = bufferIn(op.getRhs(), layouts.rhs, prefix + ".rhs", copies,
                   *::ipu::parseMemoryClass(plan.getWeights().str()));
  }
  if (!copies.empty())
    createPhase(loc, prefix + ".gather", copies);

  // Local staging: the AMP reads a copy of the weights in interleaved memory.
  ipu_tile::BufferOp weights = rhs;
  if (plan.getStaging()) {
    auto rhsType = op.getRhs().getType();
    weights = createBuffer(loc, prefix + ".rhs.staged", rhsType.getElementType(),
                           rhsType.getShape(), layouts.rhs,
                           ::ipu::MemoryClass::Interleaved);
    // Replicas hold the same block: copy on every tile that has one.
    SmallVector<int32_t> allTiles;
    SmallVector<int64_t> allParams;
    for (uint32_t p = 0; p < layouts.rhs.gridRows; ++p)
      for (uint32_t j = 0; j < layouts.rhs.gridCols; ++j)
        for (uint32_t r = 0; r < layouts.rhs.replicas; ++r) {
          allTiles.push_back(static_cast<int32_t>(layouts.rhs.tileOf(p, j, r)));
          allParams.push_back(layouts.rhs.blockBytes(p, j));
        }
    createComputeSet(loc, prefix + ".stage", "copy", {rhs, weights}, allTiles,
                     allParams);
  }

  // The GEMM partials: one vertex per (i, j, p).
  const BlockLayout &partialLayout = inner > 1 ? layouts.partials : layouts.out;
  // The AMP accumulates in the plan's partials type, which the reduction
  // sums when inner > 1.
  Type partialsType = plan.getPartials() == "f16"
                          ? Type(builder.getF16Type())
                          : Type(builder.getF32Type());
  Type partialElement = inner > 1 ? partialsType : outType.getElementType();
  ipu_tile::BufferOp partial =
      createBuffer(loc, prefix + (inner > 1 ? ".psums" : ".out"), partialElement,
                   {partialLayout.rows, partialLayout.cols}, partialLayout,
                   ::ipu::MemoryClass::Standard);
  const int64_t inCode = static_cast<int64_t>(layouts.lhs.type);
  const int64_t accCode =
      static_cast<int64_t>(*ipu_tile::toElementType(partialsType));
  const int64_t partialCode = static_cast<int64_t>(partialLayout.type);
  // The class of the operand the AMP holds: B normally, A when swapped.
  const int64_t weightClass = static_cast<int64_t>(*::ipu::parseMemoryClass(
      (swapped ? lhs : weights).getMemoryClass().str()));
  SmallVector<int32_t> tiles;
  SmallVector<int64_t> params;
  const uint32_t rows = plan.getRows(), cols = plan.getCols();
  for (uint32_t p = 0; p < inner; ++p)
    for (uint32_t i = 0; i < rows; ++i)
      for (uint32_t j = 0; j < cols; ++j) {
        tiles.push_back(static_cast<int32_t>(layouts.lhs.tileOf(i, p, j)));
        params.append({layouts.lhs.blockRows(i), layouts.lhs.blockCols(p),
                       swapped ? layouts.rhs.blockRows(j) : layouts.rhs.blockCols(j),
                       inCode, accCode, partialCode, weightClass});
      }
  createComputeSet(loc, prefix + ".partials", swapped ? "gemm_t" : "gemm",
                   {lhs, weights, partial}, tiles, params);

  ipu_tile::BufferOp result = partial;
  if (inner > 1) {
    // Reduce: gather every partial of a (sub-)block onto its reducing tile,
    // then sum.
    ipu_tile::BufferOp gathered =
        createBuffer(loc, prefix + ".gathered", partialElement,
                     {layouts.gathered.rows, layouts.gathered.cols},
                     layouts.gathered, ::ipu::MemoryClass::Standard);
    createPhase(loc, prefix + ".reduce", {{partial, gathered}});
    result = createBuffer(loc, prefix + ".out", outType.getElementType(),
                          outType.getShape(), layouts.out,
                          ::ipu::MemoryClass::Standard);
    const int64_t outCode = static_cast<int64_t>(layouts.out.type);
    SmallVector<int32_t> reduceTiles;
    SmallVector<int64_t> reduceParams;
    collectVertices(layouts.out, reduceTiles, reduceParams,
                    [&](uint32_t i, uint32_t j, SmallVectorImpl<int64_t> &out) {
                      out.append({layouts.out.blockRows(i), layouts.out.blockCols(j),
                                  int64_t(inner), accCode, outCode});
                    });
    createComputeSet(loc, prefix + ".sum", "reduce", {gathered, result},
                     reduceTiles, reduceParams);
  }
  bufferOf[op.getResult()] = result;
  // A value the function does not return is streamed out as a checkpoint,
  // after the results, so that `ipu-run --check` checks every matmul on the
  // operands the device really used. Host streams cost no device cycles.
  bool returned = llvm::any_of(op->getUsers(), [](Operation *user) {
    return isa<func::ReturnOp>(user);
  });
  if (!returned) {
    int32_t index = static_cast<int32_t>(func.getNumResults() + checkpointOf.size());
    checkpointOf[op.getResult()] = index;
    ipu_exchange::StreamOutOp::create(builder, loc, result.getSymName(), index);
  }
  flops += 2 * op.getLhs().getType().getDimSize(0) *
           op.getLhs().getType().getDimSize(1) * outType.getDimSize(1);
  estimatedCycles += plan.getCycles();
  return success();
}

LogicalResult FunctionLowering::lowerArguments() {
  // A host stream per buffer; buffers created later go in before the first.
  struct Stream {
    ipu_tile::BufferOp buffer;
    bool weight, transpose;
  };
  SmallVector<std::pair<unsigned, Stream>> streams;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
        !ipu_tile::toElementType(type.getElementType()))
      return func.emitError("argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; only static 2-D tensors of f32, f16 or f8 are supported";
    // Weights (the rhs of a planned matmul) are resident in the layout each
    // plan wants, as the planner assumed: an argument that is B of several
    // matmuls is streamed once per layout. Any other use takes it as an
    // activation, arriving split by rows.
    bool activation = arg.use_empty();
    SmallVector<ipu_gemm::MatmulOp> weightUsers;
    for (Operation &op : func.getBody().front()) {
      for (OpOperand &use : op.getOpOperands()) {
        if (use.get() != arg)
          continue;
        auto matmul = dyn_cast<ipu_gemm::MatmulOp>(op);
        if (matmul && use.getOperandNumber() == 1 && matmul.getPlanAttr())
          weightUsers.push_back(matmul);
        else
          activation = true;
      }
    }
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    unsigned buffers = 0;
    auto nextName = [&] {
      return buffers++ ? name + "." + std::to_string(buffers - 1) : name;
    };
    if (activation) {
      BlockLayout layout = ::ipu::arrivalLayout(
          type.getDimSize(0), type.getDimSize(1),
          *ipu_tile::toElementType(type.getElementType()), target);
      bufferOf[arg] = createBuffer(arg.getLoc(), nextName(), type.getElementType(),
                                   type.getShape(), layout,
                                   ::ipu::MemoryClass::Standard);
      streams.push_back({arg.getArgNumber(), {bufferOf[arg], false, false}});
    }
    SmallVector<Stream> weights;
    for (ipu_gemm::MatmulOp user : weightUsers) {
      ipu_gemm::PlanAttr plan = user.getPlanAttr();
      BlockLayout layout = planLayouts(user, plan).rhs;
      ::ipu::MemoryClass memoryClass =
          *::ipu::parseMemoryClass(plan.getWeights().str());
      bool transpose = plan.getOrientation() == "swapped";
      // A swapped plan stores its weights transposed: the buffer's tensor
      // is the layout's [N x K].
      auto wanted = RankedTensorType::get(
          {layout.rows, layout.cols}, type.getElementType(),
          ipu_tile::toLayoutAttr(context, layout));
      auto same = llvm::find_if(weights, [&](Stream &stream) {
        return stream.buffer.getTensorType() == wanted &&
               stream.buffer.getMemoryClass() ==
                   StringRef(::ipu::memoryClassName(memoryClass)) &&
               stream.transpose == transpose;
      });
      if (same != weights.end()) {
        weightsOf[user] = same->buffer;
        continue;
      }
      ipu_tile::BufferOp buffer =
          createBuffer(user.getLoc(), nextName(), type.getElementType(),
                       {layout.rows, layout.cols}, layout, memoryClass);
      weightsOf[user] = buffer;
      weights.push_back({buffer, true, transpose});
      streams.push_back({arg.getArgNumber(), weights.back()});
    }
  }
  for (auto [index, stream] : streams) {
    auto op = ipu_exchange::StreamInOp::create(
        builder, func.getLoc(), stream.buffer.getSymName(), index);
    if (stream.weight)
      op.setWeight(true);
    if (stream.transpose)
      op.setTranspose(true);
    if (bufferInsertPoint == program.getBody().front().end())
      bufferInsertPoint = op->getIterator();
  }
  return success();
}

LogicalResult FunctionLowering::lower() {
  builder.setInsertionPoint(func);
  program = ipu_tile::ProgramOp::create(builder, func.getLoc(), func.getSymName());
  Block &body = program.getBody().front();
  builder.setInsertionPointToEnd(&body);
  bufferInsertPoint = body.end();

  if (failed(lowerArguments()))
    return failure();

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

  // The host reference recomputes every matmul in order: an operand is a
  // function argument (>= 0) or the value of an earlier reference op r
  // (-1 - r); each names the stream its value leaves by (a result, or a
  // checkpoint after them). `ipu-run --check` needs nothing else.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  DenseMap<Value, int32_t> referenceOf;
  for (BlockArgument arg : func.getArguments())
    referenceOf[arg] = static_cast<int32_t>(arg.getArgNumber());
  for (auto matmul : func.getBody().front().getOps<ipu_gemm::MatmulOp>()) {
    int32_t arguments[] = {referenceOf.lookup(matmul.getLhs()),
                           referenceOf.lookup(matmul.getRhs())};
    int32_t result = checkpointOf.lookup(matmul.getResult());
    for (auto [index, value] : llvm::enumerate(ret.getOperands()))
      if (value == matmul.getResult())
        result = static_cast<int32_t>(index);
    referenceOf[matmul.getResult()] = -1 - static_cast<int32_t>(reference.size());
    reference.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("op", builder.getStringAttr("matmul")),
         builder.getNamedAttr("arguments", builder.getDenseI32ArrayAttr(arguments)),
         builder.getNamedAttr("result", builder.getI32IntegerAttr(result)),
         builder.getNamedAttr("type", TypeAttr::get(matmul.getResult()
                                                        .getType()
                                                        .getElementType())),
         // What the device accumulated in: the check's tolerance follows it.
         builder.getNamedAttr("partials",
                              TypeAttr::get(matmul.getPlanAttr().getPartials() ==
                                                    "f16"
                                                ? Type(builder.getF16Type())
                                                : Type(builder.getF32Type()))),
         // Where it rounded them: each inner block of K apart.
         builder.getNamedAttr("inner", builder.getI32IntegerAttr(static_cast<int32_t>(
                                           matmul.getPlanAttr().getInner())))}));
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
      FunctionLowering lowering(func, *target);
      if (failed(lowering.lower()))
        return signalPassFailure();
      func.erase();
    }
  }
};
} // namespace
