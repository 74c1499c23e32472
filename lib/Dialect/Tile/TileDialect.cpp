//===- TileDialect.cpp - ipu_tile dialect, attributes and verifiers -------===//

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "DataFileCache.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/IntegerList.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ipu_tile;

//===----------------------------------------------------------------------===//
// Integer lists: ranges and repeats (IPU/Support/IntegerList.h)
//===----------------------------------------------------------------------===//

static ParseResult parseIntegerTerms(AsmParser &parser, ipu::IntegerTerms &terms);

/// `INT [to INT [step INT]]` or `( terms ) x INT step INT`.
static ParseResult parseIntegerTerm(AsmParser &parser, ipu::IntegerTerm &term) {
  SMLoc loc = parser.getCurrentLocation();
  std::optional<std::string> why;
  if (succeeded(parser.parseOptionalLParen())) {
    ipu::IntegerTerms body;
    int64_t count = 0, step = 0;
    if (parseIntegerTerms(parser, body) || parser.parseRParen() ||
        parser.parseKeyword("x") || parser.parseInteger(count) ||
        parser.parseKeyword("step") || parser.parseInteger(step))
      return failure();
    why = ipu::makeRepeatTerm(std::move(body), count, step, term);
  } else {
    int64_t from = 0, to = 0, step = 1;
    if (parser.parseInteger(from))
      return failure();
    if (failed(parser.parseOptionalKeyword("to"))) {
      term = ipu::IntegerTerm();
      term.start = from;
      return success();
    }
    if (parser.parseInteger(to) ||
        (succeeded(parser.parseOptionalKeyword("step")) && parser.parseInteger(step)))
      return failure();
    why = ipu::makeRangeTerm(from, to, step, term);
  }
  if (why)
    return parser.emitError(loc, *why);
  return success();
}

static ParseResult parseIntegerTerms(AsmParser &parser, ipu::IntegerTerms &terms) {
  return parser.parseCommaSeparatedList(
      [&] { return parseIntegerTerm(parser, terms.emplace_back()); });
}

/// `[terms]`, or `[]`, expanded into `values`.
static ParseResult parseIntegerList(AsmParser &parser,
                                    SmallVectorImpl<int64_t> &values) {
  SMLoc loc = parser.getCurrentLocation();
  ipu::IntegerTerms terms;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parseIntegerTerm(parser, terms.emplace_back());
      }))
    return failure();
  std::vector<int64_t> expanded;
  if (std::optional<std::string> why = ipu::expandIntegerList(terms, expanded))
    return parser.emitError(loc, *why);
  values.assign(expanded.begin(), expanded.end());
  return success();
}

static void printIntegerList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[" << ipu::printIntegerTerms(ipu::compressIntegerList(values.vec()))
          << "]";
}

/// `balanced EXTENT into [levels]` (after the keyword), expanded into the
/// split points (IntegerList.h).
static ParseResult parseBalancedSplits(AsmParser &parser,
                                       SmallVectorImpl<int64_t> &points) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t extent = 0;
  SmallVector<int64_t> levels;
  if (parser.parseInteger(extent) || parser.parseKeyword("into") ||
      parseIntegerList(parser, levels))
    return failure();
  std::vector<int64_t> expanded;
  if (std::optional<std::string> why = ipu::balancedSplits(
          extent, std::vector<int64_t>(levels.begin(), levels.end()), expanded))
    return parser.emitError(loc, *why);
  points.assign(expanded.begin(), expanded.end());
  return success();
}

/// A compute set's tiles: an integer list of 32-bit values.
static ParseResult parseTileList(OpAsmParser &parser, DenseI32ArrayAttr &tiles) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> values;
  if (parseIntegerList(parser, values))
    return failure();
  SmallVector<int32_t> narrow;
  narrow.reserve(values.size());
  for (int64_t value : values) {
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      return parser.emitError(loc, "tile ") << value << " does not fit 32 bits";
    narrow.push_back(int32_t(value));
  }
  tiles = DenseI32ArrayAttr::get(parser.getContext(), narrow);
  return success();
}

static void printTileList(OpAsmPrinter &printer, Operation *,
                          DenseI32ArrayAttr tiles) {
  SmallVector<int64_t> values(tiles.asArrayRef().begin(), tiles.asArrayRef().end());
  printIntegerList(printer, values);
}

/// A compute set's tiles after `tiles`: `of @buffer`, or a tile list.
static ParseResult parseComputeSetTiles(OpAsmParser &parser, DenseI32ArrayAttr &tiles,
                                        FlatSymbolRefAttr &tilesOf) {
  if (succeeded(parser.parseOptionalKeyword("of"))) {
    StringAttr name;
    if (parser.parseSymbolName(name))
      return failure();
    tilesOf = FlatSymbolRefAttr::get(name);
    return success();
  }
  return parseTileList(parser, tiles);
}

static void printComputeSetTiles(OpAsmPrinter &printer, Operation *op,
                                 DenseI32ArrayAttr tiles, FlatSymbolRefAttr tilesOf) {
  if (tilesOf) {
    printer << "of ";
    printer.printSymbolName(tilesOf.getValue());
    return;
  }
  if (tiles)
    printTileList(printer, op, tiles);
}

#include "IPU/Dialect/Tile/IR/TileEnums.cpp.inc"
#include "IPU/Dialect/Tile/IR/TileInterfaces.cpp.inc"
#include "IPU/Dialect/Tile/IR/TileOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Tile/IR/TileOpsAttributes.cpp.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Tile/IR/TileOps.cpp.inc"

void IPUTileDialect::initialize() {
  dataFiles = std::make_unique<DataFileCache>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "IPU/Dialect/Tile/IR/TileOpsAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "IPU/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  // Attached by registerTileLoweringModels (lib/Transforms).
  declarePromisedInterfaces<TileLowerableOpInterface, PermuteOp, ElementwiseOp>();
}

