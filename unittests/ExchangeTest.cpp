//===- ExchangeTest.cpp - Exchange phases, checker and schedulers --------===//

#include "IPU/Exchange/Phase.h"

#include "gtest/gtest.h"

#include <map>
#include <random>

using namespace ipu;

namespace {

/// Runs the checker and returns its message, or "" when legal.
std::string check(const ExchangePhase &phase,
                  const std::vector<ExchangeRun> &runs) {
  ExchangeSchedule schedule;
  schedule.runs = runs;
  return checkSchedule(phase, schedule).value_or("");
}

ExchangePhase makePhase(uint32_t tiles) {
  ExchangePhase phase;
  phase.tiles = tiles;
  return phase;
}

//===----------------------------------------------------------------------===//
// Phase data
//===----------------------------------------------------------------------===//

TEST(PhaseTest, AddTransferBuildsCsr) {
  ExchangePhase phase = makePhase(8);
  EXPECT_EQ(phase.addTransfer(0, 3, {1, 2}), 0u);
  EXPECT_EQ(phase.addTransfer(4, 5, {5}), 1u);
  EXPECT_EQ(phase.size(), 2u);
  EXPECT_EQ(phase.destBegin, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(phase.destTiles, (std::vector<uint32_t>{1, 2, 5}));
  EXPECT_EQ(phase.destinationsEnd(0) - phase.destinationsBegin(0), 2);
  EXPECT_EQ(*phase.destinationsBegin(1), 5u);
  EXPECT_FALSE(phase.validate());
}

TEST(PhaseTest, PerTileWordsCountBroadcastOnce) {
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 3, {1, 2, 3});
  phase.addTransfer(0, 2, {1});
  phase.addTransfer(3, 4, {3}); // Self-destination: sends and receives.
  EXPECT_EQ(phase.wordsSentPerTile(), (std::vector<uint64_t>{5, 0, 0, 4}));
  EXPECT_EQ(phase.wordsReceivedPerTile(), (std::vector<uint64_t>{0, 5, 3, 7}));
  EXPECT_EQ(endpointLowerBound(phase), 7u);
  EXPECT_FALSE(phase.validate()) << *phase.validate();
}

TEST(PhaseTest, EmptyPhase) {
  ExchangePhase phase = makePhase(16);
  EXPECT_FALSE(phase.validate());
  EXPECT_EQ(endpointLowerBound(phase), 0u);
  ExchangeSchedule schedule = scheduleGreedy(phase);
  EXPECT_TRUE(schedule.runs.empty());
  EXPECT_EQ(schedule.sendHorizon(), 0u);
  EXPECT_EQ(schedule.horizon(32), 0u);
  EXPECT_FALSE(checkSchedule(phase, schedule));
}

TEST(PhaseTest, HorizonAddsLatency) {
  ExchangeSchedule schedule;
  schedule.runs = {{0, 0, 4, 10}, {1, 0, 2, 3}};
  EXPECT_EQ(schedule.sendHorizon(), 14u);
  EXPECT_EQ(schedule.horizon(32), 46u);
}

/// Expects validate() to fail with a message containing every fragment.
void expectInvalid(const ExchangePhase &phase,
                   std::initializer_list<const char *> fragments) {
  auto error = phase.validate();
  ASSERT_TRUE(error) << "phase unexpectedly valid";
  for (const char *f : fragments)
    EXPECT_NE(error->find(f), std::string::npos)
        << "'" << *error << "' lacks '" << f << "'";
}

TEST(PhaseTest, ValidateRejectsTilesOutOfRange) {
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 1, {1});
  phase.addTransfer(4, 1, {1});
  expectInvalid(phase, {"transfer 1", "source tile 4"});

  ExchangePhase dest = makePhase(4);
  dest.addTransfer(0, 1, {1});
  dest.addTransfer(1, 1, {2, 9});
  expectInvalid(dest, {"transfer 1", "destination tile 9"});
}

TEST(PhaseTest, ValidateRejectsBadTransfers) {
  ExchangePhase zero = makePhase(4);
  zero.addTransfer(0, 1, {1});
  zero.addTransfer(2, 0, {1});
  expectInvalid(zero, {"transfer 1", "no words"});

  ExchangePhase empty = makePhase(4);
  empty.addTransfer(0, 1, {1});
  empty.addTransfer(0, 1, {});
  expectInvalid(empty, {"transfer 1", "no destinations"});

  ExchangePhase dup = makePhase(4);
  dup.addTransfer(0, 1, {1, 2});
  dup.addTransfer(0, 1, {3, 2, 3});
  expectInvalid(dup, {"transfer 1", "tile 3", "twice"});
}

