//===- RowEncoder.cpp - Whether a tile's exchange row encodes -------------===//

#include "IPU/Exchange/RowEncoder.h"

#include <cassert>
#include <limits>

using namespace ipu;

bool RowEncoder::delay(int64_t target, int64_t at) {
  int64_t d = target - cursor;
  if (d < 0)
    return fail(at, false, "its instructions would run backwards in time");
  words += uint64_t(d + model.delayMaxEvents - 1) / model.delayMaxEvents;
  cursor = target;
  return true;
}

/// Plain delays to `target` leaving an even word count, for a pair at `at`
/// (append_plain_delay_aligned).
bool RowEncoder::delayAligned(int64_t target, int64_t at) {
  int64_t d = target - cursor;
  if (d < 0)
    return fail(at, false, "its instructions would run backwards in time");
  if (d == 0) {
    if (words & 1)
      return fail(at, true, "no free event before it to pad the odd word "
                            "count");
    return true;
  }
  uint64_t n = uint64_t(d + model.delayMaxEvents - 1) / model.delayMaxEvents;
  if ((words + n) & 1)
    ++n;
  if (int64_t(n) > d)
    return fail(at, true, "one free event before it, which cannot hold the "
                          "two delay words that keep the word count even");
  words += n;
  cursor = target;
  return true;
}

/// A control outside sends (append_receive_events); a pair's sendpicp
/// covers the events up to `next`.
bool RowEncoder::receiveEvent(const RowEvent &e, int64_t next) {
  if (isPair(e)) {
    if (e.cycle <= 0)
      return fail(e.cycle, false, "a receive control at phase entry");
    if (!delayAligned(e.cycle - 1, e.cycle))
      return false;
    int64_t advance = std::min<int64_t>(next - cursor, kWordEvents);
    if (advance <= 0)
      return fail(e.cycle, false, "an empty sendpicp interval");
    words += 2;
    cursor += advance;
    return true;
  }
  int64_t advance = e.cycle - cursor;
  if (advance <= 0)
    return fail(e.cycle, false, "two receive instructions on one event");
  int64_t most = e.bits & kRowPointer ? model.delaypicMaxEvents
                                      : model.delayxpicMaxEvents;
  if (advance > most && !delay(e.cycle - most, e.cycle))
    return false;
  ++words;
  cursor = e.cycle;
  return true;
}

/// A send with the controls on its events (append_sender_message,
/// emit_sender_words).
bool RowEncoder::sender(const RowSend &send, const RowEvent *begin,
                        const RowEvent *end) {
  int64_t remaining = send.end - send.start;
  bool started = false;
  // Send words for `count` events before a control at `at`; `even`: the
  // control is a pair, which must find an even word count.
  auto emit = [&](int64_t count, bool even, int64_t at) {
    if (count == 0) {
      if (!started)
        return fail(at, false, "a receive control on a send's first events");
      if (even && (words & 1))
        return fail(at, true, "it follows a send instruction directly, "
                              "after an odd word count");
      return true;
    }
    // Chunks: the first send carries at most sendHeadWords events, each
    // sendoff sendoffWords.
    uint64_t first = std::min<int64_t>(
        count, started ? model.sendoffWords : model.sendHeadWords);
    uint64_t chunks = 1 + (uint64_t(count) - first + model.sendoffWords - 1) /
                              model.sendoffWords;
    if (even && ((words + chunks) & 1)) {
      // Split the last chunk of two or more events into 1 + the rest.
      if (count < 2)
        return fail(at, true, "only one send event before it, which cannot "
                              "be split into two words");
      ++chunks;
    }
    words += chunks;
    started = true;
    cursor += count;
    remaining -= count;
    return true;
  };
  for (const RowEvent *e = begin; e != end; ++e) {
    int64_t issue = e->cycle - 1;
    int64_t distance = issue - cursor;
    if (issue < 0 || distance < 0)
      return fail(e->cycle, false, "a receive control on a send's first "
                                   "event");
    if (distance >= remaining)
      return fail(e->cycle, false, "a receive control past the send");
    if (!emit(distance, isPair(*e), e->cycle))
      return false;
    int64_t bound = e + 1 != end ? e[1].cycle - 1 : send.end;
    int64_t available = bound - cursor;
    uint64_t own = isPair(*e) ? 2 : 1;
    if (e + 1 != end && isPair(e[1]) && ((words + own) & 1) && available > 1)
      --available; // Room for a sendoff that realigns the next pair.
    int64_t chunk =
        std::min<int64_t>({available, int64_t(kWordEvents), remaining});
    if (chunk <= 0)
      return fail(e->cycle, false, "an empty receive-control continuation");
    words += own;
    cursor += chunk;
    remaining -= chunk;
    started = true;
  }
  if (!started) {
    int64_t first = std::min<int64_t>(remaining, model.sendHeadWords);
    ++words;
    cursor += first;
    remaining -= first;
  }
  words += uint64_t(remaining + model.sendoffWords - 1) / model.sendoffWords;
  cursor += remaining;
  return true;
}

