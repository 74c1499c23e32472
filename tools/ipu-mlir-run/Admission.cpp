//===- Admission.cpp - What ipu-mlir-run agrees to run --------------------===//

#include "Admission.h"

#include "IPU/Support/Escape.h"
#include "IPU/Support/Numbers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ipu_mlir_run {
namespace {

using ipu::saturatingAdd;
using ipu::saturatingMultiply;

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return ipu::escapeText(text);
}

/// Whether `type` is a scalar the lowering handles as a value of its own.
bool isScalar(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type))
    return isScalar(complex.getElementType());
  return isa<IntegerType, FloatType, IndexType>(type);
}

/// Why values of `type` are not run, or nothing. Tensors must be static:
/// every allocation is then sized before the run.
std::optional<std::string> refusalOfType(Type type) {
  if (isScalar(type))
    return std::nullopt;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!isScalar(tensor.getElementType()))
      return "it holds a " + typeText(type) + ": tensors of integers, floats or index run";
    if (!tensor.hasStaticShape())
      return "it holds a " + typeText(type) +
             ": only static shapes run (every allocation is sized "
             "before the run, as ipu-opt compiles static shapes only)";
    if (tensor.getEncoding())
      return "it holds a " + typeText(type) + ": tensors with an encoding do not run";
    return std::nullopt;
  }
  if (isa<BaseMemRefType>(type))
    return "it holds a " + typeText(type) +
           ": buffers would read and write memory the module "
           "addresses itself; only tensors are run";
  return "it holds a " + typeText(type) +
         ": only scalars and static tensors run";
}

/// A linear affine expression: a constant plus a coefficient per dim.
struct Linear {
  __int128 constant = 0;
  SmallVector<__int128> coefficients;
};

/// `expr` as a linear expression of `dims` dims, or nothing for mod,
/// floordiv, ceildiv, symbols or coefficients past 2^62.
std::optional<Linear> linearOf(AffineExpr expr, unsigned dims) {
  constexpr __int128 kBound = __int128(1) << 62;
  auto bounded = [&](Linear l) -> std::optional<Linear> {
    if (l.constant > kBound || l.constant < -kBound)
      return std::nullopt;
    for (__int128 c : l.coefficients)
      if (c > kBound || c < -kBound)
        return std::nullopt;
    return l;
  };
  Linear result;
  result.coefficients.assign(dims, 0);
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    result.coefficients[dim.getPosition()] = 1;
    return result;
  }
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    result.constant = constant.getValue();
    return bounded(result);
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary || (expr.getKind() != AffineExprKind::Add && expr.getKind() != AffineExprKind::Mul))
    return std::nullopt;
  std::optional<Linear> lhs = linearOf(binary.getLHS(), dims);
  std::optional<Linear> rhs = linearOf(binary.getRHS(), dims);
  if (!lhs || !rhs)
    return std::nullopt;
  if (expr.getKind() == AffineExprKind::Add) {
    result.constant = lhs->constant + rhs->constant;
    for (unsigned d = 0; d < dims; ++d)
      result.coefficients[d] = lhs->coefficients[d] + rhs->coefficients[d];
    return bounded(result);
  }
  // One side of a product is a constant in an affine map.
  auto isConstant = [](const Linear &l) {
    return llvm::all_of(l.coefficients, [](__int128 c) { return c == 0; });
  };
  const Linear &scalar = isConstant(*rhs) ? *rhs : *lhs;
  const Linear &scaled = isConstant(*rhs) ? *lhs : *rhs;
  if (!isConstant(scalar))
    return std::nullopt;
  result.constant = scaled.constant * scalar.constant;
  for (unsigned d = 0; d < dims; ++d)
    result.coefficients[d] = scaled.coefficients[d] * scalar.constant;
  return bounded(result);
}

