//===- Timing.cpp - Event-level timing model of one IPU21 exchange phase -===//
//
// Sources. "The stack" is the user's hardware-validated stack,
// osmarks/ipu-stack at ce7c7e9 (its scheduler's phase times matched
// measured C600 exchange time within 2.6 %, docs/PLANNER_SUGGESTIONS.md);
// "memo N" is the section of docs/research/ipu21-exchange.md that restates
// the fact. Paths are inside that stack's crates/.
//
// Rules enforced by checkTimedPhase, the per-message ones first (a refusal
// starts with "rule NAME: tile T" and names a cycle):
//
//  tile-range      every tile named is a tile of the model.
//  message-size    1 <= words <= 4148 (MAX_TRANSFER_WORDS, "exchange count
//                  outside 1..=4148", ipu-target/src/exchange.rs; memo 3.1).
//  endpoints       at least one destination, none equal to the source
//                  ("exchange endpoints must be distinct", DuplicateTile),
//                  destinations distinct (ipu-target/src/exchange.rs,
//                  memo 3.1).
//  alignment       source and destination addresses 4-byte aligned, 8-byte
//                  for paired messages (memo 3.1, 4).
//  paired-size     paired: even word count, at least 128 words (64 items,
//                  paired_multicast; codegen eligibility; memo 4).
//  paired-receivers paired: receivers are complete physical pairs (p, p ^ 2)
//                  sharing the one destination address, and neither is the
//                  sender's partner (paired_multicast, memo 4).
//  encoding        start >= 0 and every event < 2^31 (event offsets chain
//                  delay words, MAX_PLAN_OFFSET_CYCLES, so no tighter limit;
//                  assumption for the int32 range), address spans inside the
//                  18-bit word address fields (instruction.rs, memo 3.4).
//  receive-before-entry no receive control at event <= 0 ("receive control
//                  at phase entry", ipu-target/src/exchange.rs, memo 1.5);
//                  a paired sender starts no earlier than its row's natural
//                  start max(-m_o, 0) (multicast).
//  send-overlap    a tile's outgoing messages [S, S + events) are disjoint
//                  ("overlapping outgoing messages", append_sender_at,
//                  memo 3.1).
//  receive-overlap incoming streams of a tile are disjoint in mux time
//                  [X, X + events), a paired one's [X or F, F + items)
//                  ("overlapping receive streams", append_receiver_at,
//                  scheduled_receive_window, memo 2.3).
//  receive-write-overlap ... and in write time [P, P + events) (same).
//  receive-controls at most two receive controls of a tile on one event, and
//                  only one pointer-class (pointer, format) with one
//                  select-class (source, neutral) issued as one sendpicp; a
//                  new source replaces the previous stream's neutral on the
//                  same event (cutover); paired receives share an event with
//                  no other control ("incompatible simultaneous receive
//                  controls", receive_events_can_share_instruction; "paired
//                  receive coincident controls", paired_receiver_row;
//                  memo 2.4).
//  send-start      no receive control of a tile on the first two events S,
//                  S + 1 of a message it sends ("unencodable initial send
//                  control", earliest_sender_offset, memo 3.1).
//  memory-element  on one tile, a send's read window [S, S + events) and a
//                  receive's write window [P, end) touching the same SRAM
//                  conflict unit (16 KiB element below 0x80000, 32 KiB from
//                  it) are disjoint in time (memory_safe_transfer_offset,
//                  validate_exchange_schedule, ipu-target/src/memory.rs; memo
//                  5.1-5.2). Deviation: the stack's read window runs to the
//                  sender's row end, at least o + 6 for schedule offset o;
//                  reads happen only while words are sent, so this model
//                  (like the brief) uses [S, S + events).
//  paired-partner  paired: the sender's partner (physical p ^ 2, logical
//                  l ^ 1) neither sends nor has a receive stream [X, end)
//                  during [S, S + items) (PartnerBusy reservation,
//                  PhaseProgramBuilder::append_transfer_at, memo 4).
//  sendpicp-alignment every tile's exchange row encodes as the stack's row
//                  encoder emits it: a pointer-class and a select-class
//                  control on one event E are one two-word sendpicp from
//                  E - 1, which must start on an even word of the row; the
//                  encoder pads with a delay word or by splitting a send
//                  chunk, and refuses where it cannot ("SENDPICP instruction
//                  alignment", build_scheduled_program, append_receive_events,
//                  append_plain_delay_aligned, emit_sender_words;
//                  RowEncoder.h). Other refusals of that walk are rule
//                  row-encoding.
//
// Timing of one receiver d of a message from s sent at S (memo 1.4, 2.2,
// 2.5; ipu-target/src/exchange.rs multicast / point_to_point rows):
//   ordinary: X = S + ttm(s, d) + 1; P = X + 52 + 2 row(d), 51 for W = 52;
//     end = P + W + 5 (6 for W = 52). Controls: source at X; neutral at
//     X + W unless the next stream on d is ordinary and its X is X + W;
//     pointer at P unless the previous stream on d is ordinary, this one is
//     too, and this destination address follows that stream's last word
//     (carries_pointer).
//   paired (items I = W / 2, paired_receiver_row; oracle 0 -> {2, 3}, 64
//     items, first send on event 31: 1, 54, 56, 65, 118, horizon 125):
//     X = S + pttm(s, d) + max(1 - m_p, 0) - max(-m_o, 0), shared by the
//     pair, with pttm(s, d) = max(ttm(s, d), ttm(s, d ^ 2)), m_p the least
//     pttm and m_o the least ttm over the message's receivers (the rows'
//     epoch_shift, :2217, less the sender row's natural_start, :2384);
//     F = X + 51 + 2 row(d); pointer P = F + 2; format off at F + I;
//     end = F + I + 7. Only the member with the smaller own ttm (assumption
//     on a tie: the lower physical id) issues the source at X and the
//     neutral at X + I. The mux is held from X (early member) or F (late
//     member) until format-off F + I, and writes take [P, P + I)
//     (scheduled_receive_window, :776). Assumption: a paired stream never
//     takes part in a cutover or omits its pointer (carries_pointer needs
//     ordinary streams).
//
//===----------------------------------------------------------------------===//

#include "IPU/Exchange/Timing.h"
#include "IPU/Exchange/Colouring.h"
#include "IPU/Exchange/RowEncoder.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <numeric>
#include <thread>
#include <tuple>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

using namespace ipu;
using std::to_string;

//===----------------------------------------------------------------------===//
// Model and topology
//===----------------------------------------------------------------------===//

ExchangeTimingModel ipu::ipu21ExchangeTiming() { return {}; }

ExchangeTimingModel ipu::ipu21ExchangeTimingWithTiles(uint32_t tiles) {
  ExchangeTimingModel model;
  assert(tiles >= 1 && tiles <= model.tiles && "C600 has 1472 tiles");
  model.tiles = tiles;
  return model;
}

// C600 logical -> physical (c600_logical_to_physical, ipu-target/src/
// topology.rs; memo 1.2): pairs of logical tiles snake through the 23 rows in
// 32 blocks; block b sits in column (b / 2) * 4 + (b & 1), lane 1 adds 2.
uint32_t ipu::c600PhysicalTile(uint32_t logical) {
  uint32_t pair = logical / 2, lane = logical & 1, block = pair / 23,
           row = pair % 23;
  if (block & 1)
    row = 22 - row;
  uint32_t column = (block / 2) * 4 + (block & 1);
  return row * 64 + column + 2 * lane;
}

uint32_t ipu::c600LogicalTile(uint32_t physical) {
  uint32_t row = physical >> 6, slot = physical & 63;
  uint32_t lane = (slot >> 1) & 1, column = slot & ~2u;
  uint32_t block = (column / 4) * 2 + (column & 1);
  uint32_t pair = block * 23 + ((block & 1) ? 22 - row : row);
  return pair * 2 + lane;
}

namespace {

/// Columns past the spine count from the same edge (memo 1.1).
int fold(int column) { return column > 7 ? column ^ 15 : column; }

// route_displacement (topology.rs, memo 1.3).
int routeDisplacement(uint32_t s, uint32_t d) {
  int sr = (s >> 2) & 15, dr = (d >> 2) & 15;
  int smux = fold(sr) + ((sr >> 3) ^ int(s & 1));
  int base = 6 * (fold(dr) - smux);
  int lane = d & 3, half = dr >> 3;
  if (lane > 1)
    return base + (half == int(d & 1) ? 2 : 4);
  return base + (half == lane ? 1 : 5);
}

} // namespace

// time_to_mux (topology.rs, memo 1.4); (4c) ^ 60 there is 4 * fold(c).
int ipu::timeToMux(uint32_t s, uint32_t d) {
  int sr = (s >> 2) & 15, dr = (d >> 2) & 15, sl = (s >> 2) & 7;
  int se = 4 * fold(sr), de = 4 * fold(dr);
  int local = ((s >> 2) & 8) | ((s >> 3) & 3);
  int crossing = local - dr + ((sl >> 1) ^ 3);
  int turn = ((s ^ d) & 0x20) == 0 ? sl + 1 : 16 - sl;
  int rowDelta = 2 * (int(s >> 6) - int(d >> 6));
  return crossing + se + turn - de + rowDelta +
         std::abs(routeDisplacement(s, d)) - 34;
}

// paired_time_to_mux (topology.rs, memo 1.4).
int ipu::pairedTimeToMux(uint32_t s, uint32_t d) {
  return std::max(timeToMux(s, d), timeToMux(s, physicalPartner(d)));
}

//===----------------------------------------------------------------------===//
// Receiver timing
//===----------------------------------------------------------------------===//

uint32_t ipu::messageEvents(const TimedMessage &message) {
  return message.paired ? message.words / 2 : message.words;
}

namespace {

/// A paired message's earliest send: its sender row's natural start,
/// max(-m_o, 0) with m_o the least ttm(s, r) over its receivers (multicast,
/// stack exchange.rs :2384).
int64_t pairedNaturalStart(uint32_t s, const std::vector<uint32_t> &dests) {
  int least = std::numeric_limits<int>::max();
  for (uint32_t d : dests)
    least = std::min(least, timeToMux(s, c600PhysicalTile(d)));
  return std::max(-least, 0);
}

/// X - S - pttm(s, d) of a paired message from physical `s` to `dests`
/// (logical): the receivers' epoch shift max(1 - m_p, 0), m_p the least
/// pttm(s, r) (paired_receiver_row, :2217), less the sender's natural start.
int64_t pairedSelectShift(const ExchangeTimingModel &model, uint32_t s,
                          const std::vector<uint32_t> &dests) {
  int least = std::numeric_limits<int>::max();
  for (uint32_t d : dests)
    least = std::min(least, pairedTimeToMux(s, c600PhysicalTile(d)));
  return std::max<int64_t>(model.pairedFirstSourceEvent - int64_t(least), 0) -
         pairedNaturalStart(s, dests);
}

/// Timing of receiver `d` (physical) relative to S = 0. `pairedShift`:
/// pairedSelectShift of the message, when paired.
ReceiveTiming receiveOffsets(const ExchangeTimingModel &model, uint32_t s,
                             uint32_t d, uint32_t words, bool paired,
                             int64_t pairedShift = 0) {
  int64_t rowPhase = int64_t(model.rowPhaseEvents) * physicalRow(d);
  ReceiveTiming t;
  if (!paired) {
    bool early = words == model.earlyPointerWords;
    t.events = words;
    t.sourceSelect = timeToMux(s, d) + model.sourceSelectDelay;
    t.pointer = t.sourceSelect + model.receivePointerDelay + rowPhase - early;
    t.end = t.pointer + words + model.receiveGuardEvents + early;
    t.muxStart = t.sourceSelect;
    t.muxEnd = t.sourceSelect + words;
    return t;
  }
  int own = timeToMux(s, d), other = timeToMux(s, physicalPartner(d));
  t.events = words / 2;
  t.sourceSelect = std::max(own, other) + pairedShift;
  t.format = t.sourceSelect + model.pairedFormatDelay + rowPhase;
  t.pointer = t.format + model.pairedPointerDelay;
  t.end = t.format + t.events + model.pairedGuardEvents;
  t.early = own < other || (own == other && d < physicalPartner(d));
  // The stack holds the mux from the source (early member) or the format-on
  // (late member) until format-off (scheduled_receive_window, :776).
  t.muxStart = t.early ? t.sourceSelect : t.format;
  t.muxEnd = t.format + t.events;
  return t;
}

} // namespace

ReceiveTiming ipu::receiveTiming(const ExchangeTimingModel &model,
                                 const TimedMessage &message, uint32_t dest) {
  uint32_t s = c600PhysicalTile(message.source);
  ReceiveTiming t = receiveOffsets(
      model, s, c600PhysicalTile(dest), message.words, message.paired,
      message.paired ? pairedSelectShift(model, s, message.dests) : 0);
  t.sourceSelect += message.start;
  t.pointer += message.start;
  t.end += message.start;
  t.muxStart += message.start;
  t.muxEnd += message.start;
  if (message.paired)
    t.format += message.start;
  return t;
}

//===----------------------------------------------------------------------===//
// Derived phase: sends, receive streams and receive controls per tile
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct Send {
  int64_t start, end;
  uint32_t tile, message;
};

/// One receiver of one message.
struct Stream {
  int64_t x, p, end, format;
  int64_t muxStart, muxEnd; ///< Mux hold: [X, X + W), paired until F + I.
  uint32_t events, tile, message;
  uint32_t address, bytes;
  bool paired, early;
};

enum ControlKind : uint8_t {
  SourceSelect,
  NeutralSelect,
  PointerWrite,
  FormatOn,
  FormatOff,
};

bool isPointerClass(uint8_t kind) { return kind >= PointerWrite; }

const char *controlName(uint8_t kind) {
  switch (kind) {
  case SourceSelect:
    return "source select";
  case NeutralSelect:
    return "neutral select";
  case PointerWrite:
    return "pointer write";
  case FormatOn:
    return "format-on write";
  default:
    return "format-off write";
  }
}

struct Control {
  int64_t cycle;
  uint32_t tile, message;
  uint8_t kind;
  bool paired;
};

/// Sorts `items` by tile (counting sort) and each tile's group by `less`;
/// returns the group offsets, size tiles + 1.
template <typename T, typename Less>
std::vector<size_t> groupByTile(std::vector<T> &items, uint32_t tiles,
                                Less less) {
  std::vector<size_t> begin(size_t(tiles) + 1, 0);
  for (const T &item : items)
    ++begin[item.tile + 1];
  for (uint32_t t = 0; t < tiles; ++t)
    begin[t + 1] += begin[t];
  std::vector<T> sorted(items.size());
  std::vector<size_t> next(begin.begin(), begin.end() - 1);
  for (const T &item : items)
    sorted[next[item.tile]++] = item;
  items.swap(sorted);
  for (uint32_t t = 0; t < tiles; ++t)
    if (begin[t + 1] - begin[t] > 1)
      std::sort(items.begin() + begin[t], items.begin() + begin[t + 1], less);
  return begin;
}

struct DerivedPhase {
  std::vector<Send> sends; ///< Per tile, by start.
  std::vector<size_t> sendBegin;
  std::vector<Stream> streams; ///< Per tile, by X.
  std::vector<size_t> streamBegin;
  std::vector<Control> controls; ///< Per tile, by cycle.
  std::vector<size_t> controlBegin;
};

