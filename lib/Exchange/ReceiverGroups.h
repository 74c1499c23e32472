//===- ReceiverGroups.h - Transfers grouped by destination set -----------===//
//
// Internal to the exchange library: the schedulers and the lower bound see
// broadcasts through their destination sets ("groups").
//
//===----------------------------------------------------------------------===//

#ifndef IPU_LIB_EXCHANGE_RECEIVERGROUPS_H
#define IPU_LIB_EXCHANGE_RECEIVERGROUPS_H

#include "IPU/Exchange/Phase.h"

namespace ipu {

/// Transfers with the same destination set share a group; groups that share
/// a tile (directly or through others) share a receiver.
struct ReceiverGroups {
  std::vector<uint32_t> groupOf;    ///< Per transfer: its group.
  std::vector<uint32_t> groupBegin; ///< CSR over groupTiles, groups + 1.
  std::vector<uint32_t> groupTiles; ///< Each group's tiles, sorted.
  std::vector<uint32_t> receiverOfGroup;
  uint32_t receivers = 0;
  /// No tile is in two groups: then every receiver is a single group.
  bool disjoint = true;

  uint32_t groups() const {
    return static_cast<uint32_t>(groupBegin.size() - 1);
  }
};

/// Groups a valid phase's transfers; ids follow first appearance, so the
/// result is deterministic.
ReceiverGroups groupReceivers(const ExchangePhase &phase);

} // namespace ipu

#endif // IPU_LIB_EXCHANGE_RECEIVERGROUPS_H
