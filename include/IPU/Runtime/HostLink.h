//===- HostLink.h - What a host stream costs over the link ------*- C++ -*-===//
//
// A stream's pieces may write the same host bytes to several tiles (a
// weight replicated on every row of a plan). The link carries each byte
// once; the exchange then fans the other copies out to their tiles.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_HOSTLINK_H
#define IPU_RUNTIME_HOSTLINK_H

#include "IPU/Package/Package.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>

namespace ipu {

struct HostLinkLoad {
  /// The tensor's bytes the pieces touch, each once: what crosses the link.
  uint64_t linkBytes = 0;
  /// The other copies' bytes (streamBytes - linkBytes): tile to tile.
  uint64_t fanOutBytes = 0;
  /// The most fan-out bytes one tile sends (each landed copy once, as a
  /// multicast) or receives.
  uint64_t busiestTileFanOutBytes = 0;
  /// The fan-out as one exchange phase, at the planner's estimate of a
  /// phase whose busiest tile moves that many words (words + route latency
  /// + the phase's fixed cost): a lower bound, no schedule is timed. 0 for
  /// a stream out (one copy crosses to the host; the rest stay) and for a
  /// stream without copies.
  uint64_t fanOutCycles = 0;
  /// The most pieces that write one host footprint: the copies of those
  /// bytes the tiles hold (a plan's replicas of a weight block); 1 when
  /// nothing is copied, 0 without pieces. Pieces that overlap without
  /// being equal are not counted as copies here.
  uint32_t copies = 0;
};

/// What `stream` costs on `target`'s host link and exchange.
HostLinkLoad hostLinkLoad(const HostStream &stream, const TargetModel &target);

} // namespace ipu

#endif // IPU_RUNTIME_HOSTLINK_H
