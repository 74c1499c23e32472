//===- ReservedArea.cpp - What a program keeps below its buffers -----------===//

#include "IPU/Storage/ReservedArea.h"

#include <algorithm>

using namespace ipu;

ReservedArea::ReservedArea(const TargetModel &target)
    : target(target), exchange(target.tiles, 0), vertex(target.tiles, 0),
      kernel(target.tiles, 0), total(target.tiles, 0), kernelsOn(target.tiles) {}

void ReservedArea::addPhase(const ExchangePhase &phase,
                            const ExchangeSchedule &schedule,
                            const TransferAddresses &addresses) {
  addExchangeCode(
      timePhase(target.exchange, timedMessages(target.exchange, phase, schedule, addresses))
          .codeBytesPerTile);
}

void ReservedArea::addExchangeCode(const std::vector<uint32_t> &codeBytesPerTile) {
  for (uint32_t tile = 0; tile < target.tiles && tile < codeBytesPerTile.size(); ++tile) {
    exchange[tile] += codeBytesPerTile[tile];
    total[tile] += codeBytesPerTile[tile];
  }
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
