//===- Phase.cpp - Exchange phase data, validation and bounds ------------===//

#include "IPU/Exchange/Phase.h"

#include <algorithm>

using namespace ipu;

uint32_t ExchangePhase::addTransfer(uint32_t sourceTile, uint32_t wordCount,
                                    const uint32_t *destinations,
                                    size_t destinationCount) {
  // A default-constructed phase starts with destBegin = {0}; keep the CSR
  // well formed even if a caller cleared the vectors.
  if (destBegin.empty())
    destBegin.push_back(0);
  uint32_t index = static_cast<uint32_t>(source.size());
  source.push_back(sourceTile);
  words.push_back(wordCount);
  destTiles.insert(destTiles.end(), destinations,
                   destinations + destinationCount);
  destBegin.push_back(static_cast<uint32_t>(destTiles.size()));
  return index;
}

namespace {

/// The arrays agree in size and the CSR offsets are monotone and in range:
/// the minimum for walking the phase without reading out of bounds.
bool isWalkable(const ExchangePhase &phase) {
  size_t n = phase.size();
  if (phase.words.size() != n || phase.destBegin.size() != n + 1)
    return false;
  for (size_t t = 0; t < n; ++t)
    if (phase.destBegin[t + 1] < phase.destBegin[t])
      return false;
  return phase.destBegin[n] <= phase.destTiles.size();
}

} // namespace

// Both per-tile counts ignore tiles outside [0, tiles), and are all zero on
// a phase whose arrays disagree: validate() reports those, and the counts
// stay safe to compute for diagnostics on a bad phase.
std::vector<uint64_t> ExchangePhase::wordsSentPerTile() const {
  std::vector<uint64_t> sent(tiles, 0);
  if (!isWalkable(*this))
    return sent;
  for (size_t t = 0, e = size(); t < e; ++t)
    if (source[t] < tiles)
      sent[source[t]] += words[t];
  return sent;
}

std::vector<uint64_t> ExchangePhase::wordsReceivedPerTile() const {
  std::vector<uint64_t> received(tiles, 0);
  if (!isWalkable(*this))
    return received;
  for (size_t t = 0, e = size(); t < e; ++t)
    for (const uint32_t *d = destinationsBegin(t), *de = destinationsEnd(t);
         d != de; ++d)
      if (*d < tiles)
        received[*d] += words[t];
  return received;
}

std::optional<std::string> ExchangePhase::validate() const {
  using std::to_string;
  size_t n = size();
  if (words.size() != n)
    return "phase has " + to_string(n) + " sources but " +
           to_string(words.size()) + " word counts";
  if (destBegin.size() != n + 1)
    return "destBegin has " + to_string(destBegin.size()) +
           " entries, expected transfers + 1 = " + to_string(n + 1);
  if (destBegin[0] != 0)
    return "destBegin[0] is " + to_string(destBegin[0]) + ", expected 0";
  for (size_t t = 0; t < n; ++t)
    if (destBegin[t + 1] < destBegin[t])
      return "transfer " + to_string(t) + ": destBegin decreases from " +
             to_string(destBegin[t]) + " to " + to_string(destBegin[t + 1]);
  if (destBegin[n] != destTiles.size())
    return "destBegin ends at " + to_string(destBegin[n]) + " but there are " +
           to_string(destTiles.size()) + " destination tiles";

  // Stamp each destination tile with its transfer to find duplicates in
  // O(total destinations) without per-transfer sorting.
  std::vector<uint32_t> stamp(tiles, UINT32_MAX);
  for (size_t t = 0; t < n; ++t) {
    if (source[t] >= tiles)
      return "transfer " + to_string(t) + ": source tile " +
             to_string(source[t]) + " is out of range [0, " + to_string(tiles) +
             ")";
    if (words[t] == 0)
      return "transfer " + to_string(t) + " from tile " + to_string(source[t]) +
             " has no words";
    if (destBegin[t] == destBegin[t + 1])
      return "transfer " + to_string(t) + " from tile " + to_string(source[t]) +
             " has no destinations";
    for (const uint32_t *d = destinationsBegin(t), *de = destinationsEnd(t);
         d != de; ++d) {
      if (*d >= tiles)
        return "transfer " + to_string(t) + ": destination tile " +
               to_string(*d) + " is out of range [0, " + to_string(tiles) + ")";
      if (stamp[*d] == t)
        return "transfer " + to_string(t) + ": destination tile " +
               to_string(*d) + " is listed twice";
      stamp[*d] = static_cast<uint32_t>(t);
    }
  }
  return std::nullopt;
}

uint64_t ipu::endpointLowerBound(const ExchangePhase &phase) {
  uint64_t bound = 0;
  for (uint64_t s : phase.wordsSentPerTile())
    bound = std::max(bound, s);
  for (uint64_t r : phase.wordsReceivedPerTile())
    bound = std::max(bound, r);
  return bound;
}

uint64_t ExchangeSchedule::sendHorizon() const {
  uint64_t end = 0;
  for (const ExchangeRun &run : runs)
    end = std::max(end, uint64_t(run.start) + run.words);
  return end;
}

uint64_t ExchangeSchedule::horizon(uint32_t latency) const {
  if (runs.empty())
    return 0;
  return sendHorizon() + latency;
}
