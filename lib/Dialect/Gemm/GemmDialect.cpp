//===- GemmDialect.cpp - ipu_gemm dialect, attributes and verifiers -------===//

#include "IPU/Dialect/Gemm/IR/Gemm.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ipu_gemm;

#include "IPU/Dialect/Gemm/IR/GemmOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOpsAttributes.cpp.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOps.cpp.inc"

void IPUGemmDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "IPU/Dialect/Gemm/IR/GemmOpsAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "IPU/Dialect/Gemm/IR/GemmOps.cpp.inc"
      >();
  // Attached by registerTileLoweringModels (lib/Transforms).
  declarePromisedInterface<ipu_tile::TileLowerableOpInterface, MatmulOp>();
}

static LogicalResult checkPartitions(function_ref<InFlightDiagnostic()> emitError,
                                     StringRef field, int64_t value) {
  if (value < 1)
    return emitError() << field << " partitions must be at least 1, got "
                       << value;
  // Plans hold partitions in 32 bits.
  if (value > UINT32_MAX)
    return emitError() << field << " partitions = " << value
                       << " is out of range [1, 2^32)";
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rows, int64_t cols, int64_t inner,
                               Orientation orientation, ipu_tile::MemoryClass weights,
                               Reduction reduction, bool staging,
                               StringRef partials, int64_t cycles,
                               bool gathered, int64_t serial,
                               ipu_tile::MemoryClass homes, int64_t grain,
                               ipu_tile::MemoryClass psums) {
  if (grain != 1 && grain != 2 && grain != 4)
    return emitError() << "grain must be 1, 2 or 4 elements, got " << grain;
  if (failed(checkPartitions(emitError, "serial", serial)))
    return failure();
  if (serial > 1 && gathered)
    return emitError() << "a serial split keeps its weights resident: "
                          "gathered = true does not apply";
  if (failed(checkPartitions(emitError, "row", rows)) ||
      failed(checkPartitions(emitError, "column", cols)) ||
      failed(checkPartitions(emitError, "inner", inner)))
    return failure();
  if (inner == 1 && reduction != Reduction::complete)
    return emitError() << "a staged reduction needs inner > 1";
  if (inner == 1 && psums != ipu_tile::MemoryClass::standard)
    return emitError() << "psums = " << ipu_tile::stringifyMemoryClass(psums)
                       << " needs inner > 1: with inner = 1 the AMP writes the "
                          "result, and there are no partial sums";
  if (staging && orientation == Orientation::swapped)
    return emitError() << "staging copies B for the AMP, which holds A when "
                          "the orientation is swapped";
  if (staging && weights != ipu_tile::MemoryClass::standard)
    return emitError() << "staging copies standard weights to interleaved "
                          "memory; weights are '"
                       << ipu_tile::stringifyMemoryClass(weights) << "'";
  if (partials != "f32" && partials != "f16")
    return emitError() << "partials '" << partials
                       << "' is not \"f32\" or \"f16\"";
  if (cycles < 0)
    return emitError() << "estimated cycles must not be negative, got " << cycles;
  if (gathered && (weights != ipu_tile::MemoryClass::interleaved || staging))
    return emitError() << "gathered weights are gathered into interleaved "
                          "memory, without staging; weights are '"
                       << ipu_tile::stringifyMemoryClass(weights) << "'"
                       << (staging ? " with staging" : "");
  if (gathered && rows < 2)
    return emitError() << "gathered weights need rows > 1: with one row block "
                          "nothing is replicated";
  if (!gathered && homes != ipu_tile::MemoryClass::interleaved)
    return emitError() << "homes = "
                       << ipu_tile::stringifyMemoryClass(homes)
                       << " needs gathered = true: only gathered weights "
                          "stay in homes apart from their blocks";
  return success();
}

