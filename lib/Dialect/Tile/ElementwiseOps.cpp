//===- ElementwiseOps.cpp - Elementwise bodies and generated kernels ------===//
//
// ipu_tile.elementwise (graph level) and ipu_tile.kernel (in a program) hold
// a scalar body of arith and math ops. Both verify it by building its plain
// C++ form (IPU/Device/Elementwise.h), which names the first op no tile
// kernel can run.
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::ipu_tile;

namespace {

/// The ops a body may hold, for the error that refuses another.
std::string supportedOps() {
  std::string text;
  for (unsigned k = 0; k < ipu::kBodyOpKinds; ++k)
    text += (k ? ", " : "") +
            std::string(ipu::bodyOpName(static_cast<ipu::BodyOpKind>(k)));
  return text;
}

} // namespace

ipu::RowReduction mlir::ipu_tile::toRowReduction(std::optional<RowReduction> reduce) {
  return reduce ? static_cast<ipu::RowReduction>(*reduce) : ipu::RowReduction::None;
}

FailureOr<ipu::ElementwiseBody>
mlir::ipu_tile::buildElementwiseBody(Operation *owner, Block &block,
                                     ArrayRef<ipu::Broadcast> broadcasts,
                                     ipu::RowReduction reduction, double init) {
  ipu::ElementwiseBody body;
  body.reduction = reduction;
  body.init = init;
  DenseMap<Value, uint32_t> index;
  if (block.getNumArguments() != broadcasts.size())
    return owner->emitOpError("body takes ")
           << block.getNumArguments() << " values but there are "
           << broadcasts.size() << " inputs";
  for (auto [arg, broadcast] : llvm::zip(block.getArguments(), broadcasts)) {
    std::optional<ipu::ElementType> type = toElementType(arg.getType());
    if (!type)
      return owner->emitOpError("body argument ")
             << arg.getArgNumber() << " is " << arg.getType()
             << "; inputs must be f32, f16, f8E4M3FN or f8E5M2";
    index[arg] = static_cast<uint32_t>(body.inputs.size());
    body.inputs.push_back({*type, broadcast});
  }
  auto valueOf = [&](Value value) -> std::optional<uint32_t> {
    auto it = index.find(value);
    if (it == index.end())
      return std::nullopt;
    return it->second;
  };
  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op)) {
      std::optional<uint32_t> result = valueOf(yield.getValue());
      std::optional<ipu::ElementType> type = toElementType(yield.getValue().getType());
      if (!result || !type)
        return yield.emitOpError("yields a value the body does not compute "
                                 "as f32, f16 or f8");
      body.result = *result;
      body.resultType = *type;
      break;
    }
    StringRef name = op.getName().getStringRef();
    std::optional<ipu::BodyOpKind> kind = ipu::parseBodyOpName(name.str());
    if (!kind || op.getNumResults() != 1 || op.getNumRegions() != 0)
      return op.emitOpError("cannot run in a tile kernel: a body of '")
             << owner->getName() << "' holds only " << supportedOps();
    ipu::BodyOp bodyOp;
    bodyOp.kind = *kind;
    Type resultType = op.getResult(0).getType();
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      bodyOp.predicate = static_cast<uint8_t>(cmp.getPredicate());
      resultType = cmp.getLhs().getType();
    }
    std::optional<ipu::ElementType> type = toElementType(resultType);
    if (!type)
      return op.emitOpError("computes in ")
             << resultType << "; a tile kernel computes in f32 or f16 (and "
             << "stores f8)";
    bodyOp.type = *type;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      if (!value)
        return op.emitOpError("is not a float scalar constant");
      bodyOp.constant = value.getValueAsDouble();
    }
    if (auto truncf = dyn_cast<arith::TruncFOp>(op))
      if (truncf.getRoundingmodeAttr() &&
          *truncf.getRoundingmode() != arith::RoundingMode::to_nearest_even)
        return op.emitOpError("rounds other than to nearest even, which no "
                              "tile kernel does");
    if (op.getNumOperands() != ipu::bodyOpArity(*kind))
      return op.emitOpError("has ") << op.getNumOperands() << " operands";
    for (auto [o, operand] : llvm::enumerate(op.getOperands())) {
      std::optional<uint32_t> value = valueOf(operand);
      if (!value)
        return op.emitOpError("operand ")
               << o << " is defined outside the body; constants and inputs "
               << "must be in it";
      bodyOp.operands[o] = *value;
    }
    index[op.getResult(0)] =
        static_cast<uint32_t>(body.inputs.size() + body.ops.size());
    body.ops.push_back(bodyOp);
  }
  if (std::optional<std::string> error = ipu::verifyBody(body))
    return owner->emitOpError("body: ") << *error;
  return body;
}

