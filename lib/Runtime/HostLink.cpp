//===- HostLink.cpp - What a host stream costs over the link -------------===//

#include "IPU/Runtime/HostLink.h"

#include "IPU/Exchange/Timing.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Support/Escape.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
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

/// Pieces with the same host footprint are copies of one another.
using Footprint = std::tuple<uint64_t, uint32_t, uint32_t, uint64_t, uint64_t>;

/// A stream's pieces by host footprint, and the host bytes they touch.
struct StreamBytes {
  /// Per footprint, in the order of its first piece: that piece, and the
  /// tiles of its pieces, the landing tile (the first piece's) first.
  std::vector<const StreamPiece *> firstPiece;
  std::vector<std::vector<uint32_t>> holders;
  uint64_t pieceBytes = 0;
  uint32_t copies = 0;
  /// Host bytes the pieces touch, each once.
  uint64_t linkBytes = 0;
  /// Per footprint: its bytes that no other footprint touches (nor the same
  /// one twice), which go to its copies.
  std::vector<uint64_t> ownBytes;
  /// Bytes several footprints (or one twice) touch, keyed by the
  /// footprint that lands them (the first) and by every tile that holds
  /// them, once per holding, the landing tile first.
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint64_t> sharedBytes;
};

StreamBytes streamBytesOf(const HostStream &stream) {
  StreamBytes out;
  std::map<Footprint, uint32_t> index;
  for (const StreamPiece &piece : stream.pieces) {
    out.pieceBytes += uint64_t(piece.rows) * piece.rowBytes;
    const Footprint key{piece.hostOffset, piece.rows, piece.rowBytes, piece.hostPitch,
                        piece.hostElementStride};
    auto [it, first] = index.try_emplace(key, uint32_t(out.holders.size()));
    if (first) {
      out.firstPiece.push_back(&piece);
      out.holders.emplace_back();
    }
    std::vector<uint32_t> &tiles = out.holders[it->second];
    tiles.push_back(piece.tile);
    out.copies = std::max(out.copies, uint32_t(tiles.size()));
  }
  // A sweep over every footprint's host intervals: each stretch of bytes
  // between two interval ends is held by the same footprints throughout.
  struct End {
    uint64_t at;
    uint32_t footprint;
    int32_t step; // +1 where an interval begins, -1 where it ends.
  };
  std::vector<End> ends;
  std::vector<Interval> intervals;
  const uint64_t elementBytes = ipu::elementBytes(stream.type);
  for (uint32_t f = 0; f < out.firstPiece.size(); ++f) {
    intervals.clear();
    pieceIntervals(*out.firstPiece[f], elementBytes, intervals);
    for (const Interval &interval : intervals) {
      ends.push_back({interval.first, f, +1});
      ends.push_back({interval.second, f, -1});
    }
  }
  // The ends at one place are taken together: their order does not matter.
  std::sort(ends.begin(), ends.end(), [](const End &a, const End &b) { return a.at < b.at; });
  out.ownBytes.assign(out.holders.size(), 0);
  // The footprints holding the stretch, in footprint order (mostly none or
  // one), and how many of each one's intervals hold it.
  std::vector<uint32_t> active, times(out.holders.size(), 0);
  std::vector<uint32_t> tiles;
  uint64_t at = 0;
  for (size_t i = 0; i < ends.size();) {
    const uint64_t next = ends[i].at;
    if (!active.empty() && next > at) {
      const uint64_t bytes = next - at;
      out.linkBytes += bytes;
      if (active.size() == 1 && times[active.front()] == 1) {
        out.ownBytes[active.front()] += bytes;
      } else {
        tiles.clear();
        for (uint32_t footprint : active)
          for (uint32_t k = 0; k < times[footprint]; ++k)
            tiles.insert(tiles.end(), out.holders[footprint].begin(),
                         out.holders[footprint].end());
        out.sharedBytes[{active.front(), tiles}] += bytes;
      }
    }
    for (; i < ends.size() && ends[i].at == next; ++i) {
      const uint32_t footprint = ends[i].footprint;
      auto place = std::lower_bound(active.begin(), active.end(), footprint);
      if (ends[i].step > 0) {
        if (times[footprint]++ == 0)
          active.insert(place, footprint);
      } else if (--times[footprint] == 0) {
        active.erase(place);
      }
    }
    at = next;
  }
  return out;
}

