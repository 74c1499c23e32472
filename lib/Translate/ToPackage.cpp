//===- ToPackage.cpp - Placed ipu_tile programs to packages ---------------===//

#include "IPU/Translate/ToPackage.h"
#include "IPU/Dialect/Gemm/IR/Gemm.h"
#include "IPU/Dialect/Exchange/IR/PhaseTransfers.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Package/LayoutStreams.h"
#include "IPU/Support/Log.h"
#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {
/// "file:line:col" of the first file location in `loc` (a fused or named
/// location wraps one), or "" when it has none.
std::string sourceLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn())
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

class PackageBuilder {
public:
  PackageBuilder(ipu_tile::ProgramOp program, const ipu::TargetModel &target)
      : program(program), target(target) {}

  FailureOr<ipu::Package> build();

private:
  FailureOr<uint32_t> addressOf(ipu_tile::BufferOp buffer, Operation *user);
  /// A stream of one layer per iteration (layer_arguments).
  LogicalResult addLayerStreams(ipu_exchange::StreamInOp in);
  LogicalResult addStream(ipu_tile::BufferOp buffer, bool toDevice, bool weight,
                          bool transpose, int32_t index, Operation *user,
                          std::optional<ArrayRef<int64_t>> hostShape,
                          std::optional<ArrayRef<int64_t>> declaredShape,
                          Attribute constant = {},
                          std::optional<int64_t> chunk = {});
  LogicalResult addComputeSet(ipu_tile::ComputeSetOp op);
  LogicalResult addPhase(ipu_exchange::PhaseOp op);
  ipu_tile::BufferOp lookup(Operation *user, FlatSymbolRefAttr ref) {
    return ipu_tile::lookupBuffer(user, ref);
  }

  ipu_tile::ProgramOp program;
  const ipu::TargetModel &target;
  ipu::Package package;
};
} // namespace

FailureOr<uint32_t> PackageBuilder::addressOf(ipu_tile::BufferOp buffer,
                                              Operation *user) {
  if (!buffer)
    return user->emitError("refers to a missing buffer");
  std::optional<int64_t> address = buffer.getAddress();
  if (!address)
    return buffer.emitError("buffer has no address: run --ipu-place-storage "
                            "before --ipu-to-package");
  return static_cast<uint32_t>(*address);
}

LogicalResult PackageBuilder::addStream(ipu_tile::BufferOp buffer, bool toDevice,
                                        bool weight, bool transpose,
                                        int32_t index, Operation *user,
                                        std::optional<ArrayRef<int64_t>> hostShape,
                                        std::optional<ArrayRef<int64_t>> declaredShape,
                                        Attribute constant,
                                        std::optional<int64_t> chunk) {
  FailureOr<uint32_t> address = addressOf(buffer, user);
  if (failed(address))
    return failure();
  RankedTensorType type = buffer.getTensorType();
  ipu::BlockLayout layout = *ipu_tile::toBlockLayout(type, target.exchangeWordBytes());
  ipu::HostStream stream;
  stream.name = buffer.getSymName().str();
  stream.toDevice = toDevice;
  stream.weight = weight;
  stream.index = index;
  stream.type = layout.type;
  // The host tensor is the argument, of the buffer's full shape; a
  // transposing stream writes its transpose, gathering a host column into
  // each tile row.
  stream.shape.assign(type.getShape().begin(), type.getShape().end());
  // A chunk's host tensor is one batch's matrix.
  if (chunk)
    stream.shape.erase(stream.shape.begin(), stream.shape.end() - 2);
  if (transpose)
    std::swap(stream.shape[stream.shape.size() - 2], stream.shape.back());
  // The host holds the same elements in its own shape (the verifier checks
  // the count).
  if (hostShape)
    stream.shape.assign(hostShape->begin(), hostShape->end());
  if (declaredShape)
    stream.declaredShape.assign(declaredShape->begin(), declaredShape->end());
  // The argument's value, once however many streams carry it.
  if (constant &&
      llvm::none_of(package.constants, [&](const ipu::ArgumentConstant &known) {
        return known.argument == static_cast<uint32_t>(index);
      })) {
    FailureOr<std::vector<char>> bytes = ipu_tile::constantBytes(constant, user);
    if (failed(bytes))
      return failure();
    package.constants.push_back(
        {static_cast<uint32_t>(index), std::vector<uint8_t>(bytes->begin(), bytes->end())});
  }
  // Results are read from the first replica only.
  if (std::optional<std::string> error = ipu::layoutStreamPieces(
          layout, *address, /*allReplicas=*/toDevice, transpose, stream.pieces, chunk))
    return user->emitError("cannot stream @")
           << buffer.getSymName() << ": " << *error;
  package.program.push_back({toDevice ? ipu::StepKind::StreamIn
                                      : ipu::StepKind::StreamOut,
                             static_cast<uint32_t>(package.streams.size())});
  package.streams.push_back(std::move(stream));
  return success();
}

