//===- ExactScheduler.cpp - Exchange schedules on the endpoint bound ------===//
//
// Unicast transfers form a bipartite multigraph, senders x receivers, with
// words as edge weights; its max weighted degree Delta is the endpoint bound,
// and by König's theorem Delta cycles suffice when words may be split.
//
// Broadcasts fit the same model when destination sets are grouped: all
// transfers with one destination set form a receiver "group" whose tiles
// receive the same word in the same cycle. When no tile belongs to two
// groups, a group receives exactly what each of its tiles receives, and the
// bipartite model senders x groups is exact. When groups overlap, overlapping
// groups are merged into one receiver (transfers into it are serialised):
// still legal, no longer on the bound; scheduleBest then prefers another
// strategy.
//
// Transfers with the same sender and receiver are bundled into one edge and
// keep their words in index order inside it. Every vertex with fewer words
// than Delta idles for the difference, which completes the graph to a
// Delta-regular one. The graph is then swept in time: a perfect matching is
// kept at every cycle, an edge stays matched until its words run out, and
// when edges finish their endpoints are re-matched by augmenting paths.
// Every vertex loses one word or idle cycle per cycle, so what remains stays
// regular, a perfect matching always exists (Hall), and the sweep ends at
// Delta. Edges leave the matching before they finish only along augmenting
// paths, and the searches prefer paths that move idle pairs instead (see
// Sweep), so most transfers stay in one run. The cost is one heap event per
// finished edge plus the searches, independent of word counts: a transfer
// of a billion words is one edge.
//
//===----------------------------------------------------------------------===//

#include "ReceiverGroups.h"
#include "SchedulerDetail.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <queue>
#include <unordered_map>

using namespace ipu;

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// Disjoint-set forest over groups, for merging overlapping ones.
struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(uint32_t n) : parent(n) {
    for (uint32_t i = 0; i < n; ++i)
      parent[i] = i;
  }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    // The smaller id wins so that the result does not depend on order.
    if (a != b)
      parent[std::max(a, b)] = std::min(a, b);
  }
};

} // namespace

ReceiverGroups ipu::groupReceivers(const ExchangePhase &phase) {
  ReceiverGroups result;
  size_t n = phase.size();
  result.groupOf.assign(n, kNone);
  result.groupBegin.push_back(0);
  std::vector<uint32_t> unicastGroup(phase.tiles, kNone);
  // Broadcast destination sets, keyed by a hash of the sorted tiles; equal
  // hashes are confirmed by comparing the stored tiles.
  std::unordered_map<uint64_t, std::vector<uint32_t>> byHash;
  std::vector<uint32_t> sorted;

  auto newGroup = [&](const uint32_t *begin, const uint32_t *end) {
    uint32_t id = static_cast<uint32_t>(result.groupBegin.size() - 1);
    result.groupTiles.insert(result.groupTiles.end(), begin, end);
    result.groupBegin.push_back(
        static_cast<uint32_t>(result.groupTiles.size()));
    return id;
  };

  for (size_t t = 0; t < n; ++t) {
    const uint32_t *db = phase.destinationsBegin(t),
                   *de = phase.destinationsEnd(t);
    if (de - db == 1) {
      uint32_t &g = unicastGroup[*db];
      if (g == kNone)
        g = newGroup(db, de);
      result.groupOf[t] = g;
      continue;
    }
    sorted.assign(db, de);
    std::sort(sorted.begin(), sorted.end());
    uint64_t hash = 1469598103934665603ull;
    for (uint32_t d : sorted)
      hash = (hash ^ d) * 1099511628211ull;
    std::vector<uint32_t> &candidates = byHash[hash];
    uint32_t found = kNone;
    for (uint32_t g : candidates)
      if (std::equal(sorted.begin(), sorted.end(),
                     result.groupTiles.begin() + result.groupBegin[g],
                     result.groupTiles.begin() + result.groupBegin[g + 1]))
        found = g;
    if (found == kNone) {
      found = newGroup(sorted.data(), sorted.data() + sorted.size());
      candidates.push_back(found);
    }
    result.groupOf[t] = found;
  }

  // Overlap check: the first group to claim a tile owns it.
  uint32_t groups = static_cast<uint32_t>(result.groupBegin.size() - 1);
  std::vector<uint32_t> owner(phase.tiles, kNone);
  UnionFind sets(groups);
  result.disjoint = true;
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t i = result.groupBegin[g]; i < result.groupBegin[g + 1]; ++i) {
      uint32_t &o = owner[result.groupTiles[i]];
      if (o == kNone) {
        o = g;
      } else {
        result.disjoint = false;
        sets.unite(o, g);
      }
    }

  // Receivers: groups, or their connected components when they overlap,
  // numbered by first appearance.
  result.receiverOfGroup.assign(groups, kNone);
  uint32_t receivers = 0;
  std::vector<uint32_t> receiverOfRoot(groups, kNone);
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t root = sets.find(g);
    if (receiverOfRoot[root] == kNone)
      receiverOfRoot[root] = receivers++;
    result.receiverOfGroup[g] = receiverOfRoot[root];
  }
  result.receivers = receivers;
  return result;
}

