//===- ScheduleExchange.cpp - Timetables for every exchange phase ---------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Exchange/PhaseText.h"
#include "IPU/Support/Log.h"
#include "PlaceStorage.h"

#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <fstream>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUSCHEDULEEXCHANGE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {
struct ScheduleExchangePass
    : public mlir::ipu_compiler::impl::IPUScheduleExchangeBase<ScheduleExchangePass> {
  using IPUScheduleExchangeBase::IPUScheduleExchangeBase;

  struct Job {
    ipu_exchange::PhaseOp op;
    ipu_exchange::PhaseTransfers transfers;
    ipu::TransferAddresses addresses;
    ipu::ExchangeSchedule schedule;
    ipu::ScheduleReport report;
    ipu::TimedPhaseCost cost;
    std::optional<std::string> illegal;
    double seconds = 0;
    std::string line; ///< Its report, as logged and remarked.
  };

  /// Writes the phase's transfers for schedulers outside the compiler.
  LogicalResult dump(const Job &job) {
    ipu_exchange::PhaseOp op = job.op;
    std::string path = dumpDir + "/" + op.getSymName().str() + ".phase";
    std::ofstream out(path);
    if (out)
      ipu::writePhaseText(out, job.transfers.phase, &job.addresses);
    if (!out)
      return op.emitError("cannot write phase to '") << path << "'";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    // The code of the real schedules must fit where placement left room for
    // it, sized from provisional schedules before the addresses existed.
    // When it needs more, the program is placed again with that much
    // reserved and scheduled again on its new addresses; the rounds stop
    // when the code fits (the addresses move little, and so does the code).
    constexpr int kRounds = 4;
    for (int round = 0;; ++round) {
      if (failed(scheduleAll(module, *target)))
        return signalPassFailure();
      bool replaced = false;
      for (auto program : module.getOps<ipu_tile::ProgramOp>()) {
        std::optional<int64_t> reserved = program.getReservedBytes();
        if (!reserved)
          continue;
        ipu_tile::ProgramLiveness liveness = ipu_tile::computeLiveness(program);
        FailureOr<uint32_t> needed = mlir::ipu_compiler::reservedAreaBytes(
            liveness.steps, *target, /*placed=*/true);
        if (failed(needed))
          return signalPassFailure();
        if (*needed <= *reserved)
          continue;
        if (round + 1 == kRounds) {
          program.emitError("the exchange code of the timed schedules needs ")
              << *needed << " reserved bytes on the busiest tile, more than the "
              << *reserved << " placed below the buffers after " << kRounds
              << " rounds of placing and scheduling";
          return signalPassFailure();
        }
        ipu::logInfo(llvm::formatv(
            "ipu-schedule-exchange: program={0} exchange code needs "
            "reservedBytes={1} (placed with {2}): placing it again",
            program.getSymName(), *needed, *reserved));
        // A little more than asked: the new addresses move the code too,
        // and each round should settle it rather than chase it.
        const uint32_t align = std::max<uint32_t>(target->bufferAlignmentBytes, 1);
        const uint32_t ask = (*needed + *needed / 64 + align) / align * align;
        if (failed(mlir::ipu_compiler::placeProgram(program, *target, "", ask)))
          return signalPassFailure();
        replaced = true;
      }
      if (!replaced)
        break;
    }
    // Each phase's line, from the last round.
    bool failedAny = false;
    for (Job &job : jobs) {
      ipu::logInfo(llvm::formatv("ipu-schedule-exchange: scheduled exchange "
                                   "phase phase={0} {1} seconds={2:F4}",
                                   job.op.getSymName(), job.line, job.seconds));
      mlir::emitRemark(job.op.getLoc()) << "scheduled " << job.line;
      if (!dumpDir.empty() && failed(dump(job)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }

  /// The phases of the last scheduleAll, in program order.
  std::vector<Job> jobs;

  /// Schedules every phase on its buffers' addresses and stores the
  /// schedules, keeping each phase's report line in `jobs`.
  LogicalResult scheduleAll(ModuleOp module, const ipu::TargetModel &targetModel) {
    const ipu::TargetModel *target = &targetModel;
    jobs.clear();
    bool failedAny = false;
    module.walk([&](ipu_exchange::PhaseOp op) {
      FailureOr<ipu_exchange::PhaseTransfers> transfers =
          ipu_exchange::buildPhaseTransfers(op, *target);
      if (failed(transfers)) {
        failedAny = true;
        return;
      }
      FailureOr<ipu::TransferAddresses> addresses =
          ipu_exchange::transferAddresses(op, *transfers);
      if (failed(addresses)) {
        failedAny = true;
        return;
      }
      Job job;
      job.op = op;
      job.transfers = std::move(*transfers);
      job.addresses = std::move(*addresses);
      jobs.push_back(std::move(job));
    });
    if (failedAny)
      return failure();

    // Phases are independent plain data: schedule them in parallel and apply
    // the results in program order.
    parallelForEach(&getContext(), jobs, [&](Job &job) {
      auto start = std::chrono::steady_clock::now();
      job.schedule = ipu::scheduleTimedPhase(*target, job.transfers.phase,
                                               job.addresses, &job.report);
      job.illegal = ipu::checkTimedSchedule(*target, job.transfers.phase,
                                              job.schedule, job.addresses);
      if (!job.illegal)
        job.cost = ipu::timedPhaseCost(*target, job.transfers.phase,
                                         job.schedule, job.addresses);
      job.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    });

    for (Job &job : jobs) {
      if (job.illegal) {
        job.op.emitError("internal error: the timed schedule breaks a rule "
                         "of the exchange: ")
            << *job.illegal;
        failedAny = true;
        continue;
      }
      SmallVector<int32_t> runs;
      runs.reserve(job.schedule.runs.size() * ipu_exchange::kScheduleRunFields);
      for (const ipu::ExchangeRun &run : job.schedule.runs)
        runs.append({static_cast<int32_t>(run.transfer),
                     static_cast<int32_t>(run.wordOffset),
                     static_cast<int32_t>(run.words),
                     static_cast<int32_t>(run.start), run.paired ? 1 : 0});
      const ipu::ScheduleReport &report = job.report;
      job.op.setScheduleAttr(ipu_exchange::ScheduleAttr::get(
          &getContext(), ipu_exchange::Strategy::timed, report.transfers,
          report.bound, report.horizon,
          DenseIntElementsAttr::get(
              RankedTensorType::get({static_cast<int64_t>(runs.size())},
                                    IntegerType::get(&getContext(), 32)),
              ArrayRef<int32_t>(runs))));
      const double ratio =
          report.bound ? double(report.horizon) / report.bound : 1.0;
      job.line = llvm::formatv(
          "transfers={0} lowerBound={1} endpointEvents={2} latency={3} "
          "horizon={4} horizonOverBound={5:F3} lowerBoundGap={6} "
          "strategy={7} runs={8} pairedRuns={9} localCopyWords={10} "
          "phaseCycles={11} fixedCycles={12} localCopyCycles={13} "
          "codeBytes={14} pointerEvents={15} sourceEvents={16}",
          report.transfers, report.bound, report.endpointEvents, report.latency,
          report.horizon, ratio, report.horizon - report.bound,
          report.strategy, report.runs, report.pairedRuns, report.localWords,
          job.cost.cycles,
          job.cost.timing.cycles ? target->exchange.phaseFixedCycles : 0,
          job.cost.localCopyCycles, job.cost.timing.codeBytes,
          job.cost.timing.pointerEvents, job.cost.timing.sourceEvents);
    }
    return failure(failedAny);
  }

};
} // namespace
