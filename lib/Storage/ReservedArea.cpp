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

uint64_t ReservedArea::bytesOn(uint32_t tile) const {
  // From the first allocatable byte: vertex state and generated code, then
  // the exchange rows with the fetch guard after them, the whole area
  // end-aligned to a memory element. The user's stack (their package.rs)
  // states two rules: "keep planned standard-memory values out of [the
  // code's] final memory element", and "executed exchange rows may not
  // share an SRAM element with any transfer source or destination". Code
  // and vertex state are neither, so the rows follow them in the same
  // element; only the runtime's element, which holds the host exchange
  // window, they never share. (The user's stack gives the code and the
  // rows elements of their own, one element more at worst.)
  const uint64_t element = std::max<uint32_t>(target.memoryElementBytes, 1);
  auto alignUp = [](uint64_t value, uint64_t align) {
    return (value + align - 1) / align * align;
  };
  const uint64_t base = target.allocatableBase(MemoryClass::Standard);
  uint64_t end = base + vertex[tile] + kernel[tile];
  if (exchange[tile] > 0)
    end = std::max(end, alignUp(base, element)) + exchange[tile] + target.fetchGuardBytes;
  if (kernel[tile] > 0 || exchange[tile] > 0)
    end = alignUp(end, element);
  return end - base;
}

uint32_t ReservedArea::busiestTile() const {
  uint32_t busiest = 0;
  uint64_t most = 0;
  for (uint32_t tile = 0; tile < total.size(); ++tile)
    if (uint64_t bytes = bytesOn(tile); bytes > most) {
      most = bytes;
      busiest = tile;
    }
  return busiest;
}

uint64_t ReservedArea::bytes() const {
  const uint64_t most = total.empty() ? 0 : bytesOn(busiestTile());
  const uint64_t align = std::max<uint64_t>(target.bufferAlignmentBytes, 1);
  return (most + align - 1) / align * align;
}