//===----------------------------------------------------------------------===//
// EncodedRow
//===----------------------------------------------------------------------===//

namespace {
bool byStart(const RowSend &a, const RowSend &b) { return a.start < b.start; }
bool beforeCycle(const RowEvent &a, int64_t cycle) { return a.cycle < cycle; }
bool readsBefore(const RowStep &s, int64_t cycle) { return s.reach < cycle; }

/// The first index of `v` from which `below` is false (true before it,
/// false after), galloping from index `at`: checks of one row come at
/// nearby events (a message tried one event later).
template <typename T, typename Below>
size_t gallop(const std::vector<T> &v, size_t at, Below below) {
  size_t n = v.size();
  if (n == 0)
    return 0;
  at = std::min(at, n - 1);
  size_t lo, hi, step = 1;
  if (below(v[at])) {
    lo = hi = at + 1;
    while (hi < n && below(v[hi])) {
      lo = hi + 1;
      hi = std::min(n, hi + step);
      step *= 2;
    }
  } else {
    lo = hi = at;
    while (lo > 0 && !below(v[lo - 1])) {
      hi = lo - 1;
      lo = lo > step ? lo - step : 0;
      step *= 2;
    }
  }
  return size_t(std::partition_point(v.begin() + lo, v.begin() + hi, below) -
                v.begin());
}
} // namespace

void EncodedRow::changed(int64_t first) {
  // The first step that reads the change keeps its state and indices: the
  // items before it lie before the change.
  auto reads = std::partition_point(
      steps.begin(), steps.begin() + fresh,
      [&](const RowStep &s) { return readsBefore(s, first); });
  size_t k = size_t(reads - steps.begin());
  if (k == fresh) {
    if (steps.size() > fresh)
      return; // Already walked again from an earlier step.
    k = fresh - 1; // Past the horizon: the closing step reads it.
  }
  fresh = k;
  steps.resize(k + 1);
}

void EncodedRow::refresh(RowEncoder &encoder, int64_t horizon) {
  if (fresh == steps.size())
    return;
  RowStep from = steps[fresh];
  steps.resize(fresh);
  [[maybe_unused]] RowOutcome outcome = encoder.walk(
      sends.data() + from.send, sends.size() - from.send,
      events.data() + from.event, events.size() - from.event, horizon,
      from.words, from.cursor, [&](RowStep step) {
        step.send += from.send;
        step.event += from.event;
        steps.push_back(step);
        return RowStepAction::Continue;
      });
  assert(outcome == RowOutcome::Encodes && "a committed row encodes");
  fresh = steps.size();
}