/// Why a linalg op's indexing maps may reach outside its operands, or
/// nothing. The verifier checks a map only where every loop index is 0 or
/// last, which a map with mod, or a coefficient of each sign, passes while
/// reaching outside in between: each result's least and greatest value
/// over the whole iteration space must lie within its dim.
std::optional<std::string> refusalOfIndexingMaps(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t range) { return range <= 0; }))
    return std::nullopt; // No iteration reads or writes anything.
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      std::optional<Linear> linear = linearOf(expr, map.getNumDims());
      if (!linear)
        return "the indexing map of operand " + std::to_string(operand.getOperandNumber()) +
               " is not linear in the loop indices (mod, floordiv, ceildiv or "
               "symbols): only linear maps run, whose reach is checked";
      // Each term is below 2^62 * 2^63 and each sum is clamped to 2^64:
      // no 128-bit sum overflows.
      constexpr __int128 kFar = __int128(1) << 64;
      __int128 least = linear->constant, greatest = linear->constant;
      for (auto [c, range] : llvm::zip(linear->coefficients, ranges)) {
        least = std::max(least + std::min<__int128>(c, 0) * (range - 1), -kFar);
        greatest = std::min(greatest + std::max<__int128>(c, 0) * (range - 1), kFar);
      }
      auto text = [](__int128 value) {
        return value >= INT64_MAX ? std::string("2^63 or more")
               : value <= INT64_MIN ? std::string("-2^63 or less")
                                    : std::to_string(int64_t(value));
      };
      if (least < 0 || greatest >= type.getDimSize(d))
        return "the indexing map of operand " + std::to_string(operand.getOperandNumber()) +
               " reaches " + text(least) + " to " + text(greatest) + " in its dim " +
               std::to_string(d) + ", of size " + std::to_string(type.getDimSize(d));
    }
  }
  return std::nullopt;
}

/// Why an op whose dialect ipu-opt imports is still not run, or nothing.
std::optional<std::string> refusalOfImportedOp(Operation *op) {
  if (auto func = dyn_cast<func::FuncOp>(op)) {
    if (func.isExternal())
      return std::string("a declaration without a body names a symbol outside "
                         "the module, which the JIT would take from the host "
                         "(any C library function)");
    auto attributes = op->getDiscardableAttrs();
    if (attributes.begin() != attributes.end())
      return "its attribute '" +
             ipu::escapeText((*attributes.begin()).getName().getValue()) +
             "' would pass to LLVM as it is (a function carries none)";
    return std::nullopt;
  }
  if (isa<func::CallOp, func::CallIndirectOp, func::ConstantOp>(op))
    return std::string("a call may reach a function outside the module (the "
                       "host's) or recurse without end; no call is run");
  if (isa<func::ReturnOp>(op))
    return std::nullopt;
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lower || !upper || !step)
      return std::string("its bounds or step are not constants: a loop runs only "
                         "when its trip count is known before it runs");
    if (*step <= 0)
      return "its step is " + std::to_string(*step) +
             ": a loop runs only with a positive step (it would never end)";
    if (loop.getUnsignedCmp())
      return std::string("its bounds are compared unsigned: ipu-opt unrolls signed "
                         "loops only");
    return std::nullopt;
  }
  if (isa<scf::YieldOp, scf::IfOp>(op))
    return std::nullopt;
  if (isa<scf::WhileOp, scf::ConditionOp>(op))
    return std::string("a loop whose trip count is not known before it runs may "
                       "never end (scf.for of constant bounds runs)");
  if (op->getDialect() && op->getDialect()->getNamespace() == "scf")
    return std::string("of scf, only scf.for (constant bounds), scf.if and "
                       "scf.yield are run");
  if (isa<cf::AssertOp>(op))
    return std::nullopt;
  if (op->getDialect() && op->getDialect()->getNamespace() == "cf")
    return std::string("branches can loop without end; of cf, only cf.assert runs");
  if (isa<tensor::DimOp, tensor::RankOp, tensor::ReshapeOp, tensor::GatherOp,
          tensor::ScatterOp, tensor::ParallelInsertSliceOp>(op))
    return std::string("ipu-opt does not import it, and it reads or writes at "
                       "indices or shapes the run does not check");
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (!pad.getLow().empty() || !pad.getHigh().empty())
      return std::string("its amounts are known only when the model runs: pads "
                         "must be constants");
    // A negative pad would write its source before the buffer's start.
    if (llvm::any_of(pad.getStaticLow(), [](int64_t n) { return n < 0; }) ||
        llvm::any_of(pad.getStaticHigh(), [](int64_t n) { return n < 0; }))
      return std::string("its pads must be at least zero: a negative one writes "
                         "before its buffer");
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (op->hasAttr("library_call"))
      return std::string("its 'library_call' names a function outside the module");
    if (!linalgOp.hasPureTensorSemantics())
      return std::string("it works on buffers; only tensors run");
    return refusalOfIndexingMaps(linalgOp);
  }
  if (op->getDialect() && op->getDialect()->getNamespace() == "linalg" &&
      !isa<linalg::YieldOp, linalg::IndexOp, linalg::SoftmaxOp>(op))
    return std::string("of linalg, the structured ops (named and generic), "
                       "softmax, index and yield run");
  return std::nullopt;
}