LogicalResult IPUTileDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == getDataFileAttrName()) {
    auto record = dyn_cast<DataFileAttr>(attr.getValue());
    if (!record || !isa<ModuleOp>(op))
      return op->emitError("'") << getDataFileAttrName()
                                << "' is a #ipu_tile.data_file on a module, got "
                                << attr.getValue();
    // Every block lies in the file, after its magic: a reader may then
    // trust the IR's offsets once the file's size and checksum match.
    WalkResult walk = op->walk([&](Operation *inner) {
      WalkResult result = WalkResult::advance();
      inner->getAttrDictionary().walk([&](DataAttr data) {
        if (result.wasInterrupted() || (data.getOffset() <= record.getBytes() &&
                                        data.getBytes() <= record.getBytes() - data.getOffset()))
          return;
        inner->emitError("data block of ")
            << data.getBytes() << " bytes at offset " << data.getOffset()
            << " lies outside the data file's " << record.getBytes() << " bytes";
        result = WalkResult::interrupt();
      });
      return result;
    });
    return failure(walk.wasInterrupted());
  }
  if (attr.getName() == getTargetAttrName() && !isa<TargetAttr>(attr.getValue()))
    return op->emitError("'") << getTargetAttrName()
                              << "' must be a #ipu_tile.target, got "
                              << attr.getValue();
  return success();
}

LogicalResult IPUTileDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                       unsigned argument,
                                                       NamedAttribute attr) {
  // A declaration has no block: its arguments' types are its function
  // type's.
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op); function && argument < function.getNumArguments())
    type = function.getArgumentTypes()[argument];
  else if (!op->getRegion(region).empty() && argument < op->getRegion(region).getNumArguments())
    type = op->getRegion(region).getArgument(argument).getType();
  else
    return op->emitError("argument ") << argument << " has no type to check '"
                                      << attr.getName() << "' against";
  if (attr.getName() == getBatchDimAttrName()) {
    auto dim = dyn_cast<IntegerAttr>(attr.getValue());
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!dim || !tensor || dim.getType().isUnsignedInteger() || dim.getValue().isNegative() ||
        dim.getValue().uge(static_cast<uint64_t>(tensor.getRank())))
      return op->emitError("argument ")
             << argument << "'s '" << getBatchDimAttrName()
             << "' must be a dimension of its ranked tensor type " << type << " (0 to rank - 1), got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() != getConstantAttrName())
    return op->emitError("unknown argument attribute '") << attr.getName() << "'";
  auto value = dyn_cast<ElementsAttr>(attr.getValue());
  if (!value || value.getType() != type)
    return op->emitError("argument ")
           << argument << "'s '" << getConstantAttrName()
           << "' must be an elements attribute of its type " << type << ", got "
           << attr.getValue();
  if (failed(constantBytes(value)))
    return op->emitError("argument ")
           << argument << "'s '" << getConstantAttrName()
           << "' has no data (an elided or missing resource blob)";
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name) {
  std::string why;
  if (ipu::TargetModel::byName(name.str(), &why))
    return success();
  return emitError() << why;
}

LogicalResult LayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> grid,
    int64_t base, ArrayRef<int64_t> strides, int64_t replicas,
    int64_t replicaStride, ArrayRef<int64_t> rowSplits,
    ArrayRef<int64_t> colSplits, ArrayRef<int64_t> tileMap, int64_t batchGrid,
    int64_t batchStride, ArrayRef<int64_t> batchSplits, bool folded,
    int64_t serial) {
  if (serial < 1)
    return emitError() << "serial must be at least 1, got " << serial;
  if (serial > 1 && (batchGrid != 1 || batchStride != 0 || !batchSplits.empty()))
    return emitError() << "a serial layout keeps its chunks batch-local: "
                          "batch_grid, batch_stride and batch_splits must be "
                          "left out";
  if (folded && (batchGrid != 1 || batchStride != 0 || !batchSplits.empty()))
    return emitError() << "a folded layout has no batches: batch_grid, "
                          "batch_stride and batch_splits must be left out";
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
  if (batchGrid < 1)
    return emitError() << "batch_grid must be at least 1, got " << batchGrid;
  // The layout model holds grid, base, replicas and tiles in 32 bits and
  // multiplies strides by block indices: a value that does not fit would be
  // silently truncated.
  for (auto [index, extent] : llvm::enumerate(grid))
    if (extent > UINT32_MAX)
      return emitError() << "grid[" << index << "] = " << extent
                         << " is out of range [1, 2^32)";
  if (base > UINT32_MAX)
    return emitError() << "base tile " << base << " is out of range [0, 2^32)";
  if (replicas > UINT32_MAX)
    return emitError() << "replicas = " << replicas
                       << " is out of range [1, 2^32)";
  if (batchGrid > UINT32_MAX)
    return emitError() << "batch_grid = " << batchGrid
                       << " is out of range [1, 2^32)";
  for (auto [index, stride] : llvm::enumerate(strides))
    if (stride < INT32_MIN || stride > INT32_MAX)
      return emitError() << "strides[" << index << "] = " << stride
                         << " is out of range [-2^31, 2^31)";
  if (replicaStride < INT32_MIN || replicaStride > INT32_MAX)
    return emitError() << "replica_stride = " << replicaStride
                       << " is out of range [-2^31, 2^31)";
  if (batchStride < INT32_MIN || batchStride > INT32_MAX)
    return emitError() << "batch_stride = " << batchStride
                       << " is out of range [-2^31, 2^31)";
  auto checkSplits = [&](ArrayRef<int64_t> splits, int64_t parts,
                         StringRef name) -> LogicalResult {
    if (splits.empty())
      return success();
    if (static_cast<int64_t>(splits.size()) != parts + 1)
      return emitError() << name << " needs " << parts + 1
                         << " boundaries for the grid, got " << splits.size();
    if (splits.front() != 0)
      return emitError() << name << " must start at 0, got " << splits.front();
    for (size_t k = 1; k < splits.size(); ++k)
      if (splits[k] <= splits[k - 1])
        return emitError() << name << " must increase: boundary " << k << " ("
                           << splits[k] << ") follows " << splits[k - 1];
    return success();
  };
  if (failed(checkSplits(batchSplits, batchGrid, "batch_splits")) ||
      failed(checkSplits(rowSplits, grid[0], "row_splits")) ||
      failed(checkSplits(colSplits, grid[1], "col_splits")))
    return failure();
  // Every factor is below 2^32 but the product may not fit in 64 bits: a
  // tile map that long could never be written out anyway.
  uint64_t blocks;
  bool tooMany = __builtin_mul_overflow(uint64_t(batchGrid) * uint64_t(grid[0]),
                                        uint64_t(grid[1]), &blocks) ||
                 __builtin_mul_overflow(blocks, uint64_t(replicas), &blocks);
  if (!tileMap.empty() && (tooMany || tileMap.size() != blocks)) {
    InFlightDiagnostic diag = emitError() << "tile_map needs ";
    if (tooMany)
      diag << "more than 2^64";
    else
      diag << blocks;
    return diag << " tiles (" << (batchGrid != 1 ? "batch blocks x " : "")
                << "blocks x replicas), got " << tileMap.size();
  }
  for (auto [index, tile] : llvm::enumerate(tileMap)) {
    if (tile < 0)
      return emitError() << "tile_map holds negative tile " << tile;
    if (tile > UINT32_MAX)
      return emitError() << "tile_map[" << index << "] = " << tile
                         << " is out of range [0, 2^32)";
  }
  return success();
}

