//===- exchange-bench.cpp - Exchange schedulers against their bounds ------===//
//
// Schedules synthetic phases on 1472 tiles (seeded, deterministic) or phases
// read from text files, and prints one line per case:
//
//   bench=exchange case=NAME tiles=... transfers=... words=... bound=...
//   tighterBound=... horizon=... horizonOverBound=...
//   horizonOverTighterBound=... strategy=... runs=... runsPerTransfer=...
//   seconds=... boundSeconds=... checkSeconds=... legal=true|false
//
// `seconds` is scheduleBest alone, `boundSeconds` is broadcastLowerBound,
// `checkSeconds` is checkSchedule. Horizons are send horizons (the pipeline
// latency is a constant on top).
//
// The same phase as the compiler schedules it, under the hardware's rules
// (IPU/Exchange/Timing.h, scheduleTimedPhase), follows on the same line:
// timedHorizon (the last receiver's or sender's end, latency included),
// timedBound (timedScheduleReport's: timedLowerBound, the busiest tile's
// events plus route latency and receive tails, or where pairable transfers
// hold their partners' paths pairingLowerBound; or a tile's send starts
// and source selects, an event each), timedHorizonOverBound,
// timedEndpointEvents,
// timedLatency (what the bound adds to those events),
// timedHorizonLessLatencyOverEndpoint (the target: at most 1.5),
// timedCycles (with the 600-cycle phase cost and local copies), timedRuns,
// timedPairedRuns, timedLocalCopyWords, timedPointerEvents, timedCodeBytes,
// timedSeconds (scheduleTimedPhase, which tries paired sends too),
// timedCheckSeconds (checkTimedSchedule) and timedLegal. A phase file's
// transfers keep the addresses it gives (the compiler's dumps give those
// placement chose, addresses=placed); others get addresses as an allocator
// would pack them (packedAddresses, addresses=packed): each tile's sends
// and receives one after another from the tile's memory base, so that the
// memory-element rule bites where buffers share one.
//
//   exchange-bench                        every synthetic case
//   exchange-bench --case NAME            one of them
//   exchange-bench --list                 their names
//   exchange-bench --phase FILE [--name NAME]
//
// Exit status 1 when a schedule is illegal or an input cannot be read.
//
//===----------------------------------------------------------------------===//

#include "IPU/Exchange/Phase.h"
#include "IPU/Exchange/PhaseText.h"
#include "IPU/Exchange/Timing.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>

using namespace ipu;