/// Why `op` is not run, or nothing.
std::optional<std::string> refusalOf(Operation *op) {
  Dialect *dialect = op->getDialect();
  StringRef ns = dialect ? dialect->getNamespace() : StringRef();
  if (ns == "llvm")
    return std::string("through the llvm dialect a module calls any host "
                       "function (llvm.call @system), runs inline assembly or "
                       "reads and writes any address");
  if (isa<ModuleOp>(op)) {
    if (op->getParentOp())
      return std::string("a module nests in another");
    return std::nullopt;
  }
  if (!llvm::is_contained({"func", "arith", "math", "tensor", "linalg", "scf", "cf"}, ns))
    return "its dialect '" + ipu::escapeText(ns) +
           "' is not one ipu-opt imports (func, arith, math, tensor, linalg, "
           "scf.for, scf.if and cf.assert run)";
  for (Region &region : op->getRegions())
    if (region.getBlocks().size() > 1)
      return std::string("a region of several blocks branches, and branches can "
                         "loop without end");
  for (NamedAttribute attribute : op->getAttrs())
    if (attribute.getName().getValue().starts_with("llvm."))
      return "its attribute '" + ipu::escapeText(attribute.getName().getValue()) +
             "' would pass to LLVM as it is";
  if (auto func = dyn_cast<func::FuncOp>(op)) {
    for (ArrayAttr dictionaries : {func.getArgAttrsAttr(), func.getResAttrsAttr()})
      if (dictionaries)
        for (auto dictionary : dictionaries.getAsRange<DictionaryAttr>())
          for (NamedAttribute attribute : dictionary)
            if (attribute.getName().getValue().starts_with("llvm."))
              return "its argument attribute '" +
                     ipu::escapeText(attribute.getName().getValue()) +
                     "' would pass to LLVM as it is";
    for (Type type : func.getFunctionType().getInputs())
      if (auto why = refusalOfType(type))
        return why;
    for (Type type : func.getFunctionType().getResults())
      if (auto why = refusalOfType(type))
        return why;
  }
  for (Type type : op->getResultTypes())
    if (auto why = refusalOfType(type))
      return why;
  for (Type type : op->getOperandTypes())
    if (auto why = refusalOfType(type))
      return why;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Type type : block.getArgumentTypes())
        if (auto why = refusalOfType(type))
          return why;
  return refusalOfImportedOp(op);
}

uint64_t elementBytes(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 8; // index
}

uint64_t elementsOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? uint64_t(tensor.getNumElements()) : 0;
}

uint64_t iterationSpace(linalg::LinalgOp op) {
  uint64_t points = 1;
  for (int64_t range : op.getStaticLoopRanges())
    points = saturatingMultiply(points, range < 0 ? UINT64_MAX : uint64_t(range));
  return points;
}

/// How many times `op` runs: the product of the trip counts of the loops,
/// linalg iteration spaces and generating regions around it.
uint64_t timesRun(Operation *op) {
  uint64_t times = 1;
  for (Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      times = saturatingMultiply(times, trips ? trips->getLimitedValue() : UINT64_MAX);
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(parent)) {
      times = saturatingMultiply(times, iterationSpace(linalgOp));
    } else if (isa<tensor::GenerateOp, tensor::PadOp>(parent)) {
      times = saturatingMultiply(times, elementsOf(parent->getResult(0).getType()));
    }
  }
  return times;
}