/// Builds the fan-out phase of bytes held by `tiles` (once per holding,
/// the landing tile first): one transfer from the landing tile to every
/// other tile holding them, and a copy to itself for each further holding
/// of one tile, summed per tile in `selfCopyBytes`.
void addFanOut(HostFanOut &fanOut, std::vector<uint64_t> &selfCopyBytes, uint64_t wordBytes,
               std::vector<uint32_t> tiles, uint64_t bytes) {
  const uint32_t landing = tiles.front();
  tiles.erase(tiles.begin()); // The bytes the link lands there.
  std::sort(tiles.begin(), tiles.end());
  std::vector<uint32_t> receivers;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (tiles[i] != landing && (i == 0 || tiles[i - 1] != tiles[i]))
      receivers.push_back(tiles[i]);
    else
      selfCopyBytes[tiles[i]] += bytes;
  }
  if (receivers.empty())
    return;
  fanOut.phase.addTransfer(landing, uint32_t((bytes + wordBytes - 1) / wordBytes), receivers);
  fanOut.bytes.push_back(bytes);
}

HostFanOut fanOutOf(const StreamBytes &streamBytes, const TargetModel &target) {
  HostFanOut fanOut;
  fanOut.phase.tiles = target.tiles;
  const uint64_t wordBytes = std::max<uint64_t>(1, target.exchangeWordBytes());
  std::vector<uint64_t> selfCopyBytes(target.tiles, 0);
  for (uint32_t f = 0; f < streamBytes.holders.size(); ++f)
    if (streamBytes.ownBytes[f] && streamBytes.holders[f].size() > 1)
      addFanOut(fanOut, selfCopyBytes, wordBytes, streamBytes.holders[f],
                streamBytes.ownBytes[f]);
  for (const auto &[key, bytes] : streamBytes.sharedBytes)
    addFanOut(fanOut, selfCopyBytes, wordBytes, key.second, bytes);
  for (uint32_t tile = 0; tile < target.tiles; ++tile)
    if (selfCopyBytes[tile]) {
      fanOut.phase.addTransfer(tile, uint32_t((selfCopyBytes[tile] + wordBytes - 1) / wordBytes),
                               {tile});
      fanOut.bytes.push_back(selfCopyBytes[tile]);
    }
  if (fanOut.phase.size() == 0)
    return fanOut;
  fanOut.addresses = packedAddresses(target, fanOut.phase);
  fanOut.schedule = scheduleTimedPhase(target, fanOut.phase, fanOut.addresses);
  fanOut.cycles = timedPhaseCost(target, fanOut.phase, fanOut.schedule, fanOut.addresses).cycles;
  return fanOut;
}

/// Why `stream` has no fan-out phase on `target`, if it has none.
std::optional<std::string> refusal(const HostStream &stream, const TargetModel &target) {
  for (size_t p = 0; p < stream.pieces.size(); ++p)
    if (stream.pieces[p].tile >= target.tiles)
      return "stream '" + escapeText(stream.name) + "' piece " + std::to_string(p) + ": tile " +
             std::to_string(stream.pieces[p].tile) + " is not a tile of " + target.name + " (" +
             std::to_string(target.tiles) + " tiles)";
  return std::nullopt;
}

} // namespace

HostFanOut ipu::hostFanOut(const HostStream &stream, const TargetModel &target) {
  if (std::optional<std::string> why = refusal(stream, target)) {
    HostFanOut refused;
    refused.error = std::move(why);
    return refused;
  }
  return fanOutOf(streamBytesOf(stream), target);
}

HostLinkLoad ipu::hostLinkLoad(const HostStream &stream, const TargetModel &target) {
  const StreamBytes streamBytes = streamBytesOf(stream);
  HostLinkLoad load;
  load.copies = streamBytes.copies;
  load.linkBytes = streamBytes.linkBytes;
  load.fanOutBytes = streamBytes.pieceBytes - streamBytes.linkBytes;
  if (stream.toDevice && load.fanOutBytes && !refusal(stream, target))
    load.fanOutCycles = fanOutOf(streamBytes, target).cycles;
  return load;
}