TEST(PhaseTest, ValidateRejectsBrokenCsr) {
  ExchangePhase base = makePhase(4);
  base.addTransfer(0, 1, {1, 2});
  base.addTransfer(1, 1, {3});
  ASSERT_FALSE(base.validate());

  ExchangePhase size = base;
  size.destBegin.pop_back();
  expectInvalid(size, {"destBegin"});

  ExchangePhase monotone = base;
  monotone.destBegin = {0, 3, 2};
  monotone.destTiles = {1, 2, 3};
  expectInvalid(monotone, {"transfer 1", "decreases"});
  // Per-tile counts stay safe (all zero) on a phase they cannot walk.
  EXPECT_EQ(monotone.wordsReceivedPerTile(), std::vector<uint64_t>(4, 0));

  ExchangePhase last = base;
  last.destTiles.push_back(0);
  expectInvalid(last, {"destBegin ends at 3", "4 destination tiles"});

  ExchangePhase wordsSize = base;
  wordsSize.words.pop_back();
  expectInvalid(wordsSize, {"word counts"});
}

//===----------------------------------------------------------------------===//
// Checker
//===----------------------------------------------------------------------===//

/// 0 -> {1, 2} (4 words), 3 -> {2} (2 words), 1 -> {0} (3 words).
ExchangePhase smallPhase() {
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 4, {1, 2});
  phase.addTransfer(3, 2, {2});
  phase.addTransfer(1, 3, {0});
  return phase;
}

TEST(CheckerTest, AcceptsLegalSchedules) {
  ExchangePhase phase = smallPhase();
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 2, 4}, {2, 0, 3, 0}}), "");
  // Split runs, out of order, with idle cycles in between.
  EXPECT_EQ(check(phase, {{2, 1, 2, 9},
                          {0, 2, 2, 5},
                          {1, 0, 2, 0},
                          {0, 0, 2, 2},
                          {2, 0, 1, 0}}),
            "");
}

TEST(CheckerTest, SelfDestinationSendsAndReceivesInOneCycle) {
  ExchangePhase phase = makePhase(2);
  phase.addTransfer(0, 3, {0, 1});
  phase.addTransfer(1, 3, {1});
  // Transfer 1 receives on tile 1 only after transfer 0 is done with it.
  EXPECT_EQ(check(phase, {{0, 0, 3, 0}, {1, 0, 3, 3}}), "");
  EXPECT_EQ(check(phase, {{0, 0, 3, 0}, {1, 0, 3, 2}}),
            "tile 1 receives two words in cycle 2 (transfers 0 and 1)");
}

TEST(CheckerTest, CatchesDoubleSend) {
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 4, {1});
  phase.addTransfer(0, 4, {2});
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 4, 3}}),
            "tile 0 sends two words in cycle 3 (transfers 0 and 1)");
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 4, 4}}), "");
}

TEST(CheckerTest, CatchesDoubleSendBehindALongRun) {
  // The overlap is with an earlier, longer run, not with the neighbour.
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 10, {1});
  phase.addTransfer(0, 1, {2});
  phase.addTransfer(0, 1, {3});
  EXPECT_EQ(check(phase, {{0, 0, 10, 0}, {1, 0, 1, 2}, {2, 0, 1, 7}}),
            "tile 0 sends two words in cycle 2 (transfers 0 and 1)");
  EXPECT_EQ(check(phase, {{0, 0, 10, 2}, {1, 0, 1, 0}, {2, 0, 1, 7}}),
            "tile 0 sends two words in cycle 7 (transfers 0 and 2)");
}

TEST(CheckerTest, CatchesDoubleReceive) {
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 4, {2});
  phase.addTransfer(1, 4, {2});
  EXPECT_EQ(check(phase, {{0, 0, 4, 5}, {1, 0, 4, 2}}),
            "tile 2 receives two words in cycle 5 (transfers 1 and 0)");
}

