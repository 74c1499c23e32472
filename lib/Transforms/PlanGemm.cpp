//===- PlanGemm.cpp - Choose a partition plan for every matmul ------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmPlan.h"
#include "IPU/Support/Log.h"

#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::ipu {
#define GEN_PASS_DEF_IPUPLANGEMM
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu

using namespace mlir;

/// Constraints from the op's attribute, narrowed by the pass options.
static FailureOr<::ipu::GemmPlanConstraints>
collectConstraints(ipu_gemm::MatmulOp op, int64_t rows, int64_t cols,
                   StringRef weights) {
  ::ipu::GemmPlanConstraints constraints;
  if (ipu_gemm::ConstraintsAttr attr = op.getConstraintsAttr()) {
    if (attr.getRows())
      constraints.rows = *attr.getRows();
    if (attr.getCols())
      constraints.cols = *attr.getCols();
    if (attr.getInner())
      constraints.inner = *attr.getInner();
    if (!attr.getOrientation().empty())
      constraints.swapped = attr.getOrientation() == "swapped";
    if (!attr.getWeights().empty())
      constraints.weights = ::ipu::parseMemoryClass(attr.getWeights().str());
  }
  if (rows > 0)
    constraints.rows = rows;
  if (cols > 0)
    constraints.cols = cols;
  if (!weights.empty()) {
    constraints.weights = ::ipu::parseMemoryClass(weights.str());
    if (!constraints.weights)
      return op.emitError("pass option weights='")
             << weights << "' is not standard or interleaved";
  }
  return constraints;
}

namespace {
struct PlanGemmPass : public mlir::ipu::impl::IPUPlanGemmBase<PlanGemmPass> {
  using IPUPlanGemmBase::IPUPlanGemmBase;

  struct Job {
    ipu_gemm::MatmulOp op;
    ::ipu::GemmProblem problem;
    ::ipu::GemmPlanConstraints constraints;
    ::ipu::GemmPlanSearch search;
    std::optional<std::string> error;
    double seconds = 0;
  };

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();

    std::vector<Job> jobs;
    bool failedAny = false;
    module.walk([&](ipu_gemm::MatmulOp op) {
      Job job;
      job.op = op;
      auto lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
      job.problem.m = lhs.getDimSize(0);
      job.problem.k = lhs.getDimSize(1);
      job.problem.n = rhs.getDimSize(1);
      job.problem.inType = *ipu_tile::toElementType(lhs.getElementType());
      job.problem.accType = *ipu_tile::toElementType(op.getAccumulatorType());
      job.problem.outType =
          *ipu_tile::toElementType(op.getResult().getType().getElementType());
      FailureOr<::ipu::GemmPlanConstraints> constraints =
          collectConstraints(op, rows, cols, weights);
      if (failed(constraints)) {
        failedAny = true;
        return;
      }
      job.constraints = *constraints;
      jobs.push_back(std::move(job));
    });
    if (failedAny)
      return signalPassFailure();

    // Searches are independent and touch no IR: run them in parallel, then
    // apply results in program order so output never depends on threads.
    parallelForEach(&getContext(), jobs, [&](Job &job) {
      auto start = std::chrono::steady_clock::now();
      job.error = ::ipu::searchGemmPlans(*target, job.problem, job.constraints,
                                         finalists, job.search);
      job.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    });

    for (auto [index, job] : llvm::enumerate(jobs)) {
      if (job.error) {
        job.op.emitError("cannot plan ")
            << job.problem.m << "x" << job.problem.k << "x" << job.problem.n
            << " matmul on '" << target->name << "': " << *job.error;
        failedAny = true;
        continue;
      }
      report(index, job, *target);
      const ::ipu::GemmPlanChoice &best = job.search.finalists.front();
      job.op.setPlanAttr(ipu_gemm::PlanAttr::get(
          &getContext(), best.plan.rows, best.plan.cols, best.plan.inner,
          best.plan.swapped ? "swapped" : "normal",
          ::ipu::memoryClassName(best.plan.weights), best.cost.totalCycles));
    }
    if (failedAny)
      signalPassFailure();
  }

  void report(size_t index, Job &job, const ::ipu::TargetModel &target) {
    const ::ipu::GemmPlanSearch &search = job.search;
    std::string constraintText =
        job.constraints.str().empty() ? "none" : job.constraints.str();
    ::ipu::logInfo(llvm::formatv(
        "ipu-plan-gemm: searched gemm plans operation={0} shape={1}x{2}x{3} "
        "candidates={4} matchingPlans={5} fittingPlans={6} constraint=\"{7}\" "
        "seconds={8:F4}",
        index, job.problem.m, job.problem.k, job.problem.n, search.candidates,
        search.matching, search.fitting, constraintText, job.seconds));
    for (auto [rank, choice] : llvm::enumerate(search.finalists)) {
      std::string line = llvm::formatv(
          "finalist={0} {1} estimatedCycles={2} computeCycles={3} "
          "exchangeCycles={4} syncCycles={5} peakStandardBytes={6} "
          "peakInterleavedBytes={7} activeTiles={8}",
          rank, choice.plan.str(), choice.cost.totalCycles,
          choice.cost.computeCycles, choice.cost.exchangeCycles,
          choice.cost.syncCycles, choice.cost.peakBytes[0],
          choice.cost.peakBytes[1], choice.cost.activeTiles);
      ::ipu::logInfo("ipu-plan-gemm: retained gemm plan finalist operation=" +
                     std::to_string(index) + " " + line);
      job.op.emitRemark() << line;
    }
    const ::ipu::GemmPlanChoice &best = search.finalists.front();
    job.op.emitRemark() << "chose plan " << best.plan.str() << " of "
                        << search.matching << " matching plans ("
                        << search.fitting << " fit memory, "
                        << search.candidates << " in the space) on '"
                        << target.name << "': estimated " << best.cost.totalCycles
                        << " cycles";
  }
};
} // namespace
