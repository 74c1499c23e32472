//===- Exchange.h - The ipu_exchange dialect ---------------------------*- C++ -*-===//

#ifndef IPU_DIALECT_EXCHANGE_IR_EXCHANGE_H
#define IPU_DIALECT_EXCHANGE_IR_EXCHANGE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "IPU/Dialect/Tile/IR/Tile.h"

#include "IPU/Dialect/Exchange/IR/ExchangeOpsDialect.h.inc"

namespace mlir::ipu_exchange {
/// Integers per run of an #ipu_exchange.schedule: transfer, first word,
/// words, start, paired.
constexpr size_t kScheduleRunFields = 5;
} // namespace mlir::ipu_exchange

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Exchange/IR/ExchangeOpsAttributes.h.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Exchange/IR/ExchangeOps.h.inc"

namespace mlir::ipu_exchange {
/// Checks runs (quintuples) against their schedule's transfers and horizon:
/// the schedule's verifier for runs in the IR, and scheduleRuns for runs
/// in the data file.
LogicalResult verifyScheduleRuns(function_ref<InFlightDiagnostic()> emitError,
                                 Strategy strategy, int64_t transfers,
                                 int64_t horizon, ArrayRef<int32_t> runs);
/// The runs of `schedule`, read from the data file (and checked) when they
/// are there; failure is reported at `user`.
FailureOr<SmallVector<int32_t>> scheduleRuns(ScheduleAttr schedule, Operation *user);
} // namespace mlir::ipu_exchange

#endif