/// The scalar operations `op` itself does each time it runs (its body's
/// ops are counted on their own).
uint64_t ownWork(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return iterationSpace(linalgOp);
  // An op on tensors writes its results' elements (a copy, an elementwise
  // op); a scalar op, tensor.extract among them, is one operation.
  uint64_t work = 1;
  for (Type type : op->getResultTypes())
    work = std::max(work, elementsOf(type));
  return work;
}

/// The bytes `op` allocates each time it runs: its tensor results, but for
/// those that bufferize to a view of their operand.
uint64_t ownBytes(Operation *op) {
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
          tensor::BitcastOp, tensor::ExtractSliceOp>(op))
    return 0;
  uint64_t bytes = 0;
  for (Type type : op->getResultTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      bytes = saturatingAdd(
          bytes, saturatingMultiply(elementsOf(tensor), elementBytes(tensor.getElementType())));
  return bytes;
}


Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

} // namespace

std::string locationText(Operation *op) {
  if (auto at = op->getLoc()->findInstanceOf<FileLineColLoc>())
    return ipu::escapeText(at.getFilename().str()) + ":" + std::to_string(at.getLine()) +
           ":" + std::to_string(at.getColumn());
  return "unknown location";
}

std::optional<std::string> admitModule(ModuleOp module, const RunLimits &limits,
                                       RunEstimate &estimate) {
  std::optional<std::string> refusal;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto why = refusalOf(op)) {
      refusal = locationText(op) + ": '" + ipu::escapeText(op->getName().getStringRef()) +
                "' is not run: " + *why + "; ipu-mlir-run runs only what ipu-opt imports";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (refusal)
    return refusal;

  // The op that does the most work and the one that allocates the most,
  // named when a limit is passed: each op's share goes to the nearest op
  // (itself or around it) that the file places, as a named linalg op's
  // body has no location of its own.
  auto placed = [](Operation *op) {
    for (Operation *at = op; at; at = at->getParentOp())
      if (at->getLoc()->findInstanceOf<FileLineColLoc>())
        return at;
    return op;
  };
  // In walk order, so that of equal shares the first is named.
  llvm::MapVector<Operation *, uint64_t> workAt, bytesAt;
  estimate = {};
  module->walk([&](Operation *op) {
    const uint64_t times = timesRun(op);
    const uint64_t work = saturatingMultiply(times, ownWork(op));
    const uint64_t bytes = saturatingMultiply(times, ownBytes(op));
    estimate.work = saturatingAdd(estimate.work, work);
    estimate.bytes = saturatingAdd(estimate.bytes, bytes);
    Operation *at = placed(op);
    workAt[at] = saturatingAdd(workAt[at], work);
    bytesAt[at] = saturatingAdd(bytesAt[at], bytes);
  });
  auto most = [](const llvm::MapVector<Operation *, uint64_t> &shares) {
    std::pair<Operation *, uint64_t> best = {nullptr, 0};
    for (auto [op, share] : shares)
      if (share > best.second)
        best = {op, share};
    return best;
  };
  auto [largest, largestBytes] = most(bytesAt);
  auto [busiest, busiestWork] = most(workAt);
  auto amount = [](uint64_t value) {
    return value == UINT64_MAX ? std::string("more than 2^64") : ipu::groupedThousands(value);
  };
  if (estimate.bytes > limits.maxBytes)
    return "the module allocates up to " + amount(estimate.bytes) +
           " bytes of tensors, more than the limit of " + ipu::groupedThousands(limits.maxBytes) +
           " (--max-bytes); the most, " + amount(largestBytes) + " bytes, at " +
           locationText(largest) + " ('" +
           ipu::escapeText(largest->getName().getStringRef()) + "')";
  if (estimate.work > limits.maxWork)
    return "the module does up to " + amount(estimate.work) +
           " scalar operations (elements times iterations), more than the limit of " +
           ipu::groupedThousands(limits.maxWork) + " (--max-work); the most, " +
           amount(busiestWork) + ", at " + locationText(busiest) + " ('" +
           ipu::escapeText(busiest->getName().getStringRef()) + "')";
  return std::nullopt;
}

