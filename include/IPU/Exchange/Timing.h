//===- Timing.h - Event-level timing model of one IPU21 exchange phase ---===//
//
// A cycle-level model of one exchange phase on a C600 (IPU21) chip, in plain
// C++, independent of Phase.h's word-per-cycle model. Its facts come from the
// user's hardware-validated stack (osmarks/ipu-stack at ce7c7e9, whose
// scheduler matched measured exchange time within 2.6 %), as summarised in
// docs/research/ipu21-exchange.md; the comments in Timing.cpp cite the file
// of that stack each rule comes from.
//
// Time is counted in exchange events (one 32-bit word per tile and direction
// per event) from the phase-entry sync. A message sends `words` words from
// one source tile, from event `start` (S) on, to one or more destination
// tiles. Each receiver d of a message from s is driven by timed controls on
// d's own instruction stream:
//
//   X_d = S + ttm(s, d) + 1          source select (XPIC); ttm may be < 0
//   X_d + W                          neutral select, unless the next stream's
//                                    X lands exactly there (cutover)
//   P_d = X_d + 52 + 2 * row(d)      pointer write (PIC) = first memory write
//                                    (51 for W = 52); omitted when the
//                                    destination continues the previous
//                                    stream into this tile
//   end_d = P_d + W + 5              end of the receiver's row (guard; 6 for
//                                    W = 52, so end_d = X_d + W + 57 + 2 row)
//
// A paired (64-bit) message moves two words per event through the sender's
// and its partner tile's paths; its receivers are complete tile pairs. Its
// source select is X_d = S + pttm(s, d) + max(1 - m_p, 0) - max(-m_o, 0),
// m_p and m_o the least paired and ordinary ttm over its receivers, and
// each member holds its mux until the format-off write (Timing.cpp).
//
// Tile ids in messages are logical ids of the C600 mapping; latency, rows
// and pairs are computed on physical ids.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_TIMING_H
#define IPU_EXCHANGE_TIMING_H

#include "IPU/Exchange/Phase.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// The C600 chip with all 1472 tiles.
ExchangeTimingModel ipu21ExchangeTiming();
/// The same chip restricted to its first `tiles` logical tiles (1..1472),
/// for small tests: latencies stay those of the full chip.
ExchangeTimingModel ipu21ExchangeTimingWithTiles(uint32_t tiles);

//===----------------------------------------------------------------------===//
// Topology (C600)
//===----------------------------------------------------------------------===//

/// Physical id of a logical tile (snake mapping); a permutation of 0..1471.
uint32_t c600PhysicalTile(uint32_t logical);
/// Inverse of c600PhysicalTile.
uint32_t c600LogicalTile(uint32_t physical);
/// The exchange partner of a physical tile: p ^ 2 (logical l ^ 1).
inline uint32_t physicalPartner(uint32_t physical) { return physical ^ 2; }
inline uint32_t logicalPartner(uint32_t logical) { return logical ^ 1; }
/// Physical row, 0..22.
inline uint32_t physicalRow(uint32_t physical) { return physical >> 6; }
/// Time to mux ttm(s, d) on physical ids, in events (-78..112 on C600).
int timeToMux(uint32_t sourcePhysical, uint32_t destPhysical);
/// Paired receivers share max(ttm(s, d), ttm(s, d ^ 2)).
int pairedTimeToMux(uint32_t sourcePhysical, uint32_t destPhysical);

//===----------------------------------------------------------------------===//
// Timed phases
//===----------------------------------------------------------------------===//

struct TimedMessage {
  uint32_t source;            ///< Logical tile.
  std::vector<uint32_t> dests; ///< Logical tiles.
  uint32_t words;             ///< 32-bit words (even for paired).
  int64_t start;              ///< S: event of the first send.
  uint32_t sourceAddress;     ///< Byte address on the source.
  uint32_t destAddress;       ///< Byte address on every destination.
  bool paired = false;        ///< 64-bit: words / 2 events.
};

/// Timing of one receiver of a message, before neighbouring streams are
/// known (omitted controls are still listed here).
struct ReceiveTiming {
  int64_t sourceSelect; ///< X (paired: the pair's shared source event).
  int64_t pointer;      ///< P: the pointer write, first memory write.
  int64_t end;          ///< Receiver row end; write window is [P, end).
  uint32_t events;      ///< Mux and write windows: [X, X+events), [P, ...).
  int64_t format = -1;  ///< Paired: F, the format-on write (F + events off).
  bool early = false;   ///< Paired: this member issues the XPIC controls.
  /// The receive mux is held during [muxStart, muxEnd): [X, X + events);
  /// paired, from X (early member) or F (late member) to format-off
  /// F + events (the stack's scheduled_receive_window).
  int64_t muxStart = 0, muxEnd = 0;
};
/// Receiver `dest` of `message` (a logical tile of the model).
ReceiveTiming receiveTiming(const ExchangeTimingModel &model,
                            const TimedMessage &message, uint32_t dest);