namespace {

/// One stretch of cycles in which a bundle edge is matched.
struct Segment {
  uint32_t edge;
  uint32_t start;
  uint32_t length;
};

/// The time sweep. Vertices are senders (left) and receivers (right), both
/// numbered 0..n-1 (the smaller side padded with empty vertices); edges are
/// the bundles. Every vertex also has `idle` cycles, Delta minus its words.
/// Instead of fixed dummy edges, any left and right vertex with idle cycles
/// left may idle together: any pairing of the idle cycles completes the
/// graph to a Delta-regular one (the totals agree), so a perfect matching
/// of the real edges plus idle pairs exists at every cycle, and idle pairs
/// may be formed, cut and re-formed at no cost in runs.
class Sweep {
public:
  Sweep(uint32_t vertices, std::vector<uint32_t> left,
        std::vector<uint32_t> right, std::vector<uint64_t> weight,
        std::vector<uint64_t> idleLeft, std::vector<uint64_t> idleRight)
      : n(vertices), m(static_cast<uint32_t>(left.size())),
        left(std::move(left)), right(std::move(right)),
        remaining(std::move(weight)), idleL(std::move(idleLeft)),
        idleR(std::move(idleRight)) {
    endTime.assign(m, 0);
    runStart.assign(m, 0);
    buildAdjacency(this->left, this->right, byLeft, posL);
    buildAdjacency(this->right, this->left, byRight, posR);
    matchL.assign(n, kNone);
    matchR.assign(n, kNone);
    mateOfLeft.assign(n, kNone);
    mateOfRight.assign(n, kNone);
    idleStart.assign(n, 0);
    idleEnd.assign(n, 0);
    idlePos.assign(n, kNone);
    markR.assign(n, 0);
    markEdge.assign(n, kNone);
    seenR.assign(n, 0);
    viaEdge.assign(n, kNone);
    viaLeft.assign(n, kNone);
  }

  /// Runs the sweep; returns false if some vertex could not be re-matched
  /// (impossible, see above; the segments stay legal regardless).
  bool run(std::vector<Segment> &segments) {
    out = &segments;
    std::vector<uint32_t> freeLeft, freeRight;
    for (uint32_t u = 0; u < n; ++u) {
      freeLeft.push_back(u);
      freeRight.push_back(u);
    }
    bool perfect = rematch(freeLeft, freeRight, 0);
    while (!events.empty()) {
      uint64_t now = events.top().first;
      freeLeft.clear();
      freeRight.clear();
      while (!events.empty() && events.top().first == now) {
        uint32_t id = events.top().second;
        events.pop();
        if (id < m) {
          uint32_t e = id;
          if (matchL[left[e]] != e || endTime[e] != now)
            continue; // Preempted since; a newer entry, if any, is valid.
          emit(e, now);
          remaining[e] = 0;
          setMatch(left[e], right[e], kNone);
          remove(byLeft, posL, left[e], e);
          remove(byRight, posR, right[e], e);
          freeLeft.push_back(left[e]);
          freeRight.push_back(right[e]);
        } else {
          uint32_t u = id - m;
          if (matchL[u] != kIdle || idleEnd[u] != now)
            continue;
          uint32_t v = mateOfLeft[u];
          unmatchIdle(u, now);
          freeLeft.push_back(u);
          freeRight.push_back(v);
        }
      }
      std::sort(freeLeft.begin(), freeLeft.end());
      std::sort(freeRight.begin(), freeRight.end());
      perfect &= rematch(freeLeft, freeRight, now);
    }
    return perfect;
  }

private:
  /// matchL / matchR value of a vertex idling with mateOfLeft / mateOfRight.
  static constexpr uint32_t kIdle = UINT32_MAX - 1;