TEST(CheckerTest, CatchesBroadcastDestinationReceivingTwice) {
  ExchangePhase phase = smallPhase();
  // Transfer 0 broadcasts to tile 2 in cycles [0, 4); transfer 1 also
  // lands on tile 2 in cycle 3. Senders differ, so only receive clashes.
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 2, 3}, {2, 0, 3, 0}}),
            "tile 2 receives two words in cycle 3 (transfers 0 and 1)");
}

TEST(CheckerTest, CatchesWrongWordCount) {
  ExchangePhase phase = smallPhase();
  EXPECT_EQ(check(phase, {{0, 0, 5, 0}, {1, 0, 2, 5}, {2, 0, 3, 0}}),
            "transfer 0: run 0 sends words [0, 5) but the transfer has only 4 "
            "words");
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 1, 2, 5}, {2, 0, 3, 0}}),
            "transfer 1: run 1 sends words [1, 3) but the transfer has only 2 "
            "words");
}

TEST(CheckerTest, CatchesMissingWords) {
  ExchangePhase phase = smallPhase();
  // No run at all for transfer 2.
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 2, 4}}),
            "transfer 2: words [0, 3) are never sent");
  // A hole in the middle.
  EXPECT_EQ(
      check(phase, {{0, 0, 1, 0}, {0, 3, 1, 1}, {1, 0, 2, 4}, {2, 0, 3, 0}}),
      "transfer 0: words [1, 3) are never sent");
  // A missing tail.
  EXPECT_EQ(check(phase, {{0, 0, 4, 0}, {1, 0, 2, 4}, {2, 0, 2, 0}}),
            "transfer 2: words [2, 3) are never sent");
}

TEST(CheckerTest, CatchesWordsSentTwice) {
  ExchangePhase phase = smallPhase();
  EXPECT_EQ(
      check(phase, {{0, 0, 4, 0}, {0, 2, 2, 10}, {1, 0, 2, 4}, {2, 0, 3, 0}}),
      "transfer 0: words [2, 4) are sent twice");
  // The same run listed twice.
  EXPECT_EQ(
      check(phase, {{0, 0, 4, 0}, {1, 0, 2, 4}, {1, 0, 2, 4}, {2, 0, 3, 0}}),
      "transfer 1: words [0, 2) are sent twice");
}

TEST(CheckerTest, CatchesBadRuns) {
  ExchangePhase phase = smallPhase();
  EXPECT_EQ(
      check(phase, {{0, 0, 4, 0}, {1, 0, 2, 4}, {2, 0, 3, 0}, {7, 0, 1, 0}}),
      "run 3: transfer 7 is out of range (the phase has 3 transfers)");
  EXPECT_EQ(
      check(phase, {{0, 0, 4, 0}, {1, 0, 0, 8}, {1, 0, 2, 4}, {2, 0, 3, 0}}),
      "run 1 of transfer 1 sends no words");
}

TEST(CheckerTest, RejectsInvalidPhase) {
  ExchangePhase phase = makePhase(2);
  phase.addTransfer(0, 1, {5});
  std::string error = check(phase, {{0, 0, 1, 0}});
  EXPECT_EQ(error.rfind("invalid phase: ", 0), 0u) << error;
}

/// Reference: cycle-by-cycle simulation, legal or not.
bool legalByBruteForce(const ExchangePhase &phase,
                       const std::vector<ExchangeRun> &runs) {
  std::map<std::pair<uint32_t, uint64_t>, int> sends, receives;
  std::map<std::pair<uint32_t, uint32_t>, int> wordsSent;
  for (const ExchangeRun &run : runs) {
    if (run.transfer >= phase.size() || run.words == 0)
      return false;
    for (uint32_t w = 0; w < run.words; ++w) {
      uint64_t cycle = uint64_t(run.start) + w;
      ++wordsSent[{run.transfer, run.wordOffset + w}];
      ++sends[{phase.source[run.transfer], cycle}];
      for (const uint32_t *d = phase.destinationsBegin(run.transfer);
           d != phase.destinationsEnd(run.transfer); ++d)
        ++receives[{*d, cycle}];
    }
  }
  for (auto &[key, count] : sends)
    if (count > 1)
      return false;
  for (auto &[key, count] : receives)
    if (count > 1)
      return false;
  size_t expected = 0;
  for (uint32_t t = 0; t < phase.size(); ++t)
    for (uint32_t w = 0; w < phase.words[t]; ++w, ++expected)
      if (wordsSent[{t, w}] != 1)
        return false;
  return wordsSent.size() == expected;
}

