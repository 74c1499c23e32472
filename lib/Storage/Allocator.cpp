//===- Allocator.cpp - Placing buffers in tile memory --------------------===//
//
// First fit in decreasing size. Each request keeps its tile set as a bitset
// over the words its tiles span only, so that a buffer on one tile costs one
// word and a buffer on every tile of a 1472-tile chip costs 23 words. To find
// the buffers a request conflicts with, we either walk a per-tile index of
// placed buffers or scan all placed buffers with the bitsets, whichever is
// cheaper for that request.
//
//===----------------------------------------------------------------------===//

#include "IPU/Storage/Allocator.h"

#include <algorithm>
#include <sstream>
#include <cinttypes>
#include <cstdio>
#include <numeric>

using namespace ipu;

namespace {

std::string formatHex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// A tile set as bitset words [firstWord, firstWord + wordCount) stored in a
/// shared pool.
struct TileBits {
  uint32_t firstWord = 0;
  uint32_t wordCount = 0;
  size_t poolOffset = 0;
};

class TileBitPool {
public:
  TileBits add(const std::vector<uint32_t> &tiles) {
    TileBits bits;
    if (tiles.empty())
      return bits;
    bits.firstWord = tiles.front() / 64;
    bits.wordCount = tiles.back() / 64 - bits.firstWord + 1;
    bits.poolOffset = pool.size();
    pool.resize(pool.size() + bits.wordCount, 0);
    for (uint32_t tile : tiles)
      pool[bits.poolOffset + tile / 64 - bits.firstWord] |= uint64_t(1)
                                                            << (tile % 64);
    return bits;
  }

  bool intersect(const TileBits &a, const TileBits &b) const {
    uint32_t begin = std::max(a.firstWord, b.firstWord);
    uint32_t end =
        std::min(a.firstWord + a.wordCount, b.firstWord + b.wordCount);
    for (uint32_t word = begin; word < end; ++word)
      if (pool[a.poolOffset + word - a.firstWord] &
          pool[b.poolOffset + word - b.firstWord])
        return true;
    return false;
  }

