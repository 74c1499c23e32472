//===- PlanGemm.cpp - Choose a partition plan for every matmul ------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Planning/GemmProgram.h"
#include "IPU/Support/Escape.h"
#include "IPU/Support/Log.h"
#include "IPU/Transforms/TileLowering.h"
#include "PlaceStorage.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUPLANGEMM
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

/// How a `partials` constraint ("f32", "f16", "any" or "") narrows the plans
/// and whether it allows f16 partials for an f32 accumulation.
static void applyPartials(StringRef partials,
                          ipu::GemmPlanConstraints &constraints,
                          bool &allowHalf) {
  if (partials == "f16" || partials == "any")
    allowHalf = true;
  if (partials == "f16")
    constraints.partials = ipu::ElementType::F16;
  else if (partials == "f32")
    constraints.partials = ipu::ElementType::F32;
}

/// Constraints from the op's attribute, narrowed by the pass options.
static FailureOr<ipu::GemmPlanConstraints>
collectConstraints(ipu_gemm::MatmulOp op, const ipu::GemmPlanConstraints &options,
                   StringRef partialsOption, bool rhsIsWeight, bool &allowHalf) {
  ipu::GemmPlanConstraints constraints;
  allowHalf = false;
  if (ipu_gemm::ConstraintsAttr attr = op.getConstraintsAttr()) {
    if (attr.getRows())
      constraints.rows = *attr.getRows();
    if (attr.getCols())
      constraints.cols = *attr.getCols();
    if (attr.getInner())
      constraints.inner = *attr.getInner();
    if (attr.getOrientation())
      constraints.swapped = *attr.getOrientation() == ipu_gemm::Orientation::swapped;
    if (attr.getWeights())
      constraints.weights = ipu_tile::toMachineClass(*attr.getWeights());
    if (attr.getReduction())
      constraints.reduction = *attr.getReduction() == ipu_gemm::Reduction::staged
                                  ? ipu::Reduction::Staged
                                  : ipu::Reduction::Complete;
    if (attr.getStaging())
      constraints.localStaging = *attr.getStaging();
    if (attr.getGathered())
      constraints.gatheredWeights = *attr.getGathered();
    if (attr.getSerial())
      constraints.serial = static_cast<uint32_t>(*attr.getSerial());
    if (attr.getHomes())
      constraints.homes = ipu_tile::toMachineClass(*attr.getHomes());
    applyPartials(attr.getPartials(), constraints, allowHalf);
  }
  constraints.override(options);
  // A pass option about weights says nothing of matmuls whose B is an
  // activation (gathered whatever the option says).
  if (!ipu_tile::isStreamedArgument(op.getRhs()) && options.gatheredWeights &&
      !(op.getConstraintsAttr() && op.getConstraintsAttr().getGathered()))
    constraints.gatheredWeights.reset();
  // Nor does a bound on weights' replicas: an activation B is gathered
  // into the plan's layout as the GEMM runs, never resident.
  if (!rhsIsWeight)
    constraints.maxWeightReplicas.reset();
  // Nor of staging weights expanded where they stay (never staged).
  if (ipu_tile::expandedWeight(op.getRhs()) && options.localStaging &&
      !(op.getConstraintsAttr() && op.getConstraintsAttr().getStaging()))
    constraints.localStaging.reset();
  // The pass option overrides the op's field, as every other option does.
  if (!partialsOption.empty()) {
    allowHalf = false;
    constraints.partials.reset();
    applyPartials(partialsOption, constraints, allowHalf);
  }
  return constraints;
}

namespace {
/// The function `op` is in, through any repeated layer's body.
Operation *functionOf(Operation *op) {
  return op->getParentOfType<FunctionOpInterface>();
}

/// How many layers' weights of `op` the tiles hold at once: a repeated
/// layer's every layer, unless they stream in as each layer starts.
uint32_t layersOf(Operation *op) {
  auto repeat = op->getParentOfType<ipu_tile::RepeatOp>();
  return repeat ? static_cast<uint32_t>(repeat.getResidentLayers()) : 1;
}

struct PlanGemmPass : public mlir::ipu_compiler::impl::IPUPlanGemmBase<PlanGemmPass> {
  using IPUPlanGemmBase::IPUPlanGemmBase;

  struct Job {
    ipu_gemm::MatmulOp op;
    ipu::GemmProblem problem;
    ipu::GemmPlanConstraints constraints;
    /// The plan the op already carries: kept if it can be lowered.
    std::optional<ipu::GemmPlan> given;
    ipu::GemmPlanSearch search;
    std::optional<std::string> error;
    double seconds = 0;
    /// Matmuls of one function share tile memory; `group` numbers them.
    size_t group = 0;
    /// The cap on its resident weights the program's memory imposed (0: none).
    uint64_t weightCapBytes = 0;
  };

  void getDependentDialects(DialectRegistry &registry) const override {
    IPUPlanGemmBase::getDependentDialects(registry);
    // What the storage check's lowering of a copy loads.
    registry.insert<ipu_exchange::IPUExchangeDialect>();
  }

