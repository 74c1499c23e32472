//===- Scheduler.cpp - Exchange phase schedulers --------------------------===//

#include "IPU/Exchange/Phase.h"
#include "ReceiverGroups.h"
#include "SchedulerDetail.h"

#include <algorithm>
#include <cassert>
#include <thread>

using namespace ipu;

namespace {

/// Free cycles of one tile's sender or receiver: disjoint gaps sorted by
/// start, the last one open-ended. Gaps live in fixed-capacity chunks stored
/// back to back; each chunk's end and longest gap sit in a flat array, so a
/// search binary-searches that without touching gap storage and skips whole
/// chunks of gaps too short for it (short gaps must stay: shorter transfers
/// come later and fill them).
class Timeline {
public:
  /// A free window: [start, start + length) fits, and so does any later
  /// start up to `freeUntil - length`.
  struct Fit {
    uint32_t start, freeUntil;
  };

  Timeline() : info{{kOpenEnd, kOpenEnd, 1}}, store(1) {
    store[0].gaps[0] = {0, kOpenEnd};
  }

  /// Earliest s >= t with [s, s + length) free.
  Fit earliest(uint32_t t, uint32_t length) const {
    // Past every reservation: the common case for a tile's first transfers.
    if (t >= tailStart)
      return {t, kOpenEnd};
    size_t c = chunkEndingAfter(t);
    if (info[c].longest >= length) {
      const Gap *gaps = store[c].gaps, *end = gaps + info[c].count;
      const Gap *g = gapEndingAfter(gaps, end, t);
      // Only this gap may start before t; the rest start after it.
      uint32_t s = std::max(g->start, t);
      if (g->end - s >= length)
        return {s, g->end};
      for (++g; g != end; ++g)
        if (g->end - g->start >= length)
          return {g->start, g->end};
    }
    for (++c;; ++c) {
      if (info[c].longest < length)
        continue;
      for (const Gap *g = store[c].gaps, *end = g + info[c].count; g != end;
           ++g)
        if (g->end - g->start >= length)
          return {g->start, g->end};
    }
  }

  /// Marks [s, s + length) busy; it must lie within one gap.
  void reserve(uint32_t s, uint32_t length) {
    size_t c = chunkEndingAfter(s);
    Gap *gaps = store[c].gaps;
    uint32_t &count = info[c].count;
    Gap *g = const_cast<Gap *>(gapEndingAfter(gaps, gaps + count, s));
    Gap old = *g;
    uint32_t e = s + length;
    assert(old.start <= s && e <= old.end && "reserving a busy cycle");
    if (old.start == s && e == old.end) {
      std::copy(g + 1, gaps + count, g);
      --count;
    } else if (old.start == s) {
      g->start = e;
    } else if (e == old.end) {
      g->end = s;
    } else {
      std::copy_backward(g + 1, gaps + count, gaps + count + 1);
      g->end = s;
      g[1] = {e, old.end};
      ++count;
    }
    if (old.end == kOpenEnd)
      tailStart = gaps[count - 1].start;

    // The open-ended gap is never consumed, so only an inner chunk empties.
    if (count == 0) {
      info.erase(info.begin() + c);
      store.erase(store.begin() + c);
      return;
    }
    if (count == kChunkCapacity) {
      // Split in halves so both can take inserts again.
      Chunk upper;
      uint32_t half = kChunkCapacity / 2;
      std::copy(gaps + half, gaps + count, upper.gaps);
      count = half;
      uint32_t upperCount = kChunkCapacity - half;
      info.insert(info.begin() + c + 1,
                  ChunkInfo{upper.gaps[upperCount - 1].end,
                            longestOf(upper.gaps, upperCount), upperCount});
      store.insert(store.begin() + c + 1, upper);
    }
    ChunkInfo &kept = info[c];
    const Gap *keptGaps = store[c].gaps;
    kept.end = keptGaps[kept.count - 1].end;
    kept.longest = longestOf(keptGaps, kept.count);
  }

private:
  static constexpr uint32_t kOpenEnd = UINT32_MAX;
  static constexpr uint32_t kChunkCapacity = 16;
  struct Gap {
    uint32_t start, end;
  };
  struct Chunk {
    Gap gaps[kChunkCapacity];
  };
  struct ChunkInfo {
    uint32_t end;     ///< End of the chunk's last gap.
    uint32_t longest; ///< Longest gap in the chunk.
    uint32_t count;   ///< Gaps in use.
  };

