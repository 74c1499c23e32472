//===- LowerBound.cpp - A lower bound that sees broadcasts ----------------===//
//
// Two transfers conflict when they share the source tile or any destination
// tile: they cannot send in the same cycle. A clique of pairwise conflicting
// transfers therefore needs the sum of its words in cycles, preemption or
// not. The endpoint bound is the heaviest star: all transfers from one tile,
// or all transfers into one tile. Broadcasts make larger cliques possible:
// three broadcasts to {a, b}, {b, c} and {a, c} conflict pairwise while each
// tile sees only two of them.
//
// Transfers with the same source and destination set conflict and always
// meet the same others, so the search works on such bundles. Every tile's
// stars seed a clique, which grows greedily, heaviest bundle first, by the
// bundles that conflict with all of its members; candidates are the bundles
// that conflict with one member, and most fail against the first few
// others, so growing a seed costs about the neighbourhood of that member.
//
// When no tile is in two destination sets the exact strategy reaches the
// endpoint bound, so no clique can exceed it and the search is skipped.
//
//===----------------------------------------------------------------------===//

#include "ReceiverGroups.h"

#include <algorithm>

using namespace ipu;

namespace {

/// How many of the heaviest stars of each kind are grown into cliques. A
/// clique grown from a light star rarely beats the heaviest star, and
/// growing costs a neighbourhood scan each.
constexpr size_t kSeeds = 64;

class CliqueSearch {
public:
  CliqueSearch(const ExchangePhase &phase, const ReceiverGroups &groups)
      : phase(phase), groups(groups) {
    // Bundles: transfers sorted by (source, group).
    size_t n = phase.size();
    std::vector<std::pair<uint64_t, uint32_t>> order(n);
    for (size_t t = 0; t < n; ++t)
      order[t] = {(uint64_t(phase.source[t]) << 32) | groups.groupOf[t],
                  static_cast<uint32_t>(t)};
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < n; ++i) {
      if (i == 0 || order[i].first != order[i - 1].first) {
        source.push_back(static_cast<uint32_t>(order[i].first >> 32));
        group.push_back(static_cast<uint32_t>(order[i].first));
        weight.push_back(0);
      }
      weight.back() += phase.words[order[i].second];
    }
    uint32_t bundles = static_cast<uint32_t>(source.size());
    // Bundles by source tile and by destination tile.
    buildIndex(bySource, [&](auto add) {
      for (uint32_t b = 0; b < bundles; ++b)
        add(source[b], b);
    });
    buildIndex(byTile, [&](auto add) {
      for (uint32_t b = 0; b < bundles; ++b)
        for (uint32_t i = groups.groupBegin[group[b]];
             i < groups.groupBegin[group[b] + 1]; ++i)
          add(groups.groupTiles[i], b);
    });
    tileMark.assign(phase.tiles, 0);
    bundleMark.assign(bundles, 0);
    inClique.assign(bundles, 0);
  }

