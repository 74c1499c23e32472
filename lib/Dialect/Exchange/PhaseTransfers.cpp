//===- PhaseTransfers.cpp - The transfers an exchange phase implies -------===//

#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Layout/BlockLayout.h"

using namespace mlir;
using namespace mlir::ipu_exchange;

FailureOr<PhaseTransfers>
mlir::ipu_exchange::buildPhaseTransfers(PhaseOp phase,
                                        const ipu::TargetModel &target) {
  PhaseTransfers result;
  result.phase.tiles = target.tiles;
  for (auto copy : phase.getBody().getOps<CopyOp>()) {
    auto source = ipu_tile::lookupBuffer(copy, copy.getSourceAttr());
    auto dest = ipu_tile::lookupBuffer(copy, copy.getDestAttr());
    if (!source || !dest)
      return copy.emitOpError("source and dest must be ipu_tile.buffer symbols");
    std::optional<ipu::BlockLayout> from =
        ipu_tile::toBlockLayout(source.getTensorType(), target.exchangeWordBytes());
    std::optional<ipu::BlockLayout> to =
        ipu_tile::toBlockLayout(dest.getTensorType(), target.exchangeWordBytes());
    if (!from || !to)
      return copy.emitOpError("buffers need #ipu_tile.layout encodings");
    ipu::Rearrangement rearrangement;
    if (copy.getView().has_value() != copy.getPermutation().has_value())
      return copy.emitOpError("takes `view` and `permutation` together");
    if (copy.getOffsets().has_value() != copy.getSizes().has_value() ||
        (copy.getOffsets() && !copy.getView()))
      return copy.emitOpError("takes `offsets` and `sizes` together, with a `view`");
    std::optional<std::string> error;
    if (copy.getView()) {
      ipu::Permutation permutation{std::vector<int64_t>(copy.getView()->begin(), copy.getView()->end()),
                                     std::vector<int64_t>(copy.getPermutation()->begin(),
                                                          copy.getPermutation()->end()),
                                     {}, {}};
      if (copy.getOffsets()) {
        permutation.offsets.assign(copy.getOffsets()->begin(), copy.getOffsets()->end());
        permutation.sizes.assign(copy.getSizes()->begin(), copy.getSizes()->end());
      }
      error = ipu::planPermutation(*from, *to, permutation, target.tiles, rearrangement);
    } else {
      error = ipu::planRearrangement(*from, *to, target.tiles, rearrangement);
    }
    if (error)
      return copy.emitOpError("cannot rearrange ")
             << copy.getSourceAttr() << " into " << copy.getDestAttr() << ": "
             << *error;
    PhaseTransfers::Copy entry{source, dest,
                               static_cast<uint32_t>(result.phase.size())};
    result.copies.push_back(entry);
    const ipu::ExchangePhase &part = rearrangement.phase;
    for (size_t t = 0, e = part.size(); t < e; ++t) {
      result.phase.addTransfer(part.source[t], part.words[t],
                               part.destinationsBegin(t),
                               part.destinationsEnd(t) - part.destinationsBegin(t));
    }
    result.sourceOffset.insert(result.sourceOffset.end(),
                               rearrangement.sourceOffset.begin(),
                               rearrangement.sourceOffset.end());
    result.destOffset.insert(result.destOffset.end(),
                             rearrangement.destOffset.begin(),
                             rearrangement.destOffset.end());
  }
  return result;
}

FailureOr<ipu::ExchangeSchedule>
mlir::ipu_exchange::toExchangeSchedule(ScheduleAttr attr, Operation *user) {
  ipu::ExchangeSchedule schedule;
  schedule.strategy = stringifyStrategy(attr.getStrategy()).str();
  FailureOr<SmallVector<int32_t>> read = scheduleRuns(attr, user);
  if (failed(read))
    return failure();
  const SmallVector<int32_t> &runs = *read;
  schedule.runs.reserve(runs.size() / kScheduleRunFields);
  for (size_t i = 0; i + kScheduleRunFields <= runs.size(); i += kScheduleRunFields)
    schedule.runs.push_back({static_cast<uint32_t>(runs[i]),
                             static_cast<uint32_t>(runs[i + 1]),
                             static_cast<uint32_t>(runs[i + 2]),
                             static_cast<uint32_t>(runs[i + 3]), runs[i + 4] != 0});
  return schedule;
}

FailureOr<ipu::TransferAddresses>
mlir::ipu_exchange::transferAddresses(PhaseOp op, const PhaseTransfers &transfers) {
  ipu::TransferAddresses addresses;
  addresses.source.resize(transfers.phase.size());
  addresses.dest.resize(transfers.phase.size());
  const auto &copies = transfers.copies;
  for (size_t c = 0; c < copies.size(); ++c) {
    uint32_t base[2];
    ipu_tile::BufferOp buffers[2] = {copies[c].source, copies[c].dest};
    for (int i = 0; i < 2; ++i) {
      ipu_tile::BufferOp buffer = buffers[i];
      if (!buffer)
        return op.emitError("copy ") << c << " refers to a missing buffer";
      std::optional<int64_t> address = buffer.getAddress();
      if (!address)
        return buffer.emitError("buffer has no address: run --ipu-place-storage "
                                "first");
      base[i] = static_cast<uint32_t>(*address);
    }
    size_t end = c + 1 < copies.size() ? copies[c + 1].firstTransfer
                                       : transfers.phase.size();
    for (size_t t = copies[c].firstTransfer; t < end; ++t) {
      addresses.source[t] = base[0] + transfers.sourceOffset[t];
      addresses.dest[t] = base[1] + transfers.destOffset[t];
    }
  }
  return addresses;
}