LogicalResult PackageBuilder::addLayerStreams(ipu_exchange::StreamInOp in) {
  // A stream per layer, all into the one buffer; the program's step streams
  // the first, which names every layer's.
  ArrayRef<int32_t> layers = *in.getLayerArguments();
  const uint32_t first = static_cast<uint32_t>(package.streams.size());
  const size_t step = package.program.size();
  for (auto [layer, argument] : llvm::enumerate(layers)) {
    Attribute constant;
    if (std::optional<ArrayAttr> constants = in.getLayerConstants())
      if (!isa<UnitAttr>((*constants)[layer]))
        constant = (*constants)[layer];
    if (failed(addStream(lookup(in, in.getBufferAttr()), true, /*weight=*/false,
                         in.getTranspose(), argument, in, in.getHostShape(),
                         in.getDeclaredShape(), constant, std::nullopt)))
      return failure();
  }
  package.program.resize(step + 1);
  for (uint32_t layer = 0; layer < layers.size(); ++layer)
    package.streams[first].layerStreams.push_back(first + layer);
  return success();
}

LogicalResult PackageBuilder::addComputeSet(ipu_tile::ComputeSetOp op) {
  ipu::ComputeSet computeSet;
  computeSet.name = op.getSymName().str();
  computeSet.kernel = op.getKernel().str();
  computeSet.location = sourceLocation(op.getLoc());
  std::optional<SmallVector<int32_t>> tiles = op.getTileList();
  if (!tiles)
    return op.emitOpError("has no tiles: ")
           << op.getTilesOfAttr() << " is not an ipu_tile.buffer with a layout";
  computeSet.tiles.assign(tiles->begin(), tiles->end());
  SymbolTableCollection symbolTable;
  FailureOr<SmallVector<int64_t>> params = op.getVertexParams(symbolTable);
  if (failed(params))
    return failure();
  computeSet.params.assign(params->begin(), params->end());
  SmallVector<uint32_t> operandAddresses;
  for (auto ref : op.getOperands().getAsRange<FlatSymbolRefAttr>()) {
    FailureOr<uint32_t> address = addressOf(lookup(op, ref), op);
    if (failed(address))
      return failure();
    operandAddresses.push_back(*address);
  }
  // Every block of a buffer sits at the buffer's address on its tile.
  for (size_t t = 0; t < computeSet.tiles.size(); ++t)
    computeSet.operandAddress.insert(computeSet.operandAddress.end(),
                                     operandAddresses.begin(),
                                     operandAddresses.end());
  // A serial operand moves by one chunk of its tile's block per iteration:
  // the block holds the loop's chunks one after another.
  if (op.getSerialOperands()) {
    const size_t operands = operandAddresses.size();
    computeSet.operandAdvance.assign(computeSet.tiles.size() * operands, 0);
    for (auto [o, ref] : llvm::enumerate(op.getOperands().getAsRange<FlatSymbolRefAttr>())) {
      if (!op.isSerialOperand(o))
        continue;
      ipu::BlockLayout layout =
          *ipu_tile::toBlockLayout(lookup(op, ref).getTensorType(), target.exchangeWordBytes());
      for (auto [t, tile] : llvm::enumerate(computeSet.tiles)) {
        // The verifier put a block of the operand on every vertex's tile.
        for (uint32_t i = 0; i < layout.gridRows; ++i)
          for (uint32_t j = 0; j < layout.gridCols; ++j)
            for (uint32_t r = 0; r < layout.replicas; ++r)
              if (layout.tileOf(0, i, j, r) == int64_t(tile))
                computeSet.operandAdvance[t * operands + o] = static_cast<uint32_t>(
                    layout.blockBytes(0, i, j) / uint64_t(layout.batches));
      }
    }
  }
  package.program.push_back({ipu::StepKind::Compute,
                             static_cast<uint32_t>(package.computeSets.size())});
  package.computeSets.push_back(std::move(computeSet));
  return success();
}