  /// An unfinished edge seen from one endpoint.
  struct Entry {
    uint32_t edge, other;
  };
  /// Per vertex, its unfinished edges in [begin, end).
  struct Adjacency {
    std::vector<uint32_t> begin, end;
    std::vector<Entry> entries;
  };

  void buildAdjacency(const std::vector<uint32_t> &side,
                      const std::vector<uint32_t> &other, Adjacency &adj,
                      std::vector<uint32_t> &pos) {
    adj.begin.assign(n + 1, 0);
    for (uint32_t v : side)
      ++adj.begin[v + 1];
    for (uint32_t v = 0; v < n; ++v)
      adj.begin[v + 1] += adj.begin[v];
    adj.entries.resize(side.size());
    pos.resize(side.size());
    std::vector<uint32_t> next(adj.begin.begin(), adj.begin.end() - 1);
    for (size_t e = 0; e < side.size(); ++e) {
      pos[e] = next[side[e]]++;
      adj.entries[pos[e]] = {static_cast<uint32_t>(e), other[e]};
    }
    adj.end.assign(adj.begin.begin() + 1, adj.begin.end());
  }

  /// Drops finished edge e from vertex v's list in O(1).
  static void remove(Adjacency &adj, std::vector<uint32_t> &pos, uint32_t v,
                     uint32_t e) {
    uint32_t last = --adj.end[v];
    Entry moved = adj.entries[last];
    adj.entries[pos[e]] = moved;
    pos[moved.edge] = pos[e];
  }

  void setMatch(uint32_t u, uint32_t v, uint32_t e) {
    matchL[u] = e;
    matchR[v] = e;
    mateOfLeft[u] = e == kNone ? kNone : v;
    mateOfRight[v] = e == kNone ? kNone : u;
  }

  /// Idle cycles u (left) or v (right) has left at `now`.
  uint64_t idleLeftOf(uint32_t u, uint64_t now) const {
    return matchL[u] == kIdle ? idleL[u] - (now - idleStart[u]) : idleL[u];
  }
  uint64_t idleRightOf(uint32_t v, uint64_t now) const {
    return matchR[v] == kIdle ? idleR[v] - (now - idleStart[mateOfRight[v]])
                              : idleR[v];
  }

  void emit(uint32_t e, uint64_t now) {
    if (now > runStart[e])
      out->push_back({e, static_cast<uint32_t>(runStart[e]),
                      static_cast<uint32_t>(now - runStart[e])});
  }

  void matchEdge(uint32_t e, uint64_t now) {
    setMatch(left[e], right[e], e);
    runStart[e] = now;
    endTime[e] = now + remaining[e];
    events.push({endTime[e], e});
  }

  void matchIdle(uint32_t u, uint32_t v, uint64_t now) {
    idlePos[u] = static_cast<uint32_t>(idlePairs.size());
    idlePairs.push_back(u);
    setMatch(u, v, kIdle);
    idleStart[u] = now;
    idleEnd[u] = now + std::min(idleL[u], idleR[v]);
    events.push({idleEnd[u], m + u});
  }

  /// Ends u's idling; both ends keep the idle cycles not used.
  void unmatchIdle(uint32_t u, uint64_t now) {
    uint32_t v = mateOfLeft[u];
    idleL[u] -= now - idleStart[u];
    idleR[v] -= now - idleStart[u];
    setMatch(u, v, kNone);
    uint32_t last = idlePairs.back();
    idlePairs[idlePos[u]] = last;
    idlePos[last] = idlePos[u];
    idlePairs.pop_back();
  }

  /// Takes whatever u is matched with out of the matching at `now`.
  void unmatchLeft(uint32_t u, uint64_t now) {
    uint32_t e = matchL[u];
    if (e == kIdle) {
      unmatchIdle(u, now);
      return;
    }
    emit(e, now);
    remaining[e] = endTime[e] - now;
    setMatch(left[e], right[e], kNone);
  }

  /// Matches u and v with real edge e, or idling together if e is kIdle.
  void join(uint32_t u, uint32_t v, uint32_t e, uint64_t now) {
    if (e == kIdle)
      matchIdle(u, v, now);
    else
      matchEdge(e, now);
  }

