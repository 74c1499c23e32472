//===- MatmulLowering.cpp - ipu_gemm.matmul as tile program steps ---------===//
//
// A planned matmul lowers to: a phase gathering its operands into the
// layouts of its plan, an optional staging copy of the weights, a compute
// set of GEMM partials (one vertex per (i, j, p)) and, when K is split, a
// phase gathering the partials and a compute set summing them.
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Gemm/IR/Gemm.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Transforms/TileLowering.h"

#include "IPU/Dialect/Exchange/IR/Exchange.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ipu::BlockLayout;

namespace {

ipu::GemmProblem toGemmProblem(ipu_gemm::MatmulOp op) {
  ipu::GemmProblem problem;
  problem.m = op.getGemmM();
  problem.k = op.getGemmK();
  problem.n = op.getGemmN();
  problem.batches = op.getBatches();
  problem.rhsTransposed = op.getTransposeRhs();
  describeRhs(op.getRhs(), problem);
  problem.lhsTransposed = op.getTransposeLhs() && !isFunctionArgument(op.getLhs());
  problem.inType = *toElementType(op.getLhs().getType().getElementType());
  problem.accType = *toElementType(op.getAccumulatorType());
  problem.outType = *toElementType(op.getResult().getType().getElementType());
  problem.wordBytes = exchangeWordBytes(op);
  return problem;
}

/// Batch b of a batched matmul runs on the tiles of batch 0 shifted by
/// b * tilesPerBatch (the tiles the planner gave one batch).
uint32_t tilesPerBatch(ipu_gemm::MatmulOp op, const ipu::TargetModel &target) {
  return static_cast<uint32_t>(target.tiles / op.getBatches());
}

ipu::GemmLayouts planLayouts(ipu_gemm::MatmulOp op, ipu_gemm::PlanAttr plan,
                               const ipu::TargetModel &target) {
  // A serial split's steps work on one chunk (and it has no batches).
  if (plan.getSerial() > 1)
    return ipu::serialGemmLayouts(toGemmProblem(op), plan.toGemmPlan(), target).chunk;
  return ipu::batchGemmLayouts(
      ipu::gemmLayouts(toGemmProblem(op), plan.toGemmPlan()), op.getBatches(),
      tilesPerBatch(op, target));
}

ipu::SerialGemmLayouts serialLayouts(ipu_gemm::MatmulOp op, ipu_gemm::PlanAttr plan,
                                       const ipu::TargetModel &target) {
  return ipu::serialGemmLayouts(toGemmProblem(op), plan.toGemmPlan(), target);
}

/// One vertex per block of `layout` (first replica).
SmallVector<int32_t> blockTiles(const BlockLayout &layout) {
  SmallVector<int32_t> tiles;
  for (uint32_t b = 0; b < layout.gridBatches; ++b)
    for (uint32_t i = 0; i < layout.gridRows; ++i)
      for (uint32_t j = 0; j < layout.gridCols; ++j)
        tiles.push_back(static_cast<int32_t>(layout.tileOf(b, i, j, 0)));
  return tiles;
}

struct MatmulLowering
    : public TileLowerableOpInterface::ExternalModel<MatmulLowering,
                                                     ipu_gemm::MatmulOp> {
  StringRef getTileNamePrefix(Operation *) const { return "mm"; }
  StringRef getOperandName(Operation *, unsigned operand) const {
    return operand == 0 ? "lhs" : "rhs";
  }

  void noteOperandTransposed(Operation *op, unsigned operand) const {
    auto matmul = cast<ipu_gemm::MatmulOp>(op);
    if (operand == 0)
      matmul.setTransposeLhs(!matmul.getTransposeLhs());
    else
      matmul.setTransposeRhs(!matmul.getTransposeRhs());
  }

  /// A in the plan's A layout (an A^T activation in its transpose, each
  /// tile holding the transpose of its A block); B in its B layout (B^T
  /// when swapped) and weight class.
  bool getOperandLayout(Operation *op, unsigned operand,
                        OperandLayout &layout) const {
    auto matmul = cast<ipu_gemm::MatmulOp>(op);
    ipu_gemm::PlanAttr plan = matmul.getPlanAttr();
    std::optional<ipu::TargetModel> target = lookupTarget(op);
    if (!plan || !target)
      return false;
    // No layout of B as given is the B^T the plan wants, or the other way:
    // the lowering says so.
    if (operand == 1 &&
        (plan.getOrientation() == ipu_gemm::Orientation::swapped) !=
            matmul.getTransposeRhs())
      return false;
    ipu::GemmLayouts layouts = planLayouts(matmul, plan, *target);
    layout.layout = operand == 0 ? layouts.lhs : layouts.rhs;
    // A serial split slices its chunks of A from where A lives whole.
    if (operand == 0 && plan.getSerial() > 1)
      layout.layout = serialLayouts(matmul, plan, *target).lhsHome;
    if (operand == 0 && matmul.getTransposeLhs())
      layout.layout = ipu::transposedLayout(layouts.lhs);
    layout.memoryClass = operand == 0
                             ? ipu::MemoryClass::Standard
                             : toMachineClass(plan.getWeights());
    return true;
  }

  bool getResultLayout(Operation *op, unsigned, BlockLayout &layout) const {
    auto matmul = cast<ipu_gemm::MatmulOp>(op);
    std::optional<ipu::TargetModel> target = lookupTarget(op);
    if (!matmul.getPlanAttr() || !target)
      return false;
    layout = matmul.getPlanAttr().getSerial() > 1
                 ? serialLayouts(matmul, matmul.getPlanAttr(), *target).outHome
                 : planLayouts(matmul, matmul.getPlanAttr(), *target).out;
    return true;
  }

  bool keepsLeadingDims(Operation *op, unsigned) const {
    return cast<ipu_gemm::MatmulOp>(op).isBatched();
  }

  /// The weights B of a planned matmul are resident in its plan's layout
  /// and class, B^T when swapped: what the planner took for granted;
  /// gathered weights in their home, each block once (the relayout into
  /// the plan's layout gathers them before the GEMM). A
  /// transposed argument A arrives transposed by its host stream, in the
  /// layout it would arrive in as A.
  bool getResidentLayout(Operation *op, unsigned operand,
                         OperandLayout &resident) const {
    auto matmul = cast<ipu_gemm::MatmulOp>(op);
    ipu_gemm::PlanAttr plan = matmul.getPlanAttr();
    std::optional<ipu::TargetModel> target = lookupTarget(op);
    if (!plan || !target)
      return false;
    if (operand == 0 && matmul.getTransposeLhs()) {
      resident.layout = ipu::arrivalLayout(
          matmul.getGemmM(), matmul.getGemmK(),
          *toElementType(matmul.getLhs().getType().getElementType()), *target,
          matmul.getBatches());
      resident.transpose = true;
      resident.weight = false;
      return true;
    }
    // A serial split's A streams straight into its chunks.
    if (operand == 0 && plan.getSerial() > 1) {
      resident.layout = serialLayouts(matmul, plan, *target).lhsHome;
      resident.transpose = false;
      resident.weight = false;
      return true;
    }
    if (operand != 1)
      return false;
    resident.layout = planLayouts(matmul, plan, *target).rhs;
    if (plan.getGathered())
      resident.layout = ipu::gatheredWeightHome(resident.layout);
    resident.memoryClass = plan.getGathered() ? toMachineClass(plan.getHomes())
                                              : toMachineClass(plan.getWeights());
    // The stream transposes when the plan's operand is not B as given.
    resident.transpose =
        (plan.getOrientation() == ipu_gemm::Orientation::swapped) !=
        matmul.getTransposeRhs();
    return true;
  }

  LogicalResult lowerToTile(Operation *operation, ProgramBuilder &program,
                            StringRef name) const;
};

LogicalResult MatmulLowering::lowerToTile(Operation *operation,
                                          ProgramBuilder &program,
                                          StringRef name) const {
  auto op = cast<ipu_gemm::MatmulOp>(operation);
  ipu_gemm::PlanAttr plan = op.getPlanAttr();
  if (!plan)
    return op.emitError("matmul has no plan: run --ipu-plan-gemm first");
  OpBuilder &builder = program.getBuilder();
  const bool swapped = plan.getOrientation() == ipu_gemm::Orientation::swapped;
  Location loc = op.getLoc();
  const ipu::TargetModel &target = program.getTarget();
  ipu::GemmLayouts layouts = planLayouts(op, plan, target);
  std::string prefix = name.str();
  const uint32_t inner = plan.getInner();
  const int64_t batches = op.getBatches();
  auto outType = op.getResult().getType();

  // --ipu-assign-layouts put every operand where the plan needs it.
  auto operandBuffer = [&](unsigned operand) -> FailureOr<BufferOp> {
    OperandLayout wanted;
    getOperandLayout(op, operand, wanted);
    return program.operandBuffer(op, operand, wanted);
  };
  if (swapped != op.getTransposeRhs())
    return op.emitError("plan ")
           << plan << " needs B" << (swapped ? "^T" : "")
           << ", and B is an activation given "
           << (op.getTransposeRhs() ? "transposed" : "as B")
           << ": no kernel transposes it (the planner never picks this)";
  FailureOr<BufferOp> lhsBuffer = operandBuffer(0), rhsBuffer = operandBuffer(1);
  if (failed(lhsBuffer) || failed(rhsBuffer))
    return failure();
  if (op.getTransposeLhs()) {
    // Each tile holds the transpose of its A block (and of every replica):
    // transpose it in place on the tile.
    auto lhsType = op.getLhs().getType();
    BufferOp transposed = program.createBuffer(
        loc, prefix + ".lhs.transposed", lhsType.getElementType(),
        bufferShape(lhsType, layouts.lhs), layouts.lhs,
        ipu::MemoryClass::Standard);
    std::vector<uint32_t> tileList = layouts.lhs.tileList();
    program.createComputeSet(loc, prefix + ".transpose", "transpose",
                             {*lhsBuffer, transposed},
                             SmallVector<int32_t>(tileList.begin(), tileList.end()));
    lhsBuffer = transposed;
  }
  BufferOp lhs = *lhsBuffer, rhs = *rhsBuffer;

  // A serial split: the steps below run in a loop, each iteration on one
  // chunk of A's rows, sliced out of A (a copy at a dynamic offset) and
  // gathered into the plan's layout; the chunk's result is copied into C.
  const int64_t serial = plan.getSerial();
  ipu_tile::LoopOp loop;
  std::optional<OpBuilder::InsertionGuard> inLoop;
  BufferOp resultHome;
  if (serial > 1) {
    ipu::SerialGemmLayouts homes = serialLayouts(op, plan, target);
    Type lhsElement = op.getLhs().getType().getElementType();
    BufferOp chunk = program.createBuffer(
        loc, prefix + ".lhs.chunk", lhsElement,
        {homes.lhsChunk.rows, homes.lhsChunk.cols}, homes.lhsChunk,
        ipu::MemoryClass::Standard);
    resultHome = program.createBuffer(
        loc, prefix + ".out.home", outType.getElementType(),
        {serial, homes.outHome.rows, homes.outHome.cols}, homes.outHome,
        ipu::MemoryClass::Standard);
    loop = ipu_tile::LoopOp::create(builder, loc, prefix + ".serial", serial);
    inLoop.emplace(builder);
    builder.setInsertionPointToStart(&loop.getBody().front());
    ipu_exchange::SyncOp::create(builder, loc);
    ComputeSetOp slice =
        program.createCopy(loc, prefix + ".slice", lhs, chunk, homes.lhsChunk);
    slice.setSerialOperandsAttr(builder.getDenseI32ArrayAttr({0}));
    lhs = chunk;
    // The chunk arrives where the plan wants it when the plan's A blocks
    // are its arrival blocks.
    if (toLayoutAttr(op.getContext(), layouts.lhs) !=
        toLayoutAttr(op.getContext(), homes.lhsChunk)) {
      // (".lhs" names the relayout of the operand into its home.)
      lhs = program.createBuffer(loc, prefix + ".lhs.gathered", lhsElement,
                                 {layouts.lhs.rows, layouts.lhs.cols},
                                 layouts.lhs, ipu::MemoryClass::Standard);
      program.createPhase(loc, prefix + ".chunk.gather", {{chunk, lhs}});
    }
  }

  // Local staging: the AMP reads a copy of the weights in interleaved memory.
  BufferOp weights = rhs;
  if (plan.getStaging()) {
    weights = program.createBuffer(loc, prefix + ".rhs.staged",
                                   rhs.getTensorType().getElementType(),
                                   rhs.getTensorType().getShape(), layouts.rhs,
                                   ipu::MemoryClass::Interleaved);
    // Replicas hold the same block: copy on every tile that has one.
    program.createCopy(loc, prefix + ".stage", rhs, weights, layouts.rhs);
  }

  // The GEMM partials: one vertex per (i, j, p).
  const BlockLayout &partialLayout = inner > 1 ? layouts.partials : layouts.out;
  // The AMP accumulates in the plan's partials type, which the reduction
  // sums when inner > 1.
  Type partialsType = plan.getPartials() == "f16" ? Type(builder.getF16Type())
                                                  : Type(builder.getF32Type());
  Type partialElement = inner > 1 ? partialsType : outType.getElementType();
  // I32Attr's getter is unsigned: the exponent is read signed.
  std::optional<int32_t> inputScale;
  if (IntegerAttr scale = op.getInputScaleAttr())
    inputScale = static_cast<int32_t>(scale.getInt());
  // Partial sums in the plan's class (psums); a result of inner = 1 in
  // standard memory, where its readers expect it.
  const ipu::MemoryClass psumsClass =
      inner > 1 ? toMachineClass(plan.getPsums()) : ipu::MemoryClass::Standard;
  BufferOp partial = program.createBuffer(
      loc, prefix + (inner > 1 ? ".psums" : ".out"), partialElement,
      bufferShape(outType, partialLayout), partialLayout, psumsClass);
  // The vertex shapes, types and the AMP operand's class follow from the
  // blocks on each tile.
  SmallVector<int32_t> tiles;
  const uint32_t rows = plan.getRows(), cols = plan.getCols();
  for (int64_t b = 0; b < batches; ++b)
    for (uint32_t p = 0; p < inner; ++p)
      for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j)
          tiles.push_back(static_cast<int32_t>(layouts.lhs.tileOf(b, i, p, j)));
  program.createComputeSet(loc, prefix + ".partials", swapped ? "gemm_t" : "gemm",
                           {lhs, weights, partial}, tiles, partialsType, inputScale);