void guardIndices(ModuleOp module) {
  // Ops of a dialect the context has not loaded would be built unregistered.
  module->getContext()->loadDialect<arith::ArithDialect, cf::ControlFlowDialect>();
  SmallVector<Operation *> accesses;
  module.walk([&](Operation *op) {
    if (isa<tensor::ExtractOp, tensor::InsertOp, tensor::ExtractSliceOp,
            tensor::InsertSliceOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    const std::string message = "ipu-mlir-run: " + op->getName().getStringRef().str() +
                                " at " + locationText(op) + " is out of bounds";
    auto check = [&](Value holds) {
      cf::AssertOp::create(b, loc, holds, b.getStringAttr(message));
    };
    auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
      return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
    };
    auto value = [&](OpFoldResult ofr) -> Value {
      if (auto v = dyn_cast<Value>(ofr))
        return v;
      return indexConstant(b, loc, cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
    };
    // 0 <= index < dim, for one element.
    auto checkIndices = [&](ValueRange indices, RankedTensorType type) {
      for (auto [d, index] : llvm::enumerate(indices)) {
        if (std::optional<int64_t> known = getConstantIntValue(index);
            known && *known >= 0 && *known < type.getDimSize(d))
          continue;
        Value zero = indexConstant(b, loc, 0);
        Value dim = indexConstant(b, loc, type.getDimSize(d));
        check(arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::sge, index, zero),
                                    cmp(arith::CmpIPredicate::slt, index, dim)));
      }
    };
    // Every element of a slice in bounds: 0 <= offset <= dim - 1 and, past
    // its first element, 0 <= stride <= (dim - 1 - offset) / (size - 1),
    // which cannot overflow.
    auto checkSlice = [&](OffsetSizeAndStrideOpInterface slice, RankedTensorType type) {
      for (int64_t d = 0; d < type.getRank(); ++d) {
        OpFoldResult offset = slice.getMixedOffsets()[d], size = slice.getMixedSizes()[d],
                     stride = slice.getMixedStrides()[d];
        std::optional<int64_t> o = getConstantIntValue(offset), s = getConstantIntValue(size),
                               t = getConstantIntValue(stride);
        const int64_t dim = type.getDimSize(d);
        if (s && *s == 0)
          continue;
        if (o && s && t && *o >= 0 && *s > 0 && *t >= 0 && *o < dim &&
            (*s == 1 || *t <= (dim - 1 - *o) / (*s - 1)))
          continue;
        Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
        Value last = indexConstant(b, loc, dim - 1);
        Value offsetValue = value(offset), sizeValue = value(size), strideValue = value(stride);
        Value holds = arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::sge, offsetValue, zero),
            cmp(arith::CmpIPredicate::sle, offsetValue, last));
        Value single = cmp(arith::CmpIPredicate::sle, sizeValue, one);
        // size - 1 is at least 1 where it divides.
        Value steps = arith::MaxSIOp::create(
            b, loc, arith::SubIOp::create(b, loc, sizeValue, one), one);
        Value room = arith::DivSIOp::create(
            b, loc, arith::SubIOp::create(b, loc, last, offsetValue), steps);
        Value strideFits = arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::sge, strideValue, zero),
            cmp(arith::CmpIPredicate::sle, strideValue, room));
        holds = arith::AndIOp::create(b, loc, holds,
                                      arith::OrIOp::create(b, loc, single, strideFits));
        check(arith::AndIOp::create(b, loc, holds,
                                    cmp(arith::CmpIPredicate::sge, sizeValue, zero)));
      }
    };
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      checkIndices(extract.getIndices(), extract.getTensor().getType());
    else if (auto insert = dyn_cast<tensor::InsertOp>(op))
      checkIndices(insert.getIndices(), insert.getDest().getType());
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
      checkSlice(slice, slice.getSourceType());
    else if (auto slice = dyn_cast<tensor::InsertSliceOp>(op))
      checkSlice(slice, slice.getDestType());
  }
}

} // namespace ipu_mlir_run
