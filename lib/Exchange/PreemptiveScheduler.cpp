//===- PreemptiveScheduler.cpp - Most-loaded-port-first list scheduling ---===//
//
// Broadcasts whose destination sets overlap fall outside the bipartite model
// of the exact strategy. This one sweeps time instead. Every tile has a send
// port and a receive port; a port's load is the words still to cross it. A
// transfer's priority is the load of its most loaded port: serving the most
// loaded ports first keeps the largest load falling one word per cycle, the
// way the endpoint bound needs. Preemption matters for broadcasts: without it
// a long transfer on a lightly loaded port starves a critical one.
//
// Events are transfers finishing (or being preempted): their ports become
// free and are served in decreasing load; a port starts its best waiting
// transfer, preempting the running ones in its way if their priority is
// lower by more than a margin. A running transfer's priority falls one word
// per cycle while an idle port's load stays, so ports take turns; the margin
// trades horizon for runs. (Waking idle ports at the cycle their load would
// overtake has been tried: the running set changes first almost always, and
// it cost more time than it gained.)
//
//===----------------------------------------------------------------------===//

#include "SchedulerDetail.h"

#include <algorithm>
#include <cassert>
#include <queue>

using namespace ipu;

namespace {

constexpr uint32_t kNone = UINT32_MAX;

class PreemptiveSweep {
public:
  PreemptiveSweep(const ExchangePhase &phase, uint64_t margin, uint64_t budget)
      : phase(phase), margin(margin), budget(budget) {
    size_t n = phase.size();
    uint32_t tiles = phase.tiles;
    uint32_t ports = 2 * tiles;
    // Ports of a transfer: its source's send port, then its destinations'
    // receive ports.
    portBegin.resize(n + 1);
    portList.reserve(n + phase.destTiles.size());
    for (size_t t = 0; t < n; ++t) {
      portBegin[t] = static_cast<uint32_t>(portList.size());
      portList.push_back(phase.source[t]);
      for (const uint32_t *d = phase.destinationsBegin(t),
                          *de = phase.destinationsEnd(t);
           d != de; ++d)
        portList.push_back(tiles + *d);
    }
    portBegin[n] = static_cast<uint32_t>(portList.size());
    // The unfinished transfers of each port, in [candBegin, port.candEnd).
    port.assign(ports, Port());
    candBegin.assign(ports + 1, 0);
    for (uint32_t q : portList)
      ++candBegin[q + 1];
    for (uint32_t q = 0; q < ports; ++q)
      candBegin[q + 1] += candBegin[q];
    candList.resize(portList.size());
    for (uint32_t q = 0; q < ports; ++q)
      port[q].candEnd = candBegin[q];
    for (size_t t = 0; t < n; ++t)
      for (uint32_t i = portBegin[t]; i < portBegin[t + 1]; ++i) {
        Port &q = port[portList[i]];
        candList[q.candEnd++] = static_cast<uint32_t>(t);
        q.base += phase.words[t];
      }
    transfer.assign(n, Transfer());
    for (size_t t = 0; t < n; ++t)
      transfer[t].remaining = phase.words[t];
  }

  uint64_t workDone() const { return work; }

  /// The runs, or nothing when the work budget ran out.
  std::optional<std::vector<ExchangeRun>> run() {
    uint64_t now = 0;
    for (uint32_t q = 0; q < port.size(); ++q)
      if (port[q].base > 0)
        markDirty(q, now);
    while (true) {
      if (!serveDirty(now))
        return std::nullopt;
      if (completions.empty())
        break;
      now = completions.top().first;
      while (!completions.empty() && completions.top().first == now) {
        uint32_t t = completions.top().second;
        completions.pop();
        if (transfer[t].active && transfer[t].endTime == now)
          stop(t, now);
      }
    }
    // Nothing runs, so nothing waits: a waiting transfer's ports were all
    // served after they last became free, and a served free port with a
    // waiting transfer takes one.
    assert(std::all_of(transfer.begin(), transfer.end(),
                       [](const Transfer &t) { return t.remaining == 0; }) &&
           "preemptive sweep stalled");
    return std::move(runs);
  }

private:
  struct Port {
    uint64_t base = 0;  ///< Load at `since`.
    uint64_t since = 0; ///< Last change of claim.
    uint32_t claim = kNone;
    uint32_t candEnd = 0;
    uint64_t dirty = UINT64_MAX; ///< Cycle it was queued for, if any.
  };
  struct Transfer {
    uint64_t remaining = 0; ///< Words left at the start of its current run.
    uint64_t runStart = 0, endTime = 0;
    uint64_t keyAtStart = 0;
    bool active = false;
  };

