//===- RowEncoder.h - Whether a tile's exchange row encodes ---------------===//
//
// The stack's row encoder (ipu-target/src/exchange.rs at ce7c7e9:
// build_scheduled_program :1173, append_receive_events :1435,
// append_plain_delay_aligned :1557, append_sender_message :1228,
// emit_sender_words :1327) reduced to what decides whether a tile's row
// encodes: the count of 32-bit words emitted before each instruction and
// the event cursor. A pointer-class and a select-class control on one
// event E issue as one two-word sendpicp from event E - 1, which must start
// on an even word of the row (rows sit at 8-byte boundaries). The encoder
// pads with an extra delay word, or by splitting a send chunk, and fails
// where it cannot: no free event before the pair with an odd count, one
// free event with an even count (two delay words need two events), or
// inside a send, no or one send event before it. The parity depends on
// every word before the pair, so the rule is checked by walking the row.
// Validated against the stack's encoder on 133,476 tile programs of the
// SigLIP MLP, attention, block and one tower layer (issue 45 replay).
//
// A row is walked in steps: a receive control outside every send, a send
// with the controls on its events, and the closing delay to the horizon.
// A step's outcome depends only on the words and cursor before it and on
// the row's items up to its `reach`. So the scheduler, which asks whether a
// row still encodes once a message is added at some start, walks only from
// the first step the change reaches, and stops once its walk is past the
// change and back in the state the committed row had there (EncodedRow).
// Without that, each candidate start re-walked the whole row, and a phase
// of 70,000 messages took minutes to schedule.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_ROWENCODER_H
#define IPU_EXCHANGE_ROWENCODER_H

#include "IPU/Target/ExchangeTiming.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace ipu {

/// A send of a tile's row: [start, end) events.
struct RowSend {
  int64_t start, end;
};
/// One event's receive controls: kRowPointer, kRowSelect or both.
struct RowEvent {
  int64_t cycle;
  uint8_t bits;
};
constexpr uint8_t kRowPointer = 1, kRowSelect = 2;

/// Why a row does not encode.
struct RowFault {
  int64_t cycle;  ///< Event of the control (or send) at fault.
  uint64_t words; ///< Words of the row before its instruction.
  bool alignment; ///< The SENDPICP alignment rule, else another refusal.
  const char *why;
};

/// The encoder's state before one step of a row.
struct RowStep {
  int64_t item;         ///< The control's event, the send's start, or the horizon.
  int64_t reach;        ///< The last event whose items the step reads.
  uint64_t words;       ///< Words of the row before the step.
  int64_t cursor;       ///< The event the row's instructions have reached.
  uint32_t send, event; ///< Sends and events of the row before the step.
};

/// What a walk's step callback decides before each step.
enum class RowStepAction { Continue, Encodes, Undecided };
enum class RowOutcome { Encodes, Faults, Undecided };

class RowEncoder {
public:
  explicit RowEncoder(const ExchangeTimingModel &model) : model(model) {}

  /// Walks one tile's row: sends sorted and disjoint, events sorted with
  /// one entry per event. Returns the fault, if any; `words` then holds the
  /// row's words (with the return) of a row that encodes.
  std::optional<RowFault> encode(const RowSend *send, const RowSend *sendEnd,
                                 const RowEvent *event,
                                 const RowEvent *eventEnd, int64_t horizon) {
    walk(send, size_t(sendEnd - send), event, size_t(eventEnd - event),
         horizon, 0, 0,
         [](const RowStep &) { return RowStepAction::Continue; });
    return fault;
  }