/// Sends and streams of messages that passed the per-message rules.
void deriveStreams(const ExchangeTimingModel &model,
                   const std::vector<TimedMessage> &messages,
                   DerivedPhase &phase) {
  size_t receivers = 0;
  for (const TimedMessage &m : messages)
    receivers += m.dests.size();
  phase.sends.reserve(messages.size());
  phase.streams.reserve(receivers);
  for (uint32_t i = 0; i < messages.size(); ++i) {
    const TimedMessage &m = messages[i];
    uint32_t events = messageEvents(m);
    phase.sends.push_back({m.start, m.start + events, m.source, i});
    uint32_t s = c600PhysicalTile(m.source);
    int64_t shift = m.paired ? pairedSelectShift(model, s, m.dests) : 0;
    for (uint32_t d : m.dests) {
      ReceiveTiming t = receiveOffsets(model, s, c600PhysicalTile(d), m.words,
                                       m.paired, shift);
      phase.streams.push_back({m.start + t.sourceSelect, m.start + t.pointer,
                               m.start + t.end,
                               m.paired ? m.start + t.format : -1,
                               m.start + t.muxStart, m.start + t.muxEnd, events, d,
                               i, m.destAddress, m.words * model.wordBytes,
                               m.paired, t.early});
    }
  }
  phase.sendBegin =
      groupByTile(phase.sends, model.tiles, [](const Send &a, const Send &b) {
        return a.start != b.start ? a.start < b.start : a.message < b.message;
      });
  phase.streamBegin = groupByTile(
      phase.streams, model.tiles, [](const Stream &a, const Stream &b) {
        return a.muxStart != b.muxStart ? a.muxStart < b.muxStart
                                        : a.message < b.message;
      });
}

/// Receive controls from the streams (taken in X order per tile, which is
/// the order of a legal phase's streams).
void deriveControls(const ExchangeTimingModel &model, DerivedPhase &phase) {
  std::vector<Control> &out = phase.controls;
  out.reserve(phase.streams.size() * 3);
  for (uint32_t t = 0; t < model.tiles; ++t) {
    size_t begin = phase.streamBegin[t], end = phase.streamBegin[t + 1];
    for (size_t k = begin; k < end; ++k) {
      const Stream &s = phase.streams[k];
      if (s.paired) {
        if (s.early) {
          out.push_back({s.x, t, s.message, SourceSelect, true});
          out.push_back({s.x + s.events, t, s.message, NeutralSelect, true});
        }
        out.push_back({s.format, t, s.message, FormatOn, true});
        out.push_back({s.p, t, s.message, PointerWrite, true});
        out.push_back({s.format + s.events, t, s.message, FormatOff, true});
        continue;
      }
      out.push_back({s.x, t, s.message, SourceSelect, false});
      const Stream *next = k + 1 < end ? &phase.streams[k + 1] : nullptr;
      if (!next || next->paired || next->x != s.x + s.events)
        out.push_back({s.x + s.events, t, s.message, NeutralSelect, false});
      const Stream *prev = k > begin ? &phase.streams[k - 1] : nullptr;
      if (!prev || prev->paired ||
          uint64_t(prev->address) + prev->bytes != s.address)
        out.push_back({s.p, t, s.message, PointerWrite, false});
    }
  }
  phase.controlBegin = groupByTile(
      out, model.tiles, [](const Control &a, const Control &b) {
        if (a.cycle != b.cycle)
          return a.cycle < b.cycle;
        return a.message != b.message ? a.message < b.message
                                      : a.kind < b.kind;
      });
}

/// SRAM conflict unit of a byte address (memo 5.1): 16 KiB elements below
/// the interleaved base, 32 KiB units from it on.
uint32_t memoryUnit(const ExchangeTimingModel &model, uint64_t address) {
  if (address < model.interleavedBase)
    return uint32_t(address / model.memoryElementBytes);
  return model.interleavedBase / model.memoryElementBytes +
         uint32_t((address - model.interleavedBase) /
                  model.interleavedUnitBytes);
}

/// The first byte address of the unit after the one holding `address`.
uint64_t nextUnitStart(const ExchangeTimingModel &model, uint64_t address) {
  if (address < model.interleavedBase)
    return std::min<uint64_t>(
        (address / model.memoryElementBytes + 1) * model.memoryElementBytes,
        model.interleavedBase);
  return model.interleavedBase +
         ((address - model.interleavedBase) / model.interleavedUnitBytes + 1) *
             model.interleavedUnitBytes;
}

std::string describeUnit(const ExchangeTimingModel &model, uint32_t unit) {
  uint32_t standard = model.interleavedBase / model.memoryElementBytes;
  uint64_t base;
  const char *what;
  if (unit < standard) {
    base = uint64_t(unit) * model.memoryElementBytes;
    what = "16 KiB element";
  } else {
    base = model.interleavedBase +
           uint64_t(unit - standard) * model.interleavedUnitBytes;
    what = "32 KiB interleaved unit";
  }
  char hex[24];
  snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(base));
  return std::string(what) + " at " + hex;
}

std::string hexAddress(uint64_t address) {
  char hex[24];
  snprintf(hex, sizeof(hex), "0x%llx",
           static_cast<unsigned long long>(address));
  return hex;
}

std::string messageName(uint32_t index, bool paired) {
  return std::string(paired ? "paired message " : "message ") +
         to_string(index);
}

//===----------------------------------------------------------------------===//
// Checker
//===----------------------------------------------------------------------===//

/// The rules that concern one message alone. `stamp` is scratch, one entry
/// per tile, never equal to `index` on entry.
std::optional<std::string> checkMessage(const ExchangeTimingModel &model,
                                        const TimedMessage &m, uint32_t index,
                                        std::vector<uint32_t> &stamp) {
  std::string name = messageName(index, m.paired);
  std::string at = " at cycle " + to_string(m.start);
  std::string range = " outside 0.." + to_string(model.tiles - 1);
  if (m.source >= model.tiles)
    return "rule tile-range: tile " + to_string(m.source) + range +
           " sends " + name + at;
  for (uint32_t d : m.dests)
    if (d >= model.tiles)
      return "rule tile-range: tile " + to_string(d) + range +
             " is a destination of " + name + " sent by tile " +
             to_string(m.source) + at;
  std::string from = " from tile " + to_string(m.source) + at;
  if (m.words == 0 || m.words > model.maxMessageWords)
    return "rule message-size: tile " + to_string(m.source) + " sends " +
           name + " of " + to_string(m.words) + " words" + at +
           "; a message carries 1.." + to_string(model.maxMessageWords) +
           " words";
  if (m.dests.empty())
    return "rule endpoints: tile " + to_string(m.source) + " sends " + name +
           at + " to no destination";
  for (uint32_t d : m.dests) {
    if (d == m.source)
      return "rule endpoints: tile " + to_string(d) + " sends " + name + at +
             " to itself (a same-tile copy is not an exchange)";
    if (stamp[d] == index)
      return "rule endpoints: tile " + to_string(d) +
             " is named twice as a destination of " + name + from;
    stamp[d] = index;
  }
  uint32_t align = m.paired ? model.pairedAlignBytes : model.wordBytes;
  if (m.sourceAddress % align)
    return "rule alignment: tile " + to_string(m.source) + " sends " + name +
           at + " from " + hexAddress(m.sourceAddress) + ", not " +
           to_string(align) + "-byte aligned";
  if (m.destAddress % align)
    return "rule alignment: tile " + to_string(m.dests[0]) + " receives " +
           name + from + " at " + hexAddress(m.destAddress) + ", not " +
           to_string(align) + "-byte aligned";
  if (m.paired) {
    if (m.words % 2 || m.words < model.pairedMinWords)
      return "rule paired-size: tile " + to_string(m.source) + " sends " +
             name + " of " + to_string(m.words) + " words" + at +
             "; a paired message needs an even count of at least " +
             to_string(model.pairedMinWords) + " words";
    uint32_t partner = logicalPartner(m.source);
    if (partner >= model.tiles)
      return "rule paired-partner: tile " + to_string(m.source) + " sends " +
             name + at + " but its partner tile " + to_string(partner) +
             " is not a tile of the target";
    for (uint32_t d : m.dests) {
      if (d == partner)
        return "rule paired-receivers: tile " + to_string(d) +
               ", partner of the sender, receives " + name + from;
      uint32_t mate = logicalPartner(d);
      if (mate >= model.tiles || stamp[mate] != index)
        return "rule paired-receivers: tile " + to_string(d) + " receives " +
               name + from + " without its partner tile " + to_string(mate);
    }
  }
  if (m.start < 0 || m.start > model.maxEventOffset)
    return "rule encoding: tile " + to_string(m.source) + " sends " + name +
           at + ", outside 0.." + to_string(model.maxEventOffset);
  uint64_t limit = uint64_t(1) << model.addressBits;
  uint64_t bytes = uint64_t(m.words) * model.wordBytes;
  if (m.sourceAddress + bytes > limit)
    return "rule encoding: tile " + to_string(m.source) + " sends " + name +
           at + " from bytes [" + hexAddress(m.sourceAddress) + ", " +
           hexAddress(m.sourceAddress + bytes) +
           ") beyond the 18-bit word address field";
  if (m.destAddress + bytes > limit)
    return "rule encoding: tile " + to_string(m.dests[0]) + " receives " +
           name + from + " into bytes [" + hexAddress(m.destAddress) + ", " +
           hexAddress(m.destAddress + bytes) +
           ") beyond the 18-bit word address field";
  return std::nullopt;
}

std::string controlText(const Control &c) {
  return std::string("the ") + controlName(c.kind) + " of " +
         messageName(c.message, c.paired);
}

/// Rule receive-controls on one event's controls [begin, end) of a tile.
std::optional<std::string> checkCoincidence(const Control *begin,
                                            const Control *end) {
  size_t count = end - begin;
  if (count < 2)
    return std::nullopt;
  std::string head = "rule receive-controls: tile " +
                     to_string(begin->tile) + " has ";
  std::string cycle = " on cycle " + to_string(begin->cycle);
  if (count > 2) {
    std::string list;
    for (const Control *c = begin; c != end; ++c)
      list += (c == begin ? "" : ", ") + controlText(*c);
    return head + to_string(count) + " receive controls" + cycle + " (" +
           list + "); at most a pointer-class and a select-class control "
                  "share an event";
  }
  const Control &a = begin[0], &b = begin[1];
  std::string pair = controlText(a) + " and " + controlText(b) + cycle;
  if (a.paired || b.paired)
    return head + pair + "; a paired receive shares no event with another "
                         "control";
  if (isPointerClass(a.kind) == isPointerClass(b.kind))
    return head + pair + "; only a pointer-class and a select-class control "
                         "share an event";
  return std::nullopt;
}

} // namespace

