//===- ScheduleExchange.cpp - Timetables for every exchange phase ---------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/Log.h"

#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

namespace mlir::ipu {
#define GEN_PASS_DEF_IPUSCHEDULEEXCHANGE
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;

namespace {
struct ScheduleExchangePass
    : public mlir::ipu::impl::IPUScheduleExchangeBase<ScheduleExchangePass> {
  struct Job {
    ipu_exchange::PhaseOp op;
    ipu_exchange::PhaseTransfers transfers;
    ::ipu::ExchangeSchedule schedule;
    ::ipu::ScheduleReport report;
    std::optional<std::string> illegal;
    double seconds = 0;
  };

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
      job.op.setScheduleAttr(ipu_exchange::ScheduleAttr::get(
          &getContext(), report.strategy, report.transfers, report.bound,
          report.horizon, runs));
      double ratio = report.bound ? double(report.horizon) / report.bound : 1.0;
      std::string line = llvm::formatv(
          "transfers={0} endpointLowerBound={1} horizon={2} "
          "horizonOverBound={3:F3} lowerBoundGap={4} strategy={5} runs={6} "
          "latency={7}",
          report.transfers, report.bound, report.horizon, ratio,
          report.horizon - report.bound, report.strategy, report.runs,
          target->exchangeLatencyCycles);
      ::ipu::logInfo(llvm::formatv("ipu-schedule-exchange: scheduled exchange "
                                   "phase phase={0} {1} seconds={2:F4}",
                                   job.op.getSymName(), line, job.seconds));
      mlir::emitRemark(job.op.getLoc()) << "scheduled " << line;
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
