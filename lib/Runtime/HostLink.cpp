//===- HostLink.cpp - What a host stream costs over the link -------------===//

#include "IPU/Runtime/HostLink.h"

#include "IPU/Support/ElementType.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

using namespace ipu;

namespace {

using Interval = std::pair<uint64_t, uint64_t>; // [begin, end) host bytes.

/// The host bytes one piece touches, as intervals (adjacent ones merged).
void pieceIntervals(const StreamPiece &piece, uint64_t elementBytes,
                    std::vector<Interval> &out) {
  auto add = [&](uint64_t begin, uint64_t bytes) {
    if (!bytes)
      return;
    if (!out.empty() && out.back().second == begin)
      out.back().second += bytes;
    else
      out.emplace_back(begin, begin + bytes);
  };
  if (piece.hostElementStride == 0) {
    if (piece.hostPitch == piece.rowBytes) {
      add(piece.hostOffset, uint64_t(piece.rows) * piece.rowBytes);
      return;
    }
    for (uint64_t r = 0; r < piece.rows; ++r)
      add(piece.hostOffset + r * piece.hostPitch, piece.rowBytes);
    return;
  }
  // A transposing piece: tile row r gathers elements e at
  // hostOffset + r * hostPitch + e * hostElementStride.
  const uint64_t elements = elementBytes ? piece.rowBytes / elementBytes : 0;
  if (piece.hostPitch == elementBytes) {
    for (uint64_t e = 0; e < elements; ++e)
      add(piece.hostOffset + e * piece.hostElementStride, uint64_t(piece.rows) * elementBytes);
    return;
  }
  for (uint64_t e = 0; e < elements; ++e)
    for (uint64_t r = 0; r < piece.rows; ++r)
      add(piece.hostOffset + r * piece.hostPitch + e * piece.hostElementStride, elementBytes);
}

} // namespace

HostLinkLoad ipu::hostLinkLoad(const HostStream &stream, const TargetModel &target) {
  HostLinkLoad load;
  const uint64_t elementBytes = ipu::elementBytes(stream.type);
  // Pieces with the same host footprint are copies of one another: the
  // first lands from the link, the others come from it over the exchange.
  using Footprint = std::tuple<uint64_t, uint32_t, uint32_t, uint64_t, uint64_t>;
  // Each footprint's landing tile, whether a copy is made of it, and how
  // many pieces write it.
  struct Landing {
    uint32_t tile = 0;
    bool copied = false;
    uint32_t pieces = 0;
  };
  std::map<Footprint, Landing> lander;
  std::map<uint32_t, uint64_t> sent, received;
  std::vector<Interval> intervals;
  uint64_t pieceBytes = 0, uniqueFootprintBytes = 0;
  for (const StreamPiece &piece : stream.pieces) {
    const uint64_t bytes = uint64_t(piece.rows) * piece.rowBytes;
    pieceBytes += bytes;
    const Footprint key{piece.hostOffset, piece.rows, piece.rowBytes, piece.hostPitch,
                        piece.hostElementStride};
    auto [it, first] = lander.try_emplace(key, Landing{piece.tile, false, 0});
    Landing &landing = it->second;
    load.copies = std::max(load.copies, ++landing.pieces);
    if (!first) {
      received[piece.tile] += bytes;
      // A multicast: the landed copy is sent once, whatever its receivers.
      if (!landing.copied)
        sent[landing.tile] += bytes;
      landing.copied = true;
      continue;
    }
    uniqueFootprintBytes += bytes;
    pieceIntervals(piece, elementBytes, intervals);
  }
  std::sort(intervals.begin(), intervals.end());
  uint64_t end = 0;
  for (const Interval &interval : intervals) {
    const uint64_t begin = std::max(interval.first, end);
    if (interval.second > begin)
      load.linkBytes += interval.second - begin;
    end = std::max(end, interval.second);
  }
  load.fanOutBytes = pieceBytes - load.linkBytes;
  if (!stream.toDevice || load.fanOutBytes == 0)
    return load;
  for (const auto &[tile, bytes] : sent)
    load.busiestTileFanOutBytes = std::max(load.busiestTileFanOutBytes, bytes);
  for (const auto &[tile, bytes] : received)
    load.busiestTileFanOutBytes = std::max(load.busiestTileFanOutBytes, bytes);
  // Footprints that overlap without being equal also copy bytes; where
  // they go is not tracked, so they count spread over the stream's tiles.
  const uint64_t overlapBytes = uniqueFootprintBytes - load.linkBytes;
  if (overlapBytes) {
    std::vector<uint32_t> tiles;
    for (const StreamPiece &piece : stream.pieces)
      tiles.push_back(piece.tile);
    std::sort(tiles.begin(), tiles.end());
    const uint64_t count = std::unique(tiles.begin(), tiles.end()) - tiles.begin();
    load.busiestTileFanOutBytes =
        std::max(load.busiestTileFanOutBytes, (overlapBytes + count - 1) / count);
  }
  const uint64_t wordBytes = std::max<uint64_t>(1, target.exchangeWordBytes());
  load.fanOutCycles =
      target.plannedExchangeCycles((load.busiestTileFanOutBytes + wordBytes - 1) / wordBytes);
  return load;
}