std::optional<std::string>
ipu::checkTimedPhase(const ExchangeTimingModel &model,
                     const std::vector<TimedMessage> &messages) {
  assert(messages.size() < kNone && "message indices are 32-bit");
  {
    std::vector<uint32_t> stamp(model.tiles, kNone);
    for (uint32_t i = 0; i < messages.size(); ++i)
      if (auto error = checkMessage(model, messages[i], i, stamp))
        return error;
  }

  DerivedPhase phase;
  deriveStreams(model, messages, phase);

  // receive-before-entry for a paired sender: its row starts no earlier
  // than the natural start of its ordinary route.
  for (uint32_t i = 0; i < messages.size(); ++i) {
    const TimedMessage &m = messages[i];
    if (!m.paired)
      continue;
    int64_t earliest = pairedNaturalStart(c600PhysicalTile(m.source), m.dests);
    if (m.start < earliest)
      return "rule receive-before-entry: tile " + to_string(m.source) +
             " sends " + messageName(i, true) + " at cycle " +
             to_string(m.start) + ", before cycle " + to_string(earliest) +
             ", the earliest its receivers' routes allow (the sender row's "
             "natural start)";
  }

  // receive-before-entry and encoding of every receiver's events. The first
  // control of a stream is its source select (the pair's, for paired).
  for (const Stream &s : phase.streams) {
    if (s.x <= 0) {
      uint8_t kind = !s.paired || s.early ? SourceSelect : FormatOn;
      int64_t cycle = kind == SourceSelect ? s.x : s.format;
      if (cycle <= 0)
        return "rule receive-before-entry: tile " + to_string(s.tile) +
               " has the " + controlName(kind) + " of " +
               messageName(s.message, s.paired) + " at cycle " +
               to_string(cycle) + ", not after phase entry (event 0)";
    }
    if (s.end > model.maxEventOffset)
      return "rule encoding: tile " + to_string(s.tile) + " receives " +
             messageName(s.message, s.paired) + " until cycle " +
             to_string(s.end) + ", beyond event " +
             to_string(model.maxEventOffset);
  }

  // send-overlap: sorted by start, neighbours suffice.
  for (uint32_t t = 0; t < model.tiles; ++t)
    for (size_t k = phase.sendBegin[t] + 1; k < phase.sendBegin[t + 1]; ++k) {
      const Send &prev = phase.sends[k - 1], &cur = phase.sends[k];
      if (cur.start < prev.end)
        return "rule send-overlap: tile " + to_string(t) + " sends " +
               messageName(cur.message, messages[cur.message].paired) +
               " from cycle " + to_string(cur.start) + " while " +
               messageName(prev.message, messages[prev.message].paired) +
               " is still sending until cycle " + to_string(prev.end);
    }

  // receive-overlap (mux time), then receive-write-overlap (write time).
  {
    std::vector<const Stream *> byWrite;
    for (uint32_t t = 0; t < model.tiles; ++t) {
      size_t begin = phase.streamBegin[t], end = phase.streamBegin[t + 1];
      for (size_t k = begin + 1; k < end; ++k) {
        const Stream &prev = phase.streams[k - 1], &cur = phase.streams[k];
        if (cur.muxStart < prev.muxEnd)
          return "rule receive-overlap: tile " + to_string(t) + " receives " +
                 messageName(cur.message, cur.paired) + " from cycle " +
                 to_string(cur.muxStart) + " while " +
                 messageName(prev.message, prev.paired) +
                 " holds its receive mux until cycle " +
                 to_string(prev.muxEnd) +
                 (prev.paired ? " (mux time; a paired stream holds it until "
                                "its format-off write)"
                              : " (mux time)");
      }
      byWrite.clear();
      for (size_t k = begin; k < end; ++k)
        byWrite.push_back(&phase.streams[k]);
      std::sort(byWrite.begin(), byWrite.end(),
                [](const Stream *a, const Stream *b) {
                  return a->p != b->p ? a->p < b->p : a->message < b->message;
                });
      for (size_t k = 1; k < byWrite.size(); ++k) {
        const Stream &prev = *byWrite[k - 1], &cur = *byWrite[k];
        if (cur.p < prev.p + prev.events)
          return "rule receive-write-overlap: tile " + to_string(t) +
                 " writes " + messageName(cur.message, cur.paired) +
                 " from cycle " + to_string(cur.p) + " while " +
                 messageName(prev.message, prev.paired) +
                 " is still writing until cycle " +
                 to_string(prev.p + prev.events);
      }
    }
  }

  // receive-controls, then send-start (controls and sends both sorted).
  deriveControls(model, phase);
  for (uint32_t t = 0; t < model.tiles; ++t) {
    const Control *begin = phase.controls.data() + phase.controlBegin[t],
                  *end = phase.controls.data() + phase.controlBegin[t + 1];
    for (const Control *c = begin; c != end;) {
      const Control *same = c;
      while (same != end && same->cycle == c->cycle)
        ++same;
      if (auto error = checkCoincidence(c, same))
        return error;
      c = same;
    }
    const Send *send = phase.sends.data() + phase.sendBegin[t],
               *sendEnd = phase.sends.data() + phase.sendBegin[t + 1];
    for (const Control *c = begin; c != end; ++c) {
      // The last send starting at or before the control is the only one
      // whose first events it can hit.
      while (send + 1 < sendEnd && send[1].start <= c->cycle)
        ++send;
      if (send == sendEnd || send->start > c->cycle)
        continue;
      int64_t offset = c->cycle - send->start;
      if (offset < model.sendStartEvents)
        return "rule send-start: tile " + to_string(t) + " has " +
               controlText(*c) + " on cycle " + to_string(c->cycle) +
               ", event " + to_string(offset) + " of its own " +
               messageName(send->message, messages[send->message].paired) +
               " sent from cycle " + to_string(send->start) +
               " (a message's first " + to_string(model.sendStartEvents) +
               " events carry no receive control)";
    }
  }

  // memory-element: per (tile, unit), sweep windows by start and keep the
  // longest-running read and write seen so far.
  {
    struct Access {
      uint64_t key;
      int64_t start, end;
      uint32_t message;
      bool write;
    };
    uint64_t units =
        memoryUnit(model, (uint64_t(1) << model.addressBits) - 1) + 1;
    std::vector<Access> accesses;
    accesses.reserve(phase.sends.size() + phase.streams.size());
    auto addSpan = [&](uint32_t tile, uint64_t address, uint64_t bytes,
                       int64_t start, int64_t end, uint32_t message,
                       bool write) {
      uint32_t first = memoryUnit(model, address),
               last = memoryUnit(model, address + bytes - 1);
      for (uint32_t u = first; u <= last; ++u)
        accesses.push_back({tile * units + u, start, end, message, write});
    };
    for (const Send &s : phase.sends) {
      const TimedMessage &m = messages[s.message];
      addSpan(s.tile, m.sourceAddress, uint64_t(m.words) * model.wordBytes,
              s.start, s.end, s.message, false);
    }
    for (const Stream &s : phase.streams)
      addSpan(s.tile, s.address, s.bytes, s.p, s.end, s.message, true);
    std::sort(accesses.begin(), accesses.end(),
              [](const Access &a, const Access &b) {
                if (a.key != b.key)
                  return a.key < b.key;
                if (a.start != b.start)
                  return a.start < b.start;
                return a.message < b.message;
              });
    const Access *lastRead = nullptr, *lastWrite = nullptr;
    for (size_t k = 0; k < accesses.size(); ++k) {
      const Access &a = accesses[k];
      if (k == 0 || accesses[k - 1].key != a.key)
        lastRead = lastWrite = nullptr;
      const Access *other = a.write ? lastRead : lastWrite;
      if (other && other->end > a.start) {
        uint32_t tile = uint32_t(a.key / units), unit = uint32_t(a.key % units);
        const TimedMessage &mine = messages[a.message],
                           &theirs = messages[other->message];
        return "rule memory-element: tile " + to_string(tile) +
               (a.write ? " writes " : " reads ") +
               messageName(a.message, mine.paired) + " in the " +
               describeUnit(model, unit) + " from cycle " +
               to_string(a.start) + " while " +
               messageName(other->message, theirs.paired) +
               (a.write ? " reads it" : " writes it") + " until cycle " +
               to_string(other->end);
      }
      const Access *&mineLast = a.write ? lastWrite : lastRead;
      if (!mineLast || mineLast->end < a.end)
        mineLast = &a;
    }
  }

  // paired-partner: the partner's sends are disjoint and sorted, and its
  // streams sorted by X end in order once they are serialised.
  for (uint32_t i = 0; i < messages.size(); ++i) {
    const TimedMessage &m = messages[i];
    if (!m.paired)
      continue;
    uint32_t q = logicalPartner(m.source);
    int64_t begin = m.start, end = m.start + messageEvents(m);
    std::string reservation = " while " + messageName(i, true) + " of tile " +
                              to_string(m.source) +
                              " occupies its exchange path during [" +
                              to_string(begin) + ", " + to_string(end) + ")";
    auto firstSend = std::partition_point(
        phase.sends.begin() + phase.sendBegin[q],
        phase.sends.begin() + phase.sendBegin[q + 1],
        [&](const Send &s) { return s.end <= begin; });
    if (firstSend != phase.sends.begin() + phase.sendBegin[q + 1] &&
        firstSend->start < end)
      return "rule paired-partner: tile " + to_string(q) + " sends " +
             messageName(firstSend->message,
                         messages[firstSend->message].paired) +
             " during [" + to_string(firstSend->start) + ", " +
             to_string(firstSend->end) + ") from cycle " +
             to_string(std::max(begin, firstSend->start)) + reservation;
    auto firstStream = std::partition_point(
        phase.streams.begin() + phase.streamBegin[q],
        phase.streams.begin() + phase.streamBegin[q + 1],
        [&](const Stream &s) { return s.end <= begin; });
    if (firstStream != phase.streams.begin() + phase.streamBegin[q + 1] &&
        firstStream->x < end)
      return "rule paired-partner: tile " + to_string(q) + " receives " +
             messageName(firstStream->message, firstStream->paired) +
             " during [" + to_string(firstStream->x) + ", " +
             to_string(firstStream->end) + ") from cycle " +
             to_string(std::max(begin, firstStream->x)) + reservation;
  }

  // sendpicp-alignment: each tile's row as the stack's encoder emits it.
  {
    int64_t horizon = 0;
    for (const Send &s : phase.sends)
      horizon = std::max(horizon, s.end);
    for (const Stream &s : phase.streams)
      horizon = std::max(horizon, s.end);
    RowEncoder encoder(model);
    std::vector<RowSend> rowSends;
    std::vector<RowEvent> rowEvents;
    for (uint32_t t = 0; t < model.tiles; ++t) {
      rowSends.clear();
      rowEvents.clear();
      for (size_t k = phase.sendBegin[t]; k < phase.sendBegin[t + 1]; ++k)
        rowSends.push_back({phase.sends[k].start, phase.sends[k].end});
      const Control *begin = phase.controls.data() + phase.controlBegin[t],
                    *end = phase.controls.data() + phase.controlBegin[t + 1];
      for (const Control *c = begin; c != end; ++c) {
        uint8_t bits = isPointerClass(c->kind) ? kRowPointer : kRowSelect;
        if (!rowEvents.empty() && rowEvents.back().cycle == c->cycle)
          rowEvents.back().bits |= bits;
        else
          rowEvents.push_back({c->cycle, bits});
      }
      std::optional<RowFault> fault =
          encoder.encode(rowSends.data(), rowSends.data() + rowSends.size(),
                         rowEvents.data(), rowEvents.data() + rowEvents.size(),
                         horizon);
      if (!fault)
        continue;
      std::string on;
      for (const Control *c = begin; c != end; ++c)
        if (c->cycle == fault->cycle)
          on += (on.empty() ? "" : " and ") + controlText(*c);
      if (on.empty())
        on = "its controls";
      std::string words = to_string(fault->words) + " words of its row before it";
      if (fault->alignment)
        return "rule sendpicp-alignment: tile " + to_string(t) +
               " cannot start the two-word sendpicp of " + on +
               " on cycle " + to_string(fault->cycle) + " (issued from event " +
               to_string(fault->cycle - 1) +
               ") on an 8-byte boundary of its exchange row: " + fault->why +
               " (" + words + ")";
      return "rule row-encoding: tile " + to_string(t) +
             " cannot encode its exchange row at cycle " +
             to_string(fault->cycle) + " (" + on + "): " + fault->why + " (" +
             words + ")";
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Phase timing and code estimate
//===----------------------------------------------------------------------===//

namespace {

/// Delay words to advance `gap` events with instructions that advance at
/// most `free` events on their own.
uint64_t delayWords(const ExchangeTimingModel &model, int64_t gap,
                    int64_t free) {
  if (gap <= free)
    return 0;
  return uint64_t(gap - free + model.delayMaxEvents - 1) / model.delayMaxEvents;
}

/// sendoff words after a send / sendpic(p) head for a chunk of `events`.
uint64_t sendoffWords(const ExchangeTimingModel &model, int64_t events) {
  if (events <= model.sendHeadWords)
    return 0;
  return uint64_t(events - model.sendHeadWords + model.sendoffWords - 1) /
         model.sendoffWords;
}

/// Instruction words of one tile's row (memo 6): sends cut at the controls
/// inside them, controls outside messages as delaypic / delayxpic /
/// directionless sendpicp, delay words for long gaps, and the return.
uint64_t rowWords(const ExchangeTimingModel &model, const Send *send,
                  const Send *sendEnd, const Control *control,
                  const Control *controlEnd, uint64_t idleRows) {
  uint64_t words = 1 + idleRows; // Return; a delay per partner idle row.
  int64_t cur = 0;
  // One event's controls: 1 word, or 2 for a pointer + select sendpicp.
  auto group = [&](const Control *&c, bool &both) {
    const Control *first = c;
    both = false;
    for (++c; c != controlEnd && c->cycle == first->cycle; ++c)
      both = true;
    return first;
  };
  auto outside = [&](const Control *&c) {
    bool both;
    const Control *first = group(c, both);
    int64_t gap = first->cycle - cur;
    if (both)
      words += 2 + delayWords(model, gap, 1);
    else if (isPointerClass(first->kind))
      words += 1 + delayWords(model, gap, model.delaypicMaxEvents);
    else
      words += 1 + delayWords(model, gap, model.delayxpicMaxEvents);
    cur = first->cycle;
  };
  for (; send != sendEnd; ++send) {
    while (control != controlEnd && control->cycle < send->start)
      outside(control);
    words += delayWords(model, send->start - cur, 0);
    // Controls inside the message start a sendpic(p) one event before them.
    int64_t segment = send->start;
    uint64_t head = 1; // send
    while (control != controlEnd && control->cycle <= send->end) {
      bool both;
      const Control *first = group(control, both);
      int64_t split = std::max(segment, first->cycle - 1);
      words += head + sendoffWords(model, split - segment);
      head = both ? 2 : 1;
      segment = split;
    }
    words += head + sendoffWords(model, send->end - segment);
    cur = send->end;
  }
  while (control != controlEnd)
    outside(control);
  return words;
}

} // namespace

namespace {

/// The last event of any send or receive stream: timePhase's horizon
/// without deriving the streams' controls and code, for comparing
/// candidate schedules.
int64_t phaseHorizon(const ExchangeTimingModel &model,
                     const std::vector<TimedMessage> &messages) {
  int64_t horizon = 0;
  for (const TimedMessage &m : messages) {
    horizon = std::max<int64_t>(horizon, m.start + messageEvents(m));
    uint32_t s = c600PhysicalTile(m.source);
    int64_t shift = m.paired ? pairedSelectShift(model, s, m.dests) : 0;
    for (uint32_t d : m.dests)
      horizon = std::max<int64_t>(
          horizon, m.start + receiveOffsets(model, s, c600PhysicalTile(d),
                                            m.words, m.paired, shift)
                                 .end);
  }
  return horizon;
}

} // namespace

PhaseTiming ipu::timePhase(const ExchangeTimingModel &model,
                           const std::vector<TimedMessage> &messages) {
  PhaseTiming timing;
  DerivedPhase phase;
  deriveStreams(model, messages, phase);
  deriveControls(model, phase);
  timing.horizon = phaseHorizon(model, messages);
  if (!messages.empty())
    timing.cycles = timing.horizon + model.phaseFixedCycles;
  for (const Control &c : phase.controls)
    ++(isPointerClass(c.kind) ? timing.pointerEvents : timing.sourceEvents);
  std::vector<uint32_t> idleRows(model.tiles, 0);
  for (const TimedMessage &m : messages)
    if (m.paired && logicalPartner(m.source) < model.tiles)
      ++idleRows[logicalPartner(m.source)];
  uint64_t words = 0;
  timing.codeBytesPerTile.assign(model.tiles, 0);
  for (uint32_t t = 0; t < model.tiles; ++t) {
    uint64_t row = rowWords(model, phase.sends.data() + phase.sendBegin[t],
                            phase.sends.data() + phase.sendBegin[t + 1],
                            phase.controls.data() + phase.controlBegin[t],
                            phase.controls.data() + phase.controlBegin[t + 1],
                            idleRows[t]);
    timing.codeBytesPerTile[t] = uint32_t(row * model.instructionBytes);
    words += row;
  }
  timing.codeBytes = words * model.instructionBytes;
  return timing;
}

//===----------------------------------------------------------------------===//
// Scheduler
//===----------------------------------------------------------------------===//

namespace {

/// What one event of one tile already holds, as the scheduler tracks it.
enum EventBits : uint8_t {
  kPointerBit = 1,   ///< A pointer-class control (pointer, format).
  kSelectBit = 2,    ///< A select-class control (source, neutral).
  kPairedBit = 4,    ///< One of them belongs to a paired stream.
  kSendStartBit = 8, ///< First two events of a message the tile sends.
};
constexpr uint8_t kControlBits = kPointerBit | kSelectBit;

/// True when `add` cannot join `have` on one event of one tile (rules
/// receive-controls and send-start).
bool clashes(uint8_t have, uint8_t add) {
  if ((have & kSendStartBit) && (add & kControlBits))
    return true;
  if ((add & kSendStartBit) && (have & kControlBits))
    return true;
  if (have & add & kControlBits)
    return true;
  return (have & kControlBits) && (add & kControlBits) &&
         ((have | add) & kPairedBit);
}

/// (tile, event) -> EventBits, four bits per event in pages of 4096 events
/// per tile, allocated on first use: a tile's controls and send starts lie
/// close together, so one page usually serves a whole message.
class EventTable {
public:
  explicit EventTable(uint32_t tiles) : pages(tiles) {}

  uint8_t get(uint32_t tile, int64_t cycle) const {
    assert(cycle >= 0);
    const std::vector<std::unique_ptr<uint8_t[]>> &list = pages[tile];
    size_t page = size_t(cycle) >> kPageBits;
    if (page >= list.size() || !list[page])
      return 0;
    uint8_t byte = list[page][(cycle & kPageMask) >> 1];
    return cycle & 1 ? byte >> 4 : byte & 15;
  }

  void add(uint32_t tile, int64_t cycle, uint8_t bits) {
    assert(cycle >= 0 && bits < 16);
    std::vector<std::unique_ptr<uint8_t[]>> &list = pages[tile];
    size_t page = size_t(cycle) >> kPageBits;
    if (page >= list.size())
      list.resize(page + 1);
    if (!list[page])
      list[page].reset(new uint8_t[kPageEvents / 2]());
    list[page][(cycle & kPageMask) >> 1] |= cycle & 1 ? bits << 4 : bits;
  }

  void clear(uint32_t tile, int64_t cycle, uint8_t bits) {
    assert(cycle >= 0 && bits < 16);
    std::vector<std::unique_ptr<uint8_t[]>> &list = pages[tile];
    size_t page = size_t(cycle) >> kPageBits;
    if (page < list.size() && list[page])
      list[page][(cycle & kPageMask) >> 1] &=
          uint8_t(~(cycle & 1 ? bits << 4 : bits));
  }

private:
  static constexpr unsigned kPageBits = 12;
  static constexpr size_t kPageEvents = size_t(1) << kPageBits;
  static constexpr int64_t kPageMask = kPageEvents - 1;
  std::vector<std::vector<std::unique_ptr<uint8_t[]>>> pages;
};

/// Free time of one resource: disjoint gaps sorted by start in one flat
/// array, the last one open-ended. A named timeline (a receiver's mux) also
/// keeps, per gap, what bounds it on either side (a placed stream's index,
/// or kNone), so that it answers who a stream's neighbours are. Why flat:
/// placement is bound by memory latency, since every message touches the
/// timelines of tiles at random. 8-byte gaps in one array per timeline are
/// a quarter of the memory of the 16-gap blocks with a summary index that
/// this replaced, and a search reads a few neighbouring cache lines; an
/// insertion moves a few hundred bytes. uniform-500k: 4.6 s -> 3.3 s,
/// broadcast-groups-100k: 27 s -> 9 s (bench/run exchange). Times are below
/// 2^31 (rule encoding).
class GapTimeline {
public:
  static constexpr int32_t kOpenEnd = std::numeric_limits<int32_t>::max();
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  struct Gap {
    int32_t start, end;
  };
  /// A gap with what ends at its start and what starts at its end.
  struct NamedGap {
    int64_t start, end;
    uint32_t before, after;
  };
  /// A free window: [start, start + length) fits, and so does any later
  /// start up to freeUntil - length.
  struct Fit {
    int64_t start, freeUntil;
  };
  /// Where a search stopped: a gap's position. A caller asking for later
  /// and later t of an unchanged timeline resumes there.
  using Cursor = size_t;
  static constexpr Cursor kNoCursor = ~size_t(0);

  explicit GapTimeline(bool named = false) : gaps{{0, kOpenEnd}} {
    if (named)
      names.push_back({kNone, kNone});
  }

  /// The earliest s >= t with [s, s + length) free, resuming at `at` when
  /// it lies at or before the gap of t; `at` is left at the answer's gap.
  Fit earliest(int64_t t, int64_t length, Cursor &at) const {
    if (t >= tailStart) {
      at = gaps.size() - 1;
      return {t, kOpenEnd};
    }
    assert(t + length < kOpenEnd && "event beyond 2^31");
    size_t i = at;
    if (i >= gaps.size() || (i > 0 && gaps[i - 1].end > t)) {
      i = gapEndingAfter(t);
    } else {
      for (int steps = 0; gaps[i].end <= t; ++i)
        if (++steps == 8) {
          i = gapEndingAfter(t);
          break;
        }
    }
    int64_t s = std::max<int64_t>(gaps[i].start, t);
    if (gaps[i].end - s < length) {
      // The open-ended gap always fits, so this ends.
      for (++i; gaps[i].end - gaps[i].start < length; ++i) {
      }
      s = gaps[i].start;
    }
    at = i;
    return {s, gaps[i].end};
  }

  /// The first gap ending after t, which holds t unless t is busy, with its
  /// neighbours (kNone in an unnamed timeline). `hint`: a gap that may hold
  /// t, such as the cursor of the search that found t.
  NamedGap gapAround(int64_t t, Cursor hint = kNoCursor) const {
    size_t i = gapHolding(t, hint);
    NamedGap g{gaps[i].start, gaps[i].end, kNone, kNone};
    if (!names.empty()) {
      g.before = names[i].before;
      g.after = names[i].after;
    }
    return g;
  }

  /// Marks [s, s + length) busy by `id`; it must lie in one gap. `hint` as
  /// for gapAround.
  void reserve(int64_t s, int64_t length, uint32_t id = kNone,
               Cursor hint = kNoCursor) {
    assert(s >= 0 && s + length < kOpenEnd && "event beyond 2^31");
    size_t i = gapHolding(s, hint);
    Gap old = gaps[i];
    int32_t from = int32_t(s), to = int32_t(s + length);
    assert(old.start <= from && to <= old.end && "reserving busy time");
    bool named = !names.empty();
    if (old.end == kOpenEnd)
      tailStart = std::max(tailStart, to);
    if (old.start == from && to == old.end) {
      gaps.erase(gaps.begin() + i);
      if (named)
        names.erase(names.begin() + i);
    } else if (old.start == from) {
      gaps[i].start = to;
      if (named)
        names[i].before = id;
    } else if (to == old.end) {
      gaps[i].end = from;
      if (named)
        names[i].after = id;
    } else {
      gaps[i].end = from;
      gaps.insert(gaps.begin() + i + 1, Gap{to, old.end});
      if (named) {
        Names upper{id, names[i].after};
        names[i].after = id;
        names.insert(names.begin() + i + 1, upper);
      }
    }
  }

  /// Marks [s, s + length) busy, whatever of it is busy already.
  void reserveUnion(int64_t s, int64_t length) {
    int64_t e = s + length;
    while (s < e) {
      NamedGap g = gapAround(s);
      if (g.start >= e)
        return;
      int64_t from = std::max<int64_t>(g.start, s),
              to = std::min<int64_t>(g.end, e);
      reserve(from, to - from);
      s = to;
    }
  }

private:
  struct Names {
    uint32_t before, after;
  };
  /// The open-ended gap's start, beside the arrays' headers: most searches
  /// of a filling timeline end there without reading the array.
  int32_t tailStart = 0;
  std::vector<Gap> gaps;
  std::vector<Names> names; ///< Parallel to gaps when named, else empty.

  /// `hint` if that gap holds t, else gapEndingAfter(t).
  size_t gapHolding(int64_t t, Cursor hint) const {
    if (hint < gaps.size() && gaps[hint].start <= t && t < gaps[hint].end)
      return hint;
    return gapEndingAfter(t);
  }
  /// Branch-free: the compare outcomes are random, so a conditional move
  /// beats a mispredicted branch per step.
  size_t gapEndingAfter(int64_t t) const {
    const Gap *base = gaps.data();
    for (size_t n = gaps.size(); n > 1;) {
      size_t half = n / 2;
      base = base[half - 1].end <= t ? base + half : base;
      n -= half;
    }
    return size_t(base - gaps.data()) + (base->end <= t);
  }
};

/// A stream placed on a receiver, for its neighbours' cutover, pointer and
/// write-time rules.
/// 16 bytes: one per receiver of every message, read at random.
struct PlacedStream {
  uint32_t address, bytes; ///< Below 2^20 (rule encoding).
  int16_t events;          ///< Write events; at most maxMessageWords.
  int16_t muxEvents;       ///< Mux hold (paired: until format-off).
  int16_t lead;            ///< P - mux start.
  bool paired, pointerOmitted;
};
static_assert(sizeof(PlacedStream) == 16, "read at random per receiver");

/// Places messages one at a time, each at the earliest start that keeps every
/// rule given the messages placed before it, anywhere in time (gaps left by
/// earlier messages are filled). Per tile it keeps the free time of its
/// sender and receive mux (whose gaps also name the neighbouring streams,
/// which give the write-time, cutover and pointer rules), of each SRAM unit
/// the phase both reads and writes there, and with paired messages of its
/// receive activity and partner reservations; receive controls and send
/// starts in an EventTable.
///
/// Cost: each constraint is asked again only when the candidate start leaves
/// the free window it last reported; a question resumes at the gap where
/// the last one stopped (O(log gaps) on a message's first question), then
/// steps over too-short gaps; the event, neighbour and unit checks are O(1)
/// per receiver, and the final reservations reuse the questions' gaps.
/// Measured (bench/run exchange, medians of 5 on a 2-core machine):
/// scheduleTimedPhase on uniform-500k (500k single-destination transfers
/// of up to 64 words on 1472 tiles, two orders in parallel) 1.46 s; on
/// uniform-1word-500k (one order), where every message is one word and a
/// tile's receive controls, send starts and SRAM unit fill nearly every
/// event, 1.48 s with firstPossibleStart's busy bits (1.77 s without:
/// the search stepped through the busy events a few at a time).
/// Per tile, a bit per event: set once the event is busy in some sense
/// (cleared only where a placement takes a pointer write away). A tile's
/// bits grow as far as its busy events do, up to kMaxWords; later events
/// read as free, which is what a filter that may only rule starts out
/// needs.
class BusyBits {
public:
  explicit BusyBits(uint32_t tiles) : words(tiles) {}

  void set(uint32_t tile, int64_t from, int64_t length) {
    std::vector<uint64_t> &bits = words[tile];
    int64_t e = std::max<int64_t>(from, 0);
    const int64_t end = std::min<int64_t>(from + length, int64_t(kMaxWords) << 6);
    if (e >= end)
      return;
    if (size_t((end - 1) >> 6) >= bits.size())
      bits.resize(size_t((end - 1) >> 6) + 1, 0);
    while (e < end) {
      const unsigned first = unsigned(e & 63);
      const int64_t count = std::min<int64_t>(64 - first, end - e);
      const uint64_t ones = count == 64 ? ~uint64_t(0) : ((uint64_t(1) << count) - 1);
      bits[size_t(e >> 6)] |= ones << first;
      e += count;
    }
  }

  /// Frees one event (a control that a later placement removed).
  void clear(uint32_t tile, int64_t event) {
    std::vector<uint64_t> &bits = words[tile];
    if (event >= 0 && size_t(event >> 6) < bits.size())
      bits[size_t(event >> 6)] &= ~(uint64_t(1) << (event & 63));
  }

  /// Bit i: event from + i is busy (events before 0 read free).
  uint64_t window(uint32_t tile, int64_t from) const {
    const std::vector<uint64_t> &bits = words[tile];
    auto word = [&](int64_t w) {
      return w >= 0 && size_t(w) < bits.size() ? bits[w] : 0;
    };
    const int64_t w = from >> 6; // Floor, also below 0.
    const unsigned shift = unsigned(from & 63);
    return shift ? word(w) >> shift | word(w + 1) << (64 - shift) : word(w);
  }

  /// Bit i: some event of [from + i, from + i + length) is busy.
  uint64_t anyIn(uint32_t tile, int64_t from, int64_t length) const {
    uint64_t busy = 0;
    for (int64_t k = 0; k < length; ++k)
      busy |= window(tile, from + k);
    return busy;
  }

private:
  /// 2^20 events a tile: far past the phases the compiler makes.
  static constexpr size_t kMaxWords = size_t(1) << 14;
  std::vector<std::vector<uint64_t>> words;
};

class TimedScheduler {
public:
  /// `sharedUnits`: per tile, the SRAM units (bit u) that the phase both
  /// reads and writes there; only those need their busy time kept.
  /// `filter`: keep the busy bits firstPossibleStart reads (worth their
  /// upkeep only where short messages crowd the tiles' events).
  TimedScheduler(const ExchangeTimingModel &model,
                 std::vector<uint64_t> sharedUnits, bool anyPaired, bool filter)
      : model(model), anyPaired(anyPaired), filter(filter),
        units(memoryUnit(model, (uint64_t(1) << model.addressBits) - 1) + 1),
        sharedUnits(std::move(sharedUnits)), events(model.tiles),
        send(model.tiles), mux(model.tiles, GapTimeline(/*named=*/true)),
        unitIndex(size_t(model.tiles) * units * 2, -1),
        activity(anyPaired ? model.tiles : 0),
        reservations(anyPaired ? model.tiles : 0), sendBits(filter ? model.tiles : 0),
        muxBits(filter ? model.tiles : 0), controlBits(filter ? model.tiles : 0),
        sendStartBits(filter ? model.tiles : 0), rows(model.tiles),
        encoder(model) {
    assert(units <= 64 && "unit masks are 64-bit");
  }

  /// Whether a paired message of `words` from `source` to `dests` has
  /// receive rows without coincident controls (paired_receiver_row).
  bool pairedRowsFit(uint32_t source, const std::vector<uint32_t> &dests,
                     uint32_t words) const {
    uint32_t s = c600PhysicalTile(source);
    for (uint32_t d : dests) {
      ReceiveTiming at =
          receiveOffsets(model, s, c600PhysicalTile(d), words, true);
      if (!at.early)
        continue;
      int64_t neutral = at.sourceSelect + at.events;
      if (neutral == at.format || neutral == at.pointer)
        return false;
    }
    return true;
  }

  /// Places one message; returns its start S.
  int64_t place(uint32_t source, const std::vector<uint32_t> &dests,
                uint32_t words, uint32_t sourceAddress, uint32_t destAddress,
                bool paired);

  /// The last event of any message placed so far: a send's end or a
  /// receiver row's end.
  int64_t horizon() const { return lastEvent; }

private:
  struct Receiver {
    uint32_t tile;
    ReceiveTiming at; ///< Relative to S = 0.
    size_t muxConstraint = 0; ///< Its mux time's place in `primary`.
  };
  /// A receiver's stream at one X: its neighbours in X order and which of
  /// its controls exist.
  struct Slot {
    const PlacedStream *prev = nullptr, *next = nullptr;
    int64_t prevEnd = 0, nextX = 0; ///< Mux end of prev, mux start of next.
    int64_t gapEnd = 0;             ///< End of the free mux time around X.
    uint32_t nextIndex = GapTimeline::kNone; ///< next's index in streams.
    bool pointer = true, neutral = true, cutover = false;
    /// The new stream ends where next begins in memory: next, which wrote
    /// its pointer, now continues it and omits its pointer write
    /// (carries_pointer; deriveControls decides so from the final order).
    bool dropsNextPointer = false;
  };
  struct Control {
    int64_t cycle;
    uint8_t bits;
    /// Whether the control is there, with these bits, at every start whose
    /// X lies later in the same free mux time (a neutral is not: it merges
    /// into the next stream's source where the two meet).
    bool fixed;
  };

  const ExchangeTimingModel &model;
  bool anyPaired, filter;
  int64_t lastEvent = 0;
  uint32_t units;
  std::vector<uint64_t> sharedUnits;
  EventTable events;
  std::vector<PlacedStream> streams; ///< Indexed by the mux gaps' ids.
  std::vector<GapTimeline> send, mux;
  /// Per (tile, unit, read / write), an index into unitTimes or -1.
  std::vector<int32_t> unitIndex;
  std::vector<GapTimeline> unitTimes;
  /// With paired messages: per tile, the union of its streams' [X, end),
  /// and the [S, S + items) its partner borrows its path.
  std::vector<GapTimeline> activity, reservations;
  std::vector<Receiver> receivers; ///< Scratch.
  /// Mirrors of the send and mux timelines and of the events that hold a
  /// receive control or a send start, a bit per event, for
  /// firstPossibleStart.
  BusyBits sendBits, muxBits, controlBits, sendStartBits;
  /// Windows of the filter: the first events of a message's send and mux
  /// time it looks at (enough to rule out most busy starts).
  static constexpr int64_t kFilterEvents = 8;

  /// The least start >= `start` that the rules the bits mirror allow: the
  /// sender's send time and each receiver's mux time free over their first
  /// kFilterEvents events, the sender's first events (send-start) without
  /// a receive control, and for an unpaired message each receiver's source
  /// select off a send start. Every rule is also checked in full after it,
  /// so it only skips starts that cannot be: 64 at a time, where the
  /// one-by-one search of a dense tile steps through them.
  int64_t firstPossibleStart(uint32_t source, int64_t start, int64_t length,
                             bool paired) const {
    const int64_t window = std::min(length, kFilterEvents);
    for (;; start += 64) {
      uint64_t busy = sendBits.anyIn(source, start, window);
      for (uint32_t k = 0; k < model.sendStartEvents; ++k)
        busy |= controlBits.window(source, start + k);
      for (const Receiver &r : receivers) {
        busy |= muxBits.anyIn(r.tile, start + r.at.muxStart, window);
        if (!paired)
          busy |= sendStartBits.window(r.tile, start + r.at.sourceSelect);
      }
      if (~busy)
        return start + __builtin_ctzll(~busy);
    }
  }

  const GapTimeline *unitTime(uint32_t tile, uint32_t unit, bool write) const {
    if (!(sharedUnits[tile] >> unit & 1))
      return nullptr;
    int32_t i = unitIndex[(size_t(tile) * units + unit) * 2 + write];
    return i < 0 ? nullptr : &unitTimes[i];
  }
  GapTimeline *unitTime(uint32_t tile, uint32_t unit, bool write) {
    if (!(sharedUnits[tile] >> unit & 1))
      return nullptr;
    int32_t &i = unitIndex[(size_t(tile) * units + unit) * 2 + write];
    if (i < 0) {
      i = int32_t(unitTimes.size());
      unitTimes.emplace_back();
    }
    return &unitTimes[i];
  }

  /// Neighbours of a stream at x whose mux window [x, x + length) is free.
  Slot slotOf(uint32_t tile, int64_t x, int64_t length, uint64_t address,
              bool paired, GapTimeline::Cursor hint) const {
    Slot slot;
    GapTimeline::NamedGap gap = mux[tile].gapAround(x, hint);
    assert(gap.start <= x && gap.end - x >= length && "slot of busy time");
    int64_t gapStart = gap.start, gapEnd = gap.end;
    slot.gapEnd = gapEnd;
    if (gap.before != GapTimeline::kNone) {
      slot.prev = &streams[gap.before];
      slot.prevEnd = gapStart;
    }
    if (gap.after != GapTimeline::kNone) {
      slot.next = &streams[gap.after];
      slot.nextIndex = gap.after;
      slot.nextX = gapEnd;
    }
    if (paired)
      return slot;
    const PlacedStream *prev = slot.prev, *next = slot.next;
    slot.pointer =
        !prev || prev->paired || uint64_t(prev->address) + prev->bytes != address;
    slot.cutover = prev && !prev->paired && gapStart == x;
    slot.neutral = !next || next->paired || gapEnd != x + length;
    slot.dropsNextPointer = next && !next->paired && !next->pointerOmitted &&
                            address + uint64_t(length) * model.wordBytes ==
                                next->address;
    return slot;
  }

  /// The receive controls of one receiver for a message starting at S.
  size_t controlsOf(const ReceiveTiming &at, const Slot &slot, int64_t start,
                    bool paired, Control out[5]) const {
    int64_t x = start + at.sourceSelect, p = start + at.pointer;
    int64_t length = at.events;
    size_t n = 0;
    if (paired) {
      int64_t f = start + at.format;
      uint8_t select = kSelectBit | kPairedBit,
              pointer = kPointerBit | kPairedBit;
      if (at.early) {
        out[n++] = {x, select, true};
        out[n++] = {x + length, select, true};
      }
      out[n++] = {f, pointer, true};
      out[n++] = {p, pointer, true};
      out[n++] = {f + length, pointer, true};
      return n;
    }
    out[n++] = {x, kSelectBit, true};
    if (slot.neutral && slot.pointer && p == x + length) {
      out[n++] = {p, kSelectBit | kPointerBit, false};
      return n;
    }
    if (slot.neutral)
      out[n++] = {x + length, kSelectBit, false};
    if (slot.pointer)
      out[n++] = {p, kPointerBit, true};
    return n;
  }

  /// One busy-time constraint of the message being placed: with start S,
  /// [S + offset, S + offset + length) must be free in `time`. Starts in
  /// [lo, hi] are known to satisfy it.
  struct Constraint {
    const GapTimeline *time;
    int64_t offset, length, lo, hi;
    GapTimeline::Cursor at;
  };
  /// Scratch: the sender's and receivers' mux time, which move the start
  /// most often, and the rest, asked only at starts the first allow.
  std::vector<Constraint> primary, secondary;

  static void addConstraint(std::vector<Constraint> &to,
                            const GapTimeline *time, int64_t offset,
                            int64_t length) {
    if (time)
      to.push_back({time, offset, length, 0, -1, GapTimeline::kNoCursor});
  }
  /// The least start >= `start` that every constraint of `list` allows.
  static int64_t fitConstraints(std::vector<Constraint> &list, int64_t start);
  /// The least start >= `start` whose first events (send-start) hold no
  /// receive control on `source`. The cheapest check, and the one that
  /// fails most often where tiles both send and receive many short
  /// messages, so it is asked first.
  int64_t sendStartFrom(uint32_t source, int64_t start) const;
  /// `start` if the message's receive controls, send starts and write
  /// windows fit there, else a later start to try. Leaves each receiver's
  /// slot at `start` in `slots`.
  int64_t checkControls(uint32_t source, int64_t start, int64_t length,
                        uint64_t destAddress, uint64_t bytes, bool paired);
  std::vector<Slot> slots; ///< Scratch, per receiver.
  /// The receiver (checkControls) and the row (checkRows: 0 the sender's,
  /// then the receivers') that refused the message last: asked first.
  size_t firstReceiver = 0, firstRow = 0;

  /// Each tile's row as the encoder sees it (sends, and receive controls
  /// per event).
  std::vector<EncodedRow> rows;
  RowEncoder encoder;
  std::vector<RowEvent> added; ///< Scratch: one receiver's controls.
  /// Whether `tile`'s row still encodes with `send` (if any), the
  /// controls `added` and without the pointer write on event `dropPointer`
  /// (if >= 0).
  bool rowEncodes(uint32_t tile, const RowSend *send,
                  int64_t dropPointer = -1) {
    // The scheduler's other checks (send-start, receive-controls) leave
    // only the alignment rule to the walk.
    return rows[tile].encodesWith(encoder, model.maxEventOffset, send, added,
                                  dropPointer, /*onlyAlignment=*/true);
  }
  /// `start` if every row the message touches still encodes at `start`
  /// (rule sendpicp-alignment), else start + 1: the stack's scheduler
  /// retries a transfer one event later (earliest_transfer_offset).
  int64_t checkRows(uint32_t source, int64_t start, int64_t length,
                    bool paired);
  /// The controls of one receiver as row events, sorted, one per event.
  void rowControls(const Control *controls, size_t n);
};

void TimedScheduler::rowControls(const Control *controls, size_t n) {
  static_assert(kRowPointer == kPointerBit && kRowSelect == kSelectBit,
                "row events reuse the event table's bits");
  added.clear();
  for (size_t k = 0; k < n; ++k)
    added.push_back({controls[k].cycle, uint8_t(controls[k].bits & kControlBits)});
  std::sort(added.begin(), added.end(),
            [](const RowEvent &a, const RowEvent &b) { return a.cycle < b.cycle; });
  size_t out = 0;
  for (size_t k = 0; k < added.size(); ++k) {
    if (out && added[out - 1].cycle == added[k].cycle)
      added[out - 1].bits |= added[k].bits;
    else
      added[out++] = added[k];
  }
  added.resize(out);
}

int64_t TimedScheduler::checkRows(uint32_t source, int64_t start,
                                  int64_t length, bool paired) {
  RowSend send{start, start + length};
  Control controls[5];
  for (size_t k = 0; k <= receivers.size(); ++k) {
    size_t row = (firstRow + k) % (receivers.size() + 1);
    bool encodes;
    if (row == 0) {
      added.clear();
      encodes = rowEncodes(source, &send);
    } else {
      const Receiver &r = receivers[row - 1];
      const Slot &slot = slots[row - 1];
      size_t n = controlsOf(r.at, slot, start, paired, controls);
      rowControls(controls, n);
      encodes = rowEncodes(r.tile, nullptr,
                           slot.dropsNextPointer ? slot.nextX + slot.next->lead
                                                 : -1);
    }
    if (!encodes) {
      firstRow = row;
      return start + 1;
    }
  }
  return start;
}

int64_t TimedScheduler::fitConstraints(std::vector<Constraint> &list,
                                       int64_t start) {
  // Re-query only the constraints whose known window misses the candidate;
  // each query moves to that constraint's next free window.
  for (bool moved = true; moved;) {
    moved = false;
    for (Constraint &c : list) {
      if (c.lo <= start && start <= c.hi)
        continue;
      GapTimeline::Fit fit =
          c.time->earliest(start + c.offset, c.length, c.at);
      c.lo = fit.start - c.offset;
      c.hi = fit.freeUntil == GapTimeline::kOpenEnd
                 ? GapTimeline::kOpenEnd
                 : fit.freeUntil - c.length - c.offset;
      if (c.lo > start) {
        start = c.lo;
        moved = true;
      }
    }
  }
  return start;
}

int64_t TimedScheduler::sendStartFrom(uint32_t source, int64_t start) const {
  for (uint32_t k = 0; k < model.sendStartEvents; ++k)
    if (clashes(events.get(source, start + k), kSendStartBit)) {
      start += k + 1;
      k = ~0u; // Again from the new start's first event.
    }
  return start;
}

int64_t TimedScheduler::checkControls(uint32_t source, int64_t start,
                                      int64_t length, uint64_t destAddress,
                                      uint64_t bytes, bool paired) {
  if (int64_t next = sendStartFrom(source, start); next != start)
    return next;
  int64_t next = start;
  slots.resize(receivers.size());
  Control controls[5];
  // Each receiver's skip is safe alone (every start it skips clashes
  // there), so the first receiver that refuses decides; the one that
  // refused last is asked first.
  for (size_t k = 0; k < receivers.size() && next == start; ++k) {
    size_t i = (firstReceiver + k) % receivers.size();
    const Receiver &r = receivers[i];
    // x: the mux start (the source select, or a late paired member's
    // format-on write).
    int64_t x = start + r.at.muxStart, hold = r.at.muxEnd - r.at.muxStart;
    Slot slot = slotOf(r.tile, x, hold, destAddress, paired,
                       primary[r.muxConstraint].at);
    slots[i] = slot;
    // receive-write-overlap: write windows [P, P + events) are disjoint
    // when each stream's ends before the next one's in mux order starts, so
    // only the neighbours matter.
    int64_t write = start + r.at.pointer;
    if (slot.prev) {
      int64_t prevWriteEnd = slot.prevEnd - slot.prev->muxEvents +
                             slot.prev->lead + slot.prev->events;
      if (write < prevWriteEnd)
        next = std::max(next, start + prevWriteEnd - write);
    }
    if (slot.next && write + length > slot.nextX + slot.next->lead)
      next = std::max(next, start + slot.nextX + slot.next->muxEvents - x);
    // A stream that omits its pointer, continuing the one before, must keep
    // that predecessor: go past it.
    if (slot.next && slot.next->pointerOmitted &&
        (paired || destAddress + bytes != slot.next->address))
      next = std::max(next, start + slot.nextX + slot.next->muxEvents - x);
    size_t n = controlsOf(r.at, slot, start, paired, controls);
    // A later start that keeps X in this free mux time moves every control
    // with it; past `lastX` the mux window leaves it and fitConstraints
    // takes over. A control that clashes skips every start whose copy of
    // it would clash too: there is no cutover once X is past the gap's
    // start, and a neutral is there at every X but lastX.
    int64_t lastX = slot.gapEnd - hold;
    for (size_t k = 0; k < n; ++k) {
      const Control &c = controls[k];
      uint8_t have = events.get(r.tile, c.cycle);
      if (slot.cutover && c.cycle == x)
        have &= ~kSelectBit; // The new source replaces the neutral.
      if (!clashes(have, c.bits))
        continue;
      int64_t step = 1, limit = c.fixed ? lastX : lastX - 1;
      while (x + step <= limit &&
             clashes(events.get(r.tile, c.cycle + step), c.bits))
        ++step;
      next = std::max(next, start + step);
    }
    if (next != start)
      firstReceiver = i;
  }
  return next;
}

int64_t TimedScheduler::place(uint32_t source,
                                   const std::vector<uint32_t> &dests,
                                   uint32_t words, uint32_t sourceAddress,
                                   uint32_t destAddress, bool paired) {
  int64_t length = paired ? words / 2 : words;
  uint64_t bytes = uint64_t(words) * model.wordBytes;
  uint32_t s = c600PhysicalTile(source);
  // receive-before-entry: every source select at event >= 1, a paired
  // sender's row from its natural start.
  int64_t start = paired ? pairedNaturalStart(s, dests) : 0;
  int64_t shift = paired ? pairedSelectShift(model, s, dests) : 0;
  receivers.clear();
  firstReceiver = firstRow = 0;
  for (uint32_t d : dests) {
    Receiver r{d, receiveOffsets(model, s, c600PhysicalTile(d), words, paired,
                                 shift)};
    start = std::max<int64_t>(start, 1 - r.at.sourceSelect);
    receivers.push_back(r);
  }

  // Busy time: send-overlap; receive-overlap in mux time;
  // memory-element on both sides; paired-partner (the partner's sends and
  // receive activity, the receivers' reservations).
  primary.clear();
  secondary.clear();
  const TimedScheduler *self = this;
  uint32_t partner = logicalPartner(source);
  addConstraint(primary, &send[source], 0, length);
  if (paired) {
    addConstraint(primary, &send[partner], 0, length);
    addConstraint(secondary, &activity[partner], 0, length);
  }
  for (uint32_t u = memoryUnit(model, sourceAddress),
                last = memoryUnit(model, sourceAddress + bytes - 1);
       u <= last; ++u)
    addConstraint(secondary, self->unitTime(source, u, true), 0, length);
  uint32_t writeFirst = memoryUnit(model, destAddress),
           writeLast = memoryUnit(model, destAddress + bytes - 1);
  for (Receiver &r : receivers) {
    int64_t x = r.at.sourceSelect, p = r.at.pointer, end = r.at.end;
    r.muxConstraint = primary.size();
    addConstraint(primary, &mux[r.tile], r.at.muxStart,
                  r.at.muxEnd - r.at.muxStart);
    for (uint32_t u = writeFirst; u <= writeLast; ++u)
      addConstraint(secondary, self->unitTime(r.tile, u, false), p, end - p);
    if (anyPaired)
      addConstraint(secondary, &reservations[r.tile], x, end - x);
  }

  // Then receive-controls and send-start, which need the mux windows free.
  for (;;) {
    // Long messages find their windows in few gap searches; short ones on
    // busy tiles are what the filter is for.
    int64_t next = filter && length <= kFilterEvents
                       ? firstPossibleStart(source, start, length, paired)
                       : start;
    next = sendStartFrom(source, next);
    next = fitConstraints(primary, next);
    next = fitConstraints(secondary, next);
    if (next == start)
      next = checkControls(source, start, length, destAddress, bytes, paired);
    if (next == start)
      next = checkRows(source, start, length, paired);
    if (next == start)
      break;
    start = next;
  }

  // Commit. Each receiver's neighbours first, while its mux window is free.
  Control controls[5];
  for (size_t i = 0; i < receivers.size(); ++i) {
    const Receiver &r = receivers[i];
    // From the last check, at this start; its stream pointers may dangle
    // once streams grows, only its flags are used.
    const Slot &slot = slots[i];
    int64_t x = start + r.at.sourceSelect, p = start + r.at.pointer,
            end = start + r.at.end;
    size_t n = controlsOf(r.at, slot, start, paired, controls);
    rowControls(controls, n);
    if (slot.dropsNextPointer) {
      PlacedStream &next = streams[slot.nextIndex];
      int64_t pointer = slot.nextX + next.lead;
      next.pointerOmitted = true;
      events.clear(r.tile, pointer, kPointerBit);
      if (filter && !(events.get(r.tile, pointer) & kControlBits))
        controlBits.clear(r.tile, pointer);
      rows[r.tile].dropPointer(pointer);
    }
    rows[r.tile].addEvents(added);
    for (size_t k = 0; k < n; ++k) {
      events.add(r.tile, controls[k].cycle, controls[k].bits);
      if (filter)
        controlBits.set(r.tile, controls[k].cycle, 1);
    }
    int64_t muxStart = start + r.at.muxStart,
            hold = r.at.muxEnd - r.at.muxStart;
    mux[r.tile].reserve(muxStart, hold, uint32_t(streams.size()),
                        primary[r.muxConstraint].at);
    if (filter)
      muxBits.set(r.tile, muxStart, hold);
    streams.push_back({uint32_t(destAddress), uint32_t(bytes), int16_t(length),
                       int16_t(hold), int16_t(p - muxStart), paired,
                       !slot.pointer});
    for (uint32_t u = writeFirst; u <= writeLast; ++u)
      if (GapTimeline *writes = unitTime(r.tile, u, true))
        writes->reserveUnion(p, end - p);
    if (anyPaired)
      activity[r.tile].reserveUnion(x, end - x);
  }
  send[source].reserve(start, length, GapTimeline::kNone, primary[0].at);
  rows[source].addSend({start, start + length});
  if (filter)
    sendBits.set(source, start, length);
  for (uint32_t k = 0; k < model.sendStartEvents; ++k)
    events.add(source, start + k, kSendStartBit);
  if (filter)
    sendStartBits.set(source, start, model.sendStartEvents);
  for (uint32_t u = memoryUnit(model, sourceAddress),
                last = memoryUnit(model, sourceAddress + bytes - 1);
       u <= last; ++u)
    if (GapTimeline *reads = unitTime(source, u, false))
      reads->reserve(start, length);
  if (paired) {
    send[partner].reserve(start, length);
    if (filter)
      sendBits.set(partner, start, length);
    reservations[partner].reserve(start, length);
  }
  lastEvent = std::max(lastEvent, start + length);
  for (const Receiver &r : receivers)
    lastEvent = std::max(lastEvent, start + r.at.end);
  return start;
}

/// Whether a transfer may use paired messages at all (memo 4): requested,
/// even and >= 128 words, 8-byte aligned, the sender's partner in the
/// target, receivers complete pairs not including that partner.
bool pairedEligible(const ExchangeTimingModel &model,
                    const TimedTransfer &transfer) {
  if (!transfer.paired || transfer.words % 2 ||
      transfer.words < model.pairedMinWords ||
      transfer.sourceAddress % model.pairedAlignBytes ||
      transfer.destAddress % model.pairedAlignBytes)
    return false;
  uint32_t partner = logicalPartner(transfer.source);
  if (partner >= model.tiles)
    return false;
  std::vector<uint32_t> sorted(transfer.dests);
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t d : sorted)
    if (d == partner ||
        !std::binary_search(sorted.begin(), sorted.end(), logicalPartner(d)))
      return false;
  return true;
}

/// Events a transfer occupies an endpoint (paired-eligible ones at two
/// words per event).
uint64_t transferEvents(const TimedTransfer &transfer, bool paired) {
  return paired ? transfer.words / 2 : transfer.words;
}

/// A message before placement: part of transfer `transfer` from word
/// `offset`.
struct PendingMessage {
  uint64_t events, pressure;
  uint32_t transfer, words, offset;
  bool paired;
};

/// Reorders `order` (longest first) into TimedOrder::MatchingWaves: stable
/// by (events descending, wave), each message's wave the first in which its
/// sender sends nothing and none of its receivers receives anything yet.
/// Per tile a bit per wave and direction, searched 64 waves at a time.
void sortIntoWaves(const std::vector<TimedTransfer> &transfers, uint32_t tiles,
                   std::vector<PendingMessage> &order) {
  std::vector<std::vector<uint64_t>> sends(tiles), receives(tiles);
  auto word = [](const std::vector<uint64_t> &bits, size_t k) {
    return k < bits.size() ? bits[k] : 0;
  };
  auto mark = [](std::vector<uint64_t> &bits, uint32_t wave) {
    if (wave / 64 >= bits.size())
      bits.resize(wave / 64 + 1, 0);
    bits[wave / 64] |= uint64_t(1) << (wave % 64);
  };
  std::vector<uint32_t> wave(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const TimedTransfer &t = transfers[order[i].transfer];
    for (size_t k = 0;; ++k) {
      uint64_t busy = word(sends[t.source], k);
      for (uint32_t d : t.dests)
        busy |= word(receives[d], k);
      if (busy != ~uint64_t(0)) {
        wave[i] = uint32_t(k * 64 + __builtin_ctzll(~busy));
        break;
      }
    }
    mark(sends[t.source], wave[i]);
    for (uint32_t d : t.dests)
      mark(receives[d], wave[i]);
  }
  std::vector<uint32_t> index(order.size());
  for (uint32_t i = 0; i < index.size(); ++i)
    index[i] = i;
  std::sort(index.begin(), index.end(), [&](uint32_t a, uint32_t b) {
    if (order[a].events != order[b].events)
      return order[a].events > order[b].events;
    return wave[a] != wave[b] ? wave[a] < wave[b] : a < b;
  });
  std::vector<PendingMessage> sorted;
  sorted.reserve(order.size());
  for (uint32_t i : index)
    sorted.push_back(order[i]);
  order = std::move(sorted);
}

/// A message as placeTimed places it: words [offset, offset + words) of
/// transfer `transfer`, sent from event `start`. A quarter of a
/// TimedMessage, with no list of its own: at 500k messages the compact form
/// keeps two candidate schedules in flight without their copies of every
/// destination list.
struct PlacedMessage {
  int64_t start;
  uint32_t transfer, offset, words;
  bool paired;
};

/// Whether a tile's messages (those it sends and those it receives, each
/// taking an event of its own: timedLowerBound's event floor) outnumber
/// the words of the busiest path of any tile: a phase of many messages of
/// a word or two, bound by events rather than words.
bool boundByMessages(const ExchangeTimingModel &model,
                     const std::vector<TimedTransfer> &transfers) {
  std::vector<uint64_t> words(size_t(model.tiles) * 2, 0), messages(model.tiles, 0);
  for (const TimedTransfer &t : transfers) {
    const uint64_t parts = (t.words + model.maxMessageWords - 1) / model.maxMessageWords;
    words[t.source] += t.words;
    messages[t.source] += parts;
    for (uint32_t d : t.dests) {
      words[model.tiles + d] += t.words;
      messages[d] += parts;
    }
  }
  return *std::max_element(messages.begin(), messages.end()) >
         *std::max_element(words.begin(), words.end());
}

/// scheduleTimed's work: the placed messages in placement order, and the
/// phase's last event (the horizon timePhase reports).
std::vector<PlacedMessage> placeTimed(const ExchangeTimingModel &model,
                                      const std::vector<TimedTransfer> &transfers,
                                      TimedOrder placement, int64_t &horizon,
                                      bool skipBusyStarts = true) {
  size_t n = transfers.size();
  uint32_t tiles = model.tiles;
  std::vector<uint8_t> paired(n);
  std::vector<uint64_t> sent(tiles, 0), received(tiles, 0);
  std::vector<uint64_t> readUnits(tiles, 0), writeUnits(tiles, 0);
  bool anyPaired = false;
  auto unitsOf = [&](uint32_t address, uint32_t words) {
    uint32_t first = memoryUnit(model, address),
             last = memoryUnit(model, uint64_t(address) +
                                          uint64_t(words) * model.wordBytes -
                                          1);
    return (last >= 63 ? ~uint64_t(0) : (uint64_t(2) << last) - 1) &
           ~((uint64_t(1) << first) - 1);
  };
  for (size_t i = 0; i < n; ++i) {
    const TimedTransfer &t = transfers[i];
    assert(t.source < tiles && t.words > 0 && !t.dests.empty());
    paired[i] = pairedEligible(model, t);
    uint64_t events = transferEvents(t, paired[i]);
    sent[t.source] += events;
    for (uint32_t d : t.dests)
      received[d] += events;
    readUnits[t.source] |= unitsOf(t.sourceAddress, t.words);
    uint64_t written = unitsOf(t.destAddress, t.words);
    for (uint32_t d : t.dests)
      writeUnits[d] |= written;
    anyPaired |= paired[i];
  }
  for (uint32_t t = 0; t < tiles; ++t)
    readUnits[t] &= writeUnits[t];

  // Messages: transfers split at maxMessageWords (paired ones into
  // near-equal even parts, each still >= 128 words).
  std::vector<PendingMessage> order;
  order.reserve(n);
  const std::vector<uint64_t> &sharedUnits = readUnits;
  TimedScheduler scheduler(model, sharedUnits, anyPaired,
                           skipBusyStarts && boundByMessages(model, transfers));
  // Words of an unpaired message from `offset` on, cut where its source or
  // destination range crosses into another SRAM unit on a tile that both
  // reads and writes some unit in this phase: a part in another unit need
  // not wait for that tile's conflicting traffic, and shorter parts fill
  // the gaps it leaves (a GEMM's partials and their gathered copy packed
  // side by side where memory is tight: SigLIP MLP with f16 partials,
  // mm1.gather 1.35x -> 1.15x its bound, mm0.reduce 1.40x -> 1.26x).
  auto unitCut = [&](const TimedTransfer &t, uint32_t offset, uint32_t words) {
    auto cut = [&](uint64_t address, bool conflicts) {
      uint64_t next = nextUnitStart(model, address);
      if (conflicts && next < address + uint64_t(words) * model.wordBytes)
        words = uint32_t((next - address) / model.wordBytes);
    };
    bool receiverConflicts = false;
    for (uint32_t d : t.dests)
      receiverConflicts |= sharedUnits[d] != 0;
    cut(t.sourceAddress + uint64_t(offset) * model.wordBytes,
        sharedUnits[t.source] != 0);
    cut(t.destAddress + uint64_t(offset) * model.wordBytes, receiverConflicts);
    return words;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const TimedTransfer &t = transfers[i];
    uint64_t pressure = sent[t.source];
    for (uint32_t d : t.dests)
      pressure = std::max(pressure, received[d]);
    uint32_t parts =
        (t.words + model.maxMessageWords - 1) / model.maxMessageWords;
    uint32_t offset = 0;
    for (uint32_t part = 0; offset < t.words; ++part) {
      uint32_t words;
      if (paired[i]) {
        uint32_t items = t.words / 2;
        words = 2 * (items / parts + (part < items % parts ? 1 : 0));
      } else {
        words = unitCut(t, offset, std::min(model.maxMessageWords, t.words - offset));
      }
      bool pairedPart =
          paired[i] && scheduler.pairedRowsFit(t.source, t.dests, words);
      order.push_back({pairedPart ? words / 2 : words, pressure, i, words,
                       offset, pairedPart});
      offset += words;
    }
  }

  // Longest messages first (short ones fill the gaps they leave), then
  // those at the busiest endpoints, then in transfer order.
  std::sort(order.begin(), order.end(), [](const PendingMessage &a, const PendingMessage &b) {
    if (a.events != b.events)
      return a.events > b.events;
    if (a.pressure != b.pressure)
      return a.pressure > b.pressure;
    if (a.transfer != b.transfer)
      return a.transfer < b.transfer;
    return a.offset < b.offset;
  });
  if (placement == TimedOrder::MatchingWaves)
    sortIntoWaves(transfers, tiles, order);
  if (placement == TimedOrder::AsGiven)
    std::sort(order.begin(), order.end(), [](const PendingMessage &a, const PendingMessage &b) {
      return std::tie(a.transfer, a.offset) < std::tie(b.transfer, b.offset);
    });
  std::vector<PlacedMessage> placed;
  placed.reserve(order.size());
  for (const PendingMessage &m : order) {
    const TimedTransfer &t = transfers[m.transfer];
    uint32_t bytes = m.offset * model.wordBytes;
    int64_t start = scheduler.place(t.source, t.dests, m.words,
                                    t.sourceAddress + bytes,
                                    t.destAddress + bytes, m.paired);
    placed.push_back({start, m.transfer, m.offset, m.words, m.paired});
  }
  horizon = scheduler.horizon();
  return placed;
}

} // namespace

std::vector<TimedMessage>
ipu::scheduleTimed(const ExchangeTimingModel &model,
                   const std::vector<TimedTransfer> &transfers,
                   std::vector<uint32_t> *messageTransfers, TimedOrder placement,
                   bool skipBusyStarts) {
  int64_t horizon = 0;
  std::vector<PlacedMessage> placed =
      placeTimed(model, transfers, placement, horizon, skipBusyStarts);
  std::vector<TimedMessage> messages;
  messages.reserve(placed.size());
  for (const PlacedMessage &m : placed) {
    const TimedTransfer &t = transfers[m.transfer];
    uint32_t bytes = m.offset * model.wordBytes;
    messages.push_back({t.source, t.dests, m.words, m.start, t.sourceAddress + bytes,
                        t.destAddress + bytes, m.paired});
    if (messageTransfers)
      messageTransfers->push_back(m.transfer);
  }
  return messages;
}

PairingBound ipu::pairingLowerBound(const ExchangeTimingModel &model,
                                    const std::vector<TimedTransfer> &transfers) {
  // Constraint k < tiles is tile k's receive path, k >= tiles the send path
  // of tile k - tiles. With p_t in [0, 1] the share of a pairable transfer
  // t sent paired (W words, items W / 2):
  //   receive(v): H >= c_r(v) + sum over t into v of W (1 - p_t / 2)
  //                           + sum over t from partner(v) of p_t W / 2
  //     (v's mux windows and its partner's paired sends are disjoint: rule
  //     paired-partner), c_r(v) = min(57 + 2 row(v), latency): the later of
  //     the two kinds of window is followed by v's row tail or by a
  //     receiver row's end;
  //   send(v):    H >= latency + sum over t from v of W (1 - p_t / 2)
  //                           + sum over t from partner(v) of p_t W / 2
  //     (v's path carries its own sends and its partner's paired ones);
  //   pair(v, partner(v)):
  //               H >= min(c_r(v), c_r(partner)) + sum over t into the
  //                    pair of p_t W / 2 + sum over t from either of p_t W / 2
  //     (a paired stream into the pair holds both tiles' mux at once; a
  //     paired send of either holds the other's receive path and both send
  //     paths: so the three kinds of window are disjoint).
  // Any weights lambda >= 0 summing to 1 give the valid bound
  //   L(lambda) = min over p of sum_k lambda_k * constraint_k(p),
  // whose minimum takes each p_t at 0 or 1 by itself. Multiplicative
  // weights move lambda towards the constraints the minimising p violates
  // most; the largest L seen is kept.
  const uint32_t tiles = model.tiles;
  // Constraints: receive paths, send paths, then tile pairs (l >> 1).
  const size_t pairBase = 2 * size_t(tiles), constraints = pairBase + (tiles + 1) / 2;
  PairingBound result;
  int64_t latency = std::numeric_limits<int64_t>::max();
  std::vector<double> fixed(constraints, 0.0);
  struct Term {
    uint32_t constraint;
    double unpaired, paired; ///< Its load either way.
  };
  std::vector<Term> terms;
  std::vector<size_t> termBegin{0}; ///< Per pairable transfer.
  for (const TimedTransfer &t : transfers) {
    double w = t.words;
    if (!pairedEligible(model, t)) {
      fixed[tiles + t.source] += w;
      for (uint32_t d : t.dests)
        fixed[d] += w;
      continue;
    }
    uint32_t partner = logicalPartner(t.source);
    terms.push_back({tiles + t.source, w, w / 2});
    for (uint32_t d : t.dests)
      terms.push_back({d, w, w / 2});
    terms.push_back({partner, 0, w / 2});
    terms.push_back({tiles + partner, 0, w / 2});
    terms.push_back({uint32_t(pairBase + (t.source >> 1)), 0, w / 2});
    // Receivers come in complete pairs: charge each pair once.
    for (uint32_t d : t.dests)
      if (!(d & 1))
        terms.push_back({uint32_t(pairBase + (d >> 1)), 0, w / 2});
    termBegin.push_back(terms.size());
  }
  // Without a pairable transfer, timedLowerBound says all there is: the
  // compiler's phases mostly end here, before any route is looked at.
  if (terms.empty())
    return result;
  for (const TimedTransfer &t : transfers) {
    uint32_t s = c600PhysicalTile(t.source);
    for (uint32_t d : t.dests)
      latency = std::min(latency,
                         receiveOffsets(model, s, c600PhysicalTile(d), 1, false).end - 1);
  }
  latency = std::max<int64_t>(latency, 0);
  std::vector<double> constant(constraints, std::numeric_limits<double>::max());
  for (uint32_t v = 0; v < tiles; ++v) {
    int64_t tail = model.receivePointerDelay + model.receiveGuardEvents +
                   model.rowPhaseEvents * physicalRow(c600PhysicalTile(v));
    constant[v] = double(std::min(tail, latency));
    constant[tiles + v] = double(latency);
    // The pair's last window is a stream (its receiver's tail follows) or
    // a send (the latency follows, which is no less).
    constant[pairBase + (v >> 1)] = std::min(constant[pairBase + (v >> 1)], constant[v]);
  }
  size_t pairable = termBegin.size() - 1;
  std::vector<double> lambda(constraints), value(constraints);
  // Start on the constraints as loaded with every pairable transfer paired
  // half the time.
  for (size_t k = 0; k < lambda.size(); ++k)
    value[k] = constant[k] + fixed[k];
  for (const Term &term : terms)
    value[term.constraint] += (term.unpaired + term.paired) / 2;
  double best = 0, bestConstant = 0;
  // Rate and rounds: on the SigLIP attention's mm0.gather, 400 rounds at a
  // slowly decaying rate reach 855 path events, where the LP optimum of the
  // same relaxation (HiGHS) is 864.0 (825.5 without the pair constraints)
  // and every-transfer-paired charges 720.
  // Large phases get fewer rounds: about 4e7 term updates in all.
  const int rounds = int(std::clamp<size_t>(40'000'000 / std::max<size_t>(terms.size(), 1),
                                            20, 400));
  for (int round = 0; round <= rounds; ++round) {
    double top = *std::max_element(value.begin(), value.end());
    if (top <= 0)
      break;
    double rate = 4.0 / std::sqrt(1.0 + 0.05 * round);
    double sum = 0;
    for (size_t k = 0; k < lambda.size(); ++k)
      sum += lambda[k] = (round == 0 ? 1.0 : lambda[k]) *
                         std::exp(rate * (value[k] - top) / top);
    for (double &l : lambda)
      l /= sum;
    // L(lambda), and the constraints' values at its minimising p.
    double bound = 0, latencyPart = 0;
    for (size_t k = 0; k < lambda.size(); ++k) {
      bound += lambda[k] * (constant[k] + fixed[k]);
      latencyPart += lambda[k] * constant[k];
      value[k] = constant[k] + fixed[k];
    }
    for (size_t t = 0; t < pairable; ++t) {
      double unpaired = 0, paired = 0;
      for (size_t i = termBegin[t]; i < termBegin[t + 1]; ++i) {
        unpaired += lambda[terms[i].constraint] * terms[i].unpaired;
        paired += lambda[terms[i].constraint] * terms[i].paired;
      }
      bool pair = paired < unpaired;
      bound += pair ? paired : unpaired;
      for (size_t i = termBegin[t]; i < termBegin[t + 1]; ++i)
        value[terms[i].constraint] += pair ? terms[i].paired : terms[i].unpaired;
    }
    if (bound > best) {
      best = bound;
      bestConstant = latencyPart;
    }
  }
  // Floors, less a margin far above the sums' rounding error, keep the
  // bound at or below the exact L.
  auto below = [](double x) {
    return uint64_t(std::max(0.0, std::floor(x - 1e-9 * std::max(1.0, x))));
  };
  result.events = below(best - bestConstant);
  result.latency = below(bestConstant);
  result.bound = result.events + result.latency;
  return result;
}

uint64_t ipu::timedLowerBound(const ExchangeTimingModel &model,
                              const std::vector<TimedTransfer> &transfers) {
  // Five bounds, each a floor on the last receiver's end (memo 9.1 item
  // 5); events count paired-eligible transfers at two words per event.
  //  - endpoint: the busiest tile's events plus the least route latency,
  //    min over the phase's (s, d) of ttm + 58 + 2 row(d).
  //  - sender s: its messages are disjoint from event 0, so its last one
  //    ends sending at >= sent(s), and its receivers' rows end at least
  //    ttm + 58 + 2 row(d) later: sent(s) + that minimum over its (s, d).
  //  - receiver d: its streams are disjoint in mux time, the first source
  //    select at X >= 1 and X >= ttm(s, d) + 1 (S >= 0), and the last row
  //    ends 57 + 2 row(d) after the last stream's mux window (58 for
  //    paired): max(1, min ttm + 1) + received(d) + 57 + 2 row(d).
  //  - sender pair (s, partner): a paired message holds both their paths
  //    for half its words, an unpaired one its sender's for all of them,
  //    so between them the two paths carry both tiles' words at one word
  //    per event each whichever messages are paired: half their words plus
  //    the least latency of either.
  //  - events of tile t: each message it sends has its first event S on
  //    an event of its own (send-overlap), each unpaired stream it
  //    receives its source select X on one of its own (receive-overlap in
  //    mux time), and no receive control falls on a send's first events
  //    (send-start). So t needs sends + selects distinct events from 0
  //    on, the last at >= their count - 1, and a row ends at least
  //    latency + 1 after an S, and 1 + 57 + 2 row(t) after an X. Binding
  //    where tiles both send and receive many short messages.
  //    Pairable transfers count as sends only: a paired stream need not
  //    select at X.
  std::vector<uint64_t> sent(model.tiles, 0), received(model.tiles, 0);
  std::vector<uint64_t> sends(model.tiles, 0), selects(model.tiles, 0);
  std::vector<uint64_t> sentWords(model.tiles, 0);
  std::vector<int64_t> senderLatency(model.tiles, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> firstSelect(model.tiles, std::numeric_limits<int64_t>::max());
  int64_t latency = std::numeric_limits<int64_t>::max();
  for (const TimedTransfer &t : transfers) {
    const bool pairable = pairedEligible(model, t);
    uint64_t events = transferEvents(t, pairable);
    sent[t.source] += events;
    sentWords[t.source] += t.words;
    const uint64_t messages = (t.words + model.maxMessageWords - 1) / model.maxMessageWords;
    sends[t.source] += messages;
    if (!pairable)
      for (uint32_t d : t.dests)
        selects[d] += messages;
    uint32_t s = c600PhysicalTile(t.source);
    for (uint32_t d : t.dests) {
      received[d] += events;
      // Ordinary end - W - S = ttm + 1 + 52 + 2 row + 5 (also for W = 52);
      // paired end - items - S = pttm + 1 + 51 + 2 row + 7, no less.
      ReceiveTiming at =
          receiveOffsets(model, s, c600PhysicalTile(d), 1, false);
      latency = std::min(latency, at.end - 1);
      senderLatency[t.source] = std::min(senderLatency[t.source], at.end - 1);
      firstSelect[d] = std::min(firstSelect[d], std::max<int64_t>(at.sourceSelect, 1));
    }
  }
  if (latency == std::numeric_limits<int64_t>::max())
    return 0;
  uint64_t endpoint = 0;
  int64_t bound = 0;
  for (uint32_t t = 0; t < model.tiles; ++t) {
    endpoint = std::max({endpoint, sent[t], received[t]});
    if (sent[t])
      bound = std::max(bound, int64_t(sent[t]) + senderLatency[t]);
    uint32_t partner = logicalPartner(t);
    if (partner < model.tiles && (sentWords[t] || sentWords[partner]))
      bound = std::max(bound, int64_t((sentWords[t] + sentWords[partner] + 1) / 2) +
                                  std::min(senderLatency[t], senderLatency[partner]));
    int64_t tail = model.receivePointerDelay + model.receiveGuardEvents +
                   model.rowPhaseEvents * physicalRow(c600PhysicalTile(t));
    if (received[t])
      bound = std::max(bound, firstSelect[t] + int64_t(received[t]) + tail);
    if (sends[t] + selects[t]) {
      int64_t after = std::numeric_limits<int64_t>::max();
      if (sends[t])
        after = senderLatency[t] + 1;
      if (selects[t])
        after = std::min(after, 1 + tail);
      bound = std::max(bound, int64_t(sends[t] + selects[t]) - 1 + after);
    }
  }
  return std::max<uint64_t>(endpoint + uint64_t(std::max<int64_t>(latency, 0)),
                            uint64_t(std::max<int64_t>(bound, 0)));
}

//===----------------------------------------------------------------------===//
// The compiler's phases
//===----------------------------------------------------------------------===//

TransferAddresses ipu::packedAddresses(const TargetModel &target,
                                       const ExchangePhase &phase) {
  const uint32_t base = target.allocatableBase(MemoryClass::Standard);
  const uint32_t end = target.interleaved.end();
  std::vector<uint32_t> nextSend(phase.tiles, base), nextReceive(phase.tiles, base);
  TransferAddresses addresses;
  addresses.source.resize(phase.size());
  addresses.dest.resize(phase.size());
  for (uint32_t t = 0; t < phase.size(); ++t) {
    const uint32_t bytes = phase.words[t] * target.exchange.wordBytes;
    // A tile whose buffers would pass the end of its memory starts again at
    // the base: only the sharing of memory elements matters here.
    auto place = [&](uint32_t next) {
      return uint64_t(next) + bytes > end ? base : next;
    };
    const uint32_t source = phase.source[t];
    addresses.source[t] = place(nextSend[source]);
    nextSend[source] = addresses.source[t] + bytes;
    uint32_t dest = base;
    for (const uint32_t *d = phase.destinationsBegin(t), *e = phase.destinationsEnd(t);
         d != e; ++d)
      dest = std::max(dest, nextReceive[*d]);
    addresses.dest[t] = place(dest);
    for (const uint32_t *d = phase.destinationsBegin(t), *e = phase.destinationsEnd(t);
         d != e; ++d)
      nextReceive[*d] = addresses.dest[t] + bytes;
  }
  return addresses;
}

std::vector<uint64_t> ipu::localCopyBytes(const TargetModel &target,
                                          const ExchangePhase &phase) {
  std::vector<uint64_t> bytes(phase.tiles, 0);
  for (size_t t = 0; t < phase.size(); ++t)
    for (const uint32_t *d = phase.destinationsBegin(t), *e = phase.destinationsEnd(t);
         d != e; ++d)
      if (*d == phase.source[t])
        bytes[*d] += uint64_t(phase.words[t]) * target.exchangeWordBytes();
  return bytes;
}

std::vector<TimedMessage> ipu::timedMessages(const ExchangeTimingModel &model,
                                             const ExchangePhase &phase,
                                             const ExchangeSchedule &schedule,
                                             const TransferAddresses &addresses) {
  std::vector<TimedMessage> messages;
  messages.reserve(schedule.runs.size());
  for (const ExchangeRun &run : schedule.runs) {
    if (run.transfer >= phase.size())
      continue; // checkTimedSchedule reports it.
    const uint32_t source = phase.source[run.transfer];
    TimedMessage m;
    m.source = source;
    for (const uint32_t *d = phase.destinationsBegin(run.transfer),
                        *e = phase.destinationsEnd(run.transfer);
         d != e; ++d)
      if (*d != source)
        m.dests.push_back(*d);
    if (m.dests.empty())
      continue;
    const uint64_t offset = uint64_t(run.wordOffset) * model.wordBytes;
    m.words = run.words;
    m.start = run.start;
    m.sourceAddress = uint32_t(addresses.source[run.transfer] + offset);
    m.destAddress = uint32_t(addresses.dest[run.transfer] + offset);
    m.paired = run.paired;
    messages.push_back(std::move(m));
  }
  return messages;
}

namespace {

std::vector<TimedTransfer> timedTransfersOf(const ExchangePhase &phase,
                                            const TransferAddresses &addresses,
                                            bool paired,
                                            std::vector<uint32_t> &transferOf) {
  std::vector<TimedTransfer> transfers;
  transfers.reserve(phase.size());
  transferOf.clear();
  for (uint32_t t = 0; t < phase.size(); ++t) {
    TimedTransfer transfer;
    transfer.source = phase.source[t];
    transfer.words = phase.words[t];
    transfer.sourceAddress = addresses.source[t];
    transfer.destAddress = addresses.dest[t];
    transfer.paired = paired;
    for (const uint32_t *d = phase.destinationsBegin(t), *e = phase.destinationsEnd(t);
         d != e; ++d)
      if (*d != transfer.source)
        transfer.dests.push_back(*d);
    if (transfer.dests.empty())
      continue;
    transfers.push_back(std::move(transfer));
    transferOf.push_back(t);
  }
  return transfers;
}

} // namespace

namespace {

/// Phases up to this many transfers may be tried as waves of paired
/// messages: colouring costs about the square of the transfers per tile pair.
constexpr size_t kPairWaveTransfers = 20'000;
/// Conflicts (transfer pairs that share a tile pair) beyond which the
/// colouring is not tried.
constexpr uint64_t kPairWaveConflicts = 4'000'000;
/// Tabu moves per attempt at one colour fewer: SigLIP's f8 MLP mm1.gather
/// needs about 22,000 for its 11 colours (greedy: 15).
constexpr uint64_t kPairWaveMoves = 30'000;

/// Orders of `transfers` (indices) colour by colour, for colourings in
/// which two transfers that share a tile pair (logical l and l ^ 1) as
/// sender or receiver never share a colour: the colours in increasing,
/// decreasing and six strided orders (c * a mod K for a coprime with K;
/// within a colour, by index). Empty when the conflict graph is too large.
std::vector<std::vector<uint32_t>>
pairWaveOrders(const ExchangeTimingModel &model,
               const std::vector<TimedTransfer> &transfers) {
  const size_t n = transfers.size();
  std::vector<std::vector<uint32_t>> byPair((model.tiles + 1) / 2);
  for (uint32_t i = 0; i < n; ++i) {
    byPair[transfers[i].source >> 1].push_back(i);
    for (uint32_t d : transfers[i].dests)
      byPair[d >> 1].push_back(i);
  }
  uint64_t conflicts = 0;
  for (std::vector<uint32_t> &list : byPair) {
    list.erase(std::unique(list.begin(), list.end()), list.end());
    conflicts += uint64_t(list.size()) * list.size();
    if (conflicts > kPairWaveConflicts)
      return {};
  }
  std::vector<std::vector<uint32_t>> adjacency(n);
  for (const std::vector<uint32_t> &list : byPair)
    for (uint32_t a : list)
      for (uint32_t b : list)
        if (a != b)
          adjacency[a].push_back(b);
  for (std::vector<uint32_t> &list : adjacency) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  GraphColouring colouring = colourGraph(adjacency, kPairWaveMoves);
  const uint32_t colours = colouring.colours;
  std::vector<std::vector<uint32_t>> orders;
  auto addOrder = [&](auto rankOf) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return std::pair(rankOf(colouring.colour[a]), a) <
             std::pair(rankOf(colouring.colour[b]), b);
    });
    orders.push_back(std::move(order));
  };
  addOrder([](uint32_t c) { return c; });
  addOrder([&](uint32_t c) { return colours - 1 - c; });
  for (uint32_t stride = 2, added = 0; stride < colours && added < 6; ++stride)
    if (std::gcd(stride, colours) == 1) {
      addOrder([&](uint32_t c) { return c * stride % colours; });
      ++added;
    }
  return orders;
}

/// The schedule of a valid phase, every candidate tried.
ExchangeSchedule scheduleValidTimedPhase(const ExchangeTimingModel &model,
                                         const ExchangePhase &phase,
                                         const TransferAddresses &addresses) {
  std::vector<uint32_t> transferOf;
  std::vector<TimedTransfer> plain = timedTransfersOf(phase, addresses, false, transferOf);
  // Paired messages halve a sender's events but hold its partner's path,
  // and each order suits other phases: every candidate is scheduled (all
  // but the first on threads of their own) and the phase that ends first
  // kept; the choice depends only on the horizons. Only transfers that pass
  // every pairing rule (receivers in complete pairs, ...) can change when
  // paired; without one the paired candidates are the plain ones.
  bool anyEligible = false;
  for (const TimedTransfer &t : plain) {
    TimedTransfer asked = t;
    asked.paired = true;
    if ((anyEligible = pairedEligible(model, asked)))
      break;
  }
  std::vector<TimedTransfer> pairedTransfers;
  if (anyEligible) {
    pairedTransfers = plain;
    for (TimedTransfer &t : pairedTransfers)
      t.paired = true;
  }
  struct Candidate {
    const std::vector<TimedTransfer> *transfers;
    const std::vector<uint32_t> *transferOf; ///< Its transfers' in the phase.
    TimedOrder order;
    std::vector<PlacedMessage> messages;
    int64_t horizon = 0;
  };
  // MatchingWaves packs words into rounds; where a large phase is bound by
  // its events instead (a tile's send starts and source selects, an event
  // each, outnumber the words of its busiest path: many messages of a word
  // or two), it measured worse and slower, and beside the longest-first
  // placement on the other core it slows that one too (memory-bound).
  // bench/run exchange, uniform-1word-500k: 1,850 against 1,481 events,
  // 2.59 -> 1.69 s without it (medians of 3). On word-bound phases it can
  // win: all-to-all-707 2,027 against 2,191.
  constexpr size_t kMatchingWavesTransfers = 200'000;
  const bool wavesPack =
      plain.size() <= kMatchingWavesTransfers || !boundByMessages(model, plain);
  std::vector<Candidate> candidates;
  for (TimedOrder order : {TimedOrder::LongestFirst, TimedOrder::MatchingWaves}) {
    if (order == TimedOrder::MatchingWaves && !wavesPack)
      continue;
    candidates.push_back({&plain, &transferOf, order, {}, 0});
    if (anyEligible)
      candidates.push_back({&pairedTransfers, &transferOf, order, {}, 0});
  }
  auto run = [&](Candidate &c) {
    c.messages = placeTimed(model, *c.transfers, c.order, c.horizon);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < candidates.size(); ++i)
    threads.emplace_back(run, std::ref(candidates[i]));
  run(candidates.front());
  for (std::thread &thread : threads)
    thread.join();
  auto bestOf = [&] {
    Candidate *best = &candidates.front();
    for (Candidate &c : candidates)
      if (c.horizon < best->horizon)
        best = &c;
    return best;
  };
  // Then, where the greedy orders end more than 5% above the bound of the
  // phase sent unpaired, the transfers in the order an untimed edge
  // colouring starts them, placed in that order: many equal messages
  // between the same tiles fall into waves that greedy orders leave holes
  // in. It costs the colouring and a placement, so phases already close to
  // their bound, and the largest, go without it.
  constexpr size_t kColouringOrderTransfers = 200'000;
  std::vector<TimedTransfer> coloured;
  std::vector<uint32_t> colouredTransferOf;
  auto farAboveBound = [&] {
    const uint64_t bound = timedLowerBound(model, plain);
    return uint64_t(bestOf()->horizon) > bound + bound / 20;
  };
  if (plain.size() <= kColouringOrderTransfers && farAboveBound()) {
    ExchangeSchedule untimed = scheduleExact(phase);
    std::vector<uint32_t> firstStart(phase.size(), UINT32_MAX);
    for (const ExchangeRun &run : untimed.runs)
      firstStart[run.transfer] = std::min(firstStart[run.transfer], run.start);
    std::vector<uint32_t> rank(plain.size());
    for (uint32_t i = 0; i < rank.size(); ++i)
      rank[i] = i;
    std::sort(rank.begin(), rank.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(firstStart[transferOf[a]], a) < std::tie(firstStart[transferOf[b]], b);
    });
    coloured.reserve(plain.size());
    colouredTransferOf.reserve(plain.size());
    for (uint32_t i : rank) {
      coloured.push_back(plain[i]);
      colouredTransferOf.push_back(transferOf[i]);
    }
    candidates.push_back({&coloured, &colouredTransferOf, TimedOrder::AsGiven, {}, 0});
    run(candidates.back());
  }
  // Then, where pairing could shorten the phase much (the best so far ends
  // more than a quarter above the bound with every pairable transfer
  // paired), the transfers coloured so that two that share a tile pair
  // never share a colour (a paired message holds its sender's partner and
  // takes its receivers two by two), placed colour by colour and paired:
  // each colour is a wave of paired messages. Which colour order fits the
  // waves' route latencies and receiver row tails together best no cheap
  // measure predicts, so several are placed, in parallel, and the first of
  // the shortest kept. SigLIP MLP with f8 weights, mm1.gather (1,472
  // broadcasts of 538 words to 8 tiles): 4,421 events unpaired, 11 colours.
  std::vector<std::vector<uint32_t>> waveOrders;
  if (anyEligible && plain.size() <= kPairWaveTransfers) {
    const uint64_t pairedBound = timedLowerBound(model, pairedTransfers);
    if (uint64_t(bestOf()->horizon) > pairedBound + pairedBound / 4)
      waveOrders = pairWaveOrders(model, pairedTransfers);
  }
  std::vector<std::vector<TimedTransfer>> waves(waveOrders.size());
  std::vector<std::vector<uint32_t>> waveTransferOf(waveOrders.size());
  if (!waveOrders.empty()) {
    const size_t first = candidates.size();
    for (size_t k = 0; k < waveOrders.size(); ++k) {
      for (uint32_t i : waveOrders[k]) {
        waves[k].push_back(pairedTransfers[i]);
        waveTransferOf[k].push_back(transferOf[i]);
      }
      candidates.push_back({&waves[k], &waveTransferOf[k], TimedOrder::AsGiven, {}, 0});
    }
    std::vector<std::thread> waveThreads;
    for (size_t k = first + 1; k < candidates.size(); ++k)
      waveThreads.emplace_back(run, std::ref(candidates[k]));
    run(candidates[first]);
    for (std::thread &thread : waveThreads)
      thread.join();
  }
  Candidate *best = bestOf();
  ExchangeSchedule schedule;
  schedule.strategy = "timed";
  schedule.runs.reserve(best->messages.size());
  std::vector<bool> sent(phase.size(), false);
  for (const PlacedMessage &m : best->messages) {
    const uint32_t t = (*best->transferOf)[m.transfer];
    sent[t] = true;
    schedule.runs.push_back({t, m.offset, m.words, uint32_t(m.start), m.paired});
  }
  // Copies to the sender alone: one run each, at the phase entry.
  for (uint32_t t = 0; t < phase.size(); ++t)
    if (!sent[t])
      schedule.runs.push_back({t, 0, phase.words[t], 0, false});
  // Runs in transfer and word order: placement order is the scheduler's
  // business, and sorted runs make packages and IR easy to read and diff.
  std::sort(schedule.runs.begin(), schedule.runs.end(),
            [](const ExchangeRun &a, const ExchangeRun &b) {
              return std::tie(a.transfer, a.wordOffset) < std::tie(b.transfer, b.wordOffset);
            });
  return schedule;
}