//===----------------------------------------------------------------------===//
// ElementwiseOp
//===----------------------------------------------------------------------===//

void ElementwiseOp::build(OpBuilder &builder, OperationState &state,
                          Type resultType, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultType);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(cast<ShapedType>(input.getType()).getElementType(),
                       state.location);
}

ipu::RowReduction ElementwiseOp::getRowReduction() {
  return toRowReduction(getReduce());
}

SmallVector<int64_t> ElementwiseOp::getIterationShape() {
  auto result = cast<RankedTensorType>(getResult().getType());
  SmallVector<int64_t> shape(result.getShape());
  if (!getReduce() || shape.empty())
    return shape;
  // The rows a reduction reduces: an input of the result's rank whose
  // leading dims are the result's (a column input has the result's shape).
  for (Value input : getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() == result.getRank() && type.getShape().back() != 1 &&
        type.getShape().drop_back() == result.getShape().drop_back()) {
      shape.back() = type.getShape().back();
      break;
    }
  }
  return shape;
}

std::optional<ipu::Broadcast> ElementwiseOp::getBroadcast(unsigned index) {
  auto result = cast<RankedTensorType>(getResult().getType());
  auto input = cast<RankedTensorType>(getInputs()[index].getType());
  if (!result.hasStaticShape() || !input.hasStaticShape() || result.getRank() < 1)
    return std::nullopt;
  SmallVector<int64_t> shape = getIterationShape();
  if (input.getShape() == ArrayRef<int64_t>(shape))
    return ipu::Broadcast::Full;
  if (input.getRank() >= 1 && input.getShape().back() == shape.back() &&
      input.getNumElements() == shape.back())
    return ipu::Broadcast::Row;
  if (input.getNumElements() == 1)
    return ipu::Broadcast::Scalar;
  if (input.getRank() == result.getRank() && input.getShape().back() == 1 &&
      input.getShape().drop_back() == ArrayRef<int64_t>(shape).drop_back())
    return ipu::Broadcast::Column;
  return std::nullopt;
}

std::optional<unsigned> ElementwiseOp::getFirstFullInput() {
  for (unsigned i = 0; i < getInputs().size(); ++i)
    if (getBroadcast(i) == ipu::Broadcast::Full)
      return i;
  return std::nullopt;
}

LogicalResult ElementwiseOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!result.hasStaticShape() || result.getRank() < 1)
    return emitOpError("result must be a static tensor of rank >= 1, got ")
           << result;
  if (getReduce().has_value() != getInit().has_value())
    return emitOpError("takes `reduce` and `init` together");
  SmallVector<int64_t> shape = getIterationShape();
  if (getReduce()) {
    if (result.getShape().back() != 1 || !result.getElementType().isF32())
      return emitOpError("reduces rows into one f32 value each: the result must "
                         "be [..., R, 1] of f32, got ")
             << result;
  }
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (!getBroadcast(i)) {
      std::string dims;
      llvm::raw_string_ostream os(dims);
      llvm::interleave(shape, os, "x");
      return emitOpError("input ")
             << i << " of type " << type << " is neither of the shape " << dims
             << " the op iterates over, nor a vector of its last dimension ("
             << shape.back() << "), nor a single element, nor one value per row";
    }
  }
  if (!getFirstFullInput())
    return emitOpError("needs an input of the shape it iterates over ") << shape;
  return success();
}

