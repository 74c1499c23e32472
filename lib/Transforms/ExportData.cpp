//===- ExportData.cpp - Move a program's large constants to a data file ---===//

#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/DataFile.h"
#include "IPU/Support/Escape.h"
#include "IPU/Transforms/Passes.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUEXPORTDATA
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {
/// Writes blocks to the data file, one constant or run table at a time.
struct BlockWriter {
  ipu::DataFileWriter file;
  uint64_t minimumBytes = 0;
  bool failedWrite = false;

  /// `value` as a block of the file when it is a dense, non-splat constant
  /// of at least minimumBytes; otherwise unchanged.
  Attribute moveOut(Attribute value) {
    auto elements = dyn_cast<ElementsAttr>(value);
    auto type = elements ? dyn_cast<RankedTensorType>(elements.getType())
                         : RankedTensorType();
    if (!type || elements.isSplat() || failedWrite)
      return value;
    FailureOr<std::vector<char>> bytes = ipu_tile::constantBytes(elements);
    if (failed(bytes) || bytes->size() < minimumBytes)
      return value;
    std::optional<uint64_t> offset = file.append(bytes->data(), bytes->size());
    if (!offset) {
      failedWrite = true;
      return value;
    }
    return ipu_tile::DataAttr::get(type.getContext(), type, *offset);
  }
};

struct ExportDataPass
    : public mlir::ipu_compiler::impl::IPUExportDataBase<ExportDataPass> {
  using IPUExportDataBase::IPUExportDataBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const StringRef recordName = ipu_tile::IPUTileDialect::getDataFileAttrName();
    if (file.empty()) {
      module.emitError("--ipu-export-data needs file=<path>");
      return signalPassFailure();
    }
    if (module->hasAttr(recordName)) {
      module.emitError("the module already keeps its data in a file ('")
          << recordName << "')";
      return signalPassFailure();
    }
    BlockWriter writer;
    writer.minimumBytes = minimumBytes;
    if (std::optional<std::string> error = writer.file.open(file)) {
      module.emitError("cannot write the data file '")
          << ipu::escapeText(file) << "': " << *error;
      return signalPassFailure();
    }
    // In program order, so the same program gives the same file.
    WalkResult walk = module.walk([&](Operation *op) {
      if (auto in = dyn_cast<ipu_exchange::StreamInOp>(op)) {
        if (std::optional<Attribute> constant = in.getConstant())
          in.setConstantAttr(writer.moveOut(*constant));
        if (ArrayAttr layers = in.getLayerConstantsAttr()) {
          SmallVector<Attribute> moved;
          for (Attribute layer : layers)
            moved.push_back(writer.moveOut(layer));
          in.setLayerConstantsAttr(ArrayAttr::get(&getContext(), moved));
        }
      } else if (auto phase = dyn_cast<ipu_exchange::PhaseOp>(op)) {
        if (ipu_exchange::ScheduleAttr schedule = phase.getScheduleAttr())
          phase.setScheduleAttr(ipu_exchange::ScheduleAttr::get(
              &getContext(), schedule.getStrategy(), schedule.getTransfers(),
              schedule.getBound(), schedule.getHorizon(), writer.moveOut(schedule.getRuns())));
      }
      return writer.failedWrite ? WalkResult::interrupt() : WalkResult::advance();
    });
    std::optional<std::string> error = writer.file.close();
    if (walk.wasInterrupted() || error) {
      module.emitError("cannot write the data file '")
          << ipu::escapeText(file) << "': " << error.value_or("write failed");
      return signalPassFailure();
    }
    module->setAttr(recordName,
                    ipu_tile::DataFileAttr::get(&getContext(), file, writer.file.size(),
                                                writer.file.checksum()));
  }

};
} // namespace