/// scheduleTimedPhase's recent answers. A schedule is a function of the
/// model, the phase and its addresses alone, and the compiler asks for the
/// same phase again and again: the planner's finalists share phases, heads
/// repeat, placement prices phases before the scheduler does. The whole key
/// is compared, not just its hash. At most kCapacityWords (64 MiB) of keys
/// and schedules are kept, the oldest dropped first; a dropped entry is only
/// computed again.
class TimedScheduleCache {
public:
  static TimedScheduleCache &get() {
    static TimedScheduleCache cache;
    return cache;
  }

  static std::vector<uint32_t> keyOf(const ExchangeTimingModel &m,
                                     const ExchangePhase &phase,
                                     const TransferAddresses &addresses) {
    // Every field of the model; a new field must join the key.
    static_assert(sizeof(ExchangeTimingModel) == 34 * 4,
                  "a field was added to ExchangeTimingModel: key it here");
    std::vector<uint32_t> key = {
        m.tiles, m.rows, m.tilesPerRow, m.wordBytes, m.maxMessageWords,
        uint32_t(m.sourceSelectDelay), uint32_t(m.receivePointerDelay),
        m.rowPhaseEvents, m.earlyPointerWords, m.receiveGuardEvents,
        m.sendStartEvents, m.pairedMinWords, m.pairedAlignBytes,
        uint32_t(m.pairedFormatDelay), uint32_t(m.pairedPointerDelay),
        m.pairedGuardEvents, m.addressBits, uint32_t(m.maxEventOffset),
        uint32_t(uint64_t(m.maxEventOffset) >> 32), m.phaseFixedCycles,
        m.plannerLatencyEvents, m.plannerSendBytes, m.plannerReceiveBytes,
        m.plannerPhaseBytes, m.memoryElementBytes, m.interleavedBase,
        m.interleavedUnitBytes, m.instructionBytes, m.sendHeadWords,
        m.sendoffWords, m.delayMaxEvents, m.delaypicMaxEvents,
        m.delayxpicMaxEvents, phase.tiles, uint32_t(phase.size())};
    for (const std::vector<uint32_t> *part :
         {&phase.source, &phase.words, &phase.destBegin, &phase.destTiles,
          &addresses.source, &addresses.dest})
      key.insert(key.end(), part->begin(), part->end());
    return key;
  }