  uint64_t load(const Port &q, uint64_t now) const {
    return q.claim == kNone ? q.base : q.base - (now - q.since);
  }
  /// A running transfer's ports all fall one word per cycle.
  uint64_t runningKey(uint32_t t, uint64_t now) const {
    return transfer[t].keyAtStart - (now - transfer[t].runStart);
  }

  void markDirty(uint32_t q, uint64_t now) {
    if (port[q].dirty == now)
      return;
    port[q].dirty = now;
    dirty.push({port[q].base, ~q});
  }

  void setClaim(uint32_t q, uint32_t t, uint64_t now) {
    Port &p = port[q];
    p.base = load(p, now);
    p.since = now;
    p.claim = t;
  }

  void start(uint32_t t, uint64_t key, uint64_t now) {
    for (uint32_t i = portBegin[t]; i < portBegin[t + 1]; ++i)
      setClaim(portList[i], t, now);
    Transfer &x = transfer[t];
    x.active = true;
    x.runStart = now;
    x.keyAtStart = key;
    x.endTime = now + x.remaining;
    completions.push({x.endTime, t});
  }

  /// Ends t's current run at `now` (finished or preempted), frees its ports.
  void stop(uint32_t t, uint64_t now) {
    Transfer &x = transfer[t];
    uint64_t sent = now - x.runStart;
    if (sent > 0)
      runs.push_back({t, static_cast<uint32_t>(phase.words[t] - x.remaining),
                      static_cast<uint32_t>(sent),
                      static_cast<uint32_t>(x.runStart)});
    x.remaining -= sent;
    x.active = false;
    for (uint32_t i = portBegin[t]; i < portBegin[t + 1]; ++i) {
      uint32_t q = portList[i];
      setClaim(q, kNone, now);
      if (port[q].base > 0)
        markDirty(q, now);
    }
  }

  /// Free ports in decreasing load (ties by port), each starting its best
  /// waiting transfer. False when the budget runs out.
  bool serveDirty(uint64_t now) {
    while (!dirty.empty()) {
      uint32_t q = ~dirty.top().second;
      dirty.pop();
      port[q].dirty = UINT64_MAX;
      if (port[q].claim != kNone || port[q].base == 0)
        continue;
      serve(q, now);
      if (work > budget)
        return false;
    }
    return true;
  }