  /// Walks a row's tail from `words` and `cursor`, asking `onStep` (with
  /// indices relative to the arrays given) before each step whether to go
  /// on; Faults leaves the reason in `fault`.
  template <typename OnStep>
  RowOutcome walk(const RowSend *sends, size_t sendCount,
                  const RowEvent *events, size_t eventCount, int64_t horizon,
                  uint64_t startWords, int64_t startCursor, OnStep &&onStep) {
    words = startWords;
    cursor = startCursor;
    fault.reset();
    size_t s = 0, e = 0;
    for (;;) {
      RowStep step{0, 0, words, cursor, uint32_t(s), uint32_t(e)};
      // Controls before the next send are a receive run ending at its start.
      int64_t runEnd = s < sendCount ? sends[s].start : horizon;
      if (e < eventCount && events[e].cycle < runEnd) {
        bool nextInRun = e + 1 < eventCount && events[e + 1].cycle < runEnd;
        step.item = events[e].cycle;
        step.reach = nextInRun ? events[e + 1].cycle : runEnd;
        if (RowStepAction a = onStep(step); a != RowStepAction::Continue)
          return decided(a);
        if (!receiveEvent(events[e],
                          nextInRun ? events[e + 1].cycle - 1 : runEnd))
          return RowOutcome::Faults;
        ++e;
        continue;
      }
      if (s < sendCount) {
        const RowSend &send = sends[s];
        size_t inside = e;
        while (inside < eventCount && events[inside].cycle <= send.end)
          ++inside;
        step.item = send.start;
        step.reach = send.end;
        if (RowStepAction a = onStep(step); a != RowStepAction::Continue)
          return decided(a);
        if (!delay(send.start, send.start) ||
            !sender(send, events + e, events + inside))
          return RowOutcome::Faults;
        e = inside;
        ++s;
        continue;
      }
      step.item = step.reach = horizon;
      if (RowStepAction a = onStep(step); a != RowStepAction::Continue)
        return decided(a);
      if (!delay(horizon, horizon))
        return RowOutcome::Faults;
      ++words; // The return.
      return RowOutcome::Encodes;
    }
  }

  uint64_t words = 0;
  std::optional<RowFault> fault;

private:
  static constexpr uint64_t kWordEvents = 64; // sendpic(p) count field.
  const ExchangeTimingModel &model;
  int64_t cursor = 0;

  static RowOutcome decided(RowStepAction a) {
    return a == RowStepAction::Encodes ? RowOutcome::Encodes
                                       : RowOutcome::Undecided;
  }
  static bool isPair(const RowEvent &e) {
    return e.bits == (kRowPointer | kRowSelect);
  }
  bool fail(int64_t cycle, bool alignment, const char *why) {
    fault = RowFault{cycle, words, alignment, why};
    return false;
  }
  bool delay(int64_t target, int64_t at);
  bool delayAligned(int64_t target, int64_t at);
  bool receiveEvent(const RowEvent &e, int64_t next);
  bool sender(const RowSend &send, const RowEvent *begin, const RowEvent *end);
};

/// A tile's committed row, which encodes, with the steps of its walk kept
/// so that a change is checked from where it starts to matter.
class EncodedRow {
public:
  EncodedRow() : steps(1, RowStep{0, 0, 0, 0, 0, 0}) {}

  /// Whether the row still encodes with `send` (if any), the controls
  /// `added` (sorted, one per event, merged into the row's) and without the
  /// pointer write on event `dropPointer` (if >= 0); the pointer is dropped
  /// before the controls are added. `onlyAlignment`: the caller's other
  /// rules leave only the sendpicp alignment to fail, so a change after
  /// the row's last pair is taken without a walk.
  bool encodesWith(RowEncoder &encoder, int64_t horizon, const RowSend *send,
                   const std::vector<RowEvent> &added, int64_t dropPointer,
                   bool onlyAlignment);
  /// Commits those changes (each separately).
  void addSend(const RowSend &send);
  void addEvents(const std::vector<RowEvent> &added);
  void dropPointer(int64_t cycle);

  const std::vector<RowSend> &sendList() const { return sends; }
  const std::vector<RowEvent> &eventList() const { return events; }

private:
  std::vector<RowSend> sends;
  std::vector<RowEvent> events;
  /// The events holding a pointer and a select pair, sorted.
  std::vector<int64_t> pairs;
  /// The walk's steps: [0, fresh) hold; a step at `fresh`, if any, keeps
  /// only its state and indices, from which the rest is walked when needed.
  std::vector<RowStep> steps;
  size_t fresh = 0;
  std::vector<RowSend> scratchSends;
  std::vector<RowEvent> scratchEvents;

  /// Where the last check found its step, event and pair: the next
  /// searches start there.
  size_t hint = 0, eventHint = 0, pairHint = 0;
  /// Steps from the first change at event `first` on are walked again.
  void changed(int64_t first);
  void refresh(RowEncoder &encoder, int64_t horizon);
};

} // namespace ipu

#endif // IPU_EXCHANGE_ROWENCODER_H