/// Events a message's sender is busy: words, or words / 2 when paired.
uint32_t messageEvents(const TimedMessage &message);

/// Checks every rule of Timing.cpp's list; returns the first refusal as
/// "rule NAME: tile T ... cycle C ...", or nothing when the phase is legal.
std::optional<std::string>
checkTimedPhase(const ExchangeTimingModel &model,
                const std::vector<TimedMessage> &messages);

struct PhaseTiming {
  int64_t horizon = 0;        ///< Latest receiver end or sender end.
  int64_t cycles = 0;         ///< horizon + phaseFixedCycles (0 if empty).
  uint64_t pointerEvents = 0; ///< PIC-class controls (pointer, format).
  uint64_t sourceEvents = 0;  ///< XPIC-class controls (source, neutral).
  /// Exchange code of all tiles, estimated as memo 6 counts it: 4 bytes per
  /// instruction word (sends cut at the controls inside them, controls
  /// outside messages, delays for long gaps), 8 per sendpicp, a return.
  uint64_t codeBytes = 0;
  /// The same per tile (a tile without a part still has its return word).
  std::vector<uint32_t> codeBytesPerTile;
};
/// Timing of a phase that checkTimedPhase accepts.
PhaseTiming timePhase(const ExchangeTimingModel &model,
                      const std::vector<TimedMessage> &messages);

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

/// What the scheduler places: any number of words (split into messages of
/// at most maxMessageWords), a request for paired 64-bit messages that is
/// honoured where the pairing rules allow it.
struct TimedTransfer {
  uint32_t source;
  std::vector<uint32_t> dests;
  uint32_t words;
  uint32_t sourceAddress;
  uint32_t destAddress;
  bool paired = false;
};

/// The order in which scheduleTimed places messages.
enum class TimedOrder : uint8_t {
  /// Longest first; ties: busiest endpoint, then transfer order.
  LongestFirst,
  /// Longest first; among messages of one length, in waves: the first wave
  /// in which neither the sender nor any receiver has a message yet (a
  /// greedy edge colouring of the sender x receiver graph, in longest-first
  /// order). A wave is close to a matching, which the placer packs back to
  /// back: the user's stack's "matching waves" for balanced phases.
  MatchingWaves,
  /// The transfers in the order given, each one's messages in word order:
  /// scheduleTimedPhase gives them in the order an untimed edge colouring
  /// (scheduleExact) starts them, which packs many equal messages between
  /// the same tiles into near-perfect waves where greedy orders leave holes
  /// (SigLIP MLP batch 8, mm1.gather: 15,320 -> 10,055 events, bound 9,760).
  AsGiven,
};

/// Greedy scheduler: transfers are split into messages of at most
/// maxMessageWords (contiguous addresses, so back-to-back parts need one
/// pointer), then placed in `order`, each at the earliest start that keeps
/// every rule given the messages placed before it, gaps included. Expects
/// transfers whose messages pass the per-message rules (tiles, endpoints,
/// alignment, addresses); returns messages that checkTimedPhase accepts, in
/// placement order.
/// `messageTransfers`, when given, receives each message's transfer index.
/// `skipBusyStarts` lets a phase bound by its messages' events rule out
/// busy starts 64 at a time before the exact search (the same schedule,
/// sooner); false is for tests that hold the two equal.
std::vector<TimedMessage>
scheduleTimed(const ExchangeTimingModel &model,
              const std::vector<TimedTransfer> &transfers,
              std::vector<uint32_t> *messageTransfers = nullptr,
              TimedOrder order = TimedOrder::LongestFirst, bool skipBusyStarts = true);

/// A lower bound of the horizon of every legal schedule of `transfers`
/// (paired-eligible transfers counted at two words per event), the largest
/// of: the most events any tile sends or receives plus the least latency
/// from a send to the end of a receiver row, min over the phase's (s, d) of
/// ttm + 58 + 2 row(d); per sender, its events plus that least latency over
/// its own receivers; per receiver d, its events plus its earliest source
/// select, max(1, min ttm + 1), plus 57 + 2 row(d) (memo 9.1 item 5); per
/// pair of partner tiles, half the words both send (their two paths carry
/// them at a word per event each, paired or not) plus the least latency of
/// either; per tile, one event of its own for each message it sends and
/// each unpaired stream it receives (send starts and source selects never
/// share an event), plus the latency after the last of them.
uint64_t timedLowerBound(const ExchangeTimingModel &model,
                         const std::vector<TimedTransfer> &transfers);

/// A lower bound that holds whichever pairable transfers (`paired` set and
/// pairedEligible) are sent paired, where a paired send also holds its
/// sender's partner's paths: its send path, and its receive path, which
/// may carry no stream meanwhile (rule paired-partner). So a tile pair's
/// paired streams in, and both members' paired sends, never overlap. A
/// weighted sum of per-tile and per-pair constraints, minimised over every
/// pairing choice (see Timing.cpp); `events` is what it charges the paths,
/// `latency` the rest.
struct PairingBound {
  uint64_t bound = 0, events = 0, latency = 0;
};
PairingBound pairingLowerBound(const ExchangeTimingModel &model,
                               const std::vector<TimedTransfer> &transfers);