  static uint32_t longestOf(const Gap *gaps, uint32_t count) {
    uint32_t longest = 0;
    for (uint32_t i = 0; i < count; ++i)
      longest = std::max(longest, gaps[i].end - gaps[i].start);
    return longest;
  }
  static const Gap *gapEndingAfter(const Gap *begin, const Gap *end,
                                   uint32_t t) {
    return std::upper_bound(begin, end, t,
                            [](uint32_t v, const Gap &g) { return v < g.end; });
  }
  /// The chunk holding the first gap that ends after t; the open-ended gap
  /// guarantees there is one.
  size_t chunkEndingAfter(uint32_t t) const {
    return std::upper_bound(
               info.begin(), info.end(), t,
               [](uint32_t v, const ChunkInfo &c) { return v < c.end; }) -
           info.begin();
  }

  uint32_t tailStart = 0; ///< Start of the open-ended gap.
  std::vector<ChunkInfo> info;
  std::vector<Chunk> store;
};

/// Number of timelines needed: tolerate out-of-range tiles instead of
/// indexing past the end (validate() is the place that reports them).
uint32_t timelineCount(const ExchangePhase &phase) {
  uint32_t count = phase.tiles;
  for (uint32_t s : phase.source)
    count = std::max(count, s + 1);
  for (uint32_t d : phase.destTiles)
    count = std::max(count, d + 1);
  return count;
}

} // namespace

ExchangeSchedule ipu::scheduleSequential(const ExchangePhase &phase) {
  ExchangeSchedule schedule;
  schedule.strategy = "sequential";
  schedule.runs.reserve(phase.size());
  uint64_t cycle = 0;
  for (size_t t = 0, e = phase.size(); t < e; ++t) {
    if (phase.words[t] == 0)
      continue;
    assert(cycle + phase.words[t] <= UINT32_MAX && "send horizon overflows");
    schedule.runs.push_back({static_cast<uint32_t>(t), 0, phase.words[t],
                             static_cast<uint32_t>(cycle)});
    cycle += phase.words[t];
  }
  return schedule;
}

ExchangeSchedule ipu::scheduleGreedy(const ExchangePhase &phase) {
  ExchangeSchedule schedule;
  schedule.strategy = "greedy";
  size_t n = phase.size();
  // A duplicate destination would reserve one timeline twice.
  assert(!phase.validate() && "scheduling an invalid phase");

  // Longest first, ties by index. The fields the loop needs are gathered
  // in one sequential pass and sorted with their key, so the loop below
  // reads them in order instead of chasing three arrays per transfer.
  struct Item {
    uint64_t key; ///< (~words << 32) | index.
    uint32_t source, destBegin, destEnd;
  };
  std::vector<Item> order;
  order.reserve(n);
  for (size_t t = 0; t < n; ++t)
    if (phase.words[t] != 0)
      order.push_back({(uint64_t(~phase.words[t]) << 32) | t, phase.source[t],
                       phase.destBegin[t], phase.destBegin[t + 1]});
  std::sort(order.begin(), order.end(),
            [](const Item &a, const Item &b) { return a.key < b.key; });

  uint32_t count = timelineCount(phase);
  std::vector<Timeline> senders(count), receivers(count);
  std::vector<uint32_t> start(n, 0);
  std::vector<Timeline *> involved;
  std::vector<uint32_t> freeUntil;

  for (const Item &item : order) {
    uint32_t t = static_cast<uint32_t>(item.key);
    uint32_t length = ~static_cast<uint32_t>(item.key >> 32);
    involved.clear();
    involved.push_back(&senders[item.source]);
    for (uint32_t d = item.destBegin; d != item.destEnd; ++d)
      involved.push_back(&receivers[phase.destTiles[d]]);
    size_t m = involved.size();
    freeUntil.assign(m, 0);

    // Fixed point: move the candidate cycle forward to each timeline's next
    // fit until one full round past the last mover leaves it unchanged. The
    // candidate only grows, so the result is the earliest common fit. A
    // timeline whose last window still holds the candidate is not asked
    // again.
    uint32_t cycle = 0;
    size_t lastMover = 0, k = 0;
    do {
      if (uint64_t(cycle) + length > freeUntil[k]) {
        Timeline::Fit fit = involved[k]->earliest(cycle, length);
        freeUntil[k] = fit.freeUntil;
        if (fit.start != cycle) {
          cycle = fit.start;
          lastMover = k;
        }
      }
      if (++k == m)
        k = 0;
    } while (k != lastMover);

    assert(uint64_t(cycle) + length < UINT32_MAX && "send horizon overflows");
    for (Timeline *timeline : involved)
      timeline->reserve(cycle, length);
    start[t] = cycle;
  }

  schedule.runs.reserve(n);
  for (uint32_t t = 0; t < n; ++t)
    if (phase.words[t] != 0)
      schedule.runs.push_back({t, 0, phase.words[t], start[t]});
  return schedule;
}