  BufferOp result = partial;
  if (inner > 1) {
    // Reduce: gather every partial of a (sub-)block onto its reducing tile,
    // then sum.
    BufferOp gathered = program.createBuffer(
        loc, prefix + ".gathered", partialElement,
        bufferShape(outType, layouts.gathered), layouts.gathered, psumsClass);
    program.createPhase(loc, prefix + ".reduce", {{partial, gathered}});
    result = program.createBuffer(loc, prefix + ".out", outType.getElementType(),
                                  bufferShape(outType, layouts.out), layouts.out,
                                  ipu::MemoryClass::Standard);
    program.createComputeSet(loc, prefix + ".sum", "reduce", {gathered, result},
                             blockTiles(layouts.out));
  }
  if (serial > 1) {
    ComputeSetOp update =
        program.createCopy(loc, prefix + ".update", result, resultHome, layouts.out);
    update.setSerialOperandsAttr(builder.getDenseI32ArrayAttr({1}));
    inLoop.reset();
    result = resultHome;
  }
  program.setResultBuffer(op.getResult(), result, op.getLhs());
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("type", TypeAttr::get(outType.getElementType())),
      // What the device accumulated in: the check's tolerance follows it.
      builder.getNamedAttr("partials", TypeAttr::get(partialsType)),
      // Where it rounded them: each inner block of K apart.
      builder.getNamedAttr("inner",
                           builder.getI32IntegerAttr(static_cast<int32_t>(inner)))};
  // The AMP's input scale: every product times 2^e.
  if (inputScale)
    fields.push_back(builder.getNamedAttr("input_scale", builder.getI32IntegerAttr(*inputScale)));
  // The reference reads the operands as the host holds them: transposed
  // when the op reads them so and the host did not transpose them, or the
  // other way round.
  if (op.getTransposeLhs() != program.isTransposedFromHost(op.getLhs()))
    fields.push_back(builder.getNamedAttr("transpose_lhs", builder.getBoolAttr(true)));
  if (op.getTransposeRhs() != program.isTransposedFromHost(op.getRhs()))
    fields.push_back(builder.getNamedAttr("transpose_rhs", builder.getBoolAttr(true)));
  program.addReference("matmul", {op.getLhs(), op.getRhs()}, op.getResult(), fields);
  program.addFlops(2 * batches * op.getGemmM() * op.getGemmK() * op.getGemmN());
  program.addEstimatedCycles(plan.getCycles());
  if (auto finalists = op->getAttrOfType<ArrayAttr>("ipu_gemm.finalists"))
    program.addPlanFinalists(name, finalists);
  return success();
}

} // namespace

void mlir::ipu_tile::describeRhs(Value rhs, ipu::GemmProblem &problem) {
  problem.rhsIsWeight = isStreamedArgument(rhs);
  // A weight expanded (f8 to f16) where it stays is a weight too.
  if (Value stored = expandedWeight(rhs)) {
    problem.rhsIsWeight = true;
    problem.expandedFrom =
        toElementType(cast<RankedTensorType>(stored.getType()).getElementType());
  }
}

void mlir::ipu_tile::registerTileLoweringModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ipu_gemm::IPUGemmDialect *) {
    ipu_gemm::MatmulOp::attachInterface<MatmulLowering>(*context);
  });
  registerElementwiseLoweringModel(registry);
  registerPermuteLoweringModel(registry);
}