LogicalResult ElementwiseOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body takes ")
           << block.getNumArguments() << " values for " << getInputs().size()
           << " inputs";
  for (auto [arg, input] : llvm::zip(block.getArguments(), getInputs()))
    if (arg.getType() != cast<ShapedType>(input.getType()).getElementType())
      return emitOpError("body argument ")
             << arg.getArgNumber() << " is " << arg.getType() << " but input "
             << arg.getArgNumber() << " holds "
             << cast<ShapedType>(input.getType()).getElementType();
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError("body must end with ipu_tile.yield");
  Type element = getResult().getType().getElementType();
  if (yield.getValue().getType() != element)
    return emitOpError("body yields ")
           << yield.getValue().getType() << " for a result of " << element;
  SmallVector<ipu::Broadcast> broadcasts;
  for (unsigned i = 0; i < getInputs().size(); ++i)
    broadcasts.push_back(*getBroadcast(i));
  return buildElementwiseBody(getOperation(), block, broadcasts, getRowReduction(),
                              getInitValue());
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<ipu::Broadcast>> kernelBroadcasts(KernelOp op) {
  SmallVector<ipu::Broadcast> broadcasts;
  for (Attribute attr : op.getBroadcasts()) {
    StringRef name = cast<StringAttr>(attr).getValue();
    std::optional<ipu::Broadcast> broadcast = ipu::parseBroadcastName(name.str());
    if (!broadcast)
      return op.emitOpError("broadcast '")
             << name << "' is not \"full\", \"row\", \"scalar\" or \"column\"";
    broadcasts.push_back(*broadcast);
  }
  return broadcasts;
}

static FailureOr<ipu::ElementwiseBody> kernelBody(KernelOp op) {
  FailureOr<SmallVector<ipu::Broadcast>> broadcasts = kernelBroadcasts(op);
  if (failed(broadcasts))
    return failure();
  if (op.getReduce().has_value() != op.getInit().has_value())
    return op.emitOpError("takes `reduce` and `init` together");
  return buildElementwiseBody(op.getOperation(), op.getBody().front(), *broadcasts,
                              toRowReduction(op.getReduce()),
                              op.getInit() ? op.getInit()->convertToDouble() : 0.0);
}

LogicalResult KernelOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.empty() || !isa<YieldOp>(block.back()))
    return emitOpError("body must end with ipu_tile.yield");
  FailureOr<SmallVector<ipu::Broadcast>> broadcasts = kernelBroadcasts(*this);
  if (failed(broadcasts))
    return failure();
  if (!llvm::is_contained(*broadcasts, ipu::Broadcast::Full))
    return emitOpError("needs a \"full\" input: the block a vertex iterates over is its");
  return kernelBody(*this);
}

FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> KernelOp::buildKernel() {
  FailureOr<ipu::ElementwiseBody> body = kernelBody(*this);
  if (failed(body))
    return failure();
  std::string symbol = ipu::elementwiseSymbol(*body);
  return std::make_unique<ipu::ElementwiseKernel>(getSymName().str(), symbol,
                                                    std::move(*body));
}

const ipu::KernelSpec *
mlir::ipu_tile::lookupComputeSetKernel(ComputeSetOp computeSet,
                                       std::unique_ptr<ipu::ElementwiseKernel> &holder) {
  if (const ipu::KernelSpec *spec = ipu::lookupKernel(computeSet.getKernel().str()))
    return spec;
  auto program = computeSet->getParentOfType<ProgramOp>();
  if (!program)
    return nullptr;
  auto kernel = dyn_cast_or_null<KernelOp>(
      SymbolTable::lookupSymbolIn(program, computeSet.getKernelAttr()));
  if (!kernel)
    return nullptr;
  FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> built = kernel.buildKernel();
  if (failed(built))
    return nullptr;
  holder = std::move(*built);
  return &holder->spec();
}