  bool contains(const TileBits &a, uint32_t tile) const {
    uint32_t word = tile / 64;
    if (word < a.firstWord || word >= a.firstWord + a.wordCount)
      return false;
    return (pool[a.poolOffset + word - a.firstWord] >> (tile % 64)) & 1;
  }

private:
  std::vector<uint64_t> pool;
};

bool liveRangesOverlap(const BufferRequest &a, const BufferRequest &b) {
  return a.firstUse <= b.lastUse && b.firstUse <= a.lastUse;
}

std::optional<std::string> checkRequest(const TargetModel &target,
                                        const BufferRequest &request) {
  std::string prefix = "buffer '" + request.name + "': ";
  if (request.tiles.empty())
    return prefix + "empty tile list";
  if (request.firstUse > request.lastUse)
    return prefix + "first use (step " + std::to_string(request.firstUse) +
           ") is after last use (step " + std::to_string(request.lastUse) + ")";
  if (request.memoryClass != MemoryClass::Standard &&
      request.memoryClass != MemoryClass::Interleaved)
    return prefix + "unknown memory class " +
           std::to_string(unsigned(request.memoryClass));
  for (size_t i = 0; i < request.tiles.size(); ++i) {
    if (request.tiles[i] >= target.tiles)
      return prefix + "tile " + std::to_string(request.tiles[i]) +
             " out of range (target has " + std::to_string(target.tiles) +
             " tiles)";
    // The bitsets and the bound would silently count a duplicate twice.
    if (i > 0 && request.tiles[i] <= request.tiles[i - 1])
      return prefix + "tile list is not sorted and unique (tile " +
             std::to_string(request.tiles[i]) + " after " +
             std::to_string(request.tiles[i - 1]) + ")";
  }
  return std::nullopt;
}

/// The max-live bound of one memory class: an event sweep over program
/// steps on every tile. Events are bucketed per tile (CSR) so that the cost
/// is linear in the total tile count of the requests plus a sort per tile.
void computeBound(const TargetModel &target,
                  const std::vector<BufferRequest> &requests,
                  const std::vector<uint32_t> &members, uint64_t &bound,
                  uint32_t &boundTile) {
  bound = 0;
  boundTile = 0;
  struct Event {
    uint64_t step; // lastUse + 1 may exceed uint32_t.
    int64_t delta;
  };
  std::vector<size_t> begin(target.tiles + 1, 0);
  for (uint32_t index : members) {
    if (requests[index].bytes == 0)
      continue;
    for (uint32_t tile : requests[index].tiles)
      begin[tile + 1] += 2;
  }
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<Event> events(begin.back());
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for (uint32_t index : members) {
    const BufferRequest &request = requests[index];
    if (request.bytes == 0)
      continue;
    for (uint32_t tile : request.tiles) {
      events[fill[tile]++] = {request.firstUse, int64_t(request.bytes)};
      events[fill[tile]++] = {uint64_t(request.lastUse) + 1,
                              -int64_t(request.bytes)};
    }
  }
  for (uint32_t tile = 0; tile < target.tiles; ++tile) {
    auto first = events.begin() + begin[tile];
    auto last = events.begin() + begin[tile + 1];
    // At equal steps, releases come first: a buffer whose last use is the
    // step before another's first use does not overlap it.
    std::sort(first, last, [](const Event &a, const Event &b) {
      return a.step != b.step ? a.step < b.step : a.delta < b.delta;
    });
    int64_t live = 0;
    for (auto it = first; it != last; ++it) {
      live += it->delta;
      if (uint64_t(live) > bound) {
        bound = uint64_t(live);
        boundTile = tile;
      }
    }
  }
}

/// Describes why `request` does not fit: the tile of the request where the
/// conflicting buffers take the most bytes, the step where most of them are
/// live, and the memory map of the buffers live there.
std::string describeOverflow(const std::vector<BufferRequest> &requests,
                             const std::vector<uint32_t> &address,
                             const std::vector<TileBits> &bits,
                             const TileBitPool &pool, uint32_t failing,
                             const std::vector<uint32_t> &conflicts,
                             uint64_t base, uint64_t end,
                             MemoryOverflow *overflow) {
  const BufferRequest &request = requests[failing];
  uint32_t worstTile = request.tiles.front();
  uint64_t worstBytes = 0;
  for (uint32_t tile : request.tiles) {
    uint64_t bytes = 0;
    for (uint32_t other : conflicts)
      if (pool.contains(bits[other], tile))
        bytes += requests[other].bytes;
    if (bytes > worstBytes) {
      worstBytes = bytes;
      worstTile = tile;
    }
  }

  // The step within the request's live range where most conflicting bytes
  // are live on that tile.
  std::vector<uint32_t> onTile;
  for (uint32_t other : conflicts)
    if (pool.contains(bits[other], worstTile))
      onTile.push_back(other);
  uint32_t worstStep = request.firstUse;
  uint64_t worstLive = 0;
  for (uint32_t other : onTile) {
    // The live sum changes only where a buffer starts, so those steps and
    // the request's own first step are the only candidates.
    uint32_t step = std::max(requests[other].firstUse, request.firstUse);
    uint64_t live = 0;
    for (uint32_t candidate : onTile)
      if (requests[candidate].firstUse <= step &&
          step <= requests[candidate].lastUse)
        live += requests[candidate].bytes;
    if (live > worstLive || (live == worstLive && step < worstStep)) {
      worstLive = live;
      worstStep = step;
    }
  }
  std::vector<uint32_t> live;
  for (uint32_t other : onTile)
    if (requests[other].firstUse <= worstStep &&
        worstStep <= requests[other].lastUse)
      live.push_back(other);
  std::sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) {
    return address[a] != address[b] ? address[a] < address[b] : a < b;
  });
  if (overflow) {
    overflow->request = failing;
    overflow->tile = worstTile;
    overflow->step = worstStep;
    overflow->memoryClass = request.memoryClass;
    overflow->bytesNeeded = request.bytes;
    overflow->bytesAvailable = end > base ? end - base : 0;
    overflow->live.clear();
    for (uint32_t other : live)
      overflow->live.push_back({other, address[other]});
    // Largest first, then by address.
    std::sort(overflow->live.begin(), overflow->live.end(),
              [&](const auto &a, const auto &b) {
                uint64_t x = requests[a.first].bytes, y = requests[b.first].bytes;
                return x != y ? x > y : a.second < b.second;
              });
  }

  std::string message = "tile " + std::to_string(worstTile) + ": " +
                        std::string(memoryClassName(request.memoryClass)) +
                        " memory overflow: buffer '" + request.name + "' (" +
                        std::to_string(request.bytes) +
                        " bytes) does not fit; " +
                        std::to_string(end > base ? end - base : 0) +
                        " bytes available from " + formatHex(base);
  if (live.empty()) {
    message += ", nothing else live on tile " + std::to_string(worstTile);
    return message;
  }
  message += ", live on tile " + std::to_string(worstTile) + " at step " +
             std::to_string(worstStep) + ":";
  constexpr size_t kMaxListed = 24;
  for (size_t i = 0; i < live.size() && i < kMaxListed; ++i) {
    const BufferRequest &other = requests[live[i]];
    message += std::string(i ? ", '" : " '") + other.name + "' [" +
               formatHex(address[live[i]]) + ", " +
               formatHex(uint64_t(address[live[i]]) + other.bytes) + ") " +
               std::to_string(other.bytes) + " bytes";
  }
  if (live.size() > kMaxListed)
    message +=
        ", ... and " + std::to_string(live.size() - kMaxListed) + " more";
  uint64_t liveBytes = 0;
  for (uint32_t other : live)
    liveBytes += requests[other].bytes;
  message += " (" + std::to_string(liveBytes) + " bytes live)";
  if (onTile.size() < conflicts.size())
    message += "; " + std::to_string(conflicts.size() - onTile.size()) +
               " more conflicting buffers on other tiles of '" + request.name +
               "'";
  return message;
}

} // namespace

