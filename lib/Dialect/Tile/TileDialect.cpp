//===- TileDialect.cpp - ipu_tile dialect, attributes and verifiers -------===//

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ipu_tile;

#include "IPU/Dialect/Tile/IR/TileOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Tile/IR/TileOpsAttributes.cpp.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Tile/IR/TileOps.cpp.inc"

void IPUTileDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "IPU/Dialect/Tile/IR/TileOpsAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "IPU/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

LogicalResult IPUTileDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == getTargetAttrName() && !isa<TargetAttr>(attr.getValue()))
    return op->emitError("'") << getTargetAttrName()
                              << "' must be a #ipu_tile.target, got "
                              << attr.getValue();
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name) {
  if (::ipu::TargetModel::byName(name.str()))
    return success();
  return emitError() << "unknown target '" << name << "'; known: "
                     << ::ipu::TargetModel::knownNames();
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> grid, int64_t base,
                                 ArrayRef<int64_t> strides, int64_t replicas,
                                 int64_t replicaStride) {
  if (grid.size() != 2 || strides.size() != 2)
    return emitError() << "layout needs a 2-D grid and 2 strides, got "
                       << grid.size() << " and " << strides.size();
  if (grid[0] < 1 || grid[1] < 1)
    return emitError() << "grid [" << grid[0] << ", " << grid[1]
                       << "] must be at least 1 in each dimension";
  if (base < 0)
    return emitError() << "base tile must not be negative, got " << base;
  if (replicas < 1)
    return emitError() << "replicas must be at least 1, got " << replicas;
  return success();
}

LogicalResult
LayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                           function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#ipu_tile.layout applies to 2-D tensors, got rank "
                       << shape.size();
  if (ShapedType::isDynamicShape(shape))
    return emitError() << "#ipu_tile.layout needs a static shape";
  if (!toElementType(elementType))
    return emitError() << "#ipu_tile.layout: element type " << elementType
                       << " is not f32, f16, f8E4M3FN or f8E5M2";
  if (getGrid()[0] > shape[0] || getGrid()[1] > shape[1])
    return emitError() << "grid [" << getGrid()[0] << ", " << getGrid()[1]
                       << "] is larger than the tensor " << shape[0] << "x"
                       << shape[1];
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state, StringRef name) {
  state.addAttribute(::mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->emplaceBlock();
}

LogicalResult ProgramOp::verify() {
  if (std::optional<ArrayAttr> reference = getReference()) {
    for (Attribute entry : *reference) {
      auto dict = dyn_cast<DictionaryAttr>(entry);
      if (!dict || !dict.getAs<StringAttr>("op") ||
          !dict.getAs<DenseI32ArrayAttr>("arguments") ||
          !dict.getAs<IntegerAttr>("result"))
        return emitOpError("reference entries must be dictionaries with 'op' "
                           "(string), 'arguments' (array<i32>) and 'result' "
                           "(integer), got ")
               << entry;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BufferOp
//===----------------------------------------------------------------------===//

LogicalResult BufferOp::verify() {
  std::optional<::ipu::MemoryClass> memoryClass =
      ::ipu::parseMemoryClass(getMemoryClass().str());
  if (!memoryClass)
    return emitOpError("memory class '")
           << getMemoryClass() << "' is not \"standard\" or \"interleaved\"";
  std::optional<::ipu::BlockLayout> layout = toBlockLayout(getTensorType());
  if (!layout)
    return emitOpError("type must be a static 2-D tensor with a "
                       "#ipu_tile.layout encoding, got ")
           << getType();
  std::optional<::ipu::TargetModel> target = lookupTarget(getOperation());
  if (!target)
    return success();
  if (std::optional<std::string> error = layout->validate(target->tiles))
    return emitOpError("layout does not fit target '")
           << target->name << "': " << *error;
  uint64_t bytes = layout->maxBlockBytes();
  if (bytes > target->allocatableBytes(*memoryClass))
    return emitOpError("needs ")
           << bytes << " bytes per tile, " << getMemoryClass()
           << " memory has " << target->allocatableBytes(*memoryClass);
  if (std::optional<int64_t> address = getAddress()) {
    const ::ipu::MemoryRegion &region = target->region(*memoryClass);
    if (*address < target->allocatableBase(*memoryClass) ||
        static_cast<uint64_t>(*address) + bytes > region.end())
      return emitOpError("address ")
             << *address << " + " << bytes << " bytes lies outside "
             << getMemoryClass() << " memory [" << target->allocatableBase(*memoryClass)
             << ", " << region.end() << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ComputeSetOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeSetOp::verify() {
  const ::ipu::KernelSpec *kernel = ::ipu::lookupKernel(getKernel().str());
  if (!kernel)
    return emitOpError("unknown kernel '") << getKernel() << "'";
  if (getOperands().size() != kernel->operandNames.size())
    return emitOpError("kernel '")
           << getKernel() << "' takes " << kernel->operandNames.size()
           << " operands, got " << getOperands().size();
  ArrayRef<int32_t> tiles = getTiles();
  size_t paramCount = kernel->paramNames.size();
  if (getParams().size() != tiles.size() * paramCount)
    return emitOpError("expected ")
           << tiles.size() * paramCount << " params (" << tiles.size()
           << " tiles x " << paramCount << "), got " << getParams().size();
  llvm::DenseSet<int32_t> seen;
  std::optional<::ipu::TargetModel> target = lookupTarget(getOperation());
  for (auto [index, tile] : llvm::enumerate(tiles)) {
    if (tile < 0 || (target && static_cast<uint32_t>(tile) >= target->tiles))
      return emitOpError("tile ") << tile << " is outside the target";
    if (!seen.insert(tile).second)
      return emitOpError("tile ") << tile << " has two vertices";
    if (std::optional<std::string> error = ::ipu::checkKernelParams(
            *kernel, getParams().data() + index * paramCount))
      return emitOpError("vertex on tile ") << tile << ": " << *error;
  }
  return success();
}

LogicalResult
ComputeSetOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  const ::ipu::KernelSpec *kernel = ::ipu::lookupKernel(getKernel().str());
  if (!kernel)
    return success(); // Reported by verify().
  size_t paramCount = kernel->paramNames.size();
  for (auto [operandIndex, ref] :
       llvm::enumerate(getOperands().getAsRange<FlatSymbolRefAttr>())) {
    auto buffer = symbolTable.lookupNearestSymbolFrom<BufferOp>(getOperation(), ref);
    if (!buffer)
      return emitOpError("operand ") << ref << " is not an ipu_tile.buffer";
    std::optional<::ipu::BlockLayout> layout = toBlockLayout(buffer.getTensorType());
    if (!layout)
      return success(); // Reported by the buffer's verifier.
    std::vector<uint32_t> holders = layout->tileList();
    llvm::DenseSet<uint32_t> holderSet(holders.begin(), holders.end());
    for (auto [index, tile] : llvm::enumerate(getTiles())) {
      if (!holderSet.contains(tile))
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[operandIndex]
               << "' buffer " << ref << " has no block on that tile";
      uint64_t need = ::ipu::kernelOperandBytes(
          *kernel, getParams().data() + index * paramCount, operandIndex);
      if (need > layout->maxBlockBytes())
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[operandIndex]
               << "' spans " << need << " bytes, buffer " << ref << " holds "
               << layout->maxBlockBytes();
    }
  }
  return success();
}
