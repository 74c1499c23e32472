//===- ReservedArea.cpp - What a program keeps below its buffers -----------===//

#include "IPU/Storage/ReservedArea.h"

#include <algorithm>

using namespace ipu;

ReservedArea::ReservedArea(const TargetModel &target)
    : target(target), exchange(target.tiles, 0), vertex(target.tiles, 0),
      kernel(target.tiles, 0), total(target.tiles, 0), kernelsOn(target.tiles) {}

std::optional<std::string> ReservedArea::addPhase(const ExchangePhase &phase,
                                                  const ExchangeSchedule &schedule) {
  std::vector<bool> takesPart(target.tiles, false);
  auto add = [&](uint32_t tile, uint64_t bytes) {
    exchange[tile] += bytes;
    total[tile] += bytes;
    takesPart[tile] = true;
  };
  for (const ExchangeRun &run : schedule.runs) {
    if (run.transfer >= phase.size())
      return "schedule names transfer " + std::to_string(run.transfer) + " of " +
             std::to_string(phase.size());
    const uint32_t source = phase.source[run.transfer];
    if (source >= target.tiles)
      return "transfer " + std::to_string(run.transfer) + " sends from tile " +
             std::to_string(source);
    add(source, target.exchangeCodeBytesPerSendRun);
    for (const uint32_t *d = phase.destinationsBegin(run.transfer),
                        *e = phase.destinationsEnd(run.transfer);
         d != e; ++d) {
      if (*d >= target.tiles)
        return "transfer " + std::to_string(run.transfer) + " sends to tile " +
               std::to_string(*d);
      add(*d, target.exchangeCodeBytesPerReceiveRun);
    }
  }
  for (uint32_t tile = 0; tile < target.tiles; ++tile)
    if (takesPart[tile]) {
      exchange[tile] += target.exchangeCodeBytesPerPhase;
      total[tile] += target.exchangeCodeBytesPerPhase;
    }
  return std::nullopt;
}

void ReservedArea::addVertices(const std::vector<uint32_t> &tiles, uint64_t operands,
                               uint64_t params) {
  const uint64_t bytes = target.vertexStateBytes(operands, params);
  for (uint32_t tile : tiles)
    if (tile < target.tiles) {
      vertex[tile] += bytes;
      total[tile] += bytes;
    }
}

void ReservedArea::addKernelCode(const std::vector<uint32_t> &tiles,
                                 const std::string &name, uint64_t codeBytes) {
  for (uint32_t tile : tiles)
    if (tile < target.tiles && kernelsOn[tile].insert(name).second) {
      kernel[tile] += codeBytes;
      total[tile] += codeBytes;
    }
}

uint32_t ReservedArea::busiestTile() const {
  return static_cast<uint32_t>(std::max_element(total.begin(), total.end()) -
                               total.begin());
}

uint64_t ReservedArea::bytes() const {
  const uint64_t most = total.empty() ? 0 : total[busiestTile()];
  const uint64_t align = std::max<uint64_t>(target.bufferAlignmentBytes, 1);
  return (most + align - 1) / align * align;
}