//===----------------------------------------------------------------------===//
// The compiler's phases (ExchangePhase) under the timing model
//===----------------------------------------------------------------------===//
//
// A transfer whose destinations include its source tile moves no word over
// the exchange to that tile (the hardware refuses a message to its own
// sender): the tile copies the words itself, a local copy the phase pays as
// TargetModel::localCopyCycles. A schedule's runs keep ExchangeRun's shape,
// with `start` the event of the message's first send and `paired` its
// 64-bit form; a run of a transfer that only copies to its own source is
// that local copy and carries no message.

// TransferAddresses (Phase.h): each transfer's source and destination
// byte addresses.

/// Addresses as an allocator packs a phase's buffers before the real
/// placement is known (the planner, benchmarks): per tile from the bottom
/// of the model's memory, a multicast at the furthest of its receivers'
/// next free addresses.
TransferAddresses packedAddresses(const TargetModel &target,
                                  const ExchangePhase &phase);

/// Bytes each tile copies to itself.
std::vector<uint64_t> localCopyBytes(const TargetModel &target,
                                     const ExchangePhase &phase);

/// The messages of `schedule`, one per run that sends to another tile.
std::vector<TimedMessage> timedMessages(const ExchangeTimingModel &model,
                                        const ExchangePhase &phase,
                                        const ExchangeSchedule &schedule,
                                        const TransferAddresses &addresses);

/// Schedules `phase` with scheduleTimed in LongestFirst and MatchingWaves,
/// with and without paired messages; (up to 200k transfers, more than 5%
/// above the unpaired bound) unpaired AsGiven in the order scheduleExact
/// starts the transfers; and (up to 20k transfers, more than 25% above the
/// bound with every pairable transfer paired) paired AsGiven in waves of a
/// colouring in which transfers sharing a tile pair never share a colour,
/// in eight colour orders. Keeps the schedule whose phase ends first (ties:
/// the first tried). Fills `report` as timedScheduleReport does (strategy
/// "timed"), in events from the phase-entry sync. Expects a phase that
/// passed validate().
ExchangeSchedule scheduleTimedPhase(const TargetModel &target,
                                    const ExchangePhase &phase,
                                    const TransferAddresses &addresses,
                                    ScheduleReport *report = nullptr);

/// Every word of every transfer in exactly one run (of a valid phase), and
/// a transfer that only copies to its own source in one run at event 0.
std::optional<std::string> checkScheduleCoverage(const ExchangePhase &phase,
                                                 const ExchangeSchedule &schedule);

/// The report of a timed schedule: `bound` is the lower of the bound of its
/// messages (paired as it sends them: timedLowerBound, and with any paired,
/// pairingLowerBound too) and of what holds for every
/// pairing of the phase's pairable transfers (the higher of timedLowerBound
/// with all of them paired and pairingLowerBound), so that it holds for any
/// schedule the scheduler could choose; `horizon` is its last receiver end.
ScheduleReport timedScheduleReport(const TargetModel &target,
                                   const ExchangePhase &phase,
                                   const ExchangeSchedule &schedule,
                                   const TransferAddresses &addresses);

/// Every word of every transfer in exactly one run, then every rule of
/// checkTimedPhase on the messages. Names the transfer, tile, cycle and
/// rule at fault.
std::optional<std::string>
checkTimedSchedule(const TargetModel &target, const ExchangePhase &phase,
                   const ExchangeSchedule &schedule,
                   const TransferAddresses &addresses);

/// What one phase costs as the simulator charges it.
struct TimedPhaseCost {
  PhaseTiming timing;           ///< Of its messages.
  uint64_t localCopyCycles = 0; ///< Its tiles' copies to themselves.
  /// timing.cycles (horizon + the phase's fixed cost, none without a
  /// message) + localCopyCycles.
  uint64_t cycles = 0;
};
/// The cost of a schedule that checkTimedSchedule accepts.
TimedPhaseCost timedPhaseCost(const TargetModel &target,
                              const ExchangePhase &phase,
                              const ExchangeSchedule &schedule,
                              const TransferAddresses &addresses);

/// Schedules `phase` on packed addresses and prices it, for the planner.
TimedPhaseCost plannedPhaseCost(const TargetModel &target,
                                const ExchangePhase &phase,
                                ScheduleReport *report = nullptr);
/// The same on the addresses given.
TimedPhaseCost plannedPhaseCost(const TargetModel &target,
                                const ExchangePhase &phase,
                                const TransferAddresses &addresses,
                                ScheduleReport *report = nullptr);

} // namespace ipu

#endif // IPU_EXCHANGE_TIMING_H
