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

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::ipu_tile;
using ::ipu::BlockLayout;

namespace {

::ipu::GemmProblem toGemmProblem(ipu_gemm::MatmulOp op) {
  ::ipu::GemmProblem problem;
  problem.m = op.getLhs().getType().getDimSize(0);
  problem.k = op.getLhs().getType().getDimSize(1);
  problem.n = op.getRhs().getType().getDimSize(1);
  problem.inType = *toElementType(op.getLhs().getType().getElementType());
  problem.accType = *toElementType(op.getAccumulatorType());
  problem.outType = *toElementType(op.getResult().getType().getElementType());
  return problem;
}

::ipu::GemmLayouts planLayouts(ipu_gemm::MatmulOp op, ipu_gemm::PlanAttr plan) {
  return ::ipu::gemmLayouts(toGemmProblem(op), plan.toGemmPlan());
}

/// One vertex per block of `layout` (first replica), with the parameters
/// `paramsOf(i, j)` gives.
template <typename ParamsFn>
void collectVertices(const BlockLayout &layout, SmallVectorImpl<int32_t> &tiles,
                     SmallVectorImpl<int64_t> &params, ParamsFn paramsOf) {
  for (uint32_t i = 0; i < layout.gridRows; ++i)
    for (uint32_t j = 0; j < layout.gridCols; ++j) {
      tiles.push_back(static_cast<int32_t>(layout.tileOf(i, j, 0)));
      paramsOf(i, j, params);
    }
}

struct MatmulLowering
    : public TileLowerableOpInterface::ExternalModel<MatmulLowering,
                                                     ipu_gemm::MatmulOp> {
  StringRef getTileNamePrefix(Operation *) const { return "mm"; }

  /// The weights B of a planned matmul are resident in its plan's layout
  /// and class, B^T when swapped: what the planner took for granted.
  bool getResidentLayout(Operation *op, unsigned operand,
                         ResidentLayout &resident) const {
    auto matmul = cast<ipu_gemm::MatmulOp>(op);
    ipu_gemm::PlanAttr plan = matmul.getPlanAttr();
    if (operand != 1 || !plan)
      return false;
    resident.layout = planLayouts(matmul, plan).rhs;
    resident.memoryClass = *::ipu::parseMemoryClass(plan.getWeights().str());
    resident.transpose = plan.getOrientation() == "swapped";
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
  const bool swapped = plan.getOrientation() == "swapped";
  Location loc = op.getLoc();
  ::ipu::GemmLayouts layouts = planLayouts(op, plan);
  std::string prefix = name.str();
  const uint32_t inner = plan.getInner();
  auto outType = op.getResult().getType();

  SmallVector<BufferCopy> copies;
  BufferOp lhs = program.bufferIn(op.getLhs(), layouts.lhs, prefix + ".lhs", copies);
  BufferOp rhs = program.lookupResident(op, 1);
  if (swapped || rhs) {
    // Weights were streamed in this plan's layout, B^T when swapped; B^T
    // exists only so.
    auto wanted = RankedTensorType::get(
        {layouts.rhs.rows, layouts.rhs.cols},
        op.getRhs().getType().getElementType(),
        toLayoutAttr(program.getContext(), layouts.rhs));
    if (!rhs || rhs.getTensorType() != wanted)
      return op.emitError("plan ")
             << plan << " needs B stored transposed: B must be a function "
             << "argument that no other plan stores differently";
  } else {
    // An activation B is gathered into the plan's layout and weight class.
    rhs = program.bufferIn(op.getRhs(), layouts.rhs, prefix + ".rhs", copies,
                           *::ipu::parseMemoryClass(plan.getWeights().str()));
  }
  if (!copies.empty())
    program.createPhase(loc, prefix + ".gather", copies);

  // Local staging: the AMP reads a copy of the weights in interleaved memory.
  BufferOp weights = rhs;
  if (plan.getStaging()) {
    auto rhsType = op.getRhs().getType();
    weights = program.createBuffer(loc, prefix + ".rhs.staged",
                                   rhsType.getElementType(), rhsType.getShape(),
                                   layouts.rhs, ::ipu::MemoryClass::Interleaved);
    // Replicas hold the same block: copy on every tile that has one.
    SmallVector<int32_t> allTiles;
    SmallVector<int64_t> allParams;
    for (uint32_t p = 0; p < layouts.rhs.gridRows; ++p)
      for (uint32_t j = 0; j < layouts.rhs.gridCols; ++j)
        for (uint32_t r = 0; r < layouts.rhs.replicas; ++r) {
          allTiles.push_back(static_cast<int32_t>(layouts.rhs.tileOf(p, j, r)));
          allParams.push_back(layouts.rhs.blockBytes(p, j));
        }
    program.createComputeSet(loc, prefix + ".stage", "copy", {rhs, weights},
                             allTiles, allParams);
  }

  // The GEMM partials: one vertex per (i, j, p).
  const BlockLayout &partialLayout = inner > 1 ? layouts.partials : layouts.out;
  // The AMP accumulates in the plan's partials type, which the reduction
  // sums when inner > 1.
  Type partialsType = plan.getPartials() == "f16" ? Type(builder.getF16Type())
                                                  : Type(builder.getF32Type());
  Type partialElement = inner > 1 ? partialsType : outType.getElementType();
  BufferOp partial = program.createBuffer(
      loc, prefix + (inner > 1 ? ".psums" : ".out"), partialElement,
      {partialLayout.rows, partialLayout.cols}, partialLayout,
      ::ipu::MemoryClass::Standard);
  const int64_t inCode = static_cast<int64_t>(layouts.lhs.type);
  const int64_t accCode = static_cast<int64_t>(*toElementType(partialsType));
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
  program.createComputeSet(loc, prefix + ".partials", swapped ? "gemm_t" : "gemm",
                           {lhs, weights, partial}, tiles, params);

  BufferOp result = partial;
  if (inner > 1) {
    // Reduce: gather every partial of a (sub-)block onto its reducing tile,
    // then sum.
    BufferOp gathered = program.createBuffer(
        loc, prefix + ".gathered", partialElement,
        {layouts.gathered.rows, layouts.gathered.cols}, layouts.gathered,
        ::ipu::MemoryClass::Standard);
    program.createPhase(loc, prefix + ".reduce", {{partial, gathered}});
    result = program.createBuffer(loc, prefix + ".out", outType.getElementType(),
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
    program.createComputeSet(loc, prefix + ".sum", "reduce", {gathered, result},
                             reduceTiles, reduceParams);
  }
  program.setResultBuffer(op.getResult(), result);
  program.addReference(
      "matmul", {op.getLhs(), op.getRhs()}, op.getResult(),
      {builder.getNamedAttr("type", TypeAttr::get(outType.getElementType())),
       // What the device accumulated in: the check's tolerance follows it.
       builder.getNamedAttr("partials", TypeAttr::get(partialsType)),
       // Where it rounded them: each inner block of K apart.
       builder.getNamedAttr("inner",
                            builder.getI32IntegerAttr(static_cast<int32_t>(inner)))});
  program.addFlops(2 * op.getLhs().getType().getDimSize(0) *
                   op.getLhs().getType().getDimSize(1) * outType.getDimSize(1));
  program.addEstimatedCycles(plan.getCycles());
  return success();
}

} // namespace

void mlir::ipu_tile::registerTileLoweringModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ipu_gemm::IPUGemmDialect *) {
    ipu_gemm::MatmulOp::attachInterface<MatmulLowering>(*context);
  });
}