/// `2x3x8x16`, for messages.
static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string text;
  for (auto [index, extent] : llvm::enumerate(shape))
    text += (index ? "x" : "") + std::to_string(extent);
  return text;
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> grid, strides, rowSplits, colSplits, tileMap,
      batchSplits;
  int64_t base = 0, replicas = 0, replicaStride = 0;
  std::optional<int64_t> batchGrid, batchStride, serial;
  bool folded = false;
  if (parser.parseLess() || parser.parseKeyword("grid") || parser.parseEqual() ||
      parseIntegerList(parser, grid) || parser.parseComma() ||
      parser.parseKeyword("base") || parser.parseEqual() ||
      parser.parseInteger(base) || parser.parseComma() ||
      parser.parseKeyword("strides") || parser.parseEqual() ||
      parseIntegerList(parser, strides) || parser.parseComma() ||
      parser.parseKeyword("replicas") || parser.parseEqual() ||
      parser.parseInteger(replicas) || parser.parseComma() ||
      parser.parseKeyword("replica_stride") || parser.parseEqual() ||
      parser.parseInteger(replicaStride))
    return {};
  // Optional fields, in any order, each at most once.
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return {};
    if (key == "folded") {
      if (folded) {
        parser.emitError(loc, "'folded' given twice");
        return {};
      }
      folded = true;
      continue;
    }
    if (parser.parseEqual())
      return {};
    std::optional<int64_t> *scalar =
        llvm::StringSwitch<std::optional<int64_t> *>(key)
            .Case("batch_grid", &batchGrid)
            .Case("batch_stride", &batchStride)
            .Case("serial", &serial)
            .Default(nullptr);
    if (scalar) {
      if (scalar->has_value()) {
        parser.emitError(loc, "'") << key << "' given twice";
        return {};
      }
      if (parser.parseInteger(scalar->emplace()))
        return {};
      continue;
    }
    SmallVector<int64_t> *target =
        llvm::StringSwitch<SmallVector<int64_t> *>(key)
            .Case("row_splits", &rowSplits)
            .Case("col_splits", &colSplits)
            .Case("tile_map", &tileMap)
            .Case("batch_splits", &batchSplits)
            .Default(nullptr);
    if (!target) {
      parser.emitError(loc, "expected row_splits, col_splits, tile_map, "
                            "batch_grid, batch_stride, batch_splits, serial or "
                            "folded, got '")
          << key << "'";
      return {};
    }
    if (!target->empty()) {
      parser.emitError(loc, "'") << key << "' given twice";
      return {};
    }
    if (target != &tileMap && succeeded(parser.parseOptionalKeyword("balanced"))) {
      if (parseBalancedSplits(parser, *target))
        return {};
      continue;
    }
    if (parseIntegerList(parser, *target))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(
      parser.getContext(), grid, base, strides, replicas, replicaStride,
      rowSplits, colSplits, tileMap, batchGrid.value_or(1),
      batchStride.value_or(0), batchSplits, folded, serial.value_or(1));
}

void LayoutAttr::print(AsmPrinter &printer) const {
  auto list = [&](ArrayRef<int64_t> values) { printIntegerList(printer, values); };
  // Split points: as balanced splits of balanced splits where they are.
  auto splits = [&](ArrayRef<int64_t> points) {
    std::vector<int64_t> values(points.begin(), points.end());
    if (std::optional<std::vector<int64_t>> levels = ipu::nestedBalancedLevels(values)) {
      printer << "balanced " << values.back() << " into ";
      list(*levels);
    } else {
      list(points);
    }
  };
  printer << "<grid = ";
  list(getGrid());
  printer << ", base = " << getBase() << ", strides = ";
  list(getStrides());
  printer << ", replicas = " << getReplicas()
          << ", replica_stride = " << getReplicaStride();
  // Defaults are left out: a 2-D layout prints as it did before batches.
  if (getBatchGrid() != 1)
    printer << ", batch_grid = " << getBatchGrid();
  if (getBatchStride() != 0)
    printer << ", batch_stride = " << getBatchStride();
  if (!getBatchSplits().empty()) {
    printer << ", batch_splits = ";
    splits(getBatchSplits());
  }
  if (!getRowSplits().empty()) {
    printer << ", row_splits = ";
    splits(getRowSplits());
  }
  if (!getColSplits().empty()) {
    printer << ", col_splits = ";
    splits(getColSplits());
  }
  if (!getTileMap().empty()) {
    printer << ", tile_map = ";
    list(getTileMap());
  }
  if (getFolded())
    printer << ", folded";
  if (getSerial() != 1)
    printer << ", serial = " << getSerial();
  printer << ">";
}

