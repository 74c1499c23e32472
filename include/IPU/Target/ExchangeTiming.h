//===- ExchangeTiming.h - Constants of the IPU21 exchange timing model ---===//
//
// The constants of the event-level exchange model (IPU/Exchange/Timing.h),
// each with its source. A TargetModel holds one (TargetModel::exchange), so
// that every number of the machine stays in the target description; the
// model's functions live in lib/Exchange.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TARGET_EXCHANGETIMING_H
#define IPU_TARGET_EXCHANGETIMING_H

#include <cstdint>

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
  /// A paired multicast's earliest source select is on event 1: its
  /// receivers' rows shift by max(1 - m_p, 0), m_p the least pttm(s, r),
  /// and its sender row starts at max(-m_o, 0), m_o the least ttm(s, r);
  /// so X = S + pttm(s, d) + max(1 - m_p, 0) - max(-m_o, 0) (stack
  /// exchange.rs paired_receiver_row epoch_shift :2217 and multicast
  /// natural_start :2384, at ce7c7e9; checked on 384 paired receivers of
  /// the SigLIP attention, block and tower, issue 45).
  int32_t pairedFirstSourceEvent = 1;
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
  /// The planner's route latency per phase, before a schedule exists:
  /// Poplar Target::getMaxIPUSyncDelay, which the user's stack charged per
  /// transfer until its topology-aware schedule replaced it (memo 6).
  uint32_t plannerLatencyEvents = 126;
  /// The planner's exchange code per message a tile sends (a send and a
  /// delay word), per message it receives (source, pointer and neutral
  /// controls) and per phase (the return). Assumption, from memo 6's
  /// instruction count; placement sizes the real code from schedules.
  uint32_t plannerSendBytes = 8;
  uint32_t plannerReceiveBytes = 12;
  uint32_t plannerPhaseBytes = 4;
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

} // namespace ipu

#endif // IPU_TARGET_EXCHANGETIMING_H
