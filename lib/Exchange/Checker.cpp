//===- Checker.cpp - Independent legality check of exchange schedules ----===//
//
// Shares nothing with the schedulers on purpose: it rebuilds, from the runs
// alone, the send and receive intervals of every tile and the word coverage
// of every transfer. Cost is O(R log R) for R = runs + run destinations.
//
//===----------------------------------------------------------------------===//

#include "IPU/Exchange/Phase.h"

#include <algorithm>

using namespace ipu;
using std::to_string;

namespace {

/// A busy interval [start, end) of one tile's sender or receiver, in send
/// cycles (latency is constant, so receive conflicts show up at the same
/// send cycles).
struct Interval {
  uint64_t start;
  uint64_t end;
  uint32_t tile;
  uint32_t transfer;
};

/// Groups intervals by tile with a counting sort, orders each tile's group
/// by start, and reports the first cycle where two of them overlap.
std::optional<std::string> findOverlap(std::vector<Interval> &intervals,
                                       uint32_t tiles, const char *verb) {
  std::vector<size_t> bucket(size_t(tiles) + 1, 0);
  for (const Interval &in : intervals)
    ++bucket[in.tile + 1];
  for (uint32_t t = 0; t < tiles; ++t)
    bucket[t + 1] += bucket[t];
  std::vector<Interval> sorted(intervals.size());
  {
    std::vector<size_t> next(bucket.begin(), bucket.end() - 1);
    for (const Interval &in : intervals)
      sorted[next[in.tile]++] = in;
  }
  intervals.clear();
  intervals.shrink_to_fit();

  for (uint32_t t = 0; t < tiles; ++t) {
    auto begin = sorted.begin() + bucket[t],
         end = sorted.begin() + bucket[t + 1];
    if (end - begin < 2)
      continue;
    std::sort(begin, end, [](const Interval &a, const Interval &b) {
      return a.start != b.start ? a.start < b.start : a.transfer < b.transfer;
    });
    // Sorted by start, checking neighbours suffices: if an interval starts
    // inside an earlier one, so does the one right after that earlier one.
    for (auto it = begin + 1; it != end; ++it) {
      const Interval &prev = it[-1];
      if (it->start < prev.end)
        return "tile " + to_string(t) + " " + verb + " two words in cycle " +
               to_string(it->start) + " (transfers " +
               to_string(prev.transfer) + " and " + to_string(it->transfer) +
               ")";
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
ipu::checkSchedule(const ExchangePhase &phase,
                   const ExchangeSchedule &schedule) {
  if (auto error = phase.validate())
    return "invalid phase: " + *error;
  const std::vector<ExchangeRun> &runs = schedule.runs;
  size_t n = phase.size();

  // Per-run sanity first: the interval and coverage checks index by it.
  uint64_t receiveCount = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const ExchangeRun &run = runs[r];
    if (run.transfer >= n)
      return "run " + to_string(r) + ": transfer " + to_string(run.transfer) +
             " is out of range (the phase has " + to_string(n) + " transfers)";
    if (run.words == 0)
      return "run " + to_string(r) + " of transfer " + to_string(run.transfer) +
             " sends no words";
    uint64_t end = uint64_t(run.wordOffset) + run.words;
    if (end > phase.words[run.transfer])
      return "transfer " + to_string(run.transfer) + ": run " + to_string(r) +
             " sends words [" + to_string(run.wordOffset) + ", " +
             to_string(end) + ") but the transfer has only " +
             to_string(phase.words[run.transfer]) + " words";
    receiveCount +=
        phase.destBegin[run.transfer + 1] - phase.destBegin[run.transfer];
  }

  // Coverage: sorted by (transfer, offset), each transfer's runs must tile
  // [0, words) exactly.
  {
    std::vector<uint32_t> order(runs.size());
    for (size_t r = 0; r < runs.size(); ++r)
      order[r] = static_cast<uint32_t>(r);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const ExchangeRun &x = runs[a], &y = runs[b];
      if (x.transfer != y.transfer)
        return x.transfer < y.transfer;
      return x.wordOffset != y.wordOffset ? x.wordOffset < y.wordOffset : a < b;
    });
    size_t pos = 0;
    for (uint32_t t = 0; t < n; ++t) {
      uint64_t covered = 0;
      for (; pos < order.size() && runs[order[pos]].transfer == t; ++pos) {
        const ExchangeRun &run = runs[order[pos]];
        uint64_t begin = run.wordOffset, end = begin + run.words;
        if (begin > covered)
          return "transfer " + to_string(t) + ": words [" + to_string(covered) +
                 ", " + to_string(begin) + ") are never sent";
        if (begin < covered)
          return "transfer " + to_string(t) + ": words [" + to_string(begin) +
                 ", " + to_string(std::min(covered, end)) + ") are sent twice";
        covered = end;
      }
      if (covered < phase.words[t])
        return "transfer " + to_string(t) + ": words [" + to_string(covered) +
               ", " + to_string(phase.words[t]) + ") are never sent";
    }
  }

  // A run occupies its source's sender and each destination's receiver for
  // the same cycles; a tile that receives its own word uses both.
  {
    std::vector<Interval> sends;
    sends.reserve(runs.size());
    for (const ExchangeRun &run : runs)
      sends.push_back({run.start, uint64_t(run.start) + run.words,
                       phase.source[run.transfer], run.transfer});
    if (auto error = findOverlap(sends, phase.tiles, "sends"))
      return error;
  }
  {
    std::vector<Interval> receives;
    receives.reserve(receiveCount);
    for (const ExchangeRun &run : runs)
      for (const uint32_t *d = phase.destinationsBegin(run.transfer),
                          *de = phase.destinationsEnd(run.transfer);
           d != de; ++d)
        receives.push_back(
            {run.start, uint64_t(run.start) + run.words, *d, run.transfer});
    if (auto error = findOverlap(receives, phase.tiles, "receives"))
      return error;
  }
  return std::nullopt;
}
