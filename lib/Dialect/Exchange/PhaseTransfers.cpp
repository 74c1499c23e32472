//===- PhaseTransfers.cpp - The transfers an exchange phase implies -------===//

#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Layout/BlockLayout.h"

using namespace mlir;
using namespace mlir::ipu_exchange;

FailureOr<PhaseTransfers>
mlir::ipu_exchange::buildPhaseTransfers(PhaseOp phase,
                                        const ::ipu::TargetModel &target) {
  PhaseTransfers result;
  result.phase.tiles = target.tiles;
  for (auto copy : phase.getBody().getOps<CopyOp>()) {
    auto source = ipu_tile::lookupBuffer(copy, copy.getSourceAttr());
    auto dest = ipu_tile::lookupBuffer(copy, copy.getDestAttr());
    if (!source || !dest)
      return copy.emitOpError("source and dest must be ipu_tile.buffer symbols");
    std::optional<::ipu::BlockLayout> from =
        ipu_tile::toBlockLayout(source.getTensorType());
    std::optional<::ipu::BlockLayout> to =
        ipu_tile::toBlockLayout(dest.getTensorType());
    if (!from || !to)
      return copy.emitOpError("buffers need #ipu_tile.layout encodings");
    ::ipu::Rearrangement rearrangement;
    if (copy.getView().has_value() != copy.getPermutation().has_value())
      return copy.emitOpError("takes `view` and `permutation` together");
    std::optional<std::string> error;
    if (copy.getView()) {
      ::ipu::Permutation permutation{std::vector<int64_t>(copy.getView()->begin(), copy.getView()->end()),
                                     std::vector<int64_t>(copy.getPermutation()->begin(),
                                                          copy.getPermutation()->end())};
      error = ::ipu::planPermutation(*from, *to, permutation, target.tiles, rearrangement);
    } else {
      error = ::ipu::planRearrangement(*from, *to, target.tiles, rearrangement);
    }
    if (error)
      return copy.emitOpError("cannot rearrange ")
             << copy.getSourceAttr() << " into " << copy.getDestAttr() << ": "
             << *error;
    PhaseTransfers::Copy entry{source, dest,
                               static_cast<uint32_t>(result.phase.size())};
    result.copies.push_back(entry);
    const ::ipu::ExchangePhase &part = rearrangement.phase;
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

::ipu::ExchangeSchedule mlir::ipu_exchange::toExchangeSchedule(ScheduleAttr attr) {
  ::ipu::ExchangeSchedule schedule;
  schedule.strategy = stringifyStrategy(attr.getStrategy()).str();
  auto values = attr.getRuns().getValues<int32_t>();
  SmallVector<int32_t> runs(values.begin(), values.end());
  schedule.runs.reserve(runs.size() / 4);
  for (size_t i = 0; i + 3 < runs.size(); i += 4)
    schedule.runs.push_back({static_cast<uint32_t>(runs[i]),
                             static_cast<uint32_t>(runs[i + 1]),
                             static_cast<uint32_t>(runs[i + 2]),
                             static_cast<uint32_t>(runs[i + 3])});
  return schedule;
}