  /// What placing a copy of the program found.
  struct Overflow {
    ipu::MemoryClass memoryClass = ipu::MemoryClass::Standard;
    uint64_t bytes = 0; ///< Per tile that did not fit, whole KiB.
    uint64_t deficit = 0; ///< The same in bytes.
    /// The job whose transient buffer is the largest live on the tile,
    /// when the module's matmuls are one function's (their buffers' names,
    /// mm<N>, number them as the jobs are).
    std::optional<size_t> job;
    /// What the placed copy keeps below its buffers on its busiest tile
    /// (every phase's exchange code, vertex state, kernel code).
    uint64_t reservedBytes = 0;
  };

  /// Lowers and places a copy of `module` with the jobs' plans,
  /// quietly. Returns the bytes per tile that did not fit, in the class that
  /// overflowed, with a sentence for the remark; nothing when it fits or the
  /// copy cannot be lowered (the pipeline then reports why itself).
  std::optional<Overflow> storageOverflow(ModuleOp module, const std::vector<Job> &jobs,
                                          const ipu::TargetModel &target,
                                          std::string &why) {
    OwningOpRef<ModuleOp> copy = module.clone();
    size_t next = 0;
    bool matched = true;
    copy->walk([&](ipu_gemm::MatmulOp op) {
      if (next >= jobs.size() || jobs[next].search.finalists.empty()) {
        matched = false;
        return;
      }
      const ipu::GemmPlanChoice &best = jobs[next++].search.finalists.front();
      op.setPlanAttr(ipu_gemm::PlanAttr::fromGemmPlan(op.getContext(), best.plan,
                                                      best.cost.totalCycles));
    });
    if (!matched || next != jobs.size())
      return std::nullopt;
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    pm.addPass(mlir::ipu_compiler::createIPUAssignLayouts());
    pm.addPass(mlir::ipu_compiler::createIPULowerToTile());
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    ipu::QuietLog quietLog;
    if (failed(pm.run(*copy)))
      return std::nullopt;
    for (auto program : copy->getOps<ipu_tile::ProgramOp>()) {
      FailureOr<mlir::ipu_compiler::ProgramStorage> storage =
          mlir::ipu_compiler::planProgramStorage(program, target);
      if (failed(storage) || !storage->error)
        continue;
      const ipu::MemoryOverflow &overflow = storage->overflow;
      const ipu::MemoryClass c = overflow.memoryClass;
      const uint64_t available =
          target.allocatableBytes(c) -
          (c == ipu::MemoryClass::Standard ? storage->reservedBytes : 0);
      const uint64_t live = storage->placement.boundBytes[static_cast<int>(c)];
      // More live than there is: the excess; else first fit fragmented the
      // class: room for the buffer that did not fit.
      const uint64_t deficit =
          live > available ? live - available : overflow.bytesNeeded;
      why = llvm::formatv("placing its storage overflowed {0} memory: {1} "
                          "bytes live at once on tile {2}, {3} allocatable "
                          "beside {4} of code and vertex state ({5})",
                          ipu::memoryClassName(c), live,
                          storage->placement.peakTile[static_cast<int>(c)],
                          available, storage->reservedBytes, storage->reservedParts.str())
                .str();
      // The largest of them, so that a reader sees what holding back
      // cannot move (a tile's own rows, a head's small buffers).
      constexpr size_t kListed = 6;
      for (size_t i = 0; i < overflow.live.size() && i < kListed; ++i) {
        const ipu::BufferRequest &buffer = storage->requests[overflow.live[i].first];
        why += (i ? ", '" : " (the largest: '") + ipu::escapeText(buffer.name) +
               "' " + std::to_string(buffer.bytes);
        if (i + 1 == std::min(kListed, overflow.live.size()))
          why += overflow.live.size() > kListed
                     ? ", of " + std::to_string(overflow.live.size()) + " live)"
                     : ")";
      }
      Overflow found;
      found.memoryClass = c;
      found.reservedBytes = storage->reservedBytes;
      found.deficit = deficit;
      found.bytes = llvm::alignTo(deficit, 1024);
      const bool oneFunction = llvm::all_of(
          jobs, [&](const Job &job) { return job.group == jobs.front().group; });
      for (const auto &[request, address] : overflow.live) {
        StringRef name = storage->requests[request].name;
        unsigned index = 0;
        if (!oneFunction || !name.consume_front("mm") ||
            name.consumeInteger(10, index) || !name.starts_with(".") ||
            index >= jobs.size())
          continue;
        found.job = index;
        why += llvm::formatv("; '{0}' is matmul {1}'s ({2}x{3}x{4})",
                             ipu::escapeText(storage->requests[request].name), index,
                             jobs[index].problem.m, jobs[index].problem.k,
                             jobs[index].problem.n)
                   .str();
        break;
      }
      return found;
    }
    return std::nullopt;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
    if (failed(target))
      return signalPassFailure();

    FailureOr<ipu::GemmPlanConstraints> options = parseOptions(module);
    if (failed(options))
      return signalPassFailure();

    std::vector<Job> jobs;
    bool failedAny = false;
    DenseMap<Operation *, size_t> groupOf;
    module.walk([&](ipu_gemm::MatmulOp op) {
      Job job;
      job.op = op;
      // Weights (a function argument, or a repeated layer's) are resident
      // for the whole program.
      ipu_tile::describeRhs(op.getRhs(), job.problem);
      // The expansion's body, which the plan's cost charges.
      if (job.problem.expandedFrom) {
        auto expansion = op.getRhs().getDefiningOp<ipu_tile::ElementwiseOp>();
        FailureOr<ipu::ElementwiseBody> body = ipu_tile::buildElementwiseBody(
            expansion, expansion.getBody().front(), {ipu::Broadcast::Full});
        if (succeeded(body))
          job.problem.expansion =
              std::make_shared<const ipu::ElementwiseBody>(std::move(*body));
      }
      // Only weights stay a block per layer: an activation B (attention's
      // K^T and V) is one layer's, gathered as the layer runs.
      job.problem.weightLayers = job.problem.rhsIsWeight ? layersOf(op) : 1;
      if (auto repeat = op->getParentOfType<ipu_tile::RepeatOp>())
        job.problem.weightsStreamed = repeat.getStreamed() && job.problem.rhsIsWeight;
      // An argument A streams straight into a serial split's chunks.
      job.problem.lhsFromHost = ipu_tile::isFunctionArgument(op.getLhs());
      // Matmuls of one function share its tiles, repeated layers included.
      Operation *parent = functionOf(op);
      job.group = groupOf.try_emplace(parent, groupOf.size()).first->second;
      auto lhs = op.getLhs().getType();
      job.problem.wordBytes = target->exchangeWordBytes();
      job.problem.m = op.getGemmM();
      job.problem.k = op.getGemmK();
      job.problem.n = op.getGemmN();
      job.problem.batches = op.getBatches();
      job.problem.rhsTransposed = op.getTransposeRhs();
      // An argument A^T is transposed by its host stream; a computed one
      // by a transpose on each tile, which the plan pays for.
      job.problem.lhsTransposed =
          op.getTransposeLhs() && !ipu_tile::isFunctionArgument(op.getLhs());
      job.problem.inType = *ipu_tile::toElementType(lhs.getElementType());
      job.problem.accType = *ipu_tile::toElementType(op.getAccumulatorType());
      job.problem.outType =
          *ipu_tile::toElementType(op.getResult().getType().getElementType());
      job.problem.epilogue = epilogueOf(op);
      job.problem.rowReductions = rowReductionsOf(op);
      // A repeated layer's long bias stays in its home (rowStaysInHome):
      // one layer's row reaches the plan's blocks as the layer runs.
      job.problem.epilogueRowLayers = job.problem.weightLayers;
      if (job.problem.epilogue && job.problem.weightLayers > 1) {
        auto epilogue = cast<ipu_tile::ElementwiseOp>(*op->getUsers().begin());
        bool inHomes = true;
        for (auto [i, input] : llvm::enumerate(epilogue.getInputs()))
          if (epilogue.getBroadcast(i) == ipu::Broadcast::Row &&
              ipu_tile::isStreamedArgument(input) &&
              !ipu_tile::rowStaysInHome(cast<RankedTensorType>(input.getType())))
            inHomes = false;
        if (inHomes)
          job.problem.epilogueRowLayers = 1;
      }
      // The value that leaves the matmul's layout: its epilogue's, or its
      // own. Returned only, it leaves by host stream.
      Value leaving = job.problem.epilogue
                          ? Value(op->getUsers().begin()->getResult(0))
                          : Value(op.getResult());
      job.problem.resultExchanged =
          !llvm::all_of(leaving.getUsers(),
                        [](Operation *user) { return isa<func::ReturnOp>(user); });
      FailureOr<ipu::GemmPlanConstraints> constraints = collectConstraints(
          op, *options, partials, job.problem.rhsIsWeight, job.problem.allowHalfPartials);
      if (failed(constraints)) {
        failedAny = true;
        return;
      }
      job.constraints = *constraints;
      if (ipu_gemm::PlanAttr plan = op.getPlanAttr()) {
        job.given = plan.toGemmPlan();
        // Writing partials = "f16" is the user allowing them.
        if (job.given->partials == ipu::ElementType::F16)
          job.problem.allowHalfPartials = true;
      }
      // A repeated layer's gathered homes (every layer's block) may stay in
      // either class: planGemmProgram places them once every plan is chosen.
      job.problem.homesOpen =
          job.problem.weightLayers > 1 && !job.given && !job.constraints.homes;
      jobs.push_back(std::move(job));
    });
    if (failedAny)
      return signalPassFailure();

    // Matmuls of one function share tile memory, so they are planned in
    // program order, each next to the others (planGemmProgram). Functions
    // are independent and touch no IR: they run in parallel, and results
    // apply in program order, so the output never depends on threads.
    std::vector<std::vector<size_t>> groups(groupOf.size());
    for (size_t index = 0; index < jobs.size(); ++index)
      groups[jobs[index].group].push_back(index);
    // The elementwise ops of each function (softmax, layer norm) hold their
    // operands and result while the weights are resident: the largest, as
    // if spread evenly over the tiles.
    DenseMap<Operation *, uint64_t> coexisting, resident, residentRows;
    DenseMap<Operation *, llvm::DenseSet<uint64_t>> bodies;
    // A repeated layer's long rows stay in homes (rowHomeLayout), each slot
    // on tiles of its own: per function, the bytes of homes on each tile
    // (every layer's block, or one layer's when streamed), each slot once.
    DenseMap<Operation *, std::vector<uint64_t>> homeBytes;
    llvm::DenseSet<std::pair<Operation *, unsigned>> homeSlots;
    auto staysInHome = [&](ipu_tile::ElementwiseOp op, Value input) {
      auto argument = dyn_cast<BlockArgument>(input);
      auto repeat = argument ? dyn_cast_or_null<ipu_tile::RepeatOp>(
                                   argument.getOwner()->getParentOp())
                             : ipu_tile::RepeatOp();
      auto type = cast<RankedTensorType>(input.getType());
      if (!repeat || argument.getArgNumber() == 0 || !ipu_tile::rowStaysInHome(type))
        return false;
      const unsigned slot = argument.getArgNumber() - 1;
      if (!homeSlots.insert({repeat, slot}).second)
        return true;
      const ipu::ElementType element = *ipu_tile::toElementType(type.getElementType());
      ipu::BlockLayout home =
          ipu_tile::rowHomeLayout(type.getShape().back(), element, slot, *target);
      std::vector<uint64_t> &tiles = homeBytes[functionOf(op)];
      tiles.resize(target->tiles, 0);
      for (uint32_t j = 0; j < home.gridCols; ++j)
        tiles[home.tileMap[j]] += uint64_t(repeat.getResidentLayers()) *
                                  (home.colSplits[j + 1] - home.colSplits[j]) *
                                  ipu::elementBytes(element);
      return true;
    };
    module.walk([&](ipu_tile::ElementwiseOp op) {
      // Its kernel's code once per distinct body (on every tile, at most),
      // and its vertices' state (two compute sets for a split reduction).
      SmallVector<ipu::Broadcast> broadcasts;
      for (unsigned i = 0; i < op.getInputs().size(); ++i)
        broadcasts.push_back(op.getBroadcast(i).value_or(ipu::Broadcast::Full));
      FailureOr<ipu::ElementwiseBody> body = ipu_tile::buildElementwiseBody(
          op, op.getBody().front(), broadcasts, op.getRowReduction(), op.getInitValue());
      uint64_t &kept = resident[functionOf(op)];
      if (succeeded(body) &&
          bodies[functionOf(op)].insert(ipu::bodyHash(*body)).second)
        kept += ipu::elementwiseCodeBytes(*target, *body);
      kept += (op.getReduce() ? 2 : 1) *
              target->vertexStateBytes(op.getInputs().size() + 1, 2);
      // A matmul's epilogue (its result's only reader) is in that plan's
      // cost: its result buffer, and its bias in the plan's column blocks.
      std::optional<unsigned> first = op.getFirstFullInput();
      Value read = first ? op.getInputs()[*first] : Value();
      if (read && read.getDefiningOp<ipu_gemm::MatmulOp>() && read.hasOneUse()) {
        // Only its bias's home, if any, stays apart from the plan's tiles.
        for (auto [i, input] : llvm::enumerate(op.getInputs()))
          if (broadcasts[i] == ipu::Broadcast::Row)
            staysInHome(op, input);
        return;
      }
      // A row argument of another op (a layer norm's scale and shift) stays
      // resident in interleaved memory, its column blocks on the tiles of
      // theirs: at most the whole row a tile.
      for (auto [i, input] : llvm::enumerate(op.getInputs()))
        if (ipu_tile::isStreamedArgument(input) && broadcasts[i] == ipu::Broadcast::Row) {
          auto type = cast<RankedTensorType>(input.getType());
          const uint64_t word = target->exchangeWordBytes();
          const uint64_t rowBytes =
              (uint64_t(type.getNumElements()) *
                   ipu::elementBytes(*ipu_tile::toElementType(type.getElementType())) +
               word - 1) / word * word;
          // A repeated layer's long row stays in its home (counted below)
          // and one layer's row is broadcast to the op's tiles as it runs.
          if (staysInHome(op, input))
            residentRows[functionOf(op)] += rowBytes;
          else
            residentRows[functionOf(op)] += layersOf(op) * rowBytes;
        }
      uint64_t bytes = 0;
      for (Value value : llvm::concat<Value>(op.getInputs(), op->getResults())) {
        auto type = cast<RankedTensorType>(value.getType());
        bytes += uint64_t(type.getNumElements()) *
                 ipu::elementBytes(*ipu_tile::toElementType(type.getElementType()));
      }
      uint64_t &largest = coexisting[functionOf(op)];
      largest = std::max(largest, (bytes + target->tiles - 1) / target->tiles);
    });
    for (auto &[function, tiles] : homeBytes)
      residentRows[function] += *std::max_element(tiles.begin(), tiles.end());
    // Bytes per tile and class the planner holds back beyond its model,
    // learnt from placing a copy of the program.
    uint64_t holdBack[2] = {0, 0};
    // Per job: the transient bytes per tile its plan may take, learnt so.
    std::vector<uint64_t> transientCaps(jobs.size(), UINT64_MAX);
    auto planAll = [&] {
    parallelForEach(&getContext(), groups, [&](const std::vector<size_t> &group) {
      std::vector<ipu::ProgramGemm> program;
      for (size_t index : group) {
        program.emplace_back();
        program.back().problem = jobs[index].problem;
        program.back().constraints = jobs[index].constraints;
        program.back().given = jobs[index].given;
        program.back().coexistingStandardBytes =
            coexisting.lookup(functionOf(jobs[index].op));
        program.back().residentStandardBytes =
            resident.lookup(functionOf(jobs[index].op));
        program.back().residentInterleavedBytes =
            residentRows.lookup(functionOf(jobs[index].op)) + holdBack[1];
        program.back().residentStandardBytes += holdBack[0];
        program.back().transientCapBytes = transientCaps[index];
      }
      ipu::planGemmProgram(*target, program, finalists, rerank);
      for (size_t position = 0; position < group.size(); ++position) {
        Job &job = jobs[group[position]];
        job.search = std::move(program[position].search);
        job.error = std::move(program[position].error);
        job.seconds = program[position].seconds;
        job.weightCapBytes = program[position].weightCapBytes;
      }
    });
    };
    planAll();
    // The model misses some of what the lowering adds (exchange code of
    // other ops' phases, fragmentation): a placed copy of the program
    // decides, and the planner plans again with what overflowed held back.
    auto planned = [&] {
      return llvm::none_of(jobs, [](const Job &job) { return job.error.has_value(); });
    };
    auto replan = [&] {
      for (Job &job : jobs) {
        job.search = ipu::GemmPlanSearch();
        job.error.reset();
      }
      auto start = std::chrono::steady_clock::now();
      planAll();
      ipu::logInfo(llvm::formatv(
          "ipu-plan-gemm: planned the program again in {0:F1} s",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
              .count()));
      if (ipu::debugEnabled())
        for (auto [index, job] : llvm::enumerate(jobs))
          if (!job.error && !job.search.finalists.empty())
            ipu::logDebug(llvm::formatv("ipu-plan-gemm: planned again operation={0} "
                                        "plan=\"{1}\"",
                                        index,
                                        job.search.finalists.front().plan.str()));
    };
    // What the plans count below the buffers of every tile: each matmul's
    // exchange code and vertex state, the other ops' kernels and vertex
    // state, and what they hold back. Only when the matmuls are one
    // function's (the program a placed copy reports on).
    auto countedReservedBytes = [&]() -> std::optional<uint64_t> {
      if (jobs.empty() || !llvm::all_of(jobs, [&](const Job &job) {
            return job.group == jobs.front().group && !job.search.finalists.empty();
          }))
        return std::nullopt;
      uint64_t bytes = resident.lookup(functionOf(jobs.front().op)) + holdBack[0];
      for (const Job &job : jobs)
        bytes += job.search.finalists.front().cost.codeBytes;
      return bytes;
    };
    // Each round places a copy of the program and, when it overflows,
    // plans again with one more cap or hold-back; the last round's plans
    // are placed too (a round that plans again is followed by one that
    // checks). The f16 so400m tower with streamed weights fits at the sixth
    // placement: five rounds capped fc2, P.V, held the code gap back,
    // capped fc2 and fc1; with four rounds its last plans were never placed
    // and the final placement overflowed.
    constexpr unsigned kStorageRounds = 6;
    for (unsigned round = 0; validateStorage && planned() && round < kStorageRounds; ++round) {
      std::string why;
      auto placing = std::chrono::steady_clock::now();
      std::optional<Overflow> overflow = storageOverflow(module, jobs, *target, why);
      // Placing a copy lowers and schedules every phase: for a tower,
      // often longer than the planning itself, so each round says so.
      ipu::logInfo(llvm::formatv(
          "ipu-plan-gemm: storage round {0}: placed a copy of the program in "
          "{1:F1} s: {2}",
          round,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - placing)
              .count(),
          overflow ? "overflowed, planning again" : "fits"));
      if (!overflow)
        break;
      // When the code and vertex state the tiles keep below their buffers,
      // beyond what the plans counted (other ops' exchange code, each kind
      // of code aligned to memory elements), is what overflowed, every plan
      // holds it back and no matmul is capped for it: a cap made room only
      // by pushing one matmul into slower plans (the tower's fc1 into
      // serial chunks, and the rounds after it into minutes of planning).
      if (std::optional<uint64_t> counted = countedReservedBytes();
          counted && overflow->memoryClass == ipu::MemoryClass::Standard &&
          overflow->reservedBytes >= *counted + overflow->deficit) {
        holdBack[0] += llvm::alignTo(overflow->reservedBytes - *counted, 1024);
        emitRemark(module.getLoc())
            << "planned again: " << why << "; the plans counted " << *counted
            << " of them: they now hold back " << holdBack[0] << " standard and "
            << holdBack[1] << " interleaved bytes per tile";
        replan();
        continue;
      }
      // A matmul's own buffer on the tile: that matmul's plan takes that
      // many transient bytes fewer (its blocks there are what the even
      // spread of the planner's model missed; holding back from every plan
      // may not move it at all). Otherwise every plan holds the bytes back.
      std::optional<uint64_t> cap;
      if (overflow->job) {
        const Job &culprit = jobs[*overflow->job];
        const uint64_t transient = culprit.search.finalists.front().cost.transientBytes();
        if (transient > overflow->bytes)
          cap = std::min(transientCaps[*overflow->job], transient - overflow->bytes);
      }
      if (cap) {
        transientCaps[*overflow->job] = *cap;
        emitRemark(module.getLoc())
            << "planned again: " << why << "; its plan now takes at most " << *cap
            << " transient bytes per tile";
      } else {
        holdBack[static_cast<int>(overflow->memoryClass)] += overflow->bytes;
        emitRemark(module.getLoc())
            << "planned again: " << why << "; the plans now hold back "
            << holdBack[0] << " standard and " << holdBack[1]
            << " interleaved bytes per tile";
      }
      replan();
    }

