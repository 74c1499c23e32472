//===- GemmDialect.cpp - ipu_gemm dialect, attributes and verifiers -------===//

#include "IPU/Dialect/Gemm/IR/Gemm.h"
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
}

static LogicalResult checkOrientation(function_ref<InFlightDiagnostic()> emitError,
                                      StringRef orientation) {
  if (orientation == "normal" || orientation == "swapped")
    return success();
  return emitError() << "orientation '" << orientation
                     << "' is not \"normal\" or \"swapped\"";
}

static LogicalResult checkWeights(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef weights) {
  if (::ipu::parseMemoryClass(weights.str()))
    return success();
  return emitError() << "weight memory class '" << weights
                     << "' is not \"standard\" or \"interleaved\"";
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

static LogicalResult checkReduction(function_ref<InFlightDiagnostic()> emitError,
                                    StringRef reduction) {
  if (::ipu::parseReduction(reduction.str()))
    return success();
  return emitError() << "reduction '" << reduction
                     << "' is not \"complete\" or \"staged\"";
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rows, int64_t cols, int64_t inner,
                               StringRef orientation, StringRef weights,
                               StringRef reduction, bool staging,
                               StringRef partials, int64_t cycles) {
  if (failed(checkPartitions(emitError, "row", rows)) ||
      failed(checkPartitions(emitError, "column", cols)) ||
      failed(checkPartitions(emitError, "inner", inner)) ||
      failed(checkOrientation(emitError, orientation)) ||
      failed(checkWeights(emitError, weights)) ||
      failed(checkReduction(emitError, reduction)))
    return failure();
  if (inner == 1 && reduction != "complete")
    return emitError() << "a staged reduction needs inner > 1";
  if (staging && orientation == "swapped")
    return emitError() << "staging copies B for the AMP, which holds A when "
                          "the orientation is swapped";
  if (staging && weights != "standard")
    return emitError() << "staging copies standard weights to interleaved "
                          "memory; weights are '"
                       << weights << "'";
  if (partials != "f32" && partials != "f16")
    return emitError() << "partials '" << partials
                       << "' is not \"f32\" or \"f16\"";
  if (cycles < 0)
    return emitError() << "estimated cycles must not be negative, got " << cycles;
  return success();
}

::ipu::GemmPlan PlanAttr::toGemmPlan() const {
  // The verifier keeps every field in range.
  ::ipu::GemmPlan plan;
  plan.rows = static_cast<uint32_t>(getRows());
  plan.cols = static_cast<uint32_t>(getCols());
  plan.inner = static_cast<uint32_t>(getInner());
  plan.swapped = getOrientation() == "swapped";
  plan.weights = *::ipu::parseMemoryClass(getWeights().str());
  plan.reduction = *::ipu::parseReduction(getReduction().str());
  plan.localStaging = getStaging();
  plan.partials = getPartials() == "f16" ? ::ipu::ElementType::F16
                                         : ::ipu::ElementType::F32;
  return plan;
}

LogicalResult ConstraintsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      std::optional<int64_t> rows,
                                      std::optional<int64_t> cols,
                                      std::optional<int64_t> inner,
                                      StringRef orientation, StringRef weights,
                                      StringRef reduction,
                                      std::optional<bool> staging,
                                      StringRef partials) {
  if ((rows && failed(checkPartitions(emitError, "row", *rows))) ||
      (cols && failed(checkPartitions(emitError, "column", *cols))) ||
      (inner && failed(checkPartitions(emitError, "inner", *inner))))
    return failure();
  if (!orientation.empty() && failed(checkOrientation(emitError, orientation)))
    return failure();
  if (!weights.empty() && failed(checkWeights(emitError, weights)))
    return failure();
  if (!reduction.empty() && failed(checkReduction(emitError, reduction)))
    return failure();
  if (!partials.empty() && partials != "f32" && partials != "f16" &&
      partials != "any")
    return emitError() << "partials '" << partials
                       << "' is not \"f32\", \"f16\" or \"any\"";
  return success();
}

Type MatmulOp::getAccumulatorType() {
  if (std::optional<Type> acc = getAccType())
    return *acc;
  return Float32Type::get(getContext());
}

LogicalResult MatmulOp::verify() {
  auto lhsType = getLhs().getType();
  auto rhsType = getRhs().getType();
  auto resultType = getResult().getType();
  if (lhsType.getRank() != 2 || rhsType.getRank() != 2 ||
      resultType.getRank() != 2)
    return emitOpError("operands and result must be 2-D tensors, got ranks ")
           << lhsType.getRank() << ", " << rhsType.getRank() << " and "
           << resultType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpError("operand element types differ: ")
           << lhsType.getElementType() << " and " << rhsType.getElementType();
  if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape() ||
      !resultType.hasStaticShape())
    return emitOpError("shapes must be static");
  int64_t m = lhsType.getDimSize(0), k = lhsType.getDimSize(1);
  int64_t n = rhsType.getDimSize(1);
  if (rhsType.getDimSize(0) != k)
    return emitOpError("inner dimensions differ: lhs has ")
           << k << " columns, rhs has " << rhsType.getDimSize(0) << " rows";
  if (resultType.getDimSize(0) != m || resultType.getDimSize(1) != n)
    return emitOpError("result shape must be ")
           << m << "x" << n << ", got " << resultType.getDimSize(0) << "x"
           << resultType.getDimSize(1);
  Type acc = getAccumulatorType();
  if (!acc.isF32() && !acc.isF16())
    return emitOpError("accumulation type must be f32 or f16, got ") << acc;
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
    if (std::optional<::ipu::TargetModel> target =
            ipu_tile::lookupTarget(getOperation())) {
      int64_t tiles = plan.getRows() * plan.getCols() * plan.getInner();
      if (tiles > target->tiles)
        return emitOpError("plan needs ")
               << tiles << " tiles, target '" << target->name << "' has "
               << target->tiles;
    }
  }
  return success();
}
