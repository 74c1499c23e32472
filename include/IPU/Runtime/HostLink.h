//===- HostLink.h - What a host stream costs over the link ------*- C++ -*-===//
//
// A stream's pieces may write the same host bytes to several tiles (a
// weight replicated on every row of a plan). The link carries each byte
// once; the exchange then fans the other copies out to their tiles, in one
// timed exchange phase (hostFanOut).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_HOSTLINK_H
#define IPU_RUNTIME_HOSTLINK_H

#include "IPU/Exchange/Phase.h"
#include "IPU/Package/Package.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// The exchange phase that fans a stream's copies out. Each host byte lands
/// from the link on the tile of the first piece (in stream order) that
/// holds it; every other piece holding it gets it from there, never from a
/// tile that receives it in the same phase (a phase does not order its
/// transfers). Bytes with
/// the same landing piece and the same other holders form one transfer, a
/// multicast: one per copied footprint when pieces are copies of one
/// another, one per (landing piece, holders) for the bytes of pieces that
/// overlap without being equal. A tile holding a byte twice copies it to
/// itself (a transfer to its own tile, TargetModel::localCopyCycles).
/// Addresses are packed, as the planner prices its phases (packedAddresses;
/// the pieces' own addresses would move only which memory elements clash);
/// the scheduler splits transfers into messages of at most
/// ExchangeTimingModel::maxMessageWords.
struct HostFanOut {
  ExchangePhase phase; ///< On the target's tiles; no transfer without copies.
  TransferAddresses addresses;
  /// Per transfer: the host bytes it carries to each of its destinations
  /// (its words hold them rounded up to whole exchange words).
  std::vector<uint64_t> bytes;
  /// scheduleTimedPhase's schedule of `phase`.
  ExchangeSchedule schedule;
  /// timedPhaseCost: the phase's horizon from its entry sync, the phase's
  /// fixed cost (the sync), and its tiles' copies to themselves. 0 without
  /// a transfer.
  uint64_t cycles = 0;
  /// Why no phase was built: a piece on a tile the target does not have
  /// (validatePackage refuses such a package).
  std::optional<std::string> error;
};

/// The fan-out of `stream`, a stream to the device, on `target`.
HostFanOut hostFanOut(const HostStream &stream, const TargetModel &target);

struct HostLinkLoad {
  /// The tensor's bytes the pieces touch, each once: what crosses the link.
  uint64_t linkBytes = 0;
  /// The other copies' bytes (streamBytes - linkBytes): tile to tile.
  uint64_t fanOutBytes = 0;
  /// The fan-out's timed exchange phase (hostFanOut::cycles). 0 for a
  /// stream out (one copy crosses to the host; the rest stay) and for a
  /// stream without copies.
  uint64_t fanOutCycles = 0;
  /// The most pieces that write one host footprint: the copies of those
  /// bytes the tiles hold (a plan's replicas of a weight block); 1 when
  /// nothing is copied, 0 without pieces. Pieces that overlap without
  /// being equal are not counted as copies here.
  uint32_t copies = 0;
};

/// What `stream` costs on `target`'s host link and exchange. A stream
/// hostFanOut refuses gets no fan-out cycles: validatePackage refuses it
/// first.
HostLinkLoad hostLinkLoad(const HostStream &stream, const TargetModel &target);

} // namespace ipu

#endif // IPU_RUNTIME_HOSTLINK_H