    for (auto [index, job] : llvm::enumerate(jobs)) {
      if (job.error && job.given) {
        job.op.emitError("cannot keep the given plan ")
            << job.op.getPlanAttr() << " for the " << job.problem.m << "x"
            << job.problem.k << "x" << job.problem.n << " matmul on '"
            << target->name << "': " << *job.error;
        failedAny = true;
        continue;
      }
      if (job.error) {
        InFlightDiagnostic error = job.op.emitError("cannot plan ")
            << job.problem.m << "x" << job.problem.k << "x" << job.problem.n
            << " matmul on '" << target->name << "': " << *job.error;
        // Out of memory: say how much of the program does fit, in order
        // (a stack of blocks fits up to the block of the first failure).
        if (job.error->find("no plan fits") != std::string::npos) {
          size_t before = 0, count = 0, weights = 0;
          for (const Job &other : jobs)
            if (other.group == job.group) {
              before += &other < &job && !other.error;
              ++count;
              if (other.problem.rhsIsWeight)
                weights += size_t(other.problem.k) * other.problem.n *
                           ipu::elementBytes(other.problem.inType);
            }
          error.attachNote()
              << "the function's first " << before << " of " << count
              << " matmuls fit before this one; its resident weights are "
              << weights << " bytes, " << (weights + target->tiles - 1) / target->tiles
              << " per tile unreplicated, and every matmul's plan, exchange code "
              << "and the elementwise ops' values share the tiles' "
              << target->allocatableBytes(ipu::MemoryClass::Standard) << " standard and "
              << target->allocatableBytes(ipu::MemoryClass::Interleaved)
              << " interleaved bytes";
          if (std::optional<std::pair<size_t, size_t>> blocks =
                  repeatsThatFit(jobs, job))
            error.attachNote()
                << "the function repeats a sequence of " << blocks->first
                << " matmuls " << count / blocks->first
                << " times (a stack of blocks): the first " << blocks->second
                << " repeats fit";
        }
        failedAny = true;
        continue;
      }
      report(index, job, *target);
      const ipu::GemmPlanChoice &best = job.search.finalists.front();
      // Re-ranked finalists go with the op to the package's report.
      if (best.scheduled) {
        SmallVector<Attribute> finalists;
        OpBuilder b(&getContext());
        for (const ipu::GemmPlanChoice &choice : job.search.finalists) {
          if (!choice.scheduled)
            continue;
          finalists.push_back(b.getDictionaryAttr(
              {b.getNamedAttr("plan", ipu_gemm::PlanAttr::fromGemmPlan(
                                          &getContext(), choice.plan,
                                          choice.cost.totalCycles)),
               b.getNamedAttr("scheduled_cycles",
                              b.getI64IntegerAttr(choice.scheduledCycles)),
               b.getNamedAttr("fits", b.getBoolAttr(choice.scheduledFits))}));
        }
        job.op->setAttr("ipu_gemm.finalists", b.getArrayAttr(finalists));
      }
      job.op.setPlanAttr(ipu_gemm::PlanAttr::fromGemmPlan(
          &getContext(), best.plan,
          // The matmul's own cycles (the epilogue's are its op's), with its
          // phases as scheduled when its finalists were re-ranked.
          (best.scheduled ? best.scheduledCycles : best.cost.totalCycles) -
              best.cost.epilogueCycles - best.cost.rowReductionCycles));
    }
    if (failedAny)
      signalPassFailure();
  }