  std::optional<ExchangeSchedule> find(const std::vector<uint32_t> &key) {
    uint64_t hash = hashOf(key);
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry &e : entries)
      if (e.hash == hash && e.key == key)
        return e.schedule;
    return std::nullopt;
  }

  void insert(std::vector<uint32_t> key, const ExchangeSchedule &schedule) {
    if (sizeInWords(key, schedule) > kCapacityWords)
      return;
    uint64_t hash = hashOf(key);
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry &e : entries)
      if (e.hash == hash && e.key == key)
        return;
    words += sizeInWords(key, schedule);
    entries.push_back({hash, std::move(key), schedule});
    while (words > kCapacityWords) {
      words -= sizeInWords(entries.front().key, entries.front().schedule);
      entries.pop_front();
    }
  }

private:
  static constexpr size_t kCapacityWords = size_t(16) << 20;
  struct Entry {
    uint64_t hash;
    std::vector<uint32_t> key;
    ExchangeSchedule schedule;
  };
  static size_t sizeInWords(const std::vector<uint32_t> &key,
                            const ExchangeSchedule &schedule) {
    return key.size() + schedule.runs.size() * sizeof(ExchangeRun) / 4;
  }
  static uint64_t hashOf(const std::vector<uint32_t> &key) {
    uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a, a word at a time.
    for (uint32_t word : key)
      hash = (hash ^ word) * 0x100000001b3ull;
    return hash;
  }
  std::mutex mutex;
  std::deque<Entry> entries;
  size_t words = 0;
};

} // namespace