TEST(CheckerTest, AgreesWithBruteForceOnRandomSchedules) {
  std::mt19937 rng(1234);
  int legal = 0, illegal = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    uint32_t tiles = 2 + rng() % 4;
    ExchangePhase phase = makePhase(tiles);
    uint32_t transfers = 1 + rng() % 5;
    for (uint32_t t = 0; t < transfers; ++t) {
      std::vector<uint32_t> dests;
      for (uint32_t d = 0; d < tiles; ++d)
        if (rng() % 3 == 0)
          dests.push_back(d);
      if (dests.empty())
        dests.push_back(rng() % tiles);
      phase.addTransfer(rng() % tiles, 1 + rng() % 4, dests);
    }
    std::vector<ExchangeRun> runs;
    for (uint32_t t = 0; t < transfers; ++t) {
      // Split into pieces; sometimes perturb one to make gaps or overlaps.
      uint32_t offset = 0;
      while (offset < phase.words[t]) {
        uint32_t n = 1 + rng() % (phase.words[t] - offset);
        ExchangeRun run{t, offset, n, static_cast<uint32_t>(rng() % 16)};
        offset += n;
        switch (rng() % 12) {
        case 0:
          continue; // Drop it.
        case 1:
          runs.push_back(run); // Duplicate it.
          break;
        case 2:
          run.wordOffset += 1; // Shift it.
          break;
        case 3:
          run.words += 1; // Stretch it.
          break;
        default:
          break;
        }
        runs.push_back(run);
      }
    }
    bool expected = legalByBruteForce(phase, runs);
    std::string error = check(phase, runs);
    EXPECT_EQ(expected, error.empty()) << "iteration " << iter << ": " << error;
    (expected ? legal : illegal)++;
  }
  // Both verdicts must be exercised for the comparison to mean anything.
  EXPECT_GT(legal, 100);
  EXPECT_GT(illegal, 100);
}

//===----------------------------------------------------------------------===//
// Schedulers
//===----------------------------------------------------------------------===//

TEST(SchedulerTest, SequentialRunsBackToBack) {
  ExchangePhase phase = smallPhase();
  ExchangeSchedule schedule = scheduleSequential(phase);
  EXPECT_EQ(schedule.strategy, "sequential");
  ASSERT_EQ(schedule.runs.size(), 3u);
  EXPECT_EQ(schedule.runs[0].start, 0u);
  EXPECT_EQ(schedule.runs[1].start, 4u);
  EXPECT_EQ(schedule.runs[2].start, 6u);
  EXPECT_EQ(schedule.sendHorizon(), 9u);
  EXPECT_FALSE(checkSchedule(phase, schedule));
}

TEST(SchedulerTest, GreedyReachesBoundOnRingShift) {
  // Tile i broadcasts to i+1 and i+2 (mod 16): every tile sends 5 words and
  // receives 10, and greedy must pack them into exactly 10 cycles.
  ExchangePhase phase = makePhase(16);
  for (uint32_t i = 0; i < 16; ++i) {
    phase.addTransfer(i, 3, {(i + 1) % 16, (i + 2) % 16});
    phase.addTransfer(i, 2, {(i + 1) % 16, (i + 2) % 16});
  }
  ASSERT_EQ(endpointLowerBound(phase), 10u);
  ExchangeSchedule schedule = scheduleGreedy(phase);
  EXPECT_EQ(schedule.strategy, "greedy");
  EXPECT_FALSE(checkSchedule(phase, schedule))
      << *checkSchedule(phase, schedule);
  EXPECT_EQ(schedule.sendHorizon(), 10u);
  EXPECT_EQ(schedule.horizon(32), 42u);
}

TEST(SchedulerTest, GreedyReachesBoundOnBroadcastFan) {
  // One tile broadcasts to all; every other tile sends to its neighbour.
  ExchangePhase phase = makePhase(8);
  std::vector<uint32_t> all;
  for (uint32_t i = 1; i < 8; ++i)
    all.push_back(i);
  phase.addTransfer(0, 6, all);
  for (uint32_t i = 1; i < 8; ++i)
    phase.addTransfer(i, 2, {i % 7 + 1});
  // Tile 0 sends 6; tiles 1..7 receive 6 + 2 = 8.
  ASSERT_EQ(endpointLowerBound(phase), 8u);
  ExchangeSchedule schedule = scheduleGreedy(phase);
  EXPECT_FALSE(checkSchedule(phase, schedule));
  EXPECT_EQ(schedule.sendHorizon(), 8u);
}

