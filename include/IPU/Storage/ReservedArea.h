//===- ReservedArea.h - What a program keeps below its buffers ----*- C++ -*-===//
//
// Each tile keeps, at the bottom of its standard memory above the runtime,
// the program's exchange code (each phase's instruction row, as the timing
// model counts it from the schedule, on memory elements no transfer
// touches), its vertices' state and the code of each generated kernel it
// runs. --ipu-place-storage sizes that area from the program it places; the
// package loader sizes it again from what the package holds and refuses a
// package whose buffers reach into it. Both go
// through this one tally.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_STORAGE_RESERVEDAREA_H
#define IPU_STORAGE_RESERVEDAREA_H

#include "IPU/Exchange/Timing.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ipu {

class ReservedArea {
public:
  explicit ReservedArea(const TargetModel &target);

  /// A phase's exchange code on every tile (a tile without a part keeps a
  /// one-word row). Expects a schedule that checkTimedSchedule accepts.
  void addPhase(const ExchangePhase &phase, const ExchangeSchedule &schedule,
                const TransferAddresses &addresses);
  /// The same from each tile's code bytes as timePhase counts them.
  void addExchangeCode(const std::vector<uint32_t> &codeBytesPerTile);
  /// One vertex's state on each of `tiles`.
  void addVertices(const std::vector<uint32_t> &tiles, uint64_t operands,
                   uint64_t params);
  /// A generated kernel's code, once on each of `tiles` that runs it.
  void addKernelCode(const std::vector<uint32_t> &tiles, const std::string &kernel,
                     uint64_t codeBytes);

  /// Per tile, the bytes so far.
  const std::vector<uint64_t> &perTile() const { return total; }
  /// What `tile` keeps from the first allocatable byte, as laid out: vertex
  /// state and kernel code, then the exchange code (never in the runtime's
  /// element) with the target's fetch guard after it, the whole area
  /// end-aligned to a memory element.
  uint64_t bytesOn(uint32_t tile) const;
  /// The most any tile keeps, rounded up to the buffer alignment: where the
  /// program's buffers start.
  uint64_t bytes() const;
  /// That tile (the lowest-numbered of the busiest) and its three parts.
  uint32_t busiestTile() const;
  uint64_t exchangeCodeBytes(uint32_t tile) const { return exchange[tile]; }
  uint64_t vertexStateBytes(uint32_t tile) const { return vertex[tile]; }
  uint64_t kernelCodeBytes(uint32_t tile) const { return kernel[tile]; }

private:
  const TargetModel &target;
  std::vector<uint64_t> exchange, vertex, kernel, total;
  std::vector<std::set<std::string>> kernelsOn;
};

} // namespace ipu

#endif // IPU_STORAGE_RESERVEDAREA_H