  /// When the matmuls of `failed`'s function repeat one sequence of
  /// shapes (a stack of encoder blocks), the sequence's length and how
  /// many whole repeats come before the function's first matmul that
  /// found no plan.
  template <typename JobList, typename JobType>
  static std::optional<std::pair<size_t, size_t>>
  repeatsThatFit(const JobList &jobs, const JobType &failed) {
    SmallVector<const JobType *> group;
    for (const JobType &other : jobs)
      if (other.group == failed.group)
        group.push_back(&other);
    auto same = [](const JobType *a, const JobType *b) {
      const ipu::GemmProblem &x = a->problem, &y = b->problem;
      return std::make_tuple(x.m, x.k, x.n, x.batches, x.rhsIsWeight,
                             x.rhsTransposed, x.inType) ==
             std::make_tuple(y.m, y.k, y.n, y.batches, y.rhsIsWeight,
                             y.rhsTransposed, y.inType);
    };
    const size_t count = group.size();
    for (size_t period = 1; 2 * period <= count; ++period) {
      if (count % period != 0)
        continue;
      bool repeats = true;
      for (size_t i = period; i < count && repeats; ++i)
        repeats = same(group[i], group[i % period]);
      if (!repeats)
        continue;
      size_t firstFailure = 0;
      while (firstFailure < count && !group[firstFailure]->error)
        ++firstFailure;
      return std::make_pair(period, firstFailure / period);
    }
    return std::nullopt;
  }

