//===- PhaseTransfers.h - The transfers an exchange phase implies -*- C++ -*-===//
//
// Phases are symbolic (copies between buffer layouts). The scheduler, the
// package translator and the tests all need the explicit transfer table;
// this derives it, deterministically, so every consumer sees the same
// transfer numbering that the schedule refers to.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DIALECT_EXCHANGE_IR_PHASETRANSFERS_H
#define IPU_DIALECT_EXCHANGE_IR_PHASETRANSFERS_H

#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Exchange/Phase.h"
#include "IPU/Exchange/Timing.h"
#include "IPU/Target/TargetModel.h"

#include <vector>

namespace mlir::ipu_exchange {

struct PhaseTransfers {
  ipu::ExchangePhase phase;
  std::vector<uint32_t> sourceOffset; ///< Bytes within the source buffer.
  std::vector<uint32_t> destOffset;   ///< Bytes within the dest buffer.
  /// Per copy op, in order: its buffers and its first transfer.
  struct Copy {
    ipu_tile::BufferOp source, dest;
    uint32_t firstTransfer;
  };
  std::vector<Copy> copies;
};

/// Derives the transfers of `phase`, copies in order. Emits an error on the
/// offending copy when a buffer is missing or the layouts cannot be
/// rearranged into one another.
FailureOr<PhaseTransfers> buildPhaseTransfers(PhaseOp phase,
                                              const ipu::TargetModel &target);

/// The schedule stored in `attr` as a plain C++ schedule; failure, reported
/// at `user`, when its runs are in a data file that cannot be read.
FailureOr<ipu::ExchangeSchedule> toExchangeSchedule(ScheduleAttr attr, Operation *user);

/// Each transfer's byte addresses, from its buffers' placed addresses.
/// Emits an error when a buffer has not been placed.
FailureOr<ipu::TransferAddresses>
transferAddresses(PhaseOp op, const PhaseTransfers &transfers);

} // namespace mlir::ipu_exchange

#endif // IPU_DIALECT_EXCHANGE_IR_PHASETRANSFERS_H