TEST(SchedulerTest, GreedyFillsGaps) {
  // 0->1 takes [0, 10); 2->1 must wait until 10; the short 2->3 transfer
  // then fits in tile 2's idle cycles before it instead of after it.
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 10, {1});
  phase.addTransfer(2, 8, {1});
  phase.addTransfer(2, 2, {3});
  ExchangeSchedule schedule = scheduleGreedy(phase);
  ASSERT_EQ(schedule.runs.size(), 3u);
  EXPECT_EQ(schedule.runs[0].start, 0u);
  EXPECT_EQ(schedule.runs[1].start, 10u);
  EXPECT_EQ(schedule.runs[2].start, 0u);
  EXPECT_EQ(schedule.sendHorizon(), 18u);
  EXPECT_FALSE(checkSchedule(phase, schedule));
}

TEST(SchedulerTest, GreedySkipsGapsTooShort) {
  // Tile 0's sender ends up busy [0, 4) and [6, 10): a later 3-word
  // transfer from tile 0 cannot use the 2-cycle gap, a 2-word one can.
  ExchangePhase phase = makePhase(6);
  phase.addTransfer(3, 6, {2}); // Tile 2 receives [0, 6).
  phase.addTransfer(0, 4, {1}); // [0, 4).
  phase.addTransfer(0, 4, {2}); // Waits for tile 2: [6, 10).
  phase.addTransfer(0, 3, {5}); // Gap [4, 6) too short: [10, 13).
  phase.addTransfer(0, 2, {5}); // Fits the gap: [4, 6).
  ExchangeSchedule schedule = scheduleGreedy(phase);
  ASSERT_FALSE(checkSchedule(phase, schedule))
      << *checkSchedule(phase, schedule);
  std::vector<uint32_t> start(phase.size());
  for (const ExchangeRun &run : schedule.runs)
    start[run.transfer] = run.start;
  EXPECT_EQ(start, (std::vector<uint32_t>{0, 0, 6, 10, 4}));
  EXPECT_EQ(schedule.sendHorizon(), 13u);
}

TEST(SchedulerTest, GreedyOrdersByWordsThenIndex) {
  // Three equal transfers from one tile: ties go by index.
  ExchangePhase phase = makePhase(4);
  phase.addTransfer(0, 2, {1});
  phase.addTransfer(0, 2, {2});
  phase.addTransfer(0, 5, {3});
  ExchangeSchedule schedule = scheduleGreedy(phase);
  ASSERT_EQ(schedule.runs.size(), 3u);
  EXPECT_EQ(schedule.runs[2].start, 0u);
  EXPECT_EQ(schedule.runs[0].start, 5u);
  EXPECT_EQ(schedule.runs[1].start, 7u);
}

/// A random phase: `transfers` transfers over `tiles` tiles, words in
/// [1, maxWords], about one in eight a broadcast to up to 8 tiles.
ExchangePhase randomPhase(std::mt19937 &rng, uint32_t tiles, size_t transfers,
                          uint32_t maxWords) {
  ExchangePhase phase = makePhase(tiles);
  std::vector<uint32_t> dests;
  for (size_t t = 0; t < transfers; ++t) {
    uint32_t source = rng() % tiles;
    size_t fanout = rng() % 8 == 0 ? 2 + rng() % 7 : 1;
    dests.clear();
    while (dests.size() < fanout) {
      uint32_t d = rng() % tiles;
      if (std::find(dests.begin(), dests.end(), d) == dests.end())
        dests.push_back(d);
    }
    phase.addTransfer(source, 1 + rng() % maxWords, dests);
  }
  return phase;
}