  /// Re-matches the free vertices. Per free left vertex u, cheapest first:
  /// an edge to a free right vertex (preempts nothing); idling with a free
  /// right vertex that has idle cycles; a path u - v' = u' - v to a free
  /// right vertex v, found by marking u's neighbours, that moves an idle
  /// pair; any path that moves only idle pairs; a short path that moves one
  /// real edge; else the augmenting path that moves the fewest. Cost per
  /// event is mostly the degrees of the freed vertices.
  bool rematch(const std::vector<uint32_t> &freeLeft,
               const std::vector<uint32_t> &freeRight, uint64_t now) {
    bool all = true;
    for (uint32_t u : freeLeft) {
      if (byLeft.begin[u] == byLeft.end[u] && idleL[u] == 0)
        continue; // u has reached Delta.
      ++stamp;
      uint32_t direct = kNone;
      for (uint32_t i = byLeft.begin[u], e = byLeft.end[u]; i < e; ++i) {
        Entry entry = byLeft.entries[i];
        if (matchR[entry.other] == kNone) {
          direct = entry.edge;
          break;
        }
        markR[entry.other] = stamp;
        markEdge[entry.other] = entry.edge;
      }
      if (direct != kNone) {
        matchEdge(direct, now);
        continue;
      }
      if (idleL[u] > 0) {
        uint32_t partner = kNone;
        for (uint32_t v : freeRight)
          if (matchR[v] == kNone && idleR[v] > 0) {
            partner = v;
            break;
          }
        if (partner != kNone) {
          matchIdle(u, partner, now);
          continue;
        }
      }
      // A path that moves a real edge splits a run: first look further
      // for one that moves only idle pairs.
      ShortPath path = shortPath(u, freeRight, now);
      if (path.v != kNone && matchL[path.mate] == kIdle)
        applyShortPath(u, path, now);
      else if (augment(u, freeRight, now, /*freeOnly=*/path.v != kNone))
        continue;
      else if (path.v != kNone)
        applyShortPath(u, path, now);
      else
        all = false;
    }
    return all;
  }

  /// How u reaches right vertex w: a marked edge, idling, or kNone.
  uint32_t reach(uint32_t u, uint32_t w, uint64_t now) const {
    if (markR[w] == stamp)
      return markEdge[w];
    if (idleL[u] > 0 && idleRightOf(w, now) > 0)
      return kIdle;
    return kNone;
  }

  /// A path u - w = u' - v to a free right vertex v.
  struct ShortPath {
    uint32_t v = kNone, mate = kNone, edge = kNone, bridge = kNone;
  };

  /// The first short path that moves only an idle pair (u' idling with w),
  /// which costs no run, else the first that moves a real edge, if any.
  ShortPath shortPath(uint32_t u, const std::vector<uint32_t> &freeRight,
                      uint64_t now) {
    ShortPath found;
    for (uint32_t v : freeRight) {
      if (matchR[v] != kNone)
        continue;
      // Candidates u' with an edge to v, then (if v may idle) u's
      // neighbours' mates that may idle.
      auto consider = [&](uint32_t mate, uint32_t edge) {
        uint32_t w = mateOfLeft[mate];
        if (w == kNone)
          return false;
        uint32_t bridge = reach(u, w, now);
        if (bridge == kNone)
          return false;
        bool idle = matchL[mate] == kIdle;
        if (found.v == kNone || idle)
          found = {v, mate, edge, bridge};
        return idle;
      };
      for (uint32_t i = byRight.begin[v], e = byRight.end[v]; i < e; ++i)
        if (consider(byRight.entries[i].other, byRight.entries[i].edge))
          return found;
      if (idleR[v] > 0)
        for (uint32_t i = byLeft.begin[u], e = byLeft.end[u]; i < e; ++i) {
          uint32_t mate = mateOfRight[byLeft.entries[i].other];
          if (mate != kNone && idleLeftOf(mate, now) > 0 &&
              consider(mate, kIdle))
            return found;
        }
    }
    return found;
  }

  void applyShortPath(uint32_t u, const ShortPath &path, uint64_t now) {
    uint32_t w = mateOfLeft[path.mate];
    unmatchLeft(path.mate, now);
    join(path.mate, path.v, path.edge, now);
    join(u, w, path.bridge, now);
  }

