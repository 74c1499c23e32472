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
  for (unsigned k = 0; k < ::ipu::kBodyOpKinds; ++k)
    text += (k ? ", " : "") +
            std::string(::ipu::bodyOpName(static_cast<::ipu::BodyOpKind>(k)));
  return text;
}

} // namespace

FailureOr<::ipu::ElementwiseBody>
mlir::ipu_tile::buildElementwiseBody(Operation *owner, Block &block,
                                     ArrayRef<::ipu::Broadcast> broadcasts) {
  ::ipu::ElementwiseBody body;
  DenseMap<Value, uint32_t> index;
  if (block.getNumArguments() != broadcasts.size())
    return owner->emitOpError("body takes ")
           << block.getNumArguments() << " values but there are "
           << broadcasts.size() << " inputs";
  for (auto [arg, broadcast] : llvm::zip(block.getArguments(), broadcasts)) {
    std::optional<::ipu::ElementType> type = toElementType(arg.getType());
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
      std::optional<::ipu::ElementType> type = toElementType(yield.getValue().getType());
      if (!result || !type)
        return yield.emitOpError("yields a value the body does not compute "
                                 "as f32, f16 or f8");
      body.result = *result;
      body.resultType = *type;
      break;
    }
    StringRef name = op.getName().getStringRef();
    std::optional<::ipu::BodyOpKind> kind = ::ipu::parseBodyOpName(name.str());
    if (!kind || op.getNumResults() != 1 || op.getNumRegions() != 0)
      return op.emitOpError("cannot run in a tile kernel: a body of '")
             << owner->getName() << "' holds only " << supportedOps();
    ::ipu::BodyOp bodyOp;
    bodyOp.kind = *kind;
    Type resultType = op.getResult(0).getType();
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      bodyOp.predicate = static_cast<uint8_t>(cmp.getPredicate());
      resultType = cmp.getLhs().getType();
    }
    std::optional<::ipu::ElementType> type = toElementType(resultType);
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
    if (op.getNumOperands() != ::ipu::bodyOpArity(*kind))
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
  if (std::optional<std::string> error = ::ipu::verifyBody(body))
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

std::optional<::ipu::Broadcast> ElementwiseOp::getBroadcast(unsigned index) {
  auto result = cast<RankedTensorType>(getResult().getType());
  auto input = cast<RankedTensorType>(getInputs()[index].getType());
  if (!result.hasStaticShape() || !input.hasStaticShape())
    return std::nullopt;
  if (input.getShape() == result.getShape())
    return ::ipu::Broadcast::Full;
  if (result.getRank() >= 1 && input.getRank() >= 1 &&
      input.getShape().back() == result.getShape().back() &&
      input.getNumElements() == result.getShape().back())
    return ::ipu::Broadcast::Row;
  if (input.getNumElements() == 1)
    return ::ipu::Broadcast::Scalar;
  return std::nullopt;
}

std::optional<unsigned> ElementwiseOp::getFirstFullInput() {
  for (unsigned i = 0; i < getInputs().size(); ++i)
    if (getBroadcast(i) == ::ipu::Broadcast::Full)
      return i;
  return std::nullopt;
}

LogicalResult ElementwiseOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!result.hasStaticShape() || result.getRank() < 1)
    return emitOpError("result must be a static tensor of rank >= 1, got ")
           << result;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (!getBroadcast(i))
      return emitOpError("input ")
             << i << " of type " << type << " is neither of the result's shape "
             << "nor a vector of its last dimension (" << result.getShape().back()
             << ") nor a single element";
  }
  if (!getFirstFullInput())
    return emitOpError("needs an input of the result's shape ")
           << result.getShape();
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
  SmallVector<::ipu::Broadcast> broadcasts;
  for (unsigned i = 0; i < getInputs().size(); ++i)
    broadcasts.push_back(*getBroadcast(i));
  return buildElementwiseBody(getOperation(), block, broadcasts);
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<::ipu::Broadcast>> kernelBroadcasts(KernelOp op) {
  SmallVector<::ipu::Broadcast> broadcasts;
  for (Attribute attr : op.getBroadcasts()) {
    StringRef name = cast<StringAttr>(attr).getValue();
    if (name == "full")
      broadcasts.push_back(::ipu::Broadcast::Full);
    else if (name == "row")
      broadcasts.push_back(::ipu::Broadcast::Row);
    else if (name == "scalar")
      broadcasts.push_back(::ipu::Broadcast::Scalar);
    else
      return op.emitOpError("broadcast '")
             << name << "' is not \"full\", \"row\" or \"scalar\"";
  }
  return broadcasts;
}

LogicalResult KernelOp::verifyRegions() {
  FailureOr<SmallVector<::ipu::Broadcast>> broadcasts = kernelBroadcasts(*this);
  if (failed(broadcasts))
    return failure();
  Block &block = getBody().front();
  if (block.empty() || !isa<YieldOp>(block.back()))
    return emitOpError("body must end with ipu_tile.yield");
  if (!llvm::is_contained(*broadcasts, ::ipu::Broadcast::Full))
    return emitOpError("needs a \"full\" input: the output block's shape is its");
  return buildElementwiseBody(getOperation(), getBody().front(), *broadcasts);
}

FailureOr<std::unique_ptr<::ipu::ElementwiseKernel>> KernelOp::buildKernel() {
  FailureOr<SmallVector<::ipu::Broadcast>> broadcasts = kernelBroadcasts(*this);
  if (failed(broadcasts))
    return failure();
  FailureOr<::ipu::ElementwiseBody> body =
      buildElementwiseBody(getOperation(), getBody().front(), *broadcasts);
  if (failed(body))
    return failure();
  std::string symbol = ::ipu::elementwiseSymbol(*body);
  return std::make_unique<::ipu::ElementwiseKernel>(getSymName().str(), symbol,
                                                    std::move(*body));
}

const ::ipu::KernelSpec *
mlir::ipu_tile::lookupComputeSetKernel(ComputeSetOp computeSet,
                                       std::unique_ptr<::ipu::ElementwiseKernel> &holder) {
  if (const ::ipu::KernelSpec *spec = ::ipu::lookupKernel(computeSet.getKernel().str()))
    return spec;
  auto program = computeSet->getParentOfType<ProgramOp>();
  if (!program)
    return nullptr;
  auto kernel = dyn_cast_or_null<KernelOp>(
      SymbolTable::lookupSymbolIn(program, computeSet.getKernelAttr()));
  if (!kernel)
    return nullptr;
  FailureOr<std::unique_ptr<::ipu::ElementwiseKernel>> built = kernel.buildKernel();
  if (failed(built))
    return nullptr;
  holder = std::move(*built);
  return &holder->spec();
}