bool EncodedRow::encodesWith(RowEncoder &encoder, int64_t horizon,
                             const RowSend *send,
                             const std::vector<RowEvent> &added,
                             int64_t dropPointer, bool onlyAlignment) {
  int64_t first = std::numeric_limits<int64_t>::max(),
          last = std::numeric_limits<int64_t>::min();
  if (send) {
    first = send->start;
    last = send->end; // The controls up to its end become its own.
  }
  if (dropPointer >= 0) {
    first = std::min(first, dropPointer);
    last = std::max(last, dropPointer);
  }
  for (const RowEvent &e : added) {
    first = std::min(first, e.cycle);
    last = std::max(last, e.cycle);
  }
  // A change at event c moves the words of every instruction after it, so
  // only a pair at or after the first change can break its alignment.
  if (onlyAlignment && (pairs.empty() || pairs.back() < first)) {
    bool newPair = false;
    for (const RowEvent &e : added) {
      eventHint = gallop(events, eventHint, [&](const RowEvent &have) {
        return beforeCycle(have, e.cycle);
      });
      const RowEvent *at =
          eventHint < events.size() ? &events[eventHint] : nullptr;
      newPair |= (e.bits | (at && at->cycle == e.cycle ? at->bits : 0)) ==
                 (kRowPointer | kRowSelect);
    }
    if (!newPair)
      return true;
  }

  refresh(encoder, horizon);
  // Walk from the first step that reads a change. The steps after the last
  // change see the same items in both rows. At the first of them the
  // cursor agrees with the committed walk's (every step leaves it where
  // its own items say); if the words' parity agrees too, the rest encodes
  // as the committed row does. If it does not, the steps up to the next
  // pair read no parity, so the walk goes on from that pair's step.
  size_t resume = gallop(
      steps, hint, [&](const RowStep &s) { return readsBefore(s, first); });
  resume = std::min(resume, steps.size() - 1);
  hint = resume;
  size_t past = gallop(steps, resume,
                       [&](const RowStep &s) { return s.item <= last; });
  RowStep from = steps[resume];
  bool changes = true;
  for (;;) {
    size_t jump = steps.size();
    // A window of the committed steps; widened while the walk through it
    // neither faults nor reaches a verdict.
    for (size_t extra = 4;; extra *= 4) {
      size_t stop = std::min(past + extra, steps.size() - 1);
      bool whole = stop == steps.size() - 1;
      size_t sendEnd = whole ? sends.size() : steps[stop + 1].send;
      size_t eventEnd = whole ? events.size() : steps[stop + 1].event;
      // Past the changes the walk reads the row itself; before, a copy
      // with the changes merged in.
      const RowSend *walkSends = sends.data() + from.send;
      size_t walkSendCount = sendEnd - from.send;
      const RowEvent *walkEvents = events.data() + from.event;
      size_t walkEventCount = eventEnd - from.event;
      if (changes) {
        scratchSends.assign(sends.begin() + from.send, sends.begin() + sendEnd);
        if (send)
          scratchSends.insert(std::upper_bound(scratchSends.begin(),
                                               scratchSends.end(), *send,
                                               byStart),
                              *send);
        scratchEvents.clear();
        size_t i = from.event, j = 0;
        while (i < eventEnd || j < added.size()) {
          if (j == added.size() ||
              (i < eventEnd && events[i].cycle < added[j].cycle)) {
            RowEvent e = events[i++];
            if (e.cycle == dropPointer)
              e.bits &= uint8_t(~kRowPointer);
            if (e.bits)
              scratchEvents.push_back(e);
          } else if (i == eventEnd || added[j].cycle < events[i].cycle) {
            scratchEvents.push_back(added[j++]);
          } else {
            // As the commit does: the pointer dropped, then the controls
            // added.
            uint8_t bits = events[i].bits;
            if (events[i].cycle == dropPointer)
              bits &= uint8_t(~kRowPointer);
            scratchEvents.push_back(
                {events[i].cycle, uint8_t(bits | added[j].bits)});
            ++i;
            ++j;
          }
        }
        walkSends = scratchSends.data();
        walkSendCount = scratchSends.size();
        walkEvents = scratchEvents.data();
        walkEventCount = scratchEvents.size();
      }
      size_t match = past;
      int64_t stopItem = steps[stop].item;
      RowOutcome outcome = encoder.walk(
          walkSends, walkSendCount, walkEvents, walkEventCount, horizon,
          from.words, from.cursor,
          [&](const RowStep &step) {
            if (step.item <= last)
              return RowStepAction::Continue;
            while (match < steps.size() && steps[match].item < step.item)
              ++match;
            if (match < steps.size() && steps[match].item == step.item &&
                steps[match].cursor == step.cursor) {
              if (!((steps[match].words ^ step.words) & 1))
                return RowStepAction::Encodes;
              jump = match;
              return RowStepAction::Undecided;
            }
            if (!whole && step.item >= stopItem)
              return RowStepAction::Undecided;
            return RowStepAction::Continue;
          });
      if (outcome != RowOutcome::Undecided)
        return outcome == RowOutcome::Encodes;
      if (jump != steps.size())
        break;
    }
    // The next pair of the committed row at or after the step, and the
    // first step that reads it (it may be a send's, which ends on the
    // event where the next send starts).
    pairHint = gallop(pairs, pairHint, [&](int64_t pair) {
      return pair < steps[jump].item;
    });
    if (pairHint == pairs.size())
      return true; // Nothing after it reads the parity.
    int64_t next = pairs[pairHint];
    size_t holder = std::max(jump, gallop(steps, jump, [&](const RowStep &s) {
                               return readsBefore(s, next);
                             }));
    from = steps[holder];
    from.words ^= 1;
    changes = false;
    last = from.item; // Compare from the step after the pair's.
    past = std::min(holder + 1, steps.size() - 1);
  }
}

void EncodedRow::addSend(const RowSend &send) {
  sends.insert(std::upper_bound(sends.begin(), sends.end(), send, byStart),
               send);
  changed(send.start);
}

void EncodedRow::addEvents(const std::vector<RowEvent> &added) {
  if (added.empty())
    return;
  for (const RowEvent &e : added) {
    auto at = std::lower_bound(events.begin(), events.end(), e.cycle,
                               beforeCycle);
    if (at != events.end() && at->cycle == e.cycle)
      at->bits |= e.bits;
    else
      at = events.insert(at, e);
    if (at->bits == (kRowPointer | kRowSelect)) {
      auto pair = std::lower_bound(pairs.begin(), pairs.end(), e.cycle);
      if (pair == pairs.end() || *pair != e.cycle)
        pairs.insert(pair, e.cycle);
    }
  }
  changed(added.front().cycle);
}

void EncodedRow::dropPointer(int64_t cycle) {
  auto at = std::lower_bound(events.begin(), events.end(), cycle, beforeCycle);
  assert(at != events.end() && at->cycle == cycle && "a pointer to drop");
  if (at->bits == (kRowPointer | kRowSelect))
    pairs.erase(std::lower_bound(pairs.begin(), pairs.end(), cycle));
  at->bits &= uint8_t(~kRowPointer);
  if (!at->bits)
    events.erase(at);
  changed(cycle);
}