ipu::GemmPlan PlanAttr::toGemmPlan() const {
  // The verifier keeps every field in range.
  ipu::GemmPlan plan;
  plan.rows = static_cast<uint32_t>(getRows());
  plan.cols = static_cast<uint32_t>(getCols());
  plan.inner = static_cast<uint32_t>(getInner());
  plan.swapped = getOrientation() == Orientation::swapped;
  plan.weights = ipu_tile::toMachineClass(getWeights());
  plan.reduction = getReduction() == Reduction::staged ? ipu::Reduction::Staged
                                                      : ipu::Reduction::Complete;
  plan.localStaging = getStaging();
  plan.partials = getPartials() == "f16" ? ipu::ElementType::F16
                                         : ipu::ElementType::F32;
  plan.gatheredWeights = getGathered();
  plan.serial = static_cast<uint32_t>(getSerial());
  plan.homes = ipu_tile::toMachineClass(getHomes());
  plan.columnGrain = static_cast<uint32_t>(getGrain());
  plan.psums = ipu_tile::toMachineClass(getPsums());
  return plan;
}

PlanAttr PlanAttr::fromGemmPlan(MLIRContext *context, const ipu::GemmPlan &plan,
                                int64_t cycles) {
  return PlanAttr::get(
      context, plan.rows, plan.cols, plan.inner,
      plan.swapped ? Orientation::swapped : Orientation::normal,
      ipu_tile::toIRClass(plan.weights),
      plan.reduction == ipu::Reduction::Staged ? Reduction::staged
                                                 : Reduction::complete,
      plan.localStaging, ipu::elementTypeName(plan.partials), cycles,
      plan.gatheredWeights, plan.serial, ipu_tile::toIRClass(plan.homes),
      plan.columnGrain, ipu_tile::toIRClass(plan.psums));
}

LogicalResult ConstraintsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      std::optional<int64_t> rows,
                                      std::optional<int64_t> cols,
                                      std::optional<int64_t> inner,
                                      std::optional<Orientation>,
                                      std::optional<ipu_tile::MemoryClass>,
                                      std::optional<Reduction>,
                                      std::optional<bool> staging,
                                      StringRef partials,
                                      std::optional<bool> gathered,
                                      std::optional<int64_t> serial,
                                      std::optional<ipu_tile::MemoryClass> homes) {
  if ((serial && failed(checkPartitions(emitError, "serial", *serial))) ||
      (rows && failed(checkPartitions(emitError, "row", *rows))) ||
      (cols && failed(checkPartitions(emitError, "column", *cols))) ||
      (inner && failed(checkPartitions(emitError, "inner", *inner))))
    return failure();
  if (!partials.empty() && partials != "f32" && partials != "f16" &&
      partials != "any")
    return emitError() << "partials '" << partials
                       << "' is not \"f32\", \"f16\" or \"any\"";
  if (homes && gathered && !*gathered)
    return emitError() << "homes = " << ipu_tile::stringifyMemoryClass(*homes)
                       << " needs gathered weights; gathered = false";
  return success();
}

Type MatmulOp::getAccumulatorType() {
  if (std::optional<Type> acc = getAccType())
    return *acc;
  return Float32Type::get(getContext());
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t dim : dims)
    result *= dim;
  return result;
}

int64_t MatmulOp::getBatches() {
  if (!isBatched())
    return 1;
  return product(getResult().getType().getShape().drop_back(2));
}

int64_t MatmulOp::getGemmM() {
  ArrayRef<int64_t> shape = getResult().getType().getShape();
  int64_t rows = shape[shape.size() - 2];
  return isBatched() ? rows : rows * product(shape.drop_back(2));
}

int64_t MatmulOp::getGemmK() {
  ArrayRef<int64_t> shape = getLhs().getType().getShape();
  return shape[shape.size() - (getTransposeLhs() ? 2 : 1)];
}

int64_t MatmulOp::getGemmN() { return getResult().getType().getShape().back(); }