  /// An augmenting path from free left vertex u0 over edges and idle
  /// pairs that moves the fewest real edges (each one moved is a run
  /// split; idle pairs move for free): a 0-1 breadth-first search, flipped.
  /// With `freeOnly`, only paths that move no real edge: a small search.
  bool augment(uint32_t u0, const std::vector<uint32_t> &freeRight,
               uint64_t now, bool freeOnly) {
    uint32_t neighbourStamp = stamp; // rematch marked u0's neighbours.
    ++stamp;
    deque.assign(1, u0);
    // Idling reaches the same right vertices from any left vertex, so only
    // the first left vertex that may idle expands it.
    bool idleExpanded = false;
    while (!deque.empty()) {
      uint32_t x = deque.front();
      deque.pop_front();
      auto step = [&](uint32_t v, uint32_t edge) {
        if (seenR[v] == stamp)
          return false;
        seenR[v] = stamp;
        viaEdge[v] = edge;
        viaLeft[v] = x;
        if (matchR[v] == kNone) {
          flip(u0, v, now);
          return true;
        }
        // Vertices reached at no extra cost go first.
        if (matchR[v] == kIdle)
          deque.push_front(mateOfRight[v]);
        else if (!freeOnly)
          deque.push_back(mateOfRight[v]);
        return false;
      };
      if (freeOnly && x == u0) {
        // u0's neighbours are marked and none is free: only those idling
        // are worth reaching, and idle pairs are few.
        for (size_t i = 0; i < idlePairs.size(); ++i) {
          uint32_t v = mateOfLeft[idlePairs[i]];
          if (markR[v] == neighbourStamp && step(v, markEdge[v]))
            return true;
        }
      } else {
        for (uint32_t i = byLeft.begin[x], e = byLeft.end[x]; i < e; ++i)
          if (step(byLeft.entries[i].other, byLeft.entries[i].edge))
            return true;
      }
      if (!idleExpanded && idleLeftOf(x, now) > 0) {
        idleExpanded = true;
        if (freeOnly) {
          // The only right vertices worth reaching: free ones, and those
          // idling (whose mates move for free).
          for (uint32_t v : freeRight)
            if (matchR[v] == kNone && idleR[v] > 0 && step(v, kIdle))
              return true;
          for (size_t i = 0; i < idlePairs.size(); ++i)
            if (step(mateOfLeft[idlePairs[i]], kIdle))
              return true;
        } else {
          for (uint32_t v = 0; v < n; ++v)
            if (idleRightOf(v, now) > 0 && step(v, kIdle))
              return true;
        }
      }
    }
    return false;
  }

  /// Along the path found by augment, ending at free right vertex v: each
  /// right vertex on it joins the left vertex it was reached from, which
  /// leaves its previous mate.
  void flip(uint32_t u0, uint32_t v, uint64_t now) {
    while (true) {
      uint32_t x = viaLeft[v];
      uint32_t next = mateOfLeft[x]; // kNone for u0.
      if (x != u0)
        unmatchLeft(x, now);
      join(x, v, viaEdge[v], now);
      if (x == u0)
        break;
      v = next;
    }
  }

  uint32_t n, m;
  std::vector<uint32_t> left, right;
  std::vector<uint64_t> remaining, endTime, runStart;
  std::vector<uint64_t> idleL, idleR, idleStart, idleEnd;
  /// Left vertices idling now, and their places in that list.
  std::vector<uint32_t> idlePairs, idlePos;
  Adjacency byLeft, byRight;
  std::vector<uint32_t> posL, posR;
  std::vector<uint32_t> matchL, matchR, mateOfLeft, mateOfRight;
  std::vector<uint32_t> markR, markEdge, seenR, viaEdge, viaLeft;
  std::deque<uint32_t> deque;
  uint32_t stamp = 0;
  using Event = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  std::vector<Segment> *out = nullptr;
};

} // namespace

ExchangeSchedule ipu::scheduleExact(const ExchangePhase &phase) {
  return detail::scheduleExact(phase, groupReceivers(phase));
}

