//===- PlaceStorage.cpp - Addresses for every buffer ----------------------===//

#include "IPU/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Storage/Allocator.h"
#include "IPU/Storage/ReservedArea.h"
#include "MemoryProfile.h"
#include "PlaceStorage.h"
#include "IPU/Support/Escape.h"
#include "IPU/Support/Log.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUPLACESTORAGE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {
struct PlaceStoragePass
    : public mlir::ipu_compiler::impl::IPUPlaceStorageBase<PlaceStoragePass> {
  using IPUPlaceStorageBase::IPUPlaceStorageBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    for (auto program : module.getOps<ipu_tile::ProgramOp>())
      if (failed(mlir::ipu_compiler::placeProgram(program, *target, memoryProfile)))
        return signalPassFailure();
  }
};
} // namespace

LogicalResult mlir::ipu_compiler::placeProgram(ipu_tile::ProgramOp program,
                                      const ipu::TargetModel &target,
                                      StringRef memoryProfile,
                                      uint32_t leastReservedBytes) {
  {
    FailureOr<mlir::ipu_compiler::ProgramStorage> storage =
        mlir::ipu_compiler::planProgramStorage(program, target, leastReservedBytes);
    if (failed(storage))
      return failure();
    SmallVector<ipu_tile::BufferOp> &buffers = storage->buffers;
    std::vector<ipu::BufferRequest> &requests = storage->requests;
    ipu::Placement &placement = storage->placement;
    ipu::MemoryOverflow &overflow = storage->overflow;
    ipu_tile::ProgramLiveness &liveness = storage->liveness;
    const uint32_t reserved = storage->reservedBytes;
    if (std::optional<std::string> &error = storage->error) {
      // The memory map: the buffer that does not fit and the largest ones
      // live beside it, each at its own op (the matmul that made it).
      InFlightDiagnostic diag = program.emitError("storage does not fit on '")
                                << target.name << "': " << *error;
      const ipu::BufferRequest &failing = requests[overflow.request];
      uint64_t taken = 0;
      for (auto [index, address] : overflow.live)
        taken += requests[index].bytes;
      diag.attachNote(buffers[overflow.request].getLoc())
          << "'" << failing.name << "' needs " << overflow.bytesNeeded << " "
          << ipu::memoryClassName(overflow.memoryClass) << " bytes on tile "
          << overflow.tile << " at step " << overflow.step << ", of "
          << overflow.bytesAvailable << " allocatable there; the "
          << overflow.live.size() << " buffers live beside it take " << taken;
      constexpr size_t kMaxNotes = 8;
      for (size_t i = 0; i < overflow.live.size() && i < kMaxNotes; ++i) {
        auto [index, address] = overflow.live[i];
        diag.attachNote(buffers[index].getLoc())
            << "'" << requests[index].name << "' holds "
            << llvm::formatv("[{0:x}, {1:x})", address,
                             uint64_t(address) + requests[index].bytes)
                   .str()
            << " (" << requests[index].bytes << " bytes) on tile "
            << overflow.tile << ", live at step " << overflow.step;
      }
      if (overflow.live.size() > kMaxNotes)
        diag.attachNote() << overflow.live.size() - kMaxNotes
                          << " smaller buffers are live there too";
      return failure();
    }

    if (!memoryProfile.empty()) {
      std::error_code error;
      llvm::raw_fd_ostream os(memoryProfile, error);
      if (error)
        return program.emitError("cannot write the memory profile '")
               << memoryProfile << "': " << error.message();
      mlir::ipu_compiler::writeMemoryProfile(os, program, liveness, requests, placement,
                                    reserved, target);
    }

    OpBuilder builder(program);
    for (auto [buffer, address] : llvm::zip(buffers, placement.address))
      buffer.setAddressAttr(builder.getI64IntegerAttr(address));
    program.setReservedBytesAttr(builder.getI64IntegerAttr(reserved));
    program.setMemoryPeakAttr(builder.getDenseI64ArrayAttr(
        {int64_t(placement.peakBytes[0]), int64_t(placement.peakBytes[1])}));
    program.setMemoryBoundAttr(builder.getDenseI64ArrayAttr(
        {int64_t(placement.boundBytes[0]), int64_t(placement.boundBytes[1])}));
    std::string line = llvm::formatv(
        "buffers={0} reservedBytes={1} peakStandardBytes={2} "
        "boundStandardBytes={3} peakInterleavedBytes={4} "
        "boundInterleavedBytes={5} standardBytesAvailable={6} "
        "interleavedBytesAvailable={7}",
        buffers.size(), reserved, placement.peakBytes[0],
        placement.boundBytes[0], placement.peakBytes[1], placement.boundBytes[1],
        target.allocatableBytes(ipu::MemoryClass::Standard),
        target.allocatableBytes(ipu::MemoryClass::Interleaved));
    ipu::logInfo("ipu-place-storage: placed storage program=" +
                   program.getSymName().str() + " " + line);
    // Remarks carry the location only: printing a full-scale program with
    // every diagnostic would bury the explanation.
    mlir::emitRemark(program.getLoc()) << "placed " << line;
    return success();
  }
}
std::string mlir::ipu_compiler::ReservedAreaParts::str() const {
  // The phases with the most code there, largest first.
  std::vector<std::pair<std::string, uint64_t>> largest = exchangeCodeByPhase;
  std::stable_sort(largest.begin(), largest.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  constexpr size_t kListed = 3;
  std::string phases;
  for (size_t i = 0; i < largest.size() && i < kListed; ++i)
    phases += (i ? ", '" : " ('") + ipu::escapeText(largest[i].first) + "' " +
              std::to_string(largest[i].second);
  if (!phases.empty())
    phases += largest.size() > kListed ? ", ...)" : ")";
  // Laid out together on whole memory elements (ReservedArea::bytesOn).
  return "tile " + std::to_string(tile) + ": " + std::to_string(exchangeCodeBytes) +
         " of exchange code" + phases + ", " + std::to_string(vertexStateBytes) +
         " of vertex state, " + std::to_string(kernelCodeBytes) +
         " of kernel code, together on whole memory elements";
}

FailureOr<uint32_t>
mlir::ipu_compiler::reservedAreaBytes(ArrayRef<Operation *> steps,
                             const ipu::TargetModel &target, bool placed,
                             ReservedAreaParts *parts) {
  // Each phase's exchange code comes from a timed schedule: read from the IR
  // here, then scheduled (before placement) and timed in parallel, as plain
  // data; the results do not depend on the threads.
  struct PhaseWork {
    ipu::ExchangePhase phase;
    ipu::TransferAddresses addresses;
    ipu::ExchangeSchedule schedule;
    std::vector<uint32_t> codeBytesPerTile;
  };
  std::vector<PhaseWork> work;
  llvm::DenseMap<Operation *, size_t> workOf;
  for (Operation *stepOp : steps) {
    auto phase = dyn_cast<ipu_exchange::PhaseOp>(stepOp);
    if (!phase)
      continue;
    FailureOr<ipu_exchange::PhaseTransfers> transfers =
        ipu_exchange::buildPhaseTransfers(phase, target);
    if (failed(transfers))
      return failure();
    PhaseWork item;
    if (!placed) {
      // Before placement: each buffer of the phase at a base of its own,
      // from an SRAM conflict unit of its own as placement will keep the
      // phase's sources and destinations, its transfers at their offsets.
      llvm::DenseMap<Operation *, uint32_t> baseOf;
      uint32_t next = target.allocatableBase(ipu::MemoryClass::Standard);
      auto base = [&](ipu_tile::BufferOp buffer) -> uint32_t {
        auto [it, inserted] = baseOf.try_emplace(buffer.getOperation(), 0);
        if (inserted) {
          uint64_t bytes = 0;
          if (std::optional<ipu::BlockLayout> layout =
                  ipu_tile::toBlockLayout(buffer.getTensorType(), target.exchangeWordBytes()))
            bytes = layout->maxBlockBytes();
          it->second = ipu::provisionalBufferBase(target, bytes, next);
        }
        return it->second;
      };
      item.addresses.source.resize(transfers->phase.size());
      item.addresses.dest.resize(transfers->phase.size());
      const auto &copies = transfers->copies;
      for (size_t c = 0; c < copies.size(); ++c) {
        const uint32_t sourceBase = base(copies[c].source),
                       destBase = base(copies[c].dest);
        size_t end = c + 1 < copies.size() ? copies[c + 1].firstTransfer
                                           : transfers->phase.size();
        for (size_t t = copies[c].firstTransfer; t < end; ++t) {
          item.addresses.source[t] = sourceBase + transfers->sourceOffset[t];
          item.addresses.dest[t] = destBase + transfers->destOffset[t];
        }
      }
    } else {
      if (!phase.getScheduleAttr())
        return phase.emitError("phase is not scheduled: run "
                               "--ipu-schedule-exchange");
      FailureOr<ipu::TransferAddresses> addresses =
          ipu_exchange::transferAddresses(phase, *transfers);
      if (failed(addresses))
        return failure();
      item.addresses = std::move(*addresses);
      FailureOr<ipu::ExchangeSchedule> schedule =
          ipu_exchange::toExchangeSchedule(phase.getScheduleAttr(), phase);
      if (failed(schedule))
        return failure();
      item.schedule = std::move(*schedule);
    }
    item.phase = std::move(transfers->phase);
    workOf[stepOp] = work.size();
    work.push_back(std::move(item));
  }
  llvm::parallelFor(0, work.size(), [&](size_t i) {
    PhaseWork &item = work[i];
    if (!placed)
      item.schedule = ipu::scheduleTimedPhase(target, item.phase, item.addresses);
    item.codeBytesPerTile =
        ipu::timePhase(target.exchange,
                         ipu::timedMessages(target.exchange, item.phase, item.schedule, item.addresses))
            .codeBytesPerTile;
  });

  ipu::ReservedArea area(target);
  // What each step adds to tile 0, for the debug log.
  std::vector<std::pair<uint64_t, std::string>> onFirstTile;
  // A loop body's steps once: one copy of their code serves every iteration.
  for (Operation *stepOp : steps) {
    Operation &op = *stepOp;
    const uint64_t before = area.perTile()[0];
    llvm::scope_exit note([&] {
      if (area.perTile()[0] != before)
        onFirstTile.push_back(
            {area.perTile()[0] - before,
             op.getName().getStringRef().str() + " " +
                 (op.getAttrOfType<StringAttr>("sym_name")
                      ? op.getAttrOfType<StringAttr>("sym_name").str()
                      : std::string())});
    });
    if (isa<ipu_exchange::PhaseOp>(op)) {
      area.addExchangeCode(work[workOf.lookup(stepOp)].codeBytesPerTile);
    } else if (auto computeSet = dyn_cast<ipu_tile::ComputeSetOp>(op)) {
      std::unique_ptr<ipu::ElementwiseKernel> generated;
      const ipu::KernelSpec *kernel =
          ipu_tile::lookupComputeSetKernel(computeSet, generated);
      // The verifier has resolved every compute set's tiles.
      SmallVector<int32_t> list = *computeSet.getTileList();
      std::vector<uint32_t> tiles(list.begin(), list.end());
      area.addVertices(tiles, kernel->operandNames.size(), kernel->paramNames.size());
      // A generated kernel's code, once on every tile that runs it.
      if (generated)
        area.addKernelCode(tiles, computeSet.getKernel().str(),
                           ipu::elementwiseCodeBytes(target, generated->body()));
    }
  }
  if (ipu::debugEnabled())
    for (const auto &[bytes, what] : onFirstTile)
      ipu::logDebug("ipu-place-storage: reserved on tile 0 bytes=" +
                      std::to_string(bytes) + " step=\"" + what + "\"");
  if (parts) {
    const uint32_t busiest = area.busiestTile();
    parts->tile = busiest;
    parts->exchangeCodeBytes = area.exchangeCodeBytes(busiest);
    parts->vertexStateBytes = area.vertexStateBytes(busiest);
    parts->kernelCodeBytes = area.kernelCodeBytes(busiest);
    parts->exchangeCodeByPhase.clear();
    for (Operation *stepOp : steps)
      if (auto phase = dyn_cast<ipu_exchange::PhaseOp>(stepOp))
        if (const uint32_t bytes = work[workOf.lookup(stepOp)].codeBytesPerTile[busiest])
          parts->exchangeCodeByPhase.emplace_back(phase.getSymName().str(), bytes);
  }
  return static_cast<uint32_t>(area.bytes());
}

FailureOr<mlir::ipu_compiler::ProgramStorage>
mlir::ipu_compiler::planProgramStorage(ipu_tile::ProgramOp program,
                              const ipu::TargetModel &target,
                              uint32_t leastReservedBytes) {
  ProgramStorage storage;
  // Liveness in program steps (buffers are not steps), as the program's
  // verifier checks it.
  storage.liveness = ipu_tile::computeLiveness(program);
  storage.buffers = storage.liveness.buffers;
  for (unsigned index = 0; index < storage.buffers.size(); ++index) {
    ipu_tile::BufferOp buffer = storage.buffers[index];
    std::optional<ipu::BlockLayout> layout =
        ipu_tile::toBlockLayout(buffer.getTensorType(), target.exchangeWordBytes());
    ipu::BufferRequest request;
    request.name = buffer.getSymName().str();
    request.memoryClass = ipu_tile::toMachineClass(buffer.getMemoryClass());
    request.bytes = layout->maxBlockBytes();
    request.alignment = target.bufferAlignmentBytes;
    request.tiles = layout->tileList();
    llvm::sort(request.tiles);
    std::tie(request.firstUse, request.lastUse) = storage.liveness.live[index];
    if (!storage.liveness.used[index])
      buffer.emitWarning("buffer is never used");
    storage.requests.push_back(std::move(request));
  }
  // A phase's sources and destinations keep to SRAM conflict units of their
  // own where there is room: the exchange serialises a send's reads and a
  // receive's writes in one unit of a tile.
  llvm::DenseMap<Operation *, uint32_t> requestOf;
  for (unsigned index = 0; index < storage.buffers.size(); ++index)
    requestOf[storage.buffers[index].getOperation()] = index;
  for (Operation *stepOp : storage.liveness.steps) {
    auto phase = dyn_cast<ipu_exchange::PhaseOp>(stepOp);
    if (!phase)
      continue;
    SmallVector<uint32_t> sources, dests;
    for (auto copy : phase.getBody().front().getOps<ipu_exchange::CopyOp>()) {
      ipu_tile::BufferOp source = ipu_tile::lookupBuffer(copy, copy.getSourceAttr());
      ipu_tile::BufferOp dest = ipu_tile::lookupBuffer(copy, copy.getDestAttr());
      auto s = source ? requestOf.find(source.getOperation()) : requestOf.end();
      auto d = dest ? requestOf.find(dest.getOperation()) : requestOf.end();
      if (s != requestOf.end())
        sources.push_back(s->second);
      if (d != requestOf.end())
        dests.push_back(d->second);
    }
    for (uint32_t a : sources)
      for (uint32_t b : dests) {
        ipu::BufferRequest &source = storage.requests[a];
        ipu::BufferRequest &dest = storage.requests[b];
        if (a == b || source.memoryClass != dest.memoryClass)
          continue;
        if (llvm::is_contained(source.apartFrom, b))
          continue;
        source.apartFrom.push_back(b);
        dest.apartFrom.push_back(a);
      }
  }

  FailureOr<uint32_t> reserved =
      reservedAreaBytes(storage.liveness.steps, target, /*placed=*/false,
                        &storage.reservedParts);
  if (failed(reserved))
    return failure();
  storage.reservedBytes = std::max(*reserved, leastReservedBytes);
  storage.error = ipu::placeBuffers(target, storage.requests, storage.reservedBytes,
                                      storage.placement, &storage.overflow);
  return storage;
}
