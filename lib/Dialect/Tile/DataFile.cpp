//===- DataFile.cpp - Constants in the program's data file ----------------===//

#include "DataFileCache.h"

#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/Escape.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::ipu_tile;

LogicalResult DataAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               RankedTensorType type, uint64_t offset) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return emitError() << "a data block holds a static tensor of whole-byte "
                          "integers or floats, not "
                       << type;
  if (offset % ipu::kDataBlockAlignment != 0 || offset < ipu::kDataBlockAlignment)
    return emitError() << "a data block starts at a multiple of "
                       << ipu::kDataBlockAlignment
                       << " bytes after the file's magic, not at " << offset;
  return success();
}

uint64_t DataAttr::getBytes() const {
  return static_cast<uint64_t>(getType().getNumElements()) *
         (getType().getElementTypeBitWidth() / 8);
}

ShapedType mlir::ipu_tile::constantType(Attribute value) {
  if (auto elements = dyn_cast<ElementsAttr>(value))
    return dyn_cast<ShapedType>(elements.getType());
  if (auto data = dyn_cast<DataAttr>(value))
    return data.getType();
  return ShapedType();
}

/// Where a reader looks for `path`: as written, then under its own name in
/// the directory of the IR the module was read from.
static SmallVector<std::string, 2> candidatePaths(StringRef path, ModuleOp module) {
  SmallVector<std::string, 2> candidates{path.str()};
  auto file = module->getLoc()->findInstanceOf<FileLineColLoc>();
  if (!file)
    return candidates;
  SmallString<256> beside(llvm::sys::path::parent_path(file.getFilename().getValue()));
  llvm::sys::path::append(beside, llvm::sys::path::filename(path));
  if (beside.str() != path)
    candidates.push_back(beside.str().str());
  return candidates;
}

FailureOr<ArrayRef<char>> mlir::ipu_tile::dataBlockBytes(DataAttr data,
                                                        Operation *user) {
  auto module = isa<ModuleOp>(user) ? cast<ModuleOp>(user)
                                    : user->getParentOfType<ModuleOp>();
  auto record = module ? module->getAttrOfType<DataFileAttr>(
                             IPUTileDialect::getDataFileAttrName())
                       : DataFileAttr();
  if (!record)
    return user->emitError("reads ")
           << data << ", but its module names no data file ('"
           << IPUTileDialect::getDataFileAttrName() << "')";
  auto *dialect = data.getContext()->getLoadedDialect<IPUTileDialect>();
  DataFileCache &cache = dialect->getDataFileCache();
  const ipu::DataFile *file = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    std::string reasons;
    for (const std::string &path : candidatePaths(record.getPath(), module)) {
      const std::string key = path + "#" + std::to_string(record.getChecksum());
      auto known = cache.files.find(key);
      if (known != cache.files.end()) {
        file = known->second.get();
        break;
      }
      // A missing file at the first place is expected when the IR moved;
      // any other refusal is the answer.
      if (!llvm::sys::fs::exists(path)) {
        reasons += (reasons.empty() ? "" : "; ") + std::string("no file '") +
                   ipu::escapeText(path) + "'";
        continue;
      }
      std::unique_ptr<ipu::DataFile> read;
      if (std::optional<std::string> error = ipu::DataFile::open(
              path, record.getBytes(), record.getChecksum(), read))
        return user->emitError("cannot read the data file: ") << *error;
      file = read.get();
      cache.files[key] = std::move(read);
      break;
    }
    if (!file)
      return user->emitError("cannot find the data file the module names: ")
             << reasons;
  }
  const char *bytes = file->block(data.getOffset(), data.getBytes());
  if (!bytes)
    return user->emitError("data block of ")
           << data.getBytes() << " bytes at offset " << data.getOffset()
           << " lies outside the data file's " << file->size() << " bytes";
  return ArrayRef<char>(bytes, data.getBytes());
}

FailureOr<std::vector<char>> mlir::ipu_tile::constantBytes(Attribute value,
                                                          Operation *user) {
  if (auto data = dyn_cast<DataAttr>(value)) {
    FailureOr<ArrayRef<char>> bytes = dataBlockBytes(data, user);
    if (failed(bytes))
      return failure();
    return std::vector<char>(bytes->begin(), bytes->end());
  }
  auto elements = dyn_cast<ElementsAttr>(value);
  FailureOr<std::vector<char>> bytes =
      elements ? constantBytes(elements) : FailureOr<std::vector<char>>(failure());
  if (failed(bytes))
    return user->emitError("constant of type ")
           << constantType(value) << " has no data (an elided or missing resource blob)";
  return bytes;
}