  /// Starts q's best eligible transfer. A waiting transfer is eligible when
  /// its ports are all free, or when its most loaded free port carries more
  /// than the priority of every transfer in its way plus the margin (a
  /// busy port's load never exceeds the priority of the transfer on it, so
  /// only a free port can make the difference). Either way its priority is
  /// that free port's load. Best: highest priority, then most ports (the
  /// hardest to place), then no preemption, then lowest index.
  void serve(uint32_t q, uint64_t now) {
    uint32_t best = kNone, bestPorts = 0;
    uint64_t bestKey = 0;
    bool bestBlocked = false;
    Port &p = port[q];
    for (uint32_t c = candBegin[q]; c < p.candEnd;) {
      uint32_t t = candList[c];
      const Transfer &x = transfer[t];
      if (x.remaining == 0) {
        candList[c] = candList[--p.candEnd]; // Finished for good.
        continue;
      }
      ++c;
      if (x.active)
        continue;
      ++work;
      uint64_t idleKey = 0, blockerKey = 0;
      bool blocked = false;
      for (uint32_t i = portBegin[t]; i < portBegin[t + 1]; ++i) {
        const Port &r = port[portList[i]];
        if (r.claim == kNone) {
          idleKey = std::max(idleKey, r.base);
        } else {
          blocked = true;
          blockerKey = std::max(blockerKey, runningKey(r.claim, now));
        }
      }
      if (blocked && idleKey <= blockerKey + margin)
        continue;
      uint32_t ports = portBegin[t + 1] - portBegin[t];
      bool better =
          best == kNone || idleKey > bestKey ||
          (idleKey == bestKey &&
           (ports > bestPorts ||
            (ports == bestPorts &&
             (blocked < bestBlocked || (blocked == bestBlocked && t < best)))));
      if (better) {
        best = t;
        bestKey = idleKey;
        bestPorts = ports;
        bestBlocked = blocked;
      }
    }
    if (best == kNone)
      return;
    if (bestBlocked)
      for (uint32_t i = portBegin[best]; i < portBegin[best + 1]; ++i) {
        uint32_t y = port[portList[i]].claim;
        if (y != kNone)
          stop(y, now);
      }
    start(best, bestKey, now);
  }

  const ExchangePhase &phase;
  uint64_t margin;
  uint64_t budget;
  uint64_t work = 0;
  std::vector<uint32_t> portBegin, portList, candBegin, candList;
  std::vector<Port> port;
  std::vector<Transfer> transfer;
  using Event = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>>
      completions;
  std::priority_queue<Event> dirty;
  std::vector<ExchangeRun> runs;
};

/// One sweep with the given margin, its runs merged; nothing when the
/// budget runs out. Takes the work done off the budget.
std::optional<ExchangeSchedule> sweepWith(const ExchangePhase &phase,
                                          uint64_t margin, uint64_t &budget) {
  PreemptiveSweep sweep(phase, margin, budget);
  std::optional<std::vector<ExchangeRun>> runs = sweep.run();
  budget -= std::min(budget, sweep.workDone());
  if (!runs)
    return std::nullopt;
  // Runs of one transfer that continue each other merge.
  std::sort(runs->begin(), runs->end(),
            [](const ExchangeRun &a, const ExchangeRun &b) {
              return a.transfer != b.transfer ? a.transfer < b.transfer
                                              : a.wordOffset < b.wordOffset;
            });
  ExchangeSchedule schedule;
  schedule.strategy = "preemptive";
  schedule.runs.reserve(runs->size());
  for (const ExchangeRun &run : *runs) {
    ExchangeRun *last = schedule.runs.empty() ? nullptr : &schedule.runs.back();
    if (last && last->transfer == run.transfer &&
        last->start + last->words == run.start)
      last->words += run.words;
    else
      schedule.runs.push_back(run);
  }
  return schedule;
}

} // namespace

std::optional<ExchangeSchedule>
ipu::detail::schedulePreemptiveWithin(const ExchangePhase &phase,
                                      uint64_t budget) {
  assert(!phase.validate() && "scheduling an invalid phase");
  uint64_t bound = endpointLowerBound(phase);
  // A hysteresis margin of about four per thousand of the bound stops
  // ping-pong between near-equal ports (each switch is a run): on random
  // broadcasts over 1472 tiles it reaches the bound with a fifth fewer runs
  // than no margin. On dense phases it can cost a few percent of horizon;
  // then a second sweep without margin is tried and the shorter one kept.
  // The two sweeps share the budget.
  std::optional<ExchangeSchedule> first =
      sweepWith(phase, std::max<uint64_t>(2, bound / 256), budget);
  if (!first || first->sendHorizon() <= bound + bound / 100)
    return first;
  std::optional<ExchangeSchedule> second = sweepWith(phase, 0, budget);
  if (second && second->sendHorizon() < first->sendHorizon())
    return second;
  return first;
}

ExchangeSchedule ipu::schedulePreemptive(const ExchangePhase &phase) {
  return *detail::schedulePreemptiveWithin(phase, UINT64_MAX);
}
