//===- RowEncoderTest.cpp - Incremental row encoding ----------------------===//

#include "IPU/Exchange/RowEncoder.h"
#include "IPU/Exchange/Timing.h"

#include "gtest/gtest.h"

#include <random>

using namespace ipu;

namespace {

struct Change {
  std::optional<RowSend> send;
  std::vector<RowEvent> added; ///< Sorted, one per event.
  int64_t dropPointer = -1;
};

/// The row with `change` applied, as EncodedRow's commits leave it.
void applyTo(std::vector<RowSend> &sends, std::vector<RowEvent> &events,
             const Change &change) {
  if (change.send)
    sends.insert(std::upper_bound(sends.begin(), sends.end(), *change.send,
                                  [](const RowSend &a, const RowSend &b) {
                                    return a.start < b.start;
                                  }),
                 *change.send);
  for (RowEvent &e : events)
    if (e.cycle == change.dropPointer)
      e.bits &= uint8_t(~kRowPointer);
  for (const RowEvent &e : change.added) {
    auto at = std::find_if(events.begin(), events.end(),
                           [&](const RowEvent &h) { return h.cycle >= e.cycle; });
    if (at != events.end() && at->cycle == e.cycle)
      at->bits |= e.bits;
    else
      events.insert(at, e);
  }
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const RowEvent &e) { return !e.bits; }),
               events.end());
}

bool encodesWhole(RowEncoder &encoder, const std::vector<RowSend> &sends,
                  const std::vector<RowEvent> &events, int64_t horizon) {
  return !encoder.encode(sends.data(), sends.data() + sends.size(),
                         events.data(), events.data() + events.size(),
                         horizon);
}

/// A random change: a send that overlaps none of the row's, one to three
/// controls, or controls that drop a pointer of the row.
Change randomChange(std::mt19937_64 &rng, const std::vector<RowSend> &sends,
                    const std::vector<RowEvent> &events, int64_t span) {
  Change change;
  auto below = [&](int64_t n) {
    return int64_t(std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
  };
  int kind = int(below(3));
  if (kind == 0) {
    for (int attempt = 0; attempt < 20 && !change.send; ++attempt) {
      int64_t start = below(span), end = start + 1 + below(below(2) ? 8 : 300);
      bool overlaps = false;
      for (const RowSend &s : sends)
        overlaps |= start < s.end && s.start < end;
      if (!overlaps)
        change.send = RowSend{start, end};
    }
    return change;
  }
  int64_t count = 1 + below(3);
  int64_t at = 1 + below(span);
  for (int64_t k = 0; k < count; ++k) {
    uint8_t bits = uint8_t(1 + below(3));
    change.added.push_back({at, bits});
    at += 1 + below(below(2) ? 3 : 80);
  }
  if (kind == 2) {
    std::vector<int64_t> pointers;
    for (const RowEvent &e : events)
      if (e.bits & kRowPointer)
        pointers.push_back(e.cycle);
    if (!pointers.empty())
      change.dropPointer = pointers[size_t(below(int64_t(pointers.size())))];
  }
  return change;
}

// Whether a row still encodes after a change is decided from the step the
// change reaches, and stops where the walk agrees with the committed one
// again. Property: on random rows, random changes and random commits, the
// answer is always the whole row's walk's.
TEST(RowEncoderTest, IncrementalAnswersAsTheWholeWalk) {
  ExchangeTimingModel model = ipu21ExchangeTiming();
  RowEncoder whole(model), incremental(model);
  const int64_t horizon = 1 << 20;
  uint64_t asked = 0, encoded = 0, committed = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    std::mt19937_64 rng(seed);
    // Rows from sparse to crowded: more items per event, more pairs.
    int64_t span = 300 + int64_t(seed % 6) * 600;
    EncodedRow row;
    std::vector<RowSend> sends;
    std::vector<RowEvent> events;
    for (int step = 0; step < 1500; ++step) {
      Change change = randomChange(rng, sends, events, span);
      if (!change.send && change.added.empty())
        continue;
      std::vector<RowSend> nextSends = sends;
      std::vector<RowEvent> nextEvents = events;
      applyTo(nextSends, nextEvents, change);
      bool expected = encodesWhole(whole, nextSends, nextEvents, horizon);
      bool got = row.encodesWith(incremental, horizon,
                                 change.send ? &*change.send : nullptr,
                                 change.added, change.dropPointer,
                                 /*onlyAlignment=*/false);
      ++asked;
      ASSERT_EQ(got, expected) << "seed " << seed << " step " << step;
      if (!expected)
        continue;
      ++encoded;
      if (step % 3 == 2)
        continue; // Asked, not committed: the row stays as it was.
      if (change.dropPointer >= 0)
        row.dropPointer(change.dropPointer);
      row.addEvents(change.added);
      if (change.send)
        row.addSend(*change.send);
      sends = std::move(nextSends);
      events = std::move(nextEvents);
      ++committed;
      ASSERT_EQ(row.sendList().size(), sends.size());
      ASSERT_EQ(row.eventList().size(), events.size());
      for (size_t k = 0; k < events.size(); ++k)
        ASSERT_TRUE(row.eventList()[k].cycle == events[k].cycle &&
                    row.eventList()[k].bits == events[k].bits);
    }
  }
  // The properties need both answers, and rows that grow.
  EXPECT_GT(encoded, asked / 10);
  EXPECT_LT(encoded, asked);
  EXPECT_GT(committed, 1000u);
}

} // namespace
