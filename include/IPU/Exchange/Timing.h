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
// and its partner tile's paths; its receivers are complete tile pairs.
//
// Tile ids in messages are logical ids of the C600 mapping; latency, rows
// and pairs are computed on physical ids.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_TIMING_H
#define IPU_EXCHANGE_TIMING_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// Constants of the timing model, each with its source. "stack" is the
/// user's hardware-validated stack, osmarks/ipu-stack; "memo N" the section
/// of docs/research/ipu21-exchange.md that restates it.
struct ExchangeTimingModel {
  /// Logical tiles 0..tiles-1 in use (C600: 1472; stack topology.rs).
  uint32_t tiles = 1472;
  /// Physical rows; row = p >> 6 (stack topology.rs, memo 1.1).
  uint32_t rows = 23;
  /// Physical id = row * 64 + slot (stack topology.rs, memo 1.1).
  uint32_t tilesPerRow = 64;
  /// One 32-bit word per tile, direction and event (Poplar
  /// Target::getExchangeBytesPerCycle, stack cost.rs, memo 6).
  uint32_t wordBytes = 4;
  /// Message size limit, MAX_TRANSFER_WORDS (stack ipu-target exchange.rs,
  /// memo 3.1): W - 53 fills the 12-bit delayxpic field.
  uint32_t maxMessageWords = 4148;
  /// X = S + ttm + 1 (stack exchange.rs primitive rows, memo 1.4).
  int32_t sourceSelectDelay = 1;
  /// P = X + 52 + 2 row(d) (stack exchange.rs primitive rows, memo 1.4).
  int32_t receivePointerDelay = 52;
  /// The 2 row(d) "receiver phase" (stack exchange.rs, memo 1.4).
  uint32_t rowPhaseEvents = 2;
  /// For W = 52, P is one event earlier and the guard one longer (stack
  /// exchange.rs, memo 1.4 and 2.5).
  uint32_t earlyPointerWords = 52;
  /// Receiver row end = P + W + 5 (stack scheduled_receive_window, memo 2.5).
  uint32_t receiveGuardEvents = 5;
  /// No receive control on a message's first 2 events (stack
  /// earliest_sender_offset, "unencodable initial send control", memo 3.1).
  uint32_t sendStartEvents = 2;
  /// Paired messages carry >= 64 64-bit items (stack paired_multicast,
  /// memo 4).
  uint32_t pairedMinWords = 128;
  /// Paired source, destination: 8-byte aligned (stack codegen, memo 4).
  uint32_t pairedAlignBytes = 8;
  /// Paired format-on F = X + 51 + 2 row(d) (stack paired_receiver_row,
  /// memo 4; their oracle: events 1, 54, 56, 65, 118, horizon 125).
  int32_t pairedFormatDelay = 51;
  /// Paired pointer write at F + 2 (stack paired_receiver_row, memo 4).
  int32_t pairedPointerDelay = 2;
  /// Paired receiver row end = F + items + 7 (stack paired_receiver_row).
  uint32_t pairedGuardEvents = 7;
  /// Addresses are 18-bit word fields: byte addresses below 2^20 (stack
  /// instruction.rs encodings, memo 3.4).
  uint32_t addressBits = 20;
  /// Latest event offset accepted. Assumption: delays chain (memo 3.4,
  /// MAX_PLAN_OFFSET_CYCLES per word), so only the int32 range limits it.
  int64_t maxEventOffset = 0x7fffffff;
  /// Fixed cost per phase, Poplar Target::getGlobalSyncCycles (stack cost.rs
  /// exchange_phase_cycles, memo 6).
  uint32_t phaseFixedCycles = 600;
  /// SRAM conflict unit below interleavedBase: one 16 KiB element
  /// TMEM_ELEMSIZE (stack ipu-target memory.rs, memo 5.1).
  uint32_t memoryElementBytes = 16384;
  /// Start of region 1, interleaved (stack memory.rs, memo 5.1).
  uint32_t interleavedBase = 0x80000;
  /// Conflict unit in region 1: two elements (stack memory_elements_for_words,
  /// memo 5.1).
  uint32_t interleavedUnitBytes = 32768;
  /// Code estimate: bytes per instruction word; sendpicp is 2 words (stack
  /// instruction.rs, memo 3.4 and 6).
  uint32_t instructionBytes = 4;
  /// Words of a send / sendpic / sendpicp chunk (6-bit count, memo 3.4).
  uint32_t sendHeadWords = 64;
  /// Words of a sendoff chunk (12-bit count, memo 3.4).
  uint32_t sendoffWords = 4096;
  /// Events of one delay word (19-bit field, memo 3.4).
  uint32_t delayMaxEvents = 524288;
  /// Events of a delaypic advance (7-bit field, memo 2.6).
  uint32_t delaypicMaxEvents = 128;
  /// Events of a delayxpic advance (12-bit field, memo 2.6).
  uint32_t delayxpicMaxEvents = 4096;
};

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

/// Greedy scheduler: transfers are split into messages of at most
/// maxMessageWords (contiguous addresses, so back-to-back parts need one
/// pointer), then placed longest first (ties: busiest endpoint, transfer
/// order), each at the earliest start that keeps every rule given the
/// messages placed before it, gaps included. Expects transfers whose
/// messages pass the per-message rules (tiles, endpoints, alignment,
/// addresses); returns messages that checkTimedPhase accepts, in placement
/// order.
std::vector<TimedMessage>
scheduleTimed(const ExchangeTimingModel &model,
              const std::vector<TimedTransfer> &transfers);

/// A lower bound of the horizon of every legal schedule of `transfers`:
/// the most events any tile sends or receives (paired-eligible transfers
/// counted at two words per event) plus the least latency from a send to the
/// end of a receiver row, min over the phase's (s, d) of ttm + 58 + 2 row(d).
uint64_t timedLowerBound(const ExchangeTimingModel &model,
                         const std::vector<TimedTransfer> &transfers);

} // namespace ipu

#endif // IPU_EXCHANGE_TIMING_H