ExchangeSchedule ipu::scheduleTimedPhase(const TargetModel &target,
                                         const ExchangePhase &phase,
                                         const TransferAddresses &addresses,
                                         ScheduleReport *report) {
  const ExchangeTimingModel &model = target.exchange;
  if (phase.validate() || phase.tiles > model.tiles ||
      addresses.source.size() != phase.size() || addresses.dest.size() != phase.size()) {
    // Nothing to schedule: checkTimedSchedule says why.
    ExchangeSchedule none;
    none.strategy = "timed";
    if (report)
      report->strategy = none.strategy;
    return none;
  }
  TimedScheduleCache &cache = TimedScheduleCache::get();
  std::vector<uint32_t> key = TimedScheduleCache::keyOf(model, phase, addresses);
  std::optional<ExchangeSchedule> schedule = cache.find(key);
  if (!schedule) {
    schedule = scheduleValidTimedPhase(model, phase, addresses);
    cache.insert(std::move(key), *schedule);
  }
  if (report)
    *report = timedScheduleReport(target, phase, *schedule, addresses);
  return std::move(*schedule);
}

namespace {
/// Words the phase's tiles copy to themselves.
uint64_t localWordsOf(const ExchangePhase &phase) {
  uint64_t words = 0;
  for (uint32_t t = 0; t < phase.size(); ++t)
    for (const uint32_t *d = phase.destinationsBegin(t), *e = phase.destinationsEnd(t);
         d != e; ++d)
      if (*d == phase.source[t])
        words += phase.words[t];
  return words;
}
} // namespace