  uint64_t run() {
    uint64_t best = 0;
    // Seeds: stars by weight, heaviest first, ties by tile.
    std::vector<std::pair<uint64_t, uint32_t>> sendStars, receiveStars;
    for (uint32_t tile = 0; tile < phase.tiles; ++tile) {
      sendStars.push_back({starWeight(bySource, tile), tile});
      receiveStars.push_back({starWeight(byTile, tile), tile});
    }
    auto heaviestFirst = [](const std::pair<uint64_t, uint32_t> &a,
                            const std::pair<uint64_t, uint32_t> &b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::sort(sendStars.begin(), sendStars.end(), heaviestFirst);
    std::sort(receiveStars.begin(), receiveStars.end(), heaviestFirst);
    for (size_t i = 0; i < std::min(kSeeds, sendStars.size()); ++i)
      best = std::max(best, grow(bySource, sendStars[i].second));
    for (size_t i = 0; i < std::min(kSeeds, receiveStars.size()); ++i)
      best = std::max(best, grow(byTile, receiveStars[i].second));
    return best;
  }

private:
  struct Index {
    std::vector<uint32_t> begin, items;
  };

  template <typename Fill> void buildIndex(Index &index, Fill fill) {
    index.begin.assign(size_t(phase.tiles) + 1, 0);
    fill([&](uint32_t key, uint32_t) { ++index.begin[key + 1]; });
    for (uint32_t k = 0; k < phase.tiles; ++k)
      index.begin[k + 1] += index.begin[k];
    index.items.resize(index.begin[phase.tiles]);
    std::vector<uint32_t> next(index.begin.begin(), index.begin.end() - 1);
    fill([&](uint32_t key, uint32_t b) { index.items[next[key]++] = b; });
  }

  /// The star of `tile` in `index` lies inside a clique grown before: it
  /// would most likely grow into that clique again.
  bool covered(const Index &index, uint32_t tile) const {
    for (uint32_t i = index.begin[tile]; i < index.begin[tile + 1]; ++i)
      if (!inClique[index.items[i]])
        return false;
    return true;
  }

  uint64_t starWeight(const Index &index, uint32_t tile) const {
    uint64_t w = 0;
    for (uint32_t i = index.begin[tile]; i < index.begin[tile + 1]; ++i)
      w += weight[index.items[i]];
    return w;
  }

  /// Marks b's destination tiles with a fresh stamp.
  void markTiles(uint32_t b) {
    ++stamp;
    for (uint32_t i = groups.groupBegin[group[b]];
         i < groups.groupBegin[group[b] + 1]; ++i)
      tileMark[groups.groupTiles[i]] = stamp;
  }

  /// Whether bundle m conflicts with the bundle whose tiles are marked.
  bool conflictsMarked(uint32_t b, uint32_t m) const {
    if (source[b] == source[m] || group[b] == group[m])
      return true;
    for (uint32_t i = groups.groupBegin[group[m]];
         i < groups.groupBegin[group[m] + 1]; ++i)
      if (tileMark[groups.groupTiles[i]] == stamp)
        return true;
    return false;
  }

  /// The star of `tile` in `index`, grown into a heavier clique if it can.
  uint64_t grow(const Index &index, uint32_t tile) {
    std::vector<uint32_t> clique(index.items.begin() + index.begin[tile],
                                 index.items.begin() + index.begin[tile + 1]);
    if (clique.empty() || covered(index, tile))
      return 0;
    uint64_t total = 0;
    ++round;
    for (uint32_t b : clique) {
      total += weight[b];
      bundleMark[b] = round;
    }
    // Candidates: bundles conflicting with the member with the fewest
    // destination tiles (its neighbourhood is the smallest).
    uint32_t pivot = clique[0];
    for (uint32_t b : clique)
      if (groupSize(b) < groupSize(pivot))
        pivot = b;
    std::vector<uint32_t> candidates;
    auto consider = [&](uint32_t b) {
      if (bundleMark[b] != round) {
        bundleMark[b] = round;
        candidates.push_back(b);
      }
    };
    for (uint32_t i = bySource.begin[source[pivot]];
         i < bySource.begin[source[pivot] + 1]; ++i)
      consider(bySource.items[i]);
    for (uint32_t i = groups.groupBegin[group[pivot]];
         i < groups.groupBegin[group[pivot] + 1]; ++i) {
      uint32_t t = groups.groupTiles[i];
      for (uint32_t j = byTile.begin[t]; j < byTile.begin[t + 1]; ++j)
        consider(byTile.items[j]);
    }
    std::sort(candidates.begin(), candidates.end(),
              [&](uint32_t a, uint32_t b) {
                return weight[a] != weight[b] ? weight[a] > weight[b] : a < b;
              });
    for (uint32_t b : candidates) {
      markTiles(b);
      bool all = true;
      for (uint32_t m : clique)
        if (!conflictsMarked(b, m)) {
          all = false;
          break;
        }
      if (all) {
        clique.push_back(b);
        total += weight[b];
      }
    }
    for (uint32_t b : clique)
      inClique[b] = 1;
    return total;
  }

  uint32_t groupSize(uint32_t b) const {
    return groups.groupBegin[group[b] + 1] - groups.groupBegin[group[b]];
  }

  const ExchangePhase &phase;
  const ReceiverGroups &groups;
  std::vector<uint32_t> source, group;
  std::vector<uint64_t> weight;
  Index bySource, byTile;
  std::vector<uint32_t> tileMark, bundleMark;
  std::vector<uint8_t> inClique;
  uint32_t stamp = 0, round = 0;
};

} // namespace

uint64_t ipu::broadcastLowerBound(const ExchangePhase &phase) {
  uint64_t endpoint = endpointLowerBound(phase);
  bool broadcast = false;
  for (size_t t = 0, e = phase.size(); t < e && !broadcast; ++t)
    broadcast = phase.destBegin[t + 1] - phase.destBegin[t] > 1;
  if (!broadcast)
    return endpoint;
  ReceiverGroups groups = groupReceivers(phase);
  if (groups.disjoint)
    return endpoint;
  return std::max(endpoint, CliqueSearch(phase, groups).run());
}