  /// The pass options as constraints; a malformed value is an error naming
  /// the option.
  FailureOr<ipu::GemmPlanConstraints> parseOptions(ModuleOp module) {
    ipu::GemmPlanConstraints options;
    auto bad = [&](StringRef option, StringRef value, StringRef expected) {
      return module.emitError("pass option ")
             << option << "='" << value << "' is not " << expected;
    };
    // Plans hold partitions in 32 bits; 0 leaves the field free.
    for (auto [name, value, field] :
         {std::make_tuple("rows", int64_t(rows), &options.rows),
          std::make_tuple("cols", int64_t(cols), &options.cols),
          std::make_tuple("inner", int64_t(inner), &options.inner),
          std::make_tuple("serial", int64_t(serial), &options.serial)}) {
      if (value < 0 || value > UINT32_MAX)
        return module.emitError("pass option ")
               << name << "=" << value
               << " is out of range [1, 2^32) (0 leaves it free)";
      if (value > 0)
        *field = static_cast<uint32_t>(value);
    }
    if (!orientation.empty()) {
      if (orientation != "normal" && orientation != "swapped")
        return bad("orientation", orientation, "normal or swapped");
      options.swapped = orientation == "swapped";
    }
    if (!weights.empty()) {
      options.weights = ipu::parseMemoryClass(weights);
      if (!options.weights)
        return bad("weights", weights, "standard or interleaved");
    }
    if (!reduction.empty()) {
      options.reduction = ipu::parseReduction(reduction);
      if (!options.reduction)
        return bad("reduction", reduction, "complete or staged");
    }
    if (!staging.empty()) {
      if (staging != "true" && staging != "false")
        return bad("staging", staging, "true or false");
      options.localStaging = staging == "true";
    }
    if (!gathered.empty()) {
      if (gathered != "true" && gathered != "false")
        return bad("gathered", gathered, "true or false");
      options.gatheredWeights = gathered == "true";
    }
    if (maxWeightReplicas > 0)
      options.maxWeightReplicas = maxWeightReplicas;
    if (!partials.empty() && partials != "f32" && partials != "f16" &&
        partials != "any")
      return bad("partials", partials, "f32, f16 or any");
    return options;
  }