namespace {

/// Phases at least this large run greedy on a second thread while the
/// exact strategy runs on the caller's.
constexpr size_t kParallelTransfers = 16384;
/// Candidate evaluations the preemptive strategy may spend (about a second
/// at 50 ns each); past that scheduleBest does without it. A count, not a
/// clock, so that the choice does not depend on the machine.
constexpr uint64_t kPreemptiveBudget = 20'000'000;

bool hasBroadcast(const ExchangePhase &phase) {
  for (size_t t = 0, e = phase.size(); t < e; ++t)
    if (phase.destBegin[t + 1] - phase.destBegin[t] > 1)
      return true;
  return false;
}

} // namespace

ExchangeSchedule ipu::scheduleBest(const ExchangePhase &phase,
                                   ScheduleReport *report) {
  // Candidates in preference order for ties: greedy keeps transfers whole.
  std::vector<ExchangeSchedule> candidates(3);
  ExchangeSchedule &greedy = candidates[0], &exact = candidates[1],
                   &preemptive = candidates[2];
  auto others = [&] {
    ReceiverGroups groups = groupReceivers(phase);
    exact = detail::scheduleExact(phase, groups);
    // Overlapping destination sets are where exact leaves the bound; the
    // preemptive sweep is slower and splits more, so only there.
    if (!groups.disjoint)
      if (auto schedule =
              detail::schedulePreemptiveWithin(phase, kPreemptiveBudget))
        preemptive = std::move(*schedule);
  };
  if (phase.size() >= kParallelTransfers) {
    std::thread worker([&] { greedy = scheduleGreedy(phase); });
    others();
    worker.join();
  } else {
    greedy = scheduleGreedy(phase);
    // Unicast phases where greedy is on the bound cannot do better.
    if (hasBroadcast(phase) || greedy.sendHorizon() > endpointLowerBound(phase))
      others();
  }

  size_t best = 0;
  uint64_t bestHorizon = greedy.sendHorizon();
  for (size_t i = 1; i < candidates.size(); ++i) {
    const ExchangeSchedule &c = candidates[i];
    if (c.strategy.empty())
      continue; // Not run.
    uint64_t h = c.sendHorizon();
    if (h < bestHorizon ||
        (h == bestHorizon && c.runs.size() < candidates[best].runs.size())) {
      best = i;
      bestHorizon = h;
    }
  }
  if (report) {
    report->transfers = phase.size();
    report->bound = endpointLowerBound(phase);
    report->horizon = bestHorizon;
    report->runs = candidates[best].runs.size();
    report->strategy = candidates[best].strategy;
  }
  return std::move(candidates[best]);
}
