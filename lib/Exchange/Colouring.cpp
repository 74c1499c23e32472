//===- Colouring.cpp - Few-colour proper colourings of conflict graphs -----===//

#include "IPU/Exchange/Colouring.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>

using namespace ipu;

namespace {

/// A small deterministic generator (xorshift64*): the same moves on every
/// platform, which std::mt19937 with std::uniform_int_distribution does not
/// promise.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed | 1) {}
  uint32_t below(uint32_t bound) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return uint32_t(((state * 0x2545F4914F6CDD1DULL) >> 32) % bound);
  }

private:
  uint64_t state;
};

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// Greedy: each vertex, by decreasing degree (ties: index), takes the least
/// colour none of its coloured neighbours has.
GraphColouring greedyColouring(const std::vector<std::vector<uint32_t>> &adjacency) {
  const size_t n = adjacency.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (adjacency[a].size() != adjacency[b].size())
      return adjacency[a].size() > adjacency[b].size();
    return a < b;
  });
  GraphColouring result;
  result.colour.assign(n, kNone);
  std::vector<uint32_t> seenBy; // seenBy[c] == v + 1: a neighbour of v has c.
  for (uint32_t v : order) {
    seenBy.resize(result.colours + 1, 0);
    for (uint32_t u : adjacency[v])
      if (result.colour[u] != kNone)
        seenBy[result.colour[u]] = v + 1;
    uint32_t c = 0;
    while (seenBy[c] == v + 1)
      ++c;
    result.colour[v] = c;
    result.colours = std::max(result.colours, c + 1);
  }
  return result;
}

/// TabuCol for `colours` colours from `start` (whose larger colours are
/// redrawn): moves one conflicting vertex to the colour that removes the
/// most conflicts, not back to a colour it left recently unless that gives
/// the fewest conflicts yet. Returns an empty vector when `moves` moves
/// leave a conflict.
std::vector<uint32_t> tabuColouring(const std::vector<std::vector<uint32_t>> &adjacency,
                                    std::vector<uint32_t> colour, uint32_t colours,
                                    uint64_t moves, Random &random) {
  const size_t n = adjacency.size();
  for (uint32_t &c : colour)
    if (c >= colours)
      c = random.below(colours);
  // neighbours[v * colours + c]: v's neighbours of colour c.
  std::vector<uint32_t> neighbours(n * colours, 0);
  for (size_t v = 0; v < n; ++v)
    for (uint32_t u : adjacency[v])
      ++neighbours[v * colours + colour[u]];
  // The vertices with a neighbour of their own colour, with their places.
  std::vector<uint32_t> conflicted, place(n, kNone);
  auto refresh = [&](uint32_t v) {
    const bool conflicts = neighbours[v * colours + colour[v]] > 0;
    if (conflicts && place[v] == kNone) {
      place[v] = uint32_t(conflicted.size());
      conflicted.push_back(v);
    } else if (!conflicts && place[v] != kNone) {
      uint32_t last = conflicted.back();
      conflicted[place[v]] = last;
      place[last] = place[v];
      conflicted.pop_back();
      place[v] = kNone;
    }
  };
  int64_t conflicts = 0;
  for (uint32_t v = 0; v < n; ++v) {
    conflicts += neighbours[v * colours + colour[v]];
    refresh(v);
  }
  conflicts /= 2;
  int64_t fewest = conflicts;
  std::vector<uint64_t> tabuUntil(n * colours, 0);
  for (uint64_t move = 1; conflicts > 0; ++move) {
    if (move > moves)
      return {};
    int64_t bestDelta = std::numeric_limits<int64_t>::max();
    uint32_t bestVertex = kNone, bestColour = kNone, ties = 0;
    for (uint32_t v : conflicted) {
      const int64_t now = neighbours[v * colours + colour[v]];
      for (uint32_t c = 0; c < colours; ++c) {
        if (c == colour[v])
          continue;
        const int64_t delta = int64_t(neighbours[v * colours + c]) - now;
        if (tabuUntil[v * colours + c] >= move && conflicts + delta >= fewest)
          continue;
        if (delta < bestDelta) {
          bestDelta = delta;
          bestVertex = v;
          bestColour = c;
          ties = 1;
        } else if (delta == bestDelta && random.below(++ties) == 0) {
          bestVertex = v;
          bestColour = c;
        }
      }
    }
    if (bestVertex == kNone)
      continue; // Every move is tabu: wait for one to be allowed again.
    const uint32_t old = colour[bestVertex];
    colour[bestVertex] = bestColour;
    conflicts += bestDelta;
    fewest = std::min(fewest, conflicts);
    for (uint32_t u : adjacency[bestVertex]) {
      --neighbours[u * colours + old];
      ++neighbours[u * colours + bestColour];
      refresh(u);
    }
    refresh(bestVertex);
    // Hertz and de Werra's tenure: a random part plus a share of the
    // conflicted vertices (Galinier and Hao's 0.6).
    tabuUntil[bestVertex * colours + old] =
        move + 10 + random.below(10) + uint64_t(conflicted.size()) * 6 / 10;
  }
  return colour;
}

} // namespace

GraphColouring ipu::colourGraph(const std::vector<std::vector<uint32_t>> &adjacency,
                                uint64_t movesPerAttempt) {
  GraphColouring best = greedyColouring(adjacency);
  Random random(0x9E3779B97F4A7C15ULL);
  while (best.colours > 1) {
    std::vector<uint32_t> fewer =
        tabuColouring(adjacency, best.colour, best.colours - 1, movesPerAttempt, random);
    if (fewer.empty())
      break;
    best.colour = std::move(fewer);
    --best.colours;
  }
  return best;
}
