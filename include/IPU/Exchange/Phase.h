//===- Phase.h - One bulk-synchronous exchange phase as plain data -------===//
//
// A phase is a set of transfers. Each transfer moves `words` 32-bit words
// from one source tile to one or more destination tiles; a word sent once is
// received by every destination in the same cycle (broadcast). Destinations
// are stored compressed (CSR) so that 500k transfers stay cheap.
//
// A schedule is a list of runs: a run sends words [wordOffset, wordOffset +
// words) of one transfer, one word per cycle starting at `start`. Each word
// lands `latency` cycles after it is sent. A schedule is legal when every
// word of every transfer is sent exactly once and no tile sends two words, or
// receives two words, in one cycle.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_PHASE_H
#define IPU_EXCHANGE_PHASE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct ExchangePhase {
  uint32_t tiles = 0;
  std::vector<uint32_t> source;      ///< Per transfer: source tile.
  std::vector<uint32_t> words;       ///< Per transfer: 32-bit words.
  std::vector<uint32_t> destBegin{0}; ///< CSR offsets, size transfers + 1.
  std::vector<uint32_t> destTiles;   ///< Destination tiles, flattened.

  size_t size() const { return source.size(); }
  /// Appends a transfer; returns its index.
  uint32_t addTransfer(uint32_t sourceTile, uint32_t wordCount,
                       const uint32_t *destinations, size_t destinationCount);
  uint32_t addTransfer(uint32_t sourceTile, uint32_t wordCount,
                       const std::vector<uint32_t> &destinations) {
    return addTransfer(sourceTile, wordCount, destinations.data(),
                       destinations.size());
  }
  const uint32_t *destinationsBegin(size_t transfer) const {
    return destTiles.data() + destBegin[transfer];
  }
  const uint32_t *destinationsEnd(size_t transfer) const {
    return destTiles.data() + destBegin[transfer + 1];
  }
  /// Words sent by each tile (a broadcast word counted once).
  std::vector<uint64_t> wordsSentPerTile() const;
  /// Words received by each tile.
  std::vector<uint64_t> wordsReceivedPerTile() const;
  /// Structural check: tiles in range, CSR consistent, no empty transfer,
  /// no duplicate destination (a tile may receive its own transfer).
  /// Returns an error message or nothing.
  std::optional<std::string> validate() const;
};

/// Endpoint lower bound: the most words any tile must send or receive.
/// Byte addresses of each transfer of a phase: on its source, and on every
/// destination (the same on all of them).
struct TransferAddresses {
  std::vector<uint32_t> source, dest;
};

uint64_t endpointLowerBound(const ExchangePhase &phase);

/// A lower bound at least the endpoint bound that also sees broadcasts: two
/// transfers conflict when they share the source or any destination tile,
/// and the words of pairwise conflicting transfers (a clique) need that many
/// cycles. Returns the heaviest clique found among the sender and receiver
/// stars of every tile, each grown greedily by transfers that conflict with
/// all of its members. Equal to endpointLowerBound on unicast phases (there
/// every clique is a star, and König reaches it). Expects a valid phase.
uint64_t broadcastLowerBound(const ExchangePhase &phase);

struct ExchangeRun {
  uint32_t transfer;
  uint32_t wordOffset;
  uint32_t words;
  uint32_t start; ///< Cycle (timed: event) the first word is sent.
  bool paired = false; ///< Timed: a 64-bit message, two words per event.
};

struct ExchangeSchedule {
  std::vector<ExchangeRun> runs;
  std::string strategy;
  /// Cycle after the last word sent (excludes latency).
  uint64_t sendHorizon() const;
  /// Cycle the last word lands: sendHorizon + latency (0 if empty).
  uint64_t horizon(uint32_t latency) const;
};

/// Independent legality checker: every word of every transfer sent exactly
/// once, no tile sends or receives two words in one cycle. Returns a message
/// naming the transfer, tile and cycle at fault (cycles are send cycles), or
/// nothing when legal. An invalid phase is reported first.
std::optional<std::string> checkSchedule(const ExchangePhase &phase,
                                         const ExchangeSchedule &schedule);

/// Per-phase report, as logged by the pass and the benchmark.
struct ScheduleReport {
  uint64_t transfers = 0;
  uint64_t bound = 0;   ///< Endpoint lower bound in words (cycles).
  uint64_t horizon = 0; ///< Send horizon in cycles.
  uint64_t runs = 0;
  std::string strategy;
  /// Timed schedules: the endpoint part of `bound` (events), what the
  /// bound adds to it (route latency, receive tails), 64-bit messages,
  /// words tiles copy to themselves.
  uint64_t endpointEvents = 0, latency = 0, pairedRuns = 0, localWords = 0;
};

/// The strategies below expect a phase that passed validate().
/// Baseline: transfers one after another, no overlap at all.
ExchangeSchedule scheduleSequential(const ExchangePhase &phase);
/// Greedy list scheduling that keeps transfers whole: the longest transfers
/// first, each at the earliest cycle its source and all destinations are free.
ExchangeSchedule scheduleGreedy(const ExchangePhase &phase);
/// Bipartite edge colouring, senders x destination sets, words split where
/// needed (König): a time sweep keeps a perfect matching of the graph
/// completed to Delta-regular by idle cycles, and re-matches by augmenting
/// paths as edges finish. When no tile is in two destination sets (unicast
/// phases, and broadcasts to disjoint replica groups) the send horizon is
/// the endpoint bound exactly. Overlapping destination sets are merged and
/// serialised: legal, but above the bound. Transfers with one sender and
/// destination set keep their words in index order, most in one run.
ExchangeSchedule scheduleExact(const ExchangePhase &phase);
/// Preemptive list scheduling for broadcasts with overlapping destination
/// sets: in time order, an idle port starts the waiting transfer whose most
/// loaded port carries the most words, preempting running transfers whose
/// own priority is lower by a margin. Splits transfers into several runs.
ExchangeSchedule schedulePreemptive(const ExchangePhase &phase);
/// The best schedule among the strategies available, with its report:
/// greedy and exact, plus preemptive (within a work budget) when destination
/// sets overlap; the smallest send horizon wins, ties go to fewer runs, then
/// to the earlier of greedy, exact, preemptive. (Sequential is not a
/// candidate: greedy never loses to it.) Large phases run greedy on a second
/// thread; the result does not depend on timing.
ExchangeSchedule scheduleBest(const ExchangePhase &phase,
                              ScheduleReport *report = nullptr);

} // namespace ipu

#endif // IPU_EXCHANGE_PHASE_H