LogicalResult PackageBuilder::addPhase(ipu_exchange::PhaseOp op) {
  if (!op.getScheduleAttr())
    return op.emitError("phase is not scheduled: run --ipu-schedule-exchange "
                        "before --ipu-to-package");
  FailureOr<ipu_exchange::PhaseTransfers> transfers =
      ipu_exchange::buildPhaseTransfers(op, target);
  if (failed(transfers))
    return failure();
  if (static_cast<int64_t>(transfers->phase.size()) !=
      op.getScheduleAttr().getTransfers())
    return op.emitError("schedule was made for ")
           << op.getScheduleAttr().getTransfers() << " transfers, the phase has "
           << transfers->phase.size() << ": reschedule it";
  ipu::PackagePhase phase;
  phase.name = op.getSymName().str();
  phase.location = sourceLocation(op.getLoc());
  FailureOr<ipu::ExchangeSchedule> schedule =
      ipu_exchange::toExchangeSchedule(op.getScheduleAttr(), op);
  if (failed(schedule))
    return failure();
  phase.schedule = std::move(*schedule);
  FailureOr<ipu::TransferAddresses> addresses =
      ipu_exchange::transferAddresses(op, *transfers);
  if (failed(addresses))
    return failure();
  phase.sourceAddress = std::move(addresses->source);
  phase.destAddress = std::move(addresses->dest);
  phase.phase = std::move(transfers->phase);
  package.program.push_back({ipu::StepKind::Exchange,
                             static_cast<uint32_t>(package.phases.size())});
  package.phases.push_back(std::move(phase));
  return success();
}

static_assert(ipu_tile::kMaxLoopDepth == ipu::PackageLimits::kMaxLoopDepth,
              "the IR's loops nest as deep as a package's may");