TEST(SchedulerTest, RandomPhasesScheduleLegallyWithinBounds) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 50; ++iter) {
    uint32_t tiles = 16 + rng() % (1472 - 16 + 1);
    size_t transfers = 1 + rng() % (4 * tiles);
    ExchangePhase phase = randomPhase(rng, tiles, transfers, 1 + rng() % 64);
    ASSERT_FALSE(phase.validate()) << *phase.validate();
    SCOPED_TRACE("phase " + std::to_string(iter) + ": " +
                 std::to_string(tiles) + " tiles, " +
                 std::to_string(transfers) + " transfers");

    ExchangeSchedule greedy = scheduleGreedy(phase);
    ExchangeSchedule sequential = scheduleSequential(phase);
    auto greedyError = checkSchedule(phase, greedy);
    auto sequentialError = checkSchedule(phase, sequential);
    EXPECT_FALSE(greedyError) << *greedyError;
    EXPECT_FALSE(sequentialError) << *sequentialError;
    EXPECT_EQ(greedy.runs.size(), transfers); // Transfers stay whole.

    uint64_t bound = endpointLowerBound(phase);
    EXPECT_GE(greedy.sendHorizon(), bound);
    EXPECT_LE(greedy.sendHorizon(), sequential.sendHorizon());

    ScheduleReport report;
    ExchangeSchedule best = scheduleBest(phase, &report);
    EXPECT_EQ(report.transfers, transfers);
    EXPECT_EQ(report.bound, bound);
    EXPECT_EQ(report.horizon, best.sendHorizon());
    EXPECT_EQ(report.runs, best.runs.size());
    EXPECT_EQ(report.strategy, best.strategy);
    EXPECT_LE(report.horizon, greedy.sendHorizon());
    EXPECT_FALSE(checkSchedule(phase, best));
  }
}

TEST(SchedulerTest, GreedyIsDeterministic) {
  std::mt19937 rng(7);
  ExchangePhase phase = randomPhase(rng, 64, 2000, 32);
  ExchangeSchedule a = scheduleGreedy(phase), b = scheduleGreedy(phase);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (size_t i = 0; i < a.runs.size(); ++i) {
    EXPECT_EQ(a.runs[i].transfer, b.runs[i].transfer);
    EXPECT_EQ(a.runs[i].start, b.runs[i].start);
  }
}

TEST(SchedulerTest, CheckerCatchesCorruptedGreedySchedules) {
  // Mutations of a legal schedule that are illegal by construction.
  std::mt19937 rng(99);
  ExchangePhase phase = randomPhase(rng, 128, 3000, 16);
  ExchangeSchedule legal = scheduleGreedy(phase);
  ASSERT_FALSE(checkSchedule(phase, legal));
  for (int iter = 0; iter < 20; ++iter) {
    ExchangeSchedule bad = legal;
    size_t a = rng() % bad.runs.size();
    switch (iter % 4) {
    case 0: { // Two runs of one source tile made to start together.
      uint32_t src = phase.source[bad.runs[a].transfer];
      size_t b = a;
      for (size_t i = 0; i < bad.runs.size(); ++i)
        if (i != a && phase.source[bad.runs[i].transfer] == src)
          b = i;
      if (b == a)
        continue;
      bad.runs[b].start = bad.runs[a].start;
      EXPECT_NE(check(phase, bad.runs).find("sends two words"),
                std::string::npos);
      break;
    }
    case 1: // A run dropped.
      bad.runs.erase(bad.runs.begin() + a);
      EXPECT_NE(check(phase, bad.runs).find("never sent"), std::string::npos);
      break;
    case 2: // A run repeated much later, where nothing else happens.
      bad.runs.push_back(bad.runs[a]);
      bad.runs.back().start = 1000000;
      EXPECT_NE(check(phase, bad.runs).find("sent twice"), std::string::npos);
      break;
    case 3: // A run split with one word lost.
      if (bad.runs[a].words < 2)
        continue;
      bad.runs[a].words -= 1;
      EXPECT_NE(check(phase, bad.runs).find("never sent"), std::string::npos);
      break;
    }
  }
}

TEST(SchedulerTest, ScheduleBestOnEmptyPhase) {
  ExchangePhase phase = makePhase(4);
  ScheduleReport report;
  ExchangeSchedule best = scheduleBest(phase, &report);
  EXPECT_TRUE(best.runs.empty());
  EXPECT_EQ(report.transfers, 0u);
  EXPECT_EQ(report.horizon, 0u);
  EXPECT_EQ(report.strategy, "greedy");
}

} // namespace