ScheduleReport ipu::timedScheduleReport(const TargetModel &target,
                                        const ExchangePhase &phase,
                                        const ExchangeSchedule &schedule,
                                        const TransferAddresses &addresses) {
  const ExchangeTimingModel &model = target.exchange;
  std::vector<TimedMessage> messages = timedMessages(target.exchange, phase, schedule, addresses);
  ScheduleReport report;
  report.transfers = phase.size();
  report.strategy = schedule.strategy;
  report.runs = schedule.runs.size();
  report.horizon = uint64_t(std::max<int64_t>(timePhase(model, messages).horizon, 0));
  // The bound of the same messages, each paired as the schedule sends it.
  std::vector<TimedTransfer> sent;
  sent.reserve(messages.size());
  std::vector<uint64_t> events(model.tiles, 0), received(model.tiles, 0);
  for (const TimedMessage &m : messages) {
    sent.push_back({m.source, m.dests, m.words, m.sourceAddress, m.destAddress, m.paired});
    report.pairedRuns += m.paired;
    events[m.source] += messageEvents(m);
    for (uint32_t d : m.dests)
      received[d] += messageEvents(m);
  }
  uint64_t bound = timedLowerBound(model, sent);
  // Paired messages also hold their partners' paths: the pair constraints
  // hold for the messages as sent (whatever else they could have been).
  if (report.pairedRuns)
    bound = std::max(bound, pairingLowerBound(model, sent).bound);
  // The bound must hold for every schedule the scheduler may choose, not
  // only this one: one that sends a pairable transfer unpaired (because
  // that candidate ended first) is measured against the phase with every
  // pairable transfer paired too, whichever bound is lower (their least
  // route latencies differ).
  std::vector<uint32_t> transferOf;
  std::vector<TimedTransfer> mayPair = timedTransfersOf(phase, addresses, true, transferOf);
  uint64_t pairedBound = timedLowerBound(model, mayPair);
  // Pairing where tiles also receive holds partners' paths: the bound with
  // each pairable transfer paired or not, whichever suits the phase, can be
  // higher than the one with every pairable transfer paired. Both hold for
  // every choice, so the higher of them does; the messages' own bound is
  // kept where it is lower still.
  PairingBound pairing = pairingLowerBound(model, mayPair);
  if (std::max(pairedBound, pairing.bound) < bound) {
    if (pairing.bound > pairedBound) {
      report.bound = std::min(pairing.bound, report.horizon);
      report.endpointEvents = pairing.events;
      report.latency = pairing.latency;
      report.localWords = localWordsOf(phase);
      return report;
    }
    bound = pairedBound;
    std::fill(events.begin(), events.end(), 0);
    std::fill(received.begin(), received.end(), 0);
    for (const TimedTransfer &t : mayPair) {
      uint64_t e = transferEvents(t, pairedEligible(model, t));
      events[t.source] += e;
      for (uint32_t d : t.dests)
        received[d] += e;
    }
  }
  report.bound = std::min(bound, report.horizon);
  for (uint32_t t = 0; t < model.tiles; ++t)
    report.endpointEvents = std::max({report.endpointEvents, events[t], received[t]});
  report.latency = bound > report.endpointEvents ? bound - report.endpointEvents : 0;
  report.localWords = localWordsOf(phase);
  return report;
}