FailureOr<ipu::Package> PackageBuilder::build() {
  package.compiler = "ipu-compiler 0.1.0";
  package.target = target.name;
  package.tiles = target.tiles;
  package.workload = program.getSymName().str();
  package.flops = program.getFlops().value_or(0);
  package.images = uint32_t(program.getImages().value_or(1));
  // Generated kernels: their bodies in the package's table, as data that
  // ipu-run compiles itself.
  SmallVector<ipu_tile::KernelOp> kernels(program.getBody().getOps<ipu_tile::KernelOp>());
  llvm::StringMap<uint32_t> kernelIndex;
  for (ipu_tile::KernelOp kernel : kernels) {
    FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> built = kernel.buildKernel();
    if (failed(built))
      return failure();
    kernelIndex[kernel.getSymName()] = static_cast<uint32_t>(package.kernels.size());
    package.kernels.push_back(std::shared_ptr<ipu::ElementwiseKernel>(std::move(*built)));
  }
  if (!kernels.empty())
    package.kernelAbiVersion = ipu::kKernelAbiVersion;
  // Steps in the order they first run: a loop step, then its body.
  for (Operation *stepOp : ipu_tile::computeLiveness(program).steps) {
    Operation &op = *stepOp;
    LogicalResult result = success();
    if (auto loop = dyn_cast<ipu_tile::LoopOp>(op)) {
      ipu::PackageLoop entry;
      entry.name = loop.getSymName().str();
      entry.count = static_cast<uint32_t>(loop.getCount());
      // Its body's steps, a nested loop's own body included.
      entry.steps = 0;
      loop.getBody().walk([&](ipu_tile::ProgramStepOpInterface inner) { ++entry.steps; });
      entry.location = sourceLocation(loop.getLoc());
      package.program.push_back(
          {ipu::StepKind::Loop, static_cast<uint32_t>(package.loops.size())});
      package.loops.push_back(std::move(entry));
      continue;
    }
    if (auto in = dyn_cast<ipu_exchange::StreamInOp>(op); in && in.getLayerArguments())
      result = addLayerStreams(in);
    else if (auto in = dyn_cast<ipu_exchange::StreamInOp>(op)) {
      result = addStream(lookup(in, in.getBufferAttr()), true, in.getWeight(),
                         in.getTranspose(), in.getIndex(), in, in.getHostShape(),
                         in.getDeclaredShape(), in.getConstantAttr(), in.getChunk());
      if (succeeded(result) && in.getBatchDim())
        package.streams.back().batchDim = static_cast<int32_t>(*in.getBatchDim());
    }
    else if (auto out = dyn_cast<ipu_exchange::StreamOutOp>(op))
      result = addStream(lookup(out, out.getBufferAttr()), false, false,
                         false, out.getIndex(), out, out.getHostShape(),
                         out.getDeclaredShape());
    else if (auto computeSet = dyn_cast<ipu_tile::ComputeSetOp>(op))
      result = addComputeSet(computeSet);
    else if (auto phase = dyn_cast<ipu_exchange::PhaseOp>(op))
      result = addPhase(phase);
    else if (isa<ipu_exchange::SyncOp>(op))
      package.program.push_back({ipu::StepKind::Sync, 0});
    else
      result = op.emitError("cannot be packaged");
    if (failed(result))
      return failure();
  }
  if (std::optional<ArrayAttr> reference = program.getReference()) {
    for (auto entry : reference->getAsRange<DictionaryAttr>()) {
      ipu::ReferenceOp op;
      StringRef kindName = entry.getAs<StringAttr>("op").getValue();
      std::optional<ipu::ReferenceKind> kind =
          ipu::parseReferenceKind(std::string_view(kindName.data(), kindName.size()));
      if (!kind)
        return program.emitError("reference op '")
               << kindName << "' is not a kind the package holds ("
               << ipu::referenceKindNames() << ")";
      op.kind = *kind;
      // Negative operands name earlier reference ops (-1 - r).
      for (int32_t argument : entry.getAs<DenseI32ArrayAttr>("arguments").asArrayRef())
        op.arguments.push_back(argument >= 0
                                   ? static_cast<uint32_t>(argument)
                                   : ipu::ReferenceOp::kReferenceValue +
                                         static_cast<uint32_t>(-1 - argument));
      // Range-checked by the program's verifier.
      int64_t result = *ipu_tile::toInt64(entry.getAs<IntegerAttr>("result"));
      op.result = result >= 0 ? static_cast<uint32_t>(result)
                              : ipu::ReferenceOp::kNoResult;
      op.type = *ipu_tile::toElementType(entry.getAs<TypeAttr>("type").getValue());
      if (auto partials = entry.getAs<TypeAttr>("partials"))
        op.partials = *ipu_tile::toElementType(partials.getValue());
      if (auto scale = entry.getAs<IntegerAttr>("input_scale"))
        op.inputScale = static_cast<int32_t>(*ipu_tile::toInt64(scale));
      if (auto inner = entry.getAs<IntegerAttr>("inner"))
        op.innerBlocks = static_cast<uint32_t>(*ipu_tile::toInt64(inner));
      // Batching follows from the operand ranks; only transposes are said.
      if (auto transposed = entry.getAs<BoolAttr>("transpose_lhs"))
        op.transposeLhs = transposed.getValue();
      if (auto transposed = entry.getAs<BoolAttr>("transpose_rhs"))
        op.transposeRhs = transposed.getValue();
      if (auto kernel = entry.getAs<StringAttr>("kernel")) {
        auto it = kernelIndex.find(kernel.getValue());
        if (it == kernelIndex.end())
          return program.emitError("reference names kernel '")
                 << kernel.getValue() << "', which the program does not hold";
        op.kernel = it->second;
      }
      auto i64s = [&](StringRef key, std::vector<int64_t> &out) {
        if (auto values = entry.getAs<DenseI64ArrayAttr>(key))
          out.assign(values.asArrayRef().begin(), values.asArrayRef().end());
      };
      i64s("view", op.view);
      i64s("permutation", op.permutation);
      i64s("offsets", op.offsets);
      i64s("sizes", op.sizes);
      i64s("shape", op.shape);
      package.reference.push_back(std::move(op));
    }
  }
  auto metadata = [&](StringRef key, int64_t value) {
    package.metadata.emplace_back(key.str(), std::to_string(value));
  };
  if (auto results = program.getResultsAttr())
    package.results = static_cast<uint32_t>(results.getInt());
  if (auto cycles = program.getEstimatedCyclesAttr())
    metadata("plannedCycles", cycles.getInt());
  if (auto peak = program.getMemoryPeakAttr()) {
    metadata("memoryPeakStandardBytes", peak[0]);
    metadata("memoryPeakInterleavedBytes", peak[1]);
  }
  if (auto bound = program.getMemoryBoundAttr()) {
    metadata("memoryBoundStandardBytes", bound[0]);
    metadata("memoryBoundInterleavedBytes", bound[1]);
  }
  if (auto reserved = program.getReservedBytesAttr())
    metadata("memoryReservedStandardBytes", reserved.getInt());
  // The placed buffers and the steps they are live over, for the report.
  ipu_tile::ProgramLiveness liveness = ipu_tile::computeLiveness(program);
  for (auto [index, buffer] : llvm::enumerate(liveness.buffers)) {
    std::optional<int64_t> address = buffer.getAddress();
    std::optional<ipu::BlockLayout> layout =
        ipu_tile::toBlockLayout(buffer.getTensorType(), target.exchangeWordBytes());
    if (!liveness.used[index] || !address || !layout)
      continue;
    std::vector<uint32_t> tiles = layout->tileList();
    std::sort(tiles.begin(), tiles.end());
    ipu::PackageBuffer entry;
    entry.name = buffer.getSymName().str();
    entry.memoryClass = ipu_tile::toMachineClass(buffer.getMemoryClass());
    entry.address = static_cast<uint32_t>(*address);
    entry.bytes = static_cast<uint32_t>(layout->maxBlockBytes());
    tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
    entry.tiles = std::move(tiles);
    std::tie(entry.firstStep, entry.lastStep) = liveness.live[index];
    entry.location = sourceLocation(buffer.getLoc());
    package.buffers.push_back(std::move(entry));
  }
  // Each re-ranked matmul's finalists, best first: "finalist.<op>.<rank>"
  // = its plan, analytical and scheduled cycles, and whether it fit.
  if (DictionaryAttr finalists = program.getPlanFinalistsAttr())
    for (NamedAttribute op : finalists) {
      auto list = dyn_cast<ArrayAttr>(op.getValue());
      if (!list)
        continue;
      for (auto [rank, entry] : llvm::enumerate(list.getAsRange<DictionaryAttr>())) {
        auto plan = entry.getAs<ipu_gemm::PlanAttr>("plan");
        auto scheduled = entry.getAs<IntegerAttr>("scheduled_cycles");
        auto fits = entry.getAs<BoolAttr>("fits");
        if (!plan || !scheduled || !fits)
          return program.emitError("plan finalist ")
                 << rank << " of '" << op.getName().strref()
                 << "' needs plan, scheduled_cycles and fits";
        package.metadata.emplace_back(
            llvm::formatv("finalist.{0}.{1}", op.getName().strref(), rank).str(),
            llvm::formatv("{0} analyticalCycles={1} scheduledCycles={2} fits={3}",
                          plan.toGemmPlan().str(), plan.getCycles(),
                          scheduled.getInt(), fits.getValue() ? "true" : "false")
                .str());
      }
    }
  if (std::optional<std::string> error = ipu::validatePackage(package, target))
    return program.emitError("package fails validation: ") << *error;
  return std::move(package);
}

FailureOr<ipu::Package> mlir::ipu_compiler::buildPackage(ModuleOp module) {
  FailureOr<ipu::TargetModel> target = ipu_tile::requireTarget(module);
  if (failed(target))
    return failure();
  auto programs = llvm::to_vector(module.getOps<ipu_tile::ProgramOp>());
  if (programs.size() != 1)
    return module.emitError("expected exactly one ipu_tile.program, found ")
           << programs.size() << " (run --ipu-compile first)";
  return PackageBuilder(programs.front(), *target).build();
}

void mlir::ipu_compiler::registerToPackageTranslation() {
  TranslateFromMLIRRegistration registration(
      "ipu-to-package", "Emit a Cap'n Proto package from a placed program",
      [](Operation *op, raw_ostream &output) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        FailureOr<ipu::Package> package = buildPackage(module);
        if (failed(package))
          return failure();
        std::vector<uint8_t> bytes = ipu::serializePackage(*package);
        output.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<ipu_gemm::IPUGemmDialect, ipu_tile::IPUTileDialect,
                        ipu_exchange::IPUExchangeDialect, func::FuncDialect>();
      });
}