ExchangeSchedule ipu::detail::scheduleExact(const ExchangePhase &phase,
                                            const ReceiverGroups &groups) {
  ExchangeSchedule schedule;
  schedule.strategy = "exact";
  assert(!phase.validate() && "scheduling an invalid phase");
  size_t n = phase.size();
  if (n == 0)
    return schedule;

  // Bundles: transfers sorted by (sender, receiver, index), by two stable
  // counting sorts; each run of equal (sender, receiver) is one edge.
  std::vector<uint32_t> receiverOf(n);
  for (size_t t = 0; t < n; ++t)
    receiverOf[t] = groups.receiverOfGroup[groups.groupOf[t]];
  auto countingSort = [n](const std::vector<uint32_t> &in, uint32_t keys,
                          auto key) {
    std::vector<uint32_t> begin(size_t(keys) + 1, 0), out(n);
    for (uint32_t t : in)
      ++begin[key(t) + 1];
    for (uint32_t k = 0; k < keys; ++k)
      begin[k + 1] += begin[k];
    for (uint32_t t : in)
      out[begin[key(t)]++] = t;
    return out;
  };
  std::vector<uint32_t> order(n);
  for (size_t t = 0; t < n; ++t)
    order[t] = static_cast<uint32_t>(t);
  order = countingSort(order, groups.receivers,
                       [&](uint32_t t) { return receiverOf[t]; });
  order = countingSort(order, phase.tiles,
                       [&](uint32_t t) { return phase.source[t]; });

  // Vertices: senders and receivers with work, numbered in order.
  std::vector<uint32_t> leftOf(phase.tiles, kNone);
  std::vector<uint32_t> rightOf(groups.receivers, kNone);
  uint32_t lefts = 0, rights = 0;
  std::vector<uint32_t> edgeLeft, edgeRight, bundleBegin;
  std::vector<uint64_t> edgeWeight;
  for (size_t i = 0; i < n; ++i) {
    uint32_t t = order[i];
    uint32_t s = phase.source[t], r = receiverOf[t];
    if (i == 0 || s != phase.source[order[i - 1]] ||
        r != receiverOf[order[i - 1]]) {
      if (leftOf[s] == kNone)
        leftOf[s] = lefts++;
      if (rightOf[r] == kNone)
        rightOf[r] = rights++;
      edgeLeft.push_back(leftOf[s]);
      edgeRight.push_back(rightOf[r]);
      edgeWeight.push_back(0);
      bundleBegin.push_back(static_cast<uint32_t>(i));
    }
    edgeWeight.back() += phase.words[t];
  }
  bundleBegin.push_back(static_cast<uint32_t>(n));
  uint32_t realEdges = static_cast<uint32_t>(edgeWeight.size());

  // Equal sides; every vertex idles for what it lacks of Delta.
  uint32_t vertices = std::max(lefts, rights);
  std::vector<uint64_t> loadL(vertices, 0), loadR(vertices, 0);
  for (uint32_t e = 0; e < realEdges; ++e) {
    loadL[edgeLeft[e]] += edgeWeight[e];
    loadR[edgeRight[e]] += edgeWeight[e];
  }
  uint64_t delta = 0;
  for (uint32_t v = 0; v < vertices; ++v)
    delta = std::max({delta, loadL[v], loadR[v]});
  assert(delta <= UINT32_MAX && "send horizon overflows");
  for (uint32_t v = 0; v < vertices; ++v) {
    loadL[v] = delta - loadL[v];
    loadR[v] = delta - loadR[v];
  }

  std::vector<Segment> segments;
  Sweep sweep(vertices, std::move(edgeLeft), std::move(edgeRight),
              std::move(edgeWeight), std::move(loadL), std::move(loadR));
  bool perfect = sweep.run(segments);
  (void)perfect;
  assert(perfect && "a regular bipartite graph lost its perfect matching");

  // Segments of one edge come out in time order; a counting sort by edge
  // keeps that order. Then each bundle's transfers are walked in index
  // order across its segments, and a run merges with the previous one of
  // its transfer when it continues it in time.
  {
    std::vector<uint32_t> begin(realEdges + 1, 0);
    for (const Segment &seg : segments)
      ++begin[seg.edge + 1];
    for (uint32_t e = 0; e < realEdges; ++e)
      begin[e + 1] += begin[e];
    std::vector<Segment> sorted(segments.size());
    for (const Segment &seg : segments)
      sorted[begin[seg.edge]++] = seg;
    segments = std::move(sorted);
  }
  schedule.runs.reserve(n + segments.size() / 4);
  uint32_t edge = kNone, cursor = 0, offset = 0;
  for (const Segment &seg : segments) {
    if (seg.edge != edge) {
      edge = seg.edge;
      cursor = bundleBegin[edge];
      offset = 0;
    }
    uint32_t start = seg.start, length = seg.length;
    while (length > 0) {
      uint32_t t = order[cursor];
      uint32_t take = std::min(length, phase.words[t] - offset);
      ExchangeRun *prev =
          schedule.runs.empty() ? nullptr : &schedule.runs.back();
      if (prev && prev->transfer == t && prev->start + prev->words == start)
        prev->words += take;
      else
        schedule.runs.push_back({t, offset, take, start});
      start += take;
      length -= take;
      offset += take;
      if (offset == phase.words[t]) {
        ++cursor;
        offset = 0;
      }
    }
  }
  return schedule;
}