std::optional<std::string>
ipu::placeBuffers(const TargetModel &target,
                  const std::vector<BufferRequest> &requests,
                  uint32_t reservedBytesPerTile, Placement &placement,
                  MemoryOverflow *overflow) {
  placement = Placement();
  placement.address.assign(requests.size(), 0);
  for (const BufferRequest &request : requests)
    if (auto error = checkRequest(target, request))
      return error;

  TileBitPool pool;
  std::vector<TileBits> bits(requests.size());
  for (size_t i = 0; i < requests.size(); ++i)
    bits[i] = pool.add(requests[i].tiles);

  // Memory classes never interact, so each is placed on its own.
  for (MemoryClass memoryClass :
       {MemoryClass::Standard, MemoryClass::Interleaved}) {
    unsigned classIndex = unsigned(memoryClass);
    std::vector<uint32_t> members;
    for (uint32_t i = 0; i < requests.size(); ++i)
      if (requests[i].memoryClass == memoryClass)
        members.push_back(i);
    if (members.empty())
      continue;

    computeBound(target, requests, members, placement.boundBytes[classIndex],
                 placement.peakTile[classIndex]);

    // The base includes the reserved bytes, so peakBytes counts what the
    // placement hands out above everything reserved and stays comparable
    // with the max-live bound.
    uint64_t base =
        uint64_t(target.allocatableBase(memoryClass)) +
        (memoryClass == MemoryClass::Standard ? reservedBytesPerTile : 0);
    uint64_t end = target.region(memoryClass).end();

    // The SRAM conflict unit around an address (ExchangeTiming.h: an
    // element below interleavedBase, two from there).
    const ExchangeTimingModel &model = target.exchange;
    auto unitBegin = [&](uint64_t a) -> uint64_t {
      if (a < model.interleavedBase)
        return a / model.memoryElementBytes * model.memoryElementBytes;
      return model.interleavedBase + (a - model.interleavedBase) /
                                         model.interleavedUnitBytes *
                                         model.interleavedUnitBytes;
    };
    auto unitEnd = [&](uint64_t a) -> uint64_t { // Of the unit holding a - 1.
      uint64_t begin = unitBegin(a - 1);
      return begin + (begin < model.interleavedBase ? model.memoryElementBytes
                                                     : model.interleavedUnitBytes);
    };

    // First fit in one order of the members; on overflow, the memory map.
    // With `apart`, a request's apartFrom partners already placed count as
    // taking their whole conflict units, unless that leaves it no room.
    auto placeInOrder = [&](const std::vector<uint32_t> &order,
                            std::vector<uint32_t> &address, uint64_t &highest,
                            MemoryOverflow *overflowOut,
                            bool apart) -> std::optional<std::string> {
      std::vector<std::vector<uint32_t>> placedOnTile(target.tiles);
      std::vector<uint32_t> placed;
      // Stamp per request: the last candidate search that already saw it.
      std::vector<uint32_t> seenBy(requests.size(), UINT32_MAX);
      std::vector<uint32_t> conflicts;
      std::vector<std::pair<uint64_t, uint64_t>> taken;
      highest = base;
      for (uint32_t index : order) {
        const BufferRequest &request = requests[index];
        if (request.bytes == 0) {
          address[index] = uint32_t(base);
          continue;
        }
        conflicts.clear();
        // Larger than the whole class: no search needed (and the sums below
        // stay far from overflow).
        if (request.bytes > (end > base ? end - base : 0))
          return describeOverflow(requests, address, bits, pool, index,
                                  conflicts, base, end, overflowOut);
        size_t indexCost = 0;
        for (uint32_t tile : request.tiles)
          indexCost += placedOnTile[tile].size();
        // A scan of all placed buffers costs a live-range test each plus a
        // bitset test for the overlapping ones; the tile index costs a visit
        // per (tile, buffer) pair.
        if (indexCost <= placed.size() * 4) {
          for (uint32_t tile : request.tiles)
            for (uint32_t other : placedOnTile[tile]) {
              if (seenBy[other] == index)
                continue;
              seenBy[other] = index;
              if (liveRangesOverlap(request, requests[other]))
                conflicts.push_back(other);
            }
        } else {
          for (uint32_t other : placed)
            if (liveRangesOverlap(request, requests[other]) &&
                pool.intersect(bits[index], bits[other]))
              conflicts.push_back(other);
        }

        uint64_t alignment = std::max<uint32_t>(request.alignment, 1);
        auto firstFit = [&](bool widenPartners) {
          taken.clear();
          for (uint32_t other : conflicts) {
            uint64_t begin = address[other], finish = begin + requests[other].bytes;
            if (widenPartners &&
                std::find(request.apartFrom.begin(), request.apartFrom.end(), other) !=
                    request.apartFrom.end()) {
              begin = unitBegin(begin);
              finish = unitEnd(finish);
            }
            taken.push_back({begin, finish});
          }
          std::sort(taken.begin(), taken.end());
          uint64_t candidate = alignUp(base, alignment);
          for (const auto &[takenBegin, takenEnd] : taken) {
            if (takenEnd <= candidate)
              continue;
            if (takenBegin >= candidate + request.bytes)
              break;
            candidate = alignUp(takenEnd, alignment);
          }
          return candidate;
        };
        // Where partners cannot be kept out of each other's units, the
        // address that shares the fewest bytes with their units: a tile
        // still serialises the reads and writes that meet in a unit, so
        // less shared means less the exchange has to wait.
        auto leastSharedFit = [&] {
          std::vector<std::pair<uint64_t, uint64_t>> partnerUnits;
          for (uint32_t other : conflicts)
            if (std::find(request.apartFrom.begin(), request.apartFrom.end(), other) !=
                request.apartFrom.end())
              partnerUnits.push_back({unitBegin(address[other]),
                                      unitEnd(address[other] + requests[other].bytes)});
          auto shared = [&](uint64_t at) {
            uint64_t bytes = 0;
            for (const auto &[unitsBegin, unitsEnd] : partnerUnits)
              bytes += std::max<int64_t>(0, int64_t(std::min(unitsEnd, at + request.bytes)) -
                                                int64_t(std::max(unitsBegin, at)));
            return bytes;
          };
          taken.clear();
          for (uint32_t other : conflicts)
            taken.push_back({address[other], address[other] + requests[other].bytes});
          std::sort(taken.begin(), taken.end());
          uint64_t best = UINT64_MAX, bestShared = UINT64_MAX;
          auto consider = [&](uint64_t at, uint64_t gapEnd) {
            if (at % alignment || at < base || at + request.bytes > std::min(gapEnd, end))
              return;
            uint64_t bytes = shared(at);
            if (bytes < bestShared || (bytes == bestShared && at < best)) {
              best = at;
              bestShared = bytes;
            }
          };
          // Each gap between placed conflicting buffers: its first and last
          // fitting address, and those that start or end on a unit boundary.
          uint64_t gapBegin = base;
          for (size_t k = 0; k <= taken.size(); ++k) {
            uint64_t gapEnd = k < taken.size() ? taken[k].first : end;
            uint64_t first = alignUp(gapBegin, alignment);
            if (gapEnd > first && gapEnd - first >= request.bytes) {
              uint64_t last = (gapEnd - request.bytes) / alignment * alignment;
              consider(first, gapEnd);
              consider(last, gapEnd);
              for (uint64_t boundary = unitEnd(first + 1); boundary <= gapEnd;
                   boundary = unitEnd(boundary + 1)) {
                consider(boundary, gapEnd);
                if (boundary >= request.bytes)
                  consider((boundary - request.bytes) / alignment * alignment, gapEnd);
              }
            }
            if (k < taken.size())
              gapBegin = std::max(gapBegin, taken[k].second);
          }
          return best == UINT64_MAX ? firstFit(false) : best;
        };
        uint64_t candidate = firstFit(apart && !request.apartFrom.empty());
        if (candidate + request.bytes > end && apart && !request.apartFrom.empty())
          candidate = leastSharedFit();
        if (candidate + request.bytes > end) {
          std::sort(conflicts.begin(), conflicts.end());
          return describeOverflow(requests, address, bits, pool, index,
                                  conflicts, base, end, overflowOut);
        }
        address[index] = uint32_t(candidate);
        highest = std::max(highest, candidate + request.bytes);
        placed.push_back(index);
        for (uint32_t tile : request.tiles)
          placedOnTile[tile].push_back(index);
      }
      return std::nullopt;
    };

    // Decreasing size first, ties by request index, so the result is
    // deterministic. When that fragments the class too much, long-lived
    // buffers first (resident weights at the bottom, transients packed
    // above them), then in order of first use. The first order that fits
    // stands; if none does, the first one's memory map is the error.
    auto bySize = [&](uint32_t a, uint32_t b) {
      return requests[a].bytes != requests[b].bytes ? requests[a].bytes > requests[b].bytes
                                                    : a < b;
    };
    auto lifetime = [&](uint32_t a) { return requests[a].lastUse - requests[a].firstUse; };
    std::vector<std::vector<uint32_t>> orders(3, members);
    std::sort(orders[0].begin(), orders[0].end(), bySize);
    std::sort(orders[1].begin(), orders[1].end(), [&](uint32_t a, uint32_t b) {
      return lifetime(a) != lifetime(b) ? lifetime(a) > lifetime(b) : bySize(a, b);
    });
    std::sort(orders[2].begin(), orders[2].end(), [&](uint32_t a, uint32_t b) {
      return requests[a].firstUse != requests[b].firstUse
                 ? requests[a].firstUse < requests[b].firstUse
                 : bySize(a, b);
    });
    uint64_t highest = base;
    std::optional<std::string> firstError;
    std::vector<uint32_t> firstAddress; // What the memory map shows.
    bool fitted = false;
    // Each order with partners kept apart, then each without (keeping them
    // apart spends room that another order may need).
    bool anyApart = false;
    for (uint32_t index : members)
      anyApart |= !requests[index].apartFrom.empty();
    const size_t attempts = orders.size() * (anyApart ? 2 : 1);
    for (size_t attempt = 0; attempt < attempts && !fitted; ++attempt) {
      std::vector<uint32_t> address = placement.address;
      const bool apart = anyApart && attempt < orders.size();
      std::optional<std::string> error =
          placeInOrder(orders[attempt % orders.size()], address, highest,
                       attempt == 0 ? overflow : nullptr, apart);
      if (!error) {
        placement.address = std::move(address);
        fitted = true;
      } else if (attempt == 0) {
        firstError = std::move(error);
        firstAddress = std::move(address);
      }
    }
    if (!fitted) {
      placement.address = std::move(firstAddress);
      // Whether any placement could fit, or first fit fragments the class.
      std::ostringstream bound;
      bound << "; the most bytes live at once in this class are "
            << placement.boundBytes[classIndex] << " on tile "
            << placement.peakTile[classIndex] << ", of "
            << (end > base ? end - base : 0) << " available";
      return *firstError + bound.str();
    }
    placement.peakBytes[classIndex] = highest - base;
  }
  return std::nullopt;
}