namespace {

constexpr uint32_t kTiles = 1472;

using Rng = std::mt19937_64;

uint32_t below(Rng &rng, uint32_t n) {
  return static_cast<uint32_t>(rng() % n);
}

/// Random unicast transfers with words in [1, maxWords].
void addUniform(ExchangePhase &phase, Rng &rng, size_t transfers,
                uint32_t maxWords) {
  for (size_t i = 0; i < transfers; ++i) {
    uint32_t d = below(rng, phase.tiles);
    phase.addTransfer(below(rng, phase.tiles), 1 + below(rng, maxWords), {d});
  }
}

ExchangePhase uniform(size_t transfers, uint32_t maxWords, uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  addUniform(phase, rng, transfers, maxWords);
  return phase;
}

/// A quarter of the transfers leave one of 16 hot tiles and another quarter
/// go to one of 16 (other) hot tiles; the rest are uniform.
ExchangePhase skewed(size_t transfers, uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  for (size_t i = 0; i < transfers; ++i) {
    uint32_t s = below(rng, kTiles), d = below(rng, kTiles);
    switch (i % 4) {
    case 0:
      s = below(rng, 16) * 37;
      break;
    case 1:
      d = 5 + below(rng, 16) * 41;
      break;
    default:
      break;
    }
    phase.addTransfer(s, 1 + below(rng, 64), {d});
  }
  return phase;
}

/// Every tile of a group of `group` tiles sends 1 to `maxWords` words to
/// every other tile of the group.
ExchangePhase allToAll(uint32_t group, uint32_t maxWords, uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  uint32_t stride = kTiles / group;
  for (uint32_t i = 0; i < group; ++i)
    for (uint32_t j = 0; j < group; ++j)
      if (i != j)
        phase.addTransfer(i * stride, 1 + below(rng, maxWords),
                          {j * stride + 1});
  return phase;
}

/// Broadcasts to random destination sets of 2 to 8 tiles (sets overlap).
ExchangePhase broadcastRandom(size_t transfers, uint32_t maxWords,
                              uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  std::vector<uint32_t> dests;
  for (size_t i = 0; i < transfers; ++i) {
    size_t fanout = 2 + below(rng, 7);
    dests.clear();
    while (dests.size() < fanout) {
      uint32_t d = below(rng, kTiles);
      if (std::find(dests.begin(), dests.end(), d) == dests.end())
        dests.push_back(d);
    }
    phase.addTransfer(below(rng, kTiles), 1 + below(rng, maxWords), dests);
  }
  return phase;
}

/// Matmul operand distribution: 64 replica groups of 23 tiles each receive
/// blocks, row by row, from random source tiles.
ExchangePhase broadcastGroups(size_t transfers, uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  constexpr uint32_t groups = 64, replicas = kTiles / groups;
  std::vector<uint32_t> dests(replicas);
  for (size_t i = 0; i < transfers; ++i) {
    uint32_t g = below(rng, groups);
    for (uint32_t r = 0; r < replicas; ++r)
      dests[r] = g + r * groups;
    phase.addTransfer(below(rng, kTiles), 1 + below(rng, 64), dests);
  }
  return phase;
}

/// Both operands of a matmul gathered in one phase: tiles form a 32 x 46
/// grid, and every transfer is broadcast to a whole grid row (a block of A
/// for every column) or a whole grid column (a block of B for every row).
/// Rows are disjoint, columns are disjoint, but every row meets every
/// column, so no A transfer may overlap any B transfer.
ExchangePhase broadcastGrid(size_t transfers, uint64_t seed) {
  constexpr uint32_t rows = 32, cols = kTiles / rows;
  Rng rng(seed);
  ExchangePhase phase;
  phase.tiles = kTiles;
  std::vector<uint32_t> dests;
  for (size_t t = 0; t < transfers; ++t) {
    dests.clear();
    if (rng() % 2) {
      uint32_t i = below(rng, rows);
      for (uint32_t j = 0; j < cols; ++j)
        dests.push_back(i * cols + j);
    } else {
      uint32_t j = below(rng, cols);
      for (uint32_t i = 0; i < rows; ++i)
        dests.push_back(i * cols + j);
    }
    phase.addTransfer(below(rng, kTiles), 1 + below(rng, 64), dests);
  }
  return phase;
}

/// The lines of the projective plane over GF(37): 1407 broadcasts to 38
/// tiles each, every two sharing exactly one tile. They conflict pairwise
/// and must all go one after another, while each tile receives only 38 of
/// them: the endpoint bound is far below any schedule, the clique bound
/// matches it.
ExchangePhase broadcastCliques(uint64_t seed) {
  constexpr uint32_t q = 37, points = q * q + q + 1;
  Rng rng(seed);
  // Points and lines are the normalised vectors of GF(q)^3: the first
  // non-zero coordinate is 1. Point x lies on line l when x . l = 0.
  std::vector<std::array<uint32_t, 3>> vectors;
  for (uint32_t a = 0; a < q; ++a)
    for (uint32_t b = 0; b < q; ++b)
      vectors.push_back({1, a, b});
  for (uint32_t b = 0; b < q; ++b)
    vectors.push_back({0, 1, b});
  vectors.push_back({0, 0, 1});
  ExchangePhase phase;
  phase.tiles = kTiles;
  std::vector<uint32_t> dests;
  for (uint32_t l = 0; l < points; ++l) {
    dests.clear();
    for (uint32_t x = 0; x < points; ++x) {
      uint32_t dot = 0;
      for (int k = 0; k < 3; ++k)
        dot += vectors[x][k] * vectors[l][k];
      if (dot % q == 0)
        dests.push_back(x);
    }
    phase.addTransfer(l, 1 + below(rng, 8), dests);
  }
  return phase;
}

/// Random unicast transfers, then padding transfers of random sizes between
/// random tiles with spare capacity until every tile sends and receives
/// exactly the bound: no tile has a spare cycle.
ExchangePhase padded(size_t transfers, uint32_t maxWords, uint64_t seed) {
  Rng rng(seed);
  ExchangePhase phase = uniform(transfers, maxWords, seed);
  std::vector<uint64_t> sent = phase.wordsSentPerTile();
  std::vector<uint64_t> received = phase.wordsReceivedPerTile();
  uint64_t bound = endpointLowerBound(phase);
  std::vector<uint32_t> senders, receivers;
  for (uint32_t t = 0; t < kTiles; ++t) {
    if (sent[t] < bound)
      senders.push_back(t);
    if (received[t] < bound)
      receivers.push_back(t);
  }
  // Both deficit totals are tiles * bound - words, so they run out together.
  while (!senders.empty() && !receivers.empty()) {
    size_t si = below(rng, static_cast<uint32_t>(senders.size()));
    size_t ri = below(rng, static_cast<uint32_t>(receivers.size()));
    uint32_t s = senders[si], r = receivers[ri];
    uint64_t room = std::min(bound - sent[s], bound - received[r]);
    uint32_t w = static_cast<uint32_t>(
        std::min<uint64_t>(room, 1 + below(rng, maxWords)));
    phase.addTransfer(s, w, {r});
    sent[s] += w;
    received[r] += w;
    if (sent[s] == bound) {
      senders[si] = senders.back();
      senders.pop_back();
    }
    if (received[r] == bound) {
      receivers[ri] = receivers.back();
      receivers.pop_back();
    }
  }
  return phase;
}

struct Case {
  const char *name;
  std::function<ExchangePhase()> make;
};

std::vector<Case> syntheticCases() {
  return {
      {"uniform-100k", [] { return uniform(100000, 64, 1); }},
      {"uniform-500k", [] { return uniform(500000, 64, 2); }},
      {"uniform-1word-500k", [] { return uniform(500000, 1, 3); }},
      {"skewed-hot-tiles-200k", [] { return skewed(200000, 4); }},
      {"all-to-all-707", [] { return allToAll(707, 4, 5); }},
      {"broadcast-groups-100k", [] { return broadcastGroups(100000, 6); }},
      {"broadcast-random-20k", [] { return broadcastRandom(20000, 16, 7); }},
      {"broadcast-grid-20k", [] { return broadcastGrid(20000, 11); }},
      {"broadcast-cliques-pg37", [] { return broadcastCliques(8); }},
      {"padded-100k", [] { return padded(100000, 64, 9); }},
      {"padded-400k", [] { return padded(400000, 64, 10); }},
  };
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The timed model's keys for `phase` (as the compiler schedules it, on
/// addresses packed per tile as an allocator would place them), appended to
/// its line; false when its schedule breaks a rule.
bool appendTimed(const ExchangePhase &phase, const TransferAddresses *given,
                 std::string &keys, std::string &error) {
  using Clock = std::chrono::steady_clock;
  TargetModel target = TargetModel::ipu21();
  if (phase.tiles < target.tiles)
    target = TargetModel::ipu21WithTiles(phase.tiles);
  const TransferAddresses addresses =
      given && !given->source.empty() ? *given : packedAddresses(target, phase);
  auto t0 = Clock::now();
  ExchangeSchedule schedule = scheduleTimedPhase(target, phase, addresses);
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  auto t1 = Clock::now();
  std::optional<std::string> illegal =
      checkTimedSchedule(target, phase, schedule, addresses);
  double checkSeconds = std::chrono::duration<double>(Clock::now() - t1).count();
  ScheduleReport report;
  TimedPhaseCost cost;
  if (!illegal) {
    report = timedScheduleReport(target, phase, schedule, addresses);
    cost = timedPhaseCost(target, phase, schedule, addresses);
  }
  // Beside the bound: the target, 1.5 x the endpoint part plus the
  // latency.
  const double overEndpoint =
      report.endpointEvents
          ? double(report.horizon - std::min(report.horizon, report.latency)) /
                double(report.endpointEvents)
          : 1.0;
  char text[800];
  std::snprintf(text, sizeof(text),
                " addresses=%s timedHorizon=%llu timedBound=%llu timedHorizonOverBound=%.4f "
                "timedEndpointEvents=%llu timedLatency=%llu "
                "timedHorizonLessLatencyOverEndpoint=%.4f timedCycles=%llu "
                "timedRuns=%zu timedPairedRuns=%llu timedLocalCopyWords=%llu "
                "timedPointerEvents=%llu timedCodeBytes=%llu timedSeconds=%.3f "
                "timedCheckSeconds=%.3f timedLegal=%s",
                given && !given->source.empty() ? "placed" : "packed",
                (unsigned long long)report.horizon, (unsigned long long)report.bound,
                report.bound ? double(report.horizon) / double(report.bound) : 1.0,
                (unsigned long long)report.endpointEvents,
                (unsigned long long)report.latency, overEndpoint,
                (unsigned long long)cost.cycles, schedule.runs.size(),
                (unsigned long long)report.pairedRuns,
                (unsigned long long)report.localWords,
                (unsigned long long)cost.timing.pointerEvents,
                (unsigned long long)cost.timing.codeBytes, seconds, checkSeconds,
                illegal ? "false" : "true");
  keys += text;
  if (illegal)
    error = *illegal;
  return !illegal;
}

/// Schedules, bounds and checks one phase and prints its line; false when
/// the schedule is illegal.
bool runCase(const std::string &name, const ExchangePhase &phase,
             const TransferAddresses *addresses = nullptr) {
  using Clock = std::chrono::steady_clock;
  uint64_t words = 0;
  for (uint32_t w : phase.words)
    words += w;

  auto t0 = Clock::now();
  ScheduleReport report;
  ExchangeSchedule schedule = scheduleBest(phase, &report);
  double seconds = secondsSince(t0);

  auto t1 = Clock::now();
  uint64_t tighter = broadcastLowerBound(phase);
  double boundSeconds = secondsSince(t1);

  auto t2 = Clock::now();
  std::optional<std::string> error = checkSchedule(phase, schedule);
  double checkSeconds = secondsSince(t2);

  auto ratio = [](uint64_t h, uint64_t b) {
    return b ? double(h) / double(b) : 1.0;
  };
  std::string timedKeys, timedError;
  const bool timedLegal = appendTimed(phase, addresses, timedKeys, timedError);
  std::printf("bench=exchange case=%s tiles=%u transfers=%zu words=%llu "
              "bound=%llu tighterBound=%llu horizon=%llu "
              "horizonOverBound=%.4f horizonOverTighterBound=%.4f "
              "strategy=%s runs=%llu runsPerTransfer=%.3f seconds=%.3f "
              "boundSeconds=%.3f checkSeconds=%.3f legal=%s%s\n",
              name.c_str(), phase.tiles, phase.size(),
              static_cast<unsigned long long>(words),
              static_cast<unsigned long long>(report.bound),
              static_cast<unsigned long long>(tighter),
              static_cast<unsigned long long>(report.horizon),
              ratio(report.horizon, report.bound),
              ratio(report.horizon, tighter), report.strategy.c_str(),
              static_cast<unsigned long long>(report.runs),
              phase.size() ? double(report.runs) / double(phase.size()) : 0.0,
              seconds, boundSeconds, checkSeconds, error ? "false" : "true",
              timedKeys.c_str());
  std::fflush(stdout);
  if (error)
    std::fprintf(stderr, "exchange-bench: %s: illegal schedule: %s\n",
                 name.c_str(), error->c_str());
  if (!timedLegal)
    std::fprintf(stderr, "exchange-bench: %s: illegal timed schedule: %s\n",
                 name.c_str(), timedError.c_str());
  return !error && timedLegal;
}

int usage() {
  std::fprintf(stderr,
               "usage: exchange-bench [--case NAME | --list | --phase FILE "
               "[--name NAME]]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string only, phaseFile, name;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--case" && hasValue)
      only = argv[++i];
    else if (arg == "--phase" && hasValue)
      phaseFile = argv[++i];
    else if (arg == "--name" && hasValue)
      name = argv[++i];
    else if (arg == "--list")
      list = true;
    else
      return usage();
  }

  if (!phaseFile.empty()) {
    std::ifstream in(phaseFile);
    if (!in) {
      std::fprintf(stderr, "exchange-bench: cannot open '%s'\n",
                   phaseFile.c_str());
      return 1;
    }
    ExchangePhase phase;
    TransferAddresses addresses;
    if (auto error = readPhaseText(in, phase, &addresses)) {
      std::fprintf(stderr, "exchange-bench: %s: %s\n", phaseFile.c_str(),
                   error->c_str());
      return 1;
    }
    if (name.empty()) {
      name = phaseFile.substr(phaseFile.find_last_of('/') + 1);
      if (name.size() > 6 && name.compare(name.size() - 6, 6, ".phase") == 0)
        name.resize(name.size() - 6);
    }
    return runCase(name, phase, &addresses) ? 0 : 1;
  }

  bool ok = true, found = false;
  for (const Case &c : syntheticCases()) {
    if (list) {
      std::printf("%s\n", c.name);
      continue;
    }
    if (!only.empty() && only != c.name)
      continue;
    found = true;
    ok &= runCase(c.name, c.make());
  }
  if (!list && !found) {
    std::fprintf(stderr, "exchange-bench: no case named '%s'\n", only.c_str());
    return 1;
  }
  return ok ? 0 : 1;
}