  /// The elementwise op that runs on the matmul's result in its layout (its
  /// only user, reading it whole as its first full input), as the planner
  /// costs it.
  static std::shared_ptr<const ipu::ElementwiseBody>
  epilogueOf(ipu_gemm::MatmulOp op) {
    if (!op->hasOneUse())
      return nullptr;
    auto elementwise = dyn_cast<ipu_tile::ElementwiseOp>(*op->getUsers().begin());
    if (!elementwise)
      return nullptr;
    std::optional<unsigned> first = elementwise.getFirstFullInput();
    if (!first || elementwise.getInputs()[*first] != op.getResult())
      return nullptr;
    SmallVector<ipu::Broadcast> broadcasts;
    for (unsigned i = 0; i < elementwise.getInputs().size(); ++i)
      broadcasts.push_back(*elementwise.getBroadcast(i));
    FailureOr<ipu::ElementwiseBody> body = ipu_tile::buildElementwiseBody(
        elementwise, elementwise.getBody().front(), broadcasts);
    if (failed(body))
      return nullptr;
    return std::make_shared<const ipu::ElementwiseBody>(std::move(*body));
  }

  /// The row reductions that run in the matmul's result layout: those whose
  /// first full input is the result, or an elementwise op computed in it
  /// (whose own first full input is, in turn).
  static std::vector<std::shared_ptr<const ipu::ElementwiseBody>>
  rowReductionsOf(ipu_gemm::MatmulOp op) {
    std::vector<std::shared_ptr<const ipu::ElementwiseBody>> reductions;
    SmallVector<Value> inLayout{op.getResult()};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!inLayout.empty()) {
      Value value = inLayout.pop_back_val();
      for (Operation *user : value.getUsers()) {
        auto elementwise = dyn_cast<ipu_tile::ElementwiseOp>(user);
        if (!elementwise || !seen.insert(user).second)
          continue;
        std::optional<unsigned> first = elementwise.getFirstFullInput();
        if (!first || elementwise.getInputs()[*first] != value)
          continue;
        if (!elementwise.getReduce()) {
          inLayout.push_back(elementwise.getResult());
          continue;
        }
        SmallVector<ipu::Broadcast> broadcasts;
        for (unsigned i = 0; i < elementwise.getInputs().size(); ++i)
          broadcasts.push_back(*elementwise.getBroadcast(i));
        FailureOr<ipu::ElementwiseBody> body = ipu_tile::buildElementwiseBody(
            elementwise, elementwise.getBody().front(), broadcasts,
            elementwise.getRowReduction(), elementwise.getInitValue());
        if (succeeded(body))
          reductions.push_back(
              std::make_shared<const ipu::ElementwiseBody>(std::move(*body)));
      }
    }
    return reductions;
  }

  void report(size_t index, Job &job, const ipu::TargetModel &target) {
    const ipu::GemmPlanSearch &search = job.search;
    if (job.given) {
      const ipu::GemmPlanChoice &kept = search.finalists.front();
      std::string line = llvm::formatv(
          "{0} estimatedCycles={1} computeCycles={2} exchangeCycles={3} "
          "reductionCycles={4} syncCycles={5} peakStandardBytes={6} "
          "peakInterleavedBytes={7} fitsMemoryModel={8}",
          kept.plan.str(), kept.cost.totalCycles, kept.cost.computeCycles,
          kept.cost.exchangeCycles, kept.cost.reductionCycles,
          kept.cost.syncCycles, kept.cost.peakBytes[0], kept.cost.peakBytes[1],
          search.fitting ? "true" : "false");
      ipu::logInfo(llvm::formatv("ipu-plan-gemm: kept the given gemm plan "
                                   "operation={0} shape={1}x{2}x{3} {4}",
                                   index, job.problem.m, job.problem.k,
                                   job.problem.n, line));
      mlir::emitRemark(job.op.getLoc())
          << "kept the given plan " << kept.plan.str() << " on '" << target.name
          << "': estimated " << kept.cost.totalCycles << " cycles";
      return;
    }
    std::string constraintText =
        job.constraints.empty() ? "none" : job.constraints.str();
    ipu::logInfo(llvm::formatv(
        "ipu-plan-gemm: searched gemm plans operation={0} shape={1}x{2}x{3} "
        "candidates={4} matchingPlans={5} costedPlans={6} prunedPlans={7} "
        "fittingPlans={8} constraint=\"{9}\" seconds={10:F4}",
        index, job.problem.m, job.problem.k, job.problem.n, search.candidates,
        search.matching, search.costed, search.pruned, search.fitting,
        constraintText, job.seconds));
    for (auto [rank, choice] : llvm::enumerate(search.finalists)) {
      std::string line = llvm::formatv(
          "finalist={0} {1} estimatedCycles={2} computeCycles={3} "
          "exchangeCycles={4} reductionCycles={5} syncCycles={6} "
          "peakStandardBytes={7} peakInterleavedBytes={8} activeTiles={9} "
          "ampMacsPerCycle={10}{11}",
          rank, choice.plan.str(), choice.cost.totalCycles,
          choice.cost.computeCycles, choice.cost.exchangeCycles,
          choice.cost.reductionCycles, choice.cost.syncCycles,
          choice.cost.peakBytes[0], choice.cost.peakBytes[1],
          choice.cost.activeTiles,
          target.ampMacsPerCycle(job.problem.inType,
                                 job.problem.inType == ipu::ElementType::F32
                                     ? ipu::ElementType::F32
                                     : choice.plan.partials),
          (job.problem.epilogue
               ? " epilogueCycles=" + std::to_string(choice.cost.epilogueCycles)
               : std::string()) +
              (job.problem.rowReductions.empty()
                   ? std::string()
                   : " rowReductionCycles=" +
                         std::to_string(choice.cost.rowReductionCycles)) +
              (job.problem.weightsStreamed
                   ? " hostCycles=" + std::to_string(choice.cost.hostCycles)
                   : std::string()) +
              // A weight stored in f8 and expanded where it stays.
              (job.problem.expansion
                   ? " expansionCycles=" + std::to_string(choice.cost.expansionCycles) +
                         " weightStorage=" +
                         std::string(ipu::elementTypeName(job.problem.weightStorageType()))
                   : std::string()) +
              // As the user's stack logs its scheduled finalists.
              (choice.scheduled
                   ? " analyticalCycles=" + std::to_string(choice.cost.totalCycles) +
                         " scheduledCycles=" + std::to_string(choice.scheduledCycles) +
                         " scheduledFits=" + (choice.scheduledFits ? "true" : "false")
                   : std::string()));
      ipu::logInfo("ipu-plan-gemm: retained gemm plan finalist operation=" +
                     std::to_string(index) + " " + line);
      mlir::emitRemark(job.op.getLoc()) << line;
    }
    const ipu::GemmPlanChoice &best = search.finalists.front();
    mlir::emitRemark(job.op.getLoc()) << "chose plan " << best.plan.str() << " of "
                        << search.matching << " matching plans ("
                        << search.candidates << " in the space, "
                        << search.pruned << " pruned by the lower bound, "
                        << search.fitting << " of the costed fit memory) on '"
                        << target.name << "': estimated " << best.cost.totalCycles
                        << " cycles"
                        << (best.scheduled
                                ? ", " + std::to_string(best.scheduledCycles) +
                                      " scheduled (the fewest of the " +
                                      std::to_string(llvm::count_if(
                                          search.finalists,
                                          [](const ipu::GemmPlanChoice &c) {
                                            return c.scheduled;
                                          })) +
                                      " finalists lowered, scheduled and placed)"
                                : std::string())
                        << (job.problem.weightLayers > 1
                                ? "; " + std::to_string(job.problem.weightLayers) +
                                      " layers' weights stay, a block each"
                                : std::string())
                        << (job.weightCapBytes
                                ? "; its weights capped at " +
                                      std::to_string(job.weightCapBytes) +
                                      " bytes per tile (its share of tile memory: "
                                      "the program's weights, replicated as the "
                                      "fastest plans want, do not fit)"
                                : std::string());
  }
};
} // namespace