LogicalResult MatmulOp::verify() {
  auto lhsType = getLhs().getType();
  auto rhsType = getRhs().getType();
  auto resultType = getResult().getType();
  const int64_t rank = lhsType.getRank();
  if (rank < 2 || resultType.getRank() != rank ||
      (rhsType.getRank() != 2 && rhsType.getRank() != rank))
    return emitOpError("ranks must be A: r >= 2, B: 2 or r, C: r; got ")
           << lhsType.getRank() << ", " << rhsType.getRank() << " and "
           << resultType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpError("operand element types differ: ")
           << lhsType.getElementType() << " and " << rhsType.getElementType();
  if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape() ||
      !resultType.hasStaticShape())
    return emitOpError("shapes must be static");
  ArrayRef<int64_t> leading = lhsType.getShape().drop_back(2);
  if (resultType.getShape().drop_back(2) != leading ||
      (isBatched() && rhsType.getShape().drop_back(2) != leading))
    return emitOpError("leading (batch) dims of A, B and C differ: ")
           << lhsType << ", " << rhsType << " and " << resultType;
  // Leading dims fold into M only when A's rows are rows of C.
  if (getTransposeLhs() && rank > 2 && !isBatched())
    return emitOpError("a transposed A with leading dims needs a batched B");
  auto dim = [](RankedTensorType type, unsigned fromEnd) {
    return type.getDimSize(type.getRank() - 1 - fromEnd);
  };
  int64_t m = dim(lhsType, getTransposeLhs() ? 0 : 1);
  int64_t k = dim(lhsType, getTransposeLhs() ? 1 : 0);
  int64_t rhsK = dim(rhsType, getTransposeRhs() ? 0 : 1);
  int64_t n = dim(rhsType, getTransposeRhs() ? 1 : 0);
  if (rhsK != k)
    return emitOpError("inner dimensions differ: A has K = ")
           << k << ", B has K = " << rhsK;
  if (dim(resultType, 1) != m || dim(resultType, 0) != n)
    return emitOpError("result shape must end in ")
           << m << "x" << n << ", got " << resultType;
  m = getGemmM();
  Type acc = getAccumulatorType();
  if (!acc.isF32() && !acc.isF16())
    return emitOpError("accumulation type must be f32 or f16, got ") << acc;
  if (IntegerAttr scaleAttr = getInputScaleAttr()) {
    const int64_t scale = scaleAttr.getInt();
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(lhsType.getElementType()))
      return emitOpError("input_scale applies to f8 operands only, got ")
             << lhsType.getElementType();
    if (scale < ipu::kF8InputScaleMin || scale > ipu::kF8InputScaleMax)
      return emitOpError("input_scale ")
             << scale << " is outside the AMP's [" << ipu::kF8InputScaleMin << ", "
             << ipu::kF8InputScaleMax << "]";
  }
  if (PlanAttr plan = getPlanAttr()) {
    if (plan.getRows() > m)
      return emitOpError("plan splits ")
             << m << " rows into " << plan.getRows() << " parts";
    if (plan.getCols() > n)
      return emitOpError("plan splits ")
             << n << " columns into " << plan.getCols() << " parts";
    if (plan.getPartials() == "f32" && acc.isF16())
      return emitOpError("plan accumulates in f32 partials but the op asks "
                         "for f16 accumulation");
    if (plan.getInner() > k)
      return emitOpError("plan splits the inner dimension ")
             << k << " into " << plan.getInner() << " parts";
    if (std::optional<ipu::TargetModel> target =
            ipu_tile::lookupTarget(getOperation())) {
      int64_t tiles =
          plan.getRows() * plan.getCols() * plan.getInner() * getBatches();
      if (tiles > target->tiles) {
        InFlightDiagnostic diag = emitOpError("plan needs ") << tiles << " tiles";
        if (getBatches() > 1)
          diag << " (" << getBatches() << " batches side by side)";
        return diag << ", target '" << target->name << "' has " << target->tiles;
      }
    }
  }
  return success();
}
