//===- ScheduleExchange.cpp - Timetables for every exchange phase ---------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Exchange/PhaseText.h"
#include "IPU/Support/Log.h"

#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <fstream>

namespace mlir::ipu {
#define GEN_PASS_DEF_IPUSCHEDULEEXCHANGE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;

namespace {
struct ScheduleExchangePass
    : public mlir::ipu::impl::IPUScheduleExchangeBase<ScheduleExchangePass> {
  using IPUScheduleExchangeBase::IPUScheduleExchangeBase;

  struct Job {
    ipu_exchange::PhaseOp op;
    ipu_exchange::PhaseTransfers transfers;
    ::ipu::ExchangeSchedule schedule;
    ::ipu::ScheduleReport report;
    std::optional<std::string> illegal;
    /// Broadcasts sharing tiles can make the endpoint bound unreachable; a
    /// phase above it reports this tighter bound too.
    uint64_t tighterBound = 0;
    double seconds = 0;
  };

  /// Writes the phase's transfers for schedulers outside the compiler.
  LogicalResult dump(const Job &job) {
    ipu_exchange::PhaseOp op = job.op;
    std::string path = dumpDir + "/" + op.getSymName().str() + ".phase";
    std::ofstream out(path);
    if (out)
      ::ipu::writePhaseText(out, job.transfers.phase);
    if (!out)
      return op.emitError("cannot write phase to '") << path << "'";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();

    std::vector<Job> jobs;
    bool failedAny = false;
    module.walk([&](ipu_exchange::PhaseOp op) {
      FailureOr<ipu_exchange::PhaseTransfers> transfers =
          ipu_exchange::buildPhaseTransfers(op, *target);
      if (failed(transfers)) {
        failedAny = true;
        return;
      }
      Job job;
      job.op = op;
      job.transfers = std::move(*transfers);
      jobs.push_back(std::move(job));
    });
    if (failedAny)
      return signalPassFailure();

    // Phases are independent plain data: schedule them in parallel and apply
    // the results in program order.
    parallelForEach(&getContext(), jobs, [&](Job &job) {
      auto start = std::chrono::steady_clock::now();
      job.schedule = ::ipu::scheduleBest(job.transfers.phase, &job.report);
      job.illegal = ::ipu::checkSchedule(job.transfers.phase, job.schedule);
      job.tighterBound = job.report.horizon > job.report.bound
                             ? ::ipu::broadcastLowerBound(job.transfers.phase)
                             : job.report.bound;
      job.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    });

    for (Job &job : jobs) {
      if (job.illegal) {
        job.op.emitError("internal error: the ")
            << job.report.strategy << " schedule is illegal: " << *job.illegal;
        failedAny = true;
        continue;
      }
      SmallVector<int32_t> runs;
      runs.reserve(job.schedule.runs.size() * 4);
      for (const ::ipu::ExchangeRun &run : job.schedule.runs)
        runs.append({static_cast<int32_t>(run.transfer),
                     static_cast<int32_t>(run.wordOffset),
                     static_cast<int32_t>(run.words),
                     static_cast<int32_t>(run.start)});
      const ::ipu::ScheduleReport &report = job.report;
      std::optional<ipu_exchange::Strategy> strategy =
          ipu_exchange::symbolizeStrategy(report.strategy);
      if (!strategy) {
        job.op.emitError("internal error: strategy '")
            << report.strategy << "' has no ipu_exchange::Strategy";
        failedAny = true;
        continue;
      }
      job.op.setScheduleAttr(ipu_exchange::ScheduleAttr::get(
          &getContext(), *strategy,
          report.transfers, report.bound,
          report.horizon,
          DenseIntElementsAttr::get(
              RankedTensorType::get({static_cast<int64_t>(runs.size())},
                                    IntegerType::get(&getContext(), 32)),
              ArrayRef<int32_t>(runs))));
      double ratio = report.bound ? double(report.horizon) / report.bound : 1.0;
      double tighterRatio =
          job.tighterBound ? double(report.horizon) / job.tighterBound : 1.0;
      std::string line = llvm::formatv(
          "transfers={0} endpointLowerBound={1} horizon={2} "
          "horizonOverBound={3:F3} lowerBoundGap={4} strategy={5} runs={6} "
          "phaseCycles={7}",
          report.transfers, report.bound, report.horizon, ratio,
          report.horizon - report.bound, report.strategy, report.runs,
          target->exchangePhaseCycles);
      if (job.tighterBound > report.bound)
        line += llvm::formatv(" tighterBound={0} horizonOverTighterBound={1:F3}",
                              job.tighterBound, tighterRatio)
                    .str();
      ::ipu::logInfo(llvm::formatv("ipu-schedule-exchange: scheduled exchange "
                                   "phase phase={0} {1} seconds={2:F4}",
                                   job.op.getSymName(), line, job.seconds));
      mlir::emitRemark(job.op.getLoc()) << "scheduled " << line;
      if (!dumpDir.empty() && failed(dump(job)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