LogicalResult
LayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                           function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.empty())
    return emitError() << "#ipu_tile.layout applies to tensors of rank 1 (a "
                          "vector is one row) or more, got rank 0";
  if (ShapedType::isDynamicShape(shape))
    return emitError() << "#ipu_tile.layout needs a static shape";
  if (!elementType)
    return emitError() << "#ipu_tile.layout: the element type did not parse";
  if (!toElementType(elementType))
    return emitError() << "#ipu_tile.layout: element type " << elementType
                       << " is not f32, f16, f8E4M3FN or f8E5M2";
  int64_t rows = shape.size() == 1 ? 1 : shape[shape.size() - 2]; // A vector is a row.
  const int64_t cols = shape.back();
  std::optional<int64_t> batches = layoutBatches(shape);
  if (!batches)
    return emitError() << "#ipu_tile.layout: the leading dimensions of "
                       << shapeText(shape) << " hold more than 2^63 batches";
  if (getFolded()) {
    if (shape.size() == 2)
      return emitError() << "folded needs leading dimensions to fold into "
                            "the rows, but the tensor "
                         << shapeText(shape) << " is 2-D";
    // The rows are those of the whole [prod(leading) * rows, cols] matrix.
    if (__builtin_mul_overflow(rows, *batches, &rows))
      return emitError() << "#ipu_tile.layout: the folded rows of "
                         << shapeText(shape) << " exceed 2^63";
    batches = 1;
  }
  if (getSerial() > 1) {
    if (*batches != 1)
      return emitError() << "serial = " << getSerial()
                         << " cuts the rows of a matrix, but the tensor "
                         << shapeText(shape) << " has " << *batches
                         << " batches: fold them or lay the batches out";
    if (rows % getSerial() != 0)
      return emitError() << "serial = " << getSerial() << " does not divide the "
                         << rows << " rows of the tensor " << shapeText(shape);
    rows /= getSerial();
  }
  if (getGrid()[0] > rows || getGrid()[1] > cols)
    return emitError() << "grid [" << getGrid()[0] << ", " << getGrid()[1]
                       << "] is larger than the tensor " << rows << "x" << cols;
  // A 2-D tensor is one batch: batch fields on it can only mean a mistake.
  if (shape.size() == 2 && getBatchGrid() != 1)
    return emitError() << "batch_grid = " << getBatchGrid()
                       << " needs leading batch dimensions, but the tensor "
                       << shapeText(shape) << " is 2-D (one batch)";
  if (getBatchGrid() > *batches)
    return emitError() << "batch_grid = " << getBatchGrid()
                       << " is not in [1, batches = " << *batches
                       << "] for the tensor " << shapeText(shape);
  if (!getBatchSplits().empty() && getBatchSplits().back() != *batches)
    return emitError() << "batch_splits end at " << getBatchSplits().back()
                       << ", the tensor " << shapeText(shape) << " has "
                       << *batches << " batches";
  if (!getRowSplits().empty() && getRowSplits().back() != rows)
    return emitError() << "row_splits end at " << getRowSplits().back()
                       << ", the tensor has " << rows << " rows";
  if (!getColSplits().empty() && getColSplits().back() != cols)
    return emitError() << "col_splits end at " << getColSplits().back()
                       << ", the tensor has " << cols << " columns";
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
  // The package holds FLOPs unsigned and result indices in 32 bits.
  if (IntegerAttr flops = getFlopsAttr(); flops && flops.getInt() < 0)
    return emitOpError("'flops' = ") << flops.getInt() << " must not be negative";
  if (IntegerAttr bytes = getReservedBytesAttr()) {
    std::optional<ipu::TargetModel> target = lookupTarget(getOperation());
    int64_t most = target ? target->allocatableBytes(ipu::MemoryClass::Standard)
                          : UINT32_MAX;
    std::optional<int64_t> value = toInt64(bytes);
    if (!value || *value < 0 || *value > most)
      return emitOpError("'")
             << getReservedBytesAttrName().getValue() << "' = " << bytes
             << " is out of range [0, " << most << "]"
             << (target ? " (the standard memory of '" + target->name + "')"
                        : std::string());
  }
  for (auto [name, values] : {std::pair("memory_peak", getMemoryPeakAttr()),
                              std::pair("memory_bound", getMemoryBoundAttr())})
    if (values && (values.size() != 2 || values[0] < 0 || values[1] < 0))
      return emitOpError("'") << name << "' must hold two byte counts "
                              << "(standard, interleaved), got " << values;
  if (IntegerAttr cycles = getEstimatedCyclesAttr(); cycles && cycles.getInt() < 0)
    return emitOpError("'estimated_cycles' = ") << cycles.getInt()
                                                << " must not be negative";
  if (std::optional<ArrayAttr> reference = getReference()) {
    for (Attribute entry : *reference) {
      auto dict = dyn_cast<DictionaryAttr>(entry);
      if (!dict || !dict.getAs<StringAttr>("op") ||
          !dict.getAs<DenseI32ArrayAttr>("arguments") ||
          !dict.getAs<IntegerAttr>("result") || !dict.getAs<TypeAttr>("type"))
        return emitOpError("reference entries must be dictionaries with 'op' "
                           "(string), 'arguments' (array<i32>), 'result' "
                           "(integer) and 'type' (element type), got ")
               << entry;
      IntegerAttr result = dict.getAs<IntegerAttr>("result");
      if (std::optional<int64_t> value = toInt64(result);
          !value || *value < -1 || *value > INT32_MAX)
        return emitOpError("reference 'result' = ")
               << result << " is out of range [-1, 2^31)";
      if (!toElementType(dict.getAs<TypeAttr>("type").getValue()))
        return emitOpError("reference type ")
               << dict.getAs<TypeAttr>("type") << " is not a machine element type";
      if (Attribute inner = dict.get("inner")) {
        auto blocks = dyn_cast<IntegerAttr>(inner);
        std::optional<int64_t> value = blocks ? toInt64(blocks) : std::nullopt;
        if (!value || *value < 1 || *value > UINT32_MAX)
          return emitOpError("reference 'inner' (blocks of K accumulated "
                             "apart) must be an integer in [1, 2^32), got ")
                 << inner;
      }
      if (Attribute scale = dict.get("input_scale")) {
        auto exponent = dyn_cast<IntegerAttr>(scale);
        std::optional<int64_t> value = exponent ? toInt64(exponent) : std::nullopt;
        if (!value || *value < ipu::kF8InputScaleMin || *value > ipu::kF8InputScaleMax)
          return emitOpError("reference 'input_scale' (each product times 2^e) must be "
                             "an integer in [")
                 << ipu::kF8InputScaleMin << ", " << ipu::kF8InputScaleMax << "], got "
                 << scale;
      }
      for (StringRef key : {"transpose_lhs", "transpose_rhs"})
        if (Attribute flag = dict.get(key); flag && !isa<BoolAttr>(flag))
          return emitOpError("reference '")
                 << key << "' must be a bool, got " << flag;
      if (Attribute partials = dict.get("partials")) {
        auto type = dyn_cast<TypeAttr>(partials);
        if (!type || !(type.getValue().isF32() || type.getValue().isF16()))
          return emitOpError("reference partials must be f32 or f16, got ")
                 << partials;
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BufferOp
//===----------------------------------------------------------------------===//

LogicalResult BufferOp::verify() {
  std::optional<ipu::MemoryClass> memoryClass = toMachineClass(getMemoryClass());
  StringRef className = stringifyMemoryClass(getMemoryClass());
  std::optional<ipu::TargetModel> target = lookupTarget(getOperation());
  // Without a target only the encoding is checked: any word will do.
  std::optional<ipu::BlockLayout> layout =
      toBlockLayout(getTensorType(), target ? target->exchangeWordBytes() : 1);
  if (!layout)
    return emitOpError("type must be a static tensor of rank 1 or more "
                       "with a #ipu_tile.layout encoding, got ")
           << getType();
  if (!target)
    return success();
  if (std::optional<std::string> error = layout->validate(target->tiles))
    return emitOpError("layout does not fit target '")
           << target->name << "': " << *error;
  // maxBlockBytes multiplies batches, rows and pitch unchecked: a block
  // is no larger than the whole tensor with padded rows, so bound that
  // first, or a product wrapped past 2^64 would look small.
  uint64_t pitch, tensorBytes;
  if (__builtin_mul_overflow(uint64_t(layout->cols),
                             uint64_t(ipu::elementBytes(layout->type)),
                             &pitch) ||
      __builtin_add_overflow(pitch, uint64_t(layout->wordBytes - 1), &pitch) ||
      __builtin_mul_overflow(uint64_t(layout->batches), uint64_t(layout->rows),
                             &tensorBytes) ||
      __builtin_mul_overflow(tensorBytes, pitch / layout->wordBytes * layout->wordBytes,
                             &tensorBytes))
    return emitOpError("holds ")
           << getTensorType() << ", more than 2^64 bytes: no "
           << className << " memory holds a block of it";
  uint64_t bytes = layout->maxBlockBytes();
  if (bytes > target->allocatableBytes(*memoryClass))
    return emitOpError("needs ")
           << bytes << " bytes per tile, " << className
           << " memory has " << target->allocatableBytes(*memoryClass);
  if (std::optional<int64_t> address = getAddress()) {
    const ipu::MemoryRegion &region = target->region(*memoryClass);
    if (*address < target->allocatableBase(*memoryClass) ||
        static_cast<uint64_t>(*address) + bytes > region.end())
      return emitOpError("address ")
             << *address << " + " << bytes << " bytes lies outside "
             << className << " memory [" << target->allocatableBase(*memoryClass)
             << ", " << region.end() << ")";
    if (*address % target->bufferAlignmentBytes != 0)
      return emitOpError("address ")
             << *address << " is not a multiple of " << target->bufferAlignmentBytes
             << " bytes, the alignment --ipu-place-storage gives buffers";
    // Exchange code and vertex state sit above the runtime image.
    // (The program's verifier has range-checked the attribute.)
    int64_t reserved = 0;
    if (IntegerAttr attr = cast<ProgramOp>((*this)->getParentOp()).getReservedBytesAttr())
      reserved = toInt64(attr).value_or(0);
    int64_t first = target->allocatableBase(*memoryClass) + reserved;
    if (*memoryClass == ipu::MemoryClass::Standard && *address < first)
      return emitOpError("address ")
             << *address << " lies over the program's reserved bytes: "
             << target->reservedStandardBytes << " of runtime image and "
             << reserved
             << " of exchange code and vertex state leave standard buffers "
                "from "
             << first;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ComputeSetOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeSetOp::verify() {
  std::unique_ptr<ipu::ElementwiseKernel> generated;
  const ipu::KernelSpec *kernel = lookupComputeSetKernel(*this, generated);
  if (!kernel)
    return emitOpError("unknown kernel '")
           << getKernel() << "': neither a device kernel nor an "
           << "ipu_tile.kernel of the program";
  if (getOperands().size() != kernel->operandNames.size())
    return emitOpError("kernel '")
           << getKernel() << "' takes " << kernel->operandNames.size()
           << " operands, got " << getOperands().size();
  if (bool(getTiles()) == bool(getTilesOf()))
    return emitOpError("needs its tiles either as a list or as 'of @buffer', "
                       "not ")
           << (getTiles() ? "both" : "neither");
  // An unresolvable `of @buffer` is reported by verifySymbolUses.
  std::optional<SmallVector<int32_t>> tileList = getTileList();
  if (!tileList)
    return success();
  ArrayRef<int32_t> tiles = *tileList;
  size_t paramCount = kernel->paramNames.size();
  const bool accumulates = llvm::is_contained(kernel->paramNames, "accType");
  if (getParams() && getAccType())
    return emitOpError("gives both 'params' and 'acc_type': the parameters "
                       "already say what the kernel accumulates in");
  if (!getParams() && accumulates) {
    if (!getAccType())
      return emitOpError("kernel '")
             << getKernel() << "' needs 'acc_type' (or explicit 'params')";
    if (!getAccType()->isF32() && !getAccType()->isF16())
      return emitOpError("'acc_type' must be f32 or f16, got ") << *getAccType();
  }
  if (!getParams() && !accumulates && getAccType())
    return emitOpError("kernel '") << getKernel() << "' accumulates nothing: "
                                   << "'acc_type' does not apply";
  const bool scales = llvm::is_contained(kernel->paramNames, "inputScale");
  if (getInputScale() && (getParams() || !scales))
    return emitOpError("'input_scale' applies to a GEMM whose parameters are "
                       "derived, not to kernel '")
           << getKernel() << "'" << (getParams() ? " with explicit 'params'" : "");
  if (getParams() && getParams()->size() != tiles.size() * paramCount) {
    InFlightDiagnostic diag = emitOpError("expected ")
                              << tiles.size() * paramCount << " params ("
                              << tiles.size() << " tiles";
    if (getTilesOf())
      diag << " of " << getTilesOfAttr();
    return diag << " x " << paramCount << "), got " << getParams()->size();
  }
  if (std::optional<ArrayRef<int32_t>> serial = getSerialOperands()) {
    auto loop = dyn_cast<LoopOp>((*this)->getParentOp());
    if (!loop)
      return emitOpError("has serial operands but is not in an ipu_tile.loop: "
                         "a chunk per iteration needs iterations");
    llvm::SmallDenseSet<int32_t> listed;
    for (int32_t operand : *serial) {
      if (operand < 0 || operand >= static_cast<int32_t>(getOperands().size()))
        return emitOpError("serial operand ")
               << operand << " is not one of its " << getOperands().size()
               << " operands";
      if (!listed.insert(operand).second)
        return emitOpError("serial operand ") << operand << " is listed twice";
      auto ref = cast<FlatSymbolRefAttr>(getOperands()[operand]);
      auto buffer = lookupBuffer(*this, ref);
      std::optional<ipu::BlockLayout> layout =
          buffer ? toBlockLayout(buffer.getTensorType(), exchangeWordBytes(buffer)) : std::nullopt;
      if (!layout)
        continue; // verifySymbolUses names it.
      if (layout->gridBatches != 1 || layout->batches != static_cast<int64_t>(loop.getCount()))
        return emitOpError("serial operand ")
               << operand << " (" << ref << ") must hold the loop's "
               << loop.getCount() << " chunks on each of its tiles (a "
               << "batch-local or serial layout of " << loop.getCount()
               << " batches), but its layout holds " << layout->batches
               << " batches over " << layout->gridBatches << " tile groups";
    }
  }
  llvm::DenseSet<int32_t> seen;
  std::optional<ipu::TargetModel> target = lookupTarget(getOperation());
  for (auto [index, tile] : llvm::enumerate(tiles)) {
    if (tile < 0 || (target && static_cast<uint32_t>(tile) >= target->tiles))
      return emitOpError("tile ") << tile << " is outside the target";
    if (!seen.insert(tile).second)
      return emitOpError("tile ") << tile << " has two vertices";
    if (getParams())
      if (std::optional<std::string> error = ipu::checkKernelParams(
              *kernel, getParams()->data() + index * paramCount))
        return emitOpError("vertex on tile ") << tile << ": " << *error;
  }
  return success();
}

std::optional<SmallVector<int32_t>> ComputeSetOp::getTileList() {
  if (std::optional<ArrayRef<int32_t>> tiles = getTiles())
    return SmallVector<int32_t>(tiles->begin(), tiles->end());
  BufferOp buffer = getTilesOf() ? lookupBuffer(getOperation(), getTilesOfAttr())
                                 : BufferOp();
  std::optional<ipu::BlockLayout> layout =
      buffer ? toBlockLayout(buffer.getTensorType(), exchangeWordBytes(buffer)) : std::nullopt;
  if (!layout)
    return std::nullopt;
  std::vector<uint32_t> tiles = layout->tileList();
  return SmallVector<int32_t>(tiles.begin(), tiles.end());
}

/// The block (b, i, j) of `layout` each tile holds (any replica: they hold
/// the same block).
struct TileBlock {
  uint32_t b, i, j;
};
static llvm::DenseMap<uint32_t, TileBlock> blocksByTile(const ipu::BlockLayout &layout) {
  llvm::DenseMap<uint32_t, TileBlock> blockOn;
  for (uint32_t b = 0; b < layout.gridBatches; ++b)
    for (uint32_t i = 0; i < layout.gridRows; ++i)
      for (uint32_t j = 0; j < layout.gridCols; ++j)
        for (uint32_t r = 0; r < layout.replicas; ++r)
          blockOn.try_emplace(static_cast<uint32_t>(layout.tileOf(b, i, j, r)),
                              TileBlock{b, i, j});
  return blockOn;
}

FailureOr<SmallVector<int64_t>>
ComputeSetOp::getVertexParams(SymbolTableCollection &symbolTable) {
  if (getParams())
    return SmallVector<int64_t>(getParams()->begin(), getParams()->end());
  std::unique_ptr<ipu::ElementwiseKernel> generated;
  const ipu::KernelSpec *kernel = lookupComputeSetKernel(*this, generated);
  if (!kernel || getOperands().size() != kernel->operandNames.size())
    return emitOpError("has no parameters to derive"); // See verify().
  struct Operand {
    BufferOp buffer;
    ipu::BlockLayout layout;
    llvm::DenseMap<uint32_t, TileBlock> blockOn;
  };
  SmallVector<Operand> operands;
  for (auto ref : getOperands().getAsRange<FlatSymbolRefAttr>()) {
    auto buffer = lookupBuffer(getOperation(), ref);
    std::optional<ipu::BlockLayout> layout =
        buffer ? getVertexLayout(operands.size(), buffer) : std::nullopt;
    if (!layout)
      return emitOpError("operand ")
             << ref << " is not an ipu_tile.buffer with a layout: its "
             << "parameters cannot be derived";
    operands.push_back({buffer, *layout, blocksByTile(*layout)});
  }
  // Rows of a block (its batches' matrices one after another), columns,
  // element type code and memory class code of operand `o` on a tile.
  struct Shape {
    int64_t rows, cols, type, memoryClass;
    uint64_t bytes;
  };
  std::optional<SmallVector<int32_t>> tiles = getTileList();
  if (!tiles)
    return emitOpError("tiles of ") << getTilesOfAttr()
                                    << " are not those of an ipu_tile.buffer "
                                       "with a layout";
  SmallVector<int64_t> params;
  for (int32_t tile : *tiles) {
    SmallVector<Shape> shapes;
    for (auto [index, operand] : llvm::enumerate(operands)) {
      auto block = operand.blockOn.find(tile);
      if (block == operand.blockOn.end())
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[index]
               << "' buffer @" << operand.buffer.getSymName()
               << " has no block on that tile";
      const TileBlock at = block->second;
      const ipu::BlockLayout &layout = operand.layout;
      shapes.push_back(
          {layout.blockBatches(at.b) * layout.blockRows(at.i), layout.blockCols(at.j),
           static_cast<int64_t>(layout.type),
           static_cast<int64_t>(
               toMachineClass(operand.buffer.getMemoryClass())),
           layout.blockBytes(at.b, at.i, at.j)});
    }
    StringRef name = getKernel();
    if (kernel->elementwise) {
      // The output block's shape (a reduction's columns: its first full
      // input's); inputs follow from their broadcasts.
      const ipu::ElementwiseBody &body = kernel->elementwise->body();
      int64_t cols = shapes.back().cols;
      if (body.reduction != ipu::RowReduction::None)
        for (auto [i, input] : llvm::enumerate(body.inputs))
          if (input.broadcast == ipu::Broadcast::Full) {
            cols = shapes[i].cols;
            break;
          }
      params.append({shapes.back().rows, cols});
    } else if (name == "gemm" || name == "gemm_t") {
      const Shape &lhs = shapes[0], &rhs = shapes[1], &out = shapes[2];
      const bool transposed = name == "gemm_t";
      params.append({lhs.rows, lhs.cols, transposed ? rhs.rows : rhs.cols, lhs.type,
                     static_cast<int64_t>(*toElementType(*getAccType())), out.type,
                     transposed ? lhs.memoryClass : rhs.memoryClass,
                     getInputScaleAttr() ? getInputScaleAttr().getInt() : 0});
    } else if (name == "reduce") {
      const Shape &in = shapes[0], &out = shapes[1];
      if (out.cols == 0 || in.cols % out.cols != 0)
        return emitOpError("vertex on tile ")
               << tile << ": input rows of " << in.cols
               << " elements are not a whole number of " << out.cols
               << "-element output rows";
      params.append({out.rows, out.cols, in.cols / out.cols, in.type, out.type});
    } else if (name.starts_with("reduce_columns_")) {
      // in: batches matrices of count rows of n; out: one value per row.
      const Shape &in = shapes[0], &out = shapes[1];
      if (out.cols != 1 || in.cols == 0 || out.rows % in.cols != 0 ||
          out.rows == 0 || in.rows % (out.rows / in.cols) != 0)
        return emitOpError("vertex on tile ")
               << tile << ": output " << out.rows << "x" << out.cols
               << " is not one value for each of the " << in.cols
               << " columns of every matrix of the " << in.rows << "-row input";
      const int64_t batches = out.rows / in.cols;
      params.append({batches, in.rows / batches, in.cols, out.type});
    } else if (name == "copy") {
      params.push_back(static_cast<int64_t>(shapes[0].bytes));
    } else if (name == "transpose") {
      params.append({shapes[0].rows, shapes[0].cols, shapes[0].type});
    } else {
      return emitOpError("kernel '") << name << "' has no parameter derivation";
    }
  }
  return params;
}

StepKind ComputeSetOp::getStepKind() { return StepKind::Compute; }

void ComputeSetOp::getBufferAccesses(SmallVectorImpl<BufferAccess> &accesses) {
  // Kernels do not declare which operands they write.
  for (auto [index, ref] : llvm::enumerate(getOperands().getAsRange<FlatSymbolRefAttr>())) {
    BufferAccess access{ref, /*reads=*/true, /*writes=*/true,
                        /*resident=*/false, getOperation()};
    access.serial = isSerialOperand(index);
    accesses.push_back(access);
  }
}

bool ComputeSetOp::isSerialOperand(unsigned operand) {
  std::optional<ArrayRef<int32_t>> serial = getSerialOperands();
  return serial && llvm::is_contained(*serial, static_cast<int32_t>(operand));
}

std::optional<ipu::BlockLayout> ComputeSetOp::getVertexLayout(unsigned operand,
                                                                BufferOp buffer) {
  std::optional<ipu::BlockLayout> layout =
      toBlockLayout(buffer.getTensorType(), exchangeWordBytes(buffer));
  // A chunk of a batch-local buffer (verify() holds it to that form).
  if (layout && isSerialOperand(operand) && layout->gridBatches == 1 &&
      layout->batchSplits.empty())
    layout->batches = 1;
  return layout;
}

//===----------------------------------------------------------------------===//
// LoopOp
//===----------------------------------------------------------------------===//

void LoopOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   int64_t count) {
  state.addAttribute(::mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getCountAttrName(state.name), builder.getI64IntegerAttr(count));
  state.addRegion()->emplaceBlock();
}

LogicalResult LoopOp::verify() {
  if (getCount() < 1 || getCount() > UINT32_MAX)
    return emitOpError("count must be in [1, 2^32), got ") << getCount();
  Block &body = getBody().front();
  auto first = body.empty() ? ProgramStepOpInterface()
                            : dyn_cast<ProgramStepOpInterface>(body.front());
  if (!first || first.getStepKind() != StepKind::Sync)
    return emitOpError("body must start with an ipu_exchange.sync: it "
                       "separates one iteration's last superstep from the "
                       "next one's first");
  unsigned depth = 0;
  for (Operation *parent = (*this)->getParentOp(); isa_and_nonnull<LoopOp>(parent);
       parent = parent->getParentOp())
    ++depth;
  if (depth >= kMaxLoopDepth)
    return emitOpError("lies ") << depth << " loops deep; loops nest at most "
                                << kMaxLoopDepth << " deep";
  for (Operation &op : body) {
    if (!isa<ProgramStepOpInterface>(op))
      return op.emitOpError("cannot be in a loop body: only syncs, exchange "
                            "phases, compute sets, streams out and loops repeat "
                            "(no buffers, kernels or streams in)");
    auto step = cast<ProgramStepOpInterface>(op);
    if (step.getStepKind() != StepKind::HostStream)
      continue;
    // A stream out leaves every iteration and the host keeps the last (a
    // repeated layer's checkpoints: its last layer's values); a stream in
    // would overwrite what the iterations computed, unless it streams one
    // layer per iteration (ipu_exchange.stream_in's layer_arguments, which
    // its verifier checks).
    SmallVector<BufferAccess> accesses;
    step.getBufferAccesses(accesses);
    if (llvm::any_of(accesses, [](const BufferAccess &access) { return access.writes; }) &&
        !op.hasAttr("layer_arguments"))
      return op.emitOpError("cannot be in a loop body: streams in run once, "
                            "unless they stream one layer per iteration");
  }
  return success();
}

StepKind LoopOp::getStepKind() { return StepKind::Loop; }

void LoopOp::getBufferAccesses(SmallVectorImpl<BufferAccess> &) {}

LogicalResult
ComputeSetOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  std::unique_ptr<ipu::ElementwiseKernel> generated;
  const ipu::KernelSpec *kernel = lookupComputeSetKernel(*this, generated);
  if (!kernel)
    return success(); // Reported by verify().
  std::optional<SmallVector<int32_t>> tiles = getTileList();
  if (!tiles)
    return emitOpError("tiles of ") << getTilesOfAttr()
                                    << ": not an ipu_tile.buffer with a layout";
  size_t paramCount = kernel->paramNames.size();
  // Derived parameters are checked like given ones: the blocks must form a
  // vertex the kernel can run.
  FailureOr<SmallVector<int64_t>> vertexParams = getVertexParams(symbolTable);
  if (failed(vertexParams))
    return failure();
  if (!getParams())
    for (auto [index, tile] : llvm::enumerate(*tiles))
      if (std::optional<std::string> error = ipu::checkKernelParams(
              *kernel, vertexParams->data() + index * paramCount))
        return emitOpError("vertex on tile ") << tile << ": " << *error;
  for (auto [operandIndex, ref] :
       llvm::enumerate(getOperands().getAsRange<FlatSymbolRefAttr>())) {
    auto buffer = lookupBuffer(getOperation(), ref);
    if (!buffer)
      return emitOpError("operand ") << ref << " is not an ipu_tile.buffer";
    std::optional<ipu::BlockLayout> layout = getVertexLayout(operandIndex, buffer);
    // Without a target the buffer's verifier has not checked its tiles.
    if (!layout || !lookupTarget(getOperation()))
      return success(); // Reported by the buffer's verifier.
    llvm::DenseMap<uint32_t, TileBlock> blockOn = blocksByTile(*layout);
    for (auto [index, tile] : llvm::enumerate(*tiles)) {
      auto block = blockOn.find(tile);
      if (block == blockOn.end())
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[operandIndex]
               << "' buffer " << ref << " has no block on that tile";
      const int64_t *params = vertexParams->data() + index * paramCount;
      if (kernel->classOperand == static_cast<int>(operandIndex)) {
        int64_t wanted = params[kernel->classParam];
        std::optional<ipu::MemoryClass> actual =
            toMachineClass(buffer.getMemoryClass());
        if (actual && static_cast<int64_t>(*actual) != wanted)
          return emitOpError("vertex on tile ")
                 << tile << ": parameter '"
                 << kernel->paramNames[kernel->classParam] << "' = " << wanted
                 << " but operand '" << kernel->operandNames[operandIndex]
                 << "' buffer " << ref << " is in "
                 << stringifyMemoryClass(buffer.getMemoryClass())
                 << " memory";
      }
      uint64_t need = ipu::kernelOperandBytes(*kernel, params, operandIndex);
      if (need > layout->maxBlockBytes())
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[operandIndex]
               << "' spans " << need << " bytes, buffer " << ref << " holds "
               << layout->maxBlockBytes();
      // The vertex works on exactly its tile's block: a smaller shape would
      // leave part of the block unread or unwritten. A block of several
      // batches is their matrices one after another, which a kernel sees
      // as one matrix of all their rows.
      const TileBlock at = block->second;
      const int64_t batches = layout->blockBatches(at.b);
      ipu::KernelOperandShape shape =
          ipu::kernelOperandShape(*kernel, params, operandIndex);
      auto blockText = [&] {
        std::string text;
        if (layout->batches != 1)
          text += std::to_string(batches) + "x";
        text += std::to_string(layout->blockRows(at.i)) + "x" +
                std::to_string(layout->blockCols(at.j)) + " " +
                std::string(ipu::elementTypeName(layout->type)) + " block (";
        if (layout->gridBatches != 1)
          text += std::to_string(at.b) + ", ";
        return text + std::to_string(at.i) + ", " + std::to_string(at.j) + ")";
      };
      uint64_t blockBytes = layout->blockBytes(at.b, at.i, at.j);
      if (!shape.type) {
        if (static_cast<uint64_t>(shape.cols) != blockBytes)
          return emitOpError("vertex on tile ")
                 << tile << ": operand '" << kernel->operandNames[operandIndex]
                 << "' is " << shape.cols << " bytes by its parameters, but "
                 << "buffer " << ref << " holds the " << blockBytes
                 << " bytes of its " << blockText() << " there";
      } else if (shape.rows != batches * layout->blockRows(at.i) ||
                 shape.cols != layout->blockCols(at.j) ||
                 *shape.type != layout->type) {
        return emitOpError("vertex on tile ")
               << tile << ": operand '" << kernel->operandNames[operandIndex]
               << "' is a " << shape.rows << "x" << shape.cols << " "
               << ipu::elementTypeName(*shape.type)
               << " block by its parameters, but buffer " << ref
               << " holds its " << blockText() << " there";
      }
    }
  }
  return success();
}