std::optional<std::string>
ipu::checkTimedSchedule(const TargetModel &target, const ExchangePhase &phase,
                        const ExchangeSchedule &schedule,
                        const TransferAddresses &addresses) {
  if (std::optional<std::string> why = phase.validate())
    return "invalid phase: " + *why;
  if (addresses.source.size() != phase.size() || addresses.dest.size() != phase.size())
    return "the phase has " + to_string(phase.size()) + " transfers but " +
           to_string(addresses.source.size()) + " source and " +
           to_string(addresses.dest.size()) + " destination addresses";
  if (std::optional<std::string> why = checkScheduleCoverage(phase, schedule))
    return why;
  return checkTimedPhase(target.exchange, timedMessages(target.exchange, phase, schedule, addresses));
}

std::optional<std::string>
ipu::checkScheduleCoverage(const ExchangePhase &phase,
                           const ExchangeSchedule &schedule) {
  // Coverage: each transfer's runs tile [0, words) exactly.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> pieces(phase.size());
  for (size_t r = 0; r < schedule.runs.size(); ++r) {
    const ExchangeRun &run = schedule.runs[r];
    if (run.transfer >= phase.size())
      return "run " + to_string(r) + " names transfer " + to_string(run.transfer) +
             " of " + to_string(phase.size());
    if (run.words == 0)
      return "run " + to_string(r) + " of transfer " + to_string(run.transfer) +
             " sends no word";
    if (uint64_t(run.wordOffset) + run.words > phase.words[run.transfer])
      return "run " + to_string(r) + " sends words [" + to_string(run.wordOffset) +
             ", " + to_string(uint64_t(run.wordOffset) + run.words) + ") of transfer " +
             to_string(run.transfer) + ", which has " +
             to_string(phase.words[run.transfer]);
    pieces[run.transfer].push_back({run.wordOffset, run.words});
  }
  for (uint32_t t = 0; t < phase.size(); ++t) {
    std::vector<std::pair<uint32_t, uint32_t>> &list = pieces[t];
    std::sort(list.begin(), list.end());
    uint64_t covered = 0;
    for (auto [offset, words] : list) {
      if (offset != covered)
        return "transfer " + to_string(t) + " (tile " + to_string(phase.source[t]) +
               "): word " + to_string(std::min<uint64_t>(offset, covered)) +
               (offset < covered ? " is sent twice" : " is never sent");
      covered += words;
    }
    if (covered != phase.words[t])
      return "transfer " + to_string(t) + " (tile " + to_string(phase.source[t]) +
             "): word " + to_string(covered) + " is never sent";
  }
  for (const ExchangeRun &run : schedule.runs) {
    bool toOthers = false;
    for (const uint32_t *d = phase.destinationsBegin(run.transfer),
                        *e = phase.destinationsEnd(run.transfer);
         d != e; ++d)
      toOthers |= *d != phase.source[run.transfer];
    if (!toOthers && (run.start != 0 || run.paired))
      return "transfer " + to_string(run.transfer) + " (tile " +
             to_string(phase.source[run.transfer]) +
             ") only copies to its own source: its run is a local copy, at "
             "event 0 and not paired";
  }
  return std::nullopt;
}

TimedPhaseCost ipu::timedPhaseCost(const TargetModel &target,
                                   const ExchangePhase &phase,
                                   const ExchangeSchedule &schedule,
                                   const TransferAddresses &addresses) {
  TimedPhaseCost cost;
  cost.timing = timePhase(target.exchange, timedMessages(target.exchange, phase, schedule, addresses));
  std::vector<uint64_t> local = localCopyBytes(target, phase);
  cost.localCopyCycles =
      target.localCopyCycles(local.empty() ? 0 : *std::max_element(local.begin(), local.end()));
  cost.cycles = cost.timing.cycles + cost.localCopyCycles;
  return cost;
}

TimedPhaseCost ipu::plannedPhaseCost(const TargetModel &target,
                                     const ExchangePhase &phase,
                                     ScheduleReport *report) {
  return plannedPhaseCost(target, phase, packedAddresses(target, phase), report);
}

TimedPhaseCost ipu::plannedPhaseCost(const TargetModel &target,
                                     const ExchangePhase &phase,
                                     const TransferAddresses &addresses,
                                     ScheduleReport *report) {
  ExchangeSchedule schedule = scheduleTimedPhase(target, phase, addresses, report);
  return timedPhaseCost(target, phase, schedule, addresses);
}
