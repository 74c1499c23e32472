//===- SimulatorTest.cpp - Tests of the package simulator ----------------===//
//
// Small packages built by hand: values are checked against a naive host
// reference and cycles against the step costs computed independently from
// the kernel estimators, the schedules' runs and the target's sync cost.
//
//===----------------------------------------------------------------------===//

#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Profile.h"
#include "IPU/Runtime/Run.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Runtime/Trace.h"

#include "IPU/Device/Kernels.h"
#include "IPU/Exchange/Phase.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Package/LayoutStreams.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <random>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace ipu;

namespace {

std::string text(const std::optional<std::string> &error) {
  return error ? *error : std::string("(no error)");
}

HostTensor makeTensor(ElementType type, std::vector<int64_t> shape,
                      const std::vector<float> &values) {
  HostTensor tensor;
  tensor.type = type;
  tensor.shape = std::move(shape);
  unsigned bytes = elementBytes(type);
  tensor.bytes.resize(values.size() * bytes);
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(type, values[i], &tensor.bytes[i * bytes]);
  return tensor;
}

std::vector<float> decode(const HostTensor &tensor) {
  unsigned bytes = elementBytes(tensor.type);
  std::vector<float> values(tensor.bytes.size() / bytes);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = loadElement(tensor.type, &tensor.bytes[i * bytes]);
  return values;
}

/// C[M x N] (f32) = A[M x K] (f16) x B[K x N] (f16) on ipu21-4. Tile t holds
/// kRows[t] rows of A and of C; B is streamed to tile 0 and broadcast to the
/// others in one exchange phase.
constexpr int64_t kK = 8, kN = 8;
const std::vector<int64_t> kRows = {1, 2, 3, 2};
constexpr int64_t kM = 8;

struct MatmulCase {
  TargetModel target;
  Package package;
  std::vector<HostTensor> inputs;
  std::vector<float> expected; ///< Naive reference, exact for these values.
  uint32_t aAddress = 0, bAddress = 0, cAddress = 0;
};

MatmulCase makeMatmulCase() {
  MatmulCase c;
  c.target = *TargetModel::byName("ipu21-4");
  const TargetModel &target = c.target;
  uint32_t base = target.allocatableBase(MemoryClass::Interleaved);
  c.aAddress = base;
  c.bAddress = base + 0x400;
  c.cAddress = base + 0x800;

  Package &p = c.package;
  p.compiler = "SimulatorTest";
  p.target = target.name;
  p.tiles = target.tiles;
  p.workload = "matmul-f16-8x8x8";
  p.flops = 2 * kM * kN * kK;

  HostStream a{"A", true, false, 0, ElementType::F16, {kM, kK}, {}, {}, {}};
  HostStream b{"B", true, true, 1, ElementType::F16, {kK, kN}, {}, {}, {}};
  HostStream out{"C", false, false, 0, ElementType::F32, {kM, kN}, {}, {}, {}};
  b.pieces.push_back({0, c.bAddress, 0, uint32_t(kK), uint32_t(kN * 2),
                      uint32_t(kN * 2), uint64_t(kN * 2)});
  ComputeSet gemm{"matmul", "gemm", {}, {}, {}, "", {}};
  int64_t row = 0;
  for (uint32_t tile = 0; tile < 4; ++tile) {
    uint32_t rows = uint32_t(kRows[tile]);
    a.pieces.push_back({tile, c.aAddress, uint64_t(row * kK * 2), rows,
                        uint32_t(kK * 2), uint32_t(kK * 2), uint64_t(kK * 2)});
    out.pieces.push_back({tile, c.cAddress, uint64_t(row * kN * 4), rows,
                          uint32_t(kN * 4), uint32_t(kN * 4),
                          uint64_t(kN * 4)});
    gemm.tiles.push_back(tile);
    gemm.operandAddress.insert(gemm.operandAddress.end(),
                               {c.aAddress, c.bAddress, c.cAddress});
    gemm.params.insert(gemm.params.end(),
                       {kRows[tile], kK, kN, int64_t(ElementType::F16),
                        int64_t(ElementType::F32), int64_t(ElementType::F32),
                        int64_t(MemoryClass::Interleaved), 0});
    row += rows;
  }
  p.streams = {a, b, out};
  p.computeSets = {gemm};

  PackagePhase broadcast;
  broadcast.name = "broadcastB";
  broadcast.phase.tiles = target.tiles;
  broadcast.phase.addTransfer(0, uint32_t(kK * kN * 2 / 4), {1, 2, 3});
  broadcast.sourceAddress = {c.bAddress};
  broadcast.destAddress = {c.bAddress};
  broadcast.schedule = scheduleTimedPhase(target, broadcast.phase, broadcast.addresses());
  p.phases = {broadcast};

  p.program = {{StepKind::StreamIn, 0}, {StepKind::StreamIn, 1},
               {StepKind::Sync, 0},     {StepKind::Exchange, 0},
               {StepKind::Sync, 0},     {StepKind::Compute, 0},
               {StepKind::Sync, 0},     {StepKind::StreamOut, 2}};
  p.reference = {ReferenceOp::matmul({0, 1}, 0)};

  // Small integers: every product and sum is exact in f16 inputs and f32
  // accumulation, so the reference is exact whatever the summation order.
  std::vector<float> aValues(kM * kK), bValues(kK * kN);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t k = 0; k < kK; ++k)
      aValues[i * kK + k] = float((i * 7 + k * 3) % 9 - 4);
  for (int64_t k = 0; k < kK; ++k)
    for (int64_t j = 0; j < kN; ++j)
      bValues[k * kN + j] = float((k * 5 + j * 2) % 7 - 3);
  c.inputs = {makeTensor(ElementType::F16, {kM, kK}, aValues),
              makeTensor(ElementType::F16, {kK, kN}, bValues)};
  c.expected.assign(kM * kN, 0.0f);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j)
      for (int64_t k = 0; k < kK; ++k)
        c.expected[i * kN + j] += aValues[i * kK + k] * bValues[k * kN + j];
  return c;
}

TEST(SimulatorTest, MatmulMatchesReferenceAndCycles) {
  MatmulCase c = makeMatmulCase();
  ASSERT_FALSE(
      checkSchedule(c.package.phases[0].phase, c.package.phases[0].schedule));
  EXPECT_FALSE(validatePackage(c.package, c.target))
      << text(validatePackage(c.package, c.target));

  SimulationResult result;
  auto error = simulate(c.package, c.target, c.inputs, result);
  ASSERT_FALSE(error) << *error;

  ASSERT_EQ(result.outputs.size(), 1u);
  const HostTensor &out = result.outputs[0];
  EXPECT_EQ(out.type, ElementType::F32);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{kM, kN}));
  EXPECT_EQ(decode(out), c.expected);

  // Costs computed independently of the simulator.
  const KernelSpec *gemm = lookupKernel("gemm");
  ASSERT_NE(gemm, nullptr);
  uint64_t compute = 0;
  const std::vector<int64_t> &params = c.package.computeSets[0].params;
  for (size_t v = 0; v < 4; ++v)
    compute = std::max(
        compute, estimateKernelCycles(*gemm, params.data() + v * 8, c.target));
  const PackagePhase &phase = c.package.phases[0];
  uint64_t exchange =
      timedPhaseCost(c.target, phase.phase, phase.schedule, phase.addresses()).cycles;
  uint64_t sync = 3 * uint64_t(c.target.syncCycles);
  EXPECT_GT(compute, 0u);
  // The broadcast sends 32 words once: at least 32 events, the route
  // latency and the pointer delay, plus the phase's fixed cost.
  EXPECT_GE(exchange, 32u + uint64_t(c.target.exchange.receivePointerDelay) +
                          c.target.exchange.phaseFixedCycles);
  EXPECT_EQ(result.computeCycles, compute);
  EXPECT_EQ(result.exchangeCycles, exchange);
  EXPECT_EQ(result.syncCycles, sync);
  EXPECT_EQ(result.cycles, compute + exchange + sync);
  EXPECT_EQ(result.activeTiles, 4u);

  ASSERT_EQ(result.steps.size(), c.package.program.size());
  uint64_t sum = 0;
  for (size_t s = 0; s < result.steps.size(); ++s) {
    EXPECT_EQ(result.steps[s].kind, c.package.program[s].kind);
    EXPECT_EQ(result.steps[s].index, c.package.program[s].index);
    sum += result.steps[s].cycles;
  }
  EXPECT_EQ(sum, result.cycles);
  EXPECT_EQ(result.steps[3].cycles, exchange);
  EXPECT_EQ(result.steps[5].cycles, compute);

  // Same input, same result.
  SimulationResult again;
  ASSERT_FALSE(simulate(c.package, c.target, c.inputs, again));
  EXPECT_EQ(again.outputs[0].bytes, out.bytes);
  EXPECT_EQ(again.cycles, result.cycles);
}

TEST(SimulatorTest, ComputeCostsTheSlowestTile) {
  MatmulCase c = makeMatmulCase();
  SimulationResult result;
  ASSERT_FALSE(simulate(c.package, c.target, c.inputs, result));
  // Tile 2 has the most rows; its estimate must bound the compute step.
  const KernelSpec *gemm = lookupKernel("gemm");
  const int64_t *tile2 = c.package.computeSets[0].params.data() + 2 * 8;
  const int64_t *tile0 = c.package.computeSets[0].params.data();
  EXPECT_EQ(result.computeCycles,
            std::max(estimateKernelCycles(*gemm, tile2, c.target),
                     estimateKernelCycles(*gemm, tile0, c.target)));
}

TEST(SimulatorTest, TileComputeCyclesSumOverComputeSteps) {
  MatmulCase c = makeMatmulCase();
  // Tile 3 runs no vertex; the set runs twice, so one tile is the slowest
  // of both steps.
  ComputeSet &gemm = c.package.computeSets[0];
  gemm.tiles.pop_back();
  gemm.operandAddress.resize(gemm.operandAddress.size() - 3);
  gemm.params.resize(gemm.params.size() - 8);
  c.package.program.insert(c.package.program.end() - 1,
                           {{StepKind::Compute, 0}, {StepKind::Sync, 0}});
  SimulationResult result;
  auto error = simulate(c.package, c.target, c.inputs, result);
  ASSERT_FALSE(error) << *error;

  const KernelSpec *kernel = lookupKernel("gemm");
  ASSERT_NE(kernel, nullptr);
  std::vector<uint64_t> vertex(3);
  for (size_t v = 0; v < 3; ++v)
    vertex[v] =
        estimateKernelCycles(*kernel, gemm.params.data() + v * 8, c.target);
  ASSERT_EQ(result.tileComputeCycles.size(), c.target.tiles);
  for (uint32_t tile = 0; tile < 3; ++tile)
    EXPECT_EQ(result.tileComputeCycles[tile], 2 * vertex[tile]);
  EXPECT_EQ(result.tileComputeCycles[3], 0u);
  // The first of the slowest tiles ends each step.
  uint32_t slowest =
      uint32_t(std::max_element(vertex.begin(), vertex.end()) - vertex.begin());

  uint64_t slowestSum = 0;
  size_t computeSteps = 0;
  for (const StepCycles &step : result.steps) {
    if (step.kind != StepKind::Compute)
      continue;
    ++computeSteps;
    slowestSum += step.cycles;
    EXPECT_EQ(step.slowestTile, slowest);
    EXPECT_EQ(step.cycles, vertex[slowest]);
    EXPECT_EQ(step.busyTiles, 3u);
    EXPECT_EQ(step.busyTileCycles, vertex[0] + vertex[1] + vertex[2]);
  }
  EXPECT_EQ(computeSteps, 2u);
  EXPECT_EQ(*std::max_element(result.tileComputeCycles.begin(),
                              result.tileComputeCycles.end()),
            slowestSum);
  EXPECT_EQ(slowestSum, result.computeCycles);
  EXPECT_EQ(result.tileComputeCycles[slowest], slowestSum);
}

TEST(SimulatorTest, IllegalScheduleFails) {
  MatmulCase c = makeMatmulCase();
  PackagePhase &phase = c.package.phases[0];
  uint32_t words = phase.phase.words[0];
  SimulationResult result;

  // Word 0 sent twice.
  phase.schedule.runs = {{0, 0, words, 0}, {0, 0, 1, words + 5}};
  auto error = simulate(c.package, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("illegal schedule"), std::string::npos) << *error;
  EXPECT_NE(error->find("broadcastB"), std::string::npos) << *error;
  EXPECT_TRUE(result.outputs.empty());

  // Half the words never sent.
  phase.schedule.runs = {{0, 0, words / 2, 0}};
  error = simulate(c.package, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("illegal schedule"), std::string::npos) << *error;
}

TEST(SimulatorTest, WrongInputsFail) {
  MatmulCase c = makeMatmulCase();
  SimulationResult result;

  std::vector<HostTensor> inputs = c.inputs;
  inputs[0].shape = {kM / 2, kK * 2}; // same bytes, wrong shape
  auto error = simulate(c.package, c.target, inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'A'"), std::string::npos) << *error;

  inputs = c.inputs;
  inputs[1] =
      makeTensor(ElementType::F32, {kK, kN}, std::vector<float>(kK * kN, 1.0f));
  error = simulate(c.package, c.target, inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'B'"), std::string::npos) << *error;
  EXPECT_NE(error->find("f16"), std::string::npos) << *error;

  inputs = c.inputs;
  inputs[1].bytes.pop_back(); // right shape, too few bytes
  error = simulate(c.package, c.target, inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'B'"), std::string::npos) << *error;

  inputs = c.inputs;
  inputs.pop_back();
  error = simulate(c.package, c.target, inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("missing"), std::string::npos) << *error;
}

/// A package that streams a [tiles x 4] f32 tensor in (row t to tile t at
/// `address`), runs `phase` and streams the same rows back out.
Package makeExchangePackage(const TargetModel &target, uint32_t address,
                            PackagePhase phase) {
  Package p;
  p.compiler = "SimulatorTest";
  p.target = target.name;
  p.tiles = target.tiles;
  p.workload = "exchange";
  HostStream in{
      "X", true, false, 0, ElementType::F32, {int64_t(target.tiles), 4}, {}, {}, {}};
  HostStream out{
      "Y", false, false, 0, ElementType::F32, {int64_t(target.tiles), 4}, {}, {}, {}};
  for (uint32_t tile = 0; tile < target.tiles; ++tile) {
    StreamPiece piece{tile, address, uint64_t(tile) * 16, 1, 16, 16, 16};
    in.pieces.push_back(piece);
    out.pieces.push_back(piece);
  }
  p.streams = {in, out};
  phase.schedule = scheduleTimedPhase(target, phase.phase, phase.addresses());
  p.phases = {phase};
  p.program = {{StepKind::StreamIn, 0},
               {StepKind::Sync, 0},
               {StepKind::Exchange, 0},
               {StepKind::Sync, 0},
               {StepKind::StreamOut, 1}};
  return p;
}

std::vector<float> rows(uint32_t tiles) {
  std::vector<float> values;
  for (uint32_t t = 0; t < tiles; ++t)
    for (int i = 0; i < 4; ++i)
      values.push_back(float(t * 10 + i));
  return values;
}

TEST(SimulatorTest, ExchangeReadsBeforeWrites) {
  // Two tiles swap their buffers in one phase: each transfer's destination
  // is the other transfer's source.
  TargetModel target = *TargetModel::byName("ipu21-2");
  uint32_t address = target.allocatableBase(MemoryClass::Standard);
  PackagePhase swap;
  swap.name = "swap";
  swap.phase.tiles = 2;
  swap.phase.addTransfer(0, 4, {1});
  swap.phase.addTransfer(1, 4, {0});
  swap.sourceAddress = {address, address};
  swap.destAddress = {address, address};
  Package p = makeExchangePackage(target, address, swap);
  // ipu-run refuses this package: no schedule sends every overwritten word
  // before the word overwriting it (tile 0 needs transfer 0 first, tile 1
  // transfer 1). The simulator does not rely on that: it stages every send
  // first, so a phase reads the state at its start whatever its schedule.
  std::optional<std::string> error = validatePackage(p, target);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("phase 'swap': transfer 0 overwrites tile 1 bytes "
                        "[0x586e0, 0x586f0) that transfer 1 sends from it"),
            std::string::npos)
      << *error;

  std::vector<float> x = rows(2);
  SimulationResult result;
  error = simulate(p, target, {makeTensor(ElementType::F32, {2, 4}, x)}, result);
  ASSERT_FALSE(error) << *error;
  std::vector<float> expected(x.begin() + 4, x.end());
  expected.insert(expected.end(), x.begin(), x.begin() + 4);
  EXPECT_EQ(decode(result.outputs[0]), expected);
}

TEST(SimulatorTest, ExchangeRotationSeesPhaseStartState) {
  // Tile t sends to tile t + 1 (mod 4): executed in transfer order without
  // staging, tile 0's row would travel all the way round.
  TargetModel target = *TargetModel::byName("ipu21-4");
  uint32_t address = target.allocatableBase(MemoryClass::Interleaved);
  PackagePhase rotate;
  rotate.name = "rotate";
  rotate.phase.tiles = 4;
  for (uint32_t t = 0; t < 4; ++t) {
    rotate.phase.addTransfer(t, 4, {(t + 1) % 4});
    rotate.sourceAddress.push_back(address);
    rotate.destAddress.push_back(address);
  }
  Package p = makeExchangePackage(target, address, rotate);
  std::vector<float> x = rows(4);
  SimulationResult result;
  ASSERT_FALSE(
      simulate(p, target, {makeTensor(ElementType::F32, {4, 4}, x)}, result));
  std::vector<float> y = decode(result.outputs[0]);
  for (uint32_t t = 0; t < 4; ++t)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y[t * 4 + i], x[((t + 3) % 4) * 4 + i]) << "tile " << t;
  EXPECT_EQ(result.exchangeCycles,
            timedPhaseCost(target, p.phases[0].phase, p.phases[0].schedule,
                           p.phases[0].addresses())
                .cycles);
  EXPECT_EQ(result.activeTiles, 0u);
}

TEST(SimulatorTest, UnwrittenMemoryReadsAsPattern) {
  TargetModel target = *TargetModel::byName("ipu21-2");
  uint32_t address = target.allocatableBase(MemoryClass::Standard);
  Package p = makeExchangePackage(target, address, PackagePhase());
  p.program = {{StepKind::StreamOut, 1}};
  SimulationResult result;
  ASSERT_FALSE(simulate(
      p, target, {makeTensor(ElementType::F32, {2, 4}, rows(2))}, result));
  ASSERT_EQ(result.outputs.size(), 1u);
  ASSERT_EQ(result.outputs[0].bytes.size(), 32u);
  for (uint8_t byte : result.outputs[0].bytes)
    EXPECT_EQ(byte, 0xCD);
  EXPECT_EQ(result.cycles, 0u);
}

TEST(SimulatorTest, MalformedPackageFailsWithoutCrashing) {
  MatmulCase c = makeMatmulCase();
  SimulationResult result;

  Package p = c.package;
  p.program.push_back({StepKind::Compute, 7});
  auto error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("compute set 7"), std::string::npos) << *error;

  p = c.package;
  p.streams[0].pieces[1].address = 0xFFFFFF00u;
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("outside tile memory"), std::string::npos) << *error;

  p = c.package;
  p.streams[0].pieces[1].hostOffset = 1u << 20;
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("outside the tensor"), std::string::npos) << *error;

  p = c.package;
  p.computeSets[0].operandAddress[2] = c.target.interleaved.end() - 4;
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("operand"), std::string::npos) << *error;

  p = c.package;
  p.phases[0].destAddress[0] = c.target.interleaved.end() - 4;
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("destination"), std::string::npos) << *error;

  // A result index of 2^32 - 1 made `index + 1` wrap to 0 and crashed.
  p = c.package;
  p.streams[2].index = 0xFFFFFFFF;
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("result index 4294967295 is out of range [0, 3)"),
            std::string::npos)
      << *error;

  p = c.package;
  p.computeSets[0].kernel = "nonsense";
  error = simulate(p, c.target, c.inputs, result);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("nonsense"), std::string::npos) << *error;
}

//===----------------------------------------------------------------------===//
// N-D buffers: host streams built by layoutStreamPieces, as the package
// translation builds them, and phases planned by planRearrangement.
//===----------------------------------------------------------------------===//

/// A [..., rows, cols] f16 tensor whose element e holds e: every element
/// distinct and exact, so a misplaced one shows.
HostTensor countingTensor(std::vector<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t extent : shape)
    elements *= extent;
  std::vector<float> values(elements);
  for (int64_t e = 0; e < elements; ++e)
    values[e] = float(e);
  return makeTensor(ElementType::F16, std::move(shape), values);
}

/// The layout of an f16 tensor of `shape` (leading dimensions as batches)
/// on ipu21-4, from tile `base` with the given grid and strides.
BlockLayout ndLayout(const std::vector<int64_t> &shape, uint32_t gridBatches,
                     uint32_t gridRows, uint32_t gridCols, uint32_t base,
                     int64_t batchStride, int64_t rowStride,
                     int64_t colStride) {
  BlockLayout layout;
  layout.type = ElementType::F16;
  layout.batches = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    layout.batches *= shape[d];
  layout.rows = shape[shape.size() - 2];
  layout.cols = shape.back();
  layout.gridBatches = gridBatches;
  layout.gridRows = gridRows;
  layout.gridCols = gridCols;
  layout.tileBase = base;
  layout.tileBatchStride = batchStride;
  layout.tileRowStride = rowStride;
  layout.tileColStride = colStride;
  return layout;
}

/// Streams argument 0 (of `shape`) into a buffer in layout `in`, then, with
/// `out`, rearranges it into a second buffer in that layout by one phase,
/// and streams result 0 out of the last buffer.
Package ndStreamPackage(const TargetModel &target,
                        const std::vector<int64_t> &shape,
                        const BlockLayout &in,
                        const std::optional<BlockLayout> &out) {
  const uint32_t inAddress = target.allocatableBase(MemoryClass::Standard);
  const uint32_t outAddress = inAddress + 0x1000;
  Package p;
  p.compiler = "SimulatorTest";
  p.target = target.name;
  p.tiles = target.tiles;
  p.workload = "nd-streams";
  HostStream stream{"X", true, false, 0, ElementType::F16, shape, {}, {}, {}};
  HostStream result{"Y", false, false, 0, ElementType::F16, shape, {}, {}, {}};
  EXPECT_EQ(layoutStreamPieces(in, inAddress, /*allReplicas=*/true,
                               /*transpose=*/false, stream.pieces),
            std::nullopt);
  EXPECT_EQ(layoutStreamPieces(out ? *out : in, out ? outAddress : inAddress,
                               /*allReplicas=*/false, /*transpose=*/false,
                               result.pieces),
            std::nullopt);
  p.streams = {stream, result};
  p.program = {{StepKind::StreamIn, 0}, {StepKind::Sync, 0}};
  if (out) {
    Rearrangement rearrangement;
    EXPECT_EQ(planRearrangement(in, *out, target.tiles, rearrangement),
              std::nullopt);
    PackagePhase phase;
    phase.name = "rearrange";
    phase.phase = rearrangement.phase;
    for (uint32_t offset : rearrangement.sourceOffset)
      phase.sourceAddress.push_back(inAddress + offset);
    for (uint32_t offset : rearrangement.destOffset)
      phase.destAddress.push_back(outAddress + offset);
    phase.schedule = scheduleTimedPhase(target, phase.phase, phase.addresses());
    p.phases = {phase};
    p.program.push_back({StepKind::Exchange, 0});
    p.program.push_back({StepKind::Sync, 0});
  }
  p.program.push_back({StepKind::StreamOut, 1});
  return p;
}

/// Runs the package on a counting tensor and expects it back whole: every
/// element, in place.
void expectRoundTrip(const TargetModel &target, const Package &package,
                     const std::vector<int64_t> &shape) {
  ASSERT_EQ(validatePackage(package, target), std::nullopt);
  std::vector<HostTensor> inputs = {countingTensor(shape)};
  SimulationResult result;
  ASSERT_EQ(simulate(package, target, inputs, result), std::nullopt)
      << text(simulate(package, target, inputs, result));
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].shape, shape);
  std::vector<float> expected = decode(inputs[0]);
  std::vector<float> actual = decode(result.outputs[0]);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t e = 0; e < expected.size(); ++e)
    ASSERT_EQ(actual[e], expected[e]) << "element " << e;
}

TEST(SimulatorTest, BatchDistributedBufferRoundTrips) {
  TargetModel target = *TargetModel::byName("ipu21-4");
  // A batch per tile: one piece per block, of a whole 5x7 matrix (rows of
  // 14 bytes in a 16-byte pitch) at host offset t * 35 elements.
  const std::vector<int64_t> shape = {3, 5, 7};
  BlockLayout perTile = ndLayout(shape, 3, 1, 1, 0, 1, 0, 0);
  Package package = ndStreamPackage(target, shape, perTile, std::nullopt);
  ASSERT_EQ(package.streams[0].pieces.size(), 3u);
  for (uint32_t b = 0; b < 3; ++b) {
    const StreamPiece &piece = package.streams[0].pieces[b];
    EXPECT_EQ(piece.tile, b);
    EXPECT_EQ(piece.hostOffset, b * 35u * 2);
    EXPECT_EQ(piece.rows, 5u);
    EXPECT_EQ(piece.rowBytes, 14u);
    EXPECT_EQ(piece.tilePitch, 16u);
    EXPECT_EQ(piece.hostPitch, 14u);
  }
  expectRoundTrip(target, package, shape);

  // 3 batches in blocks of 2 and 1, rows in blocks of 3 and 2: block
  // (b, i) on tile 2b + i, a piece per batch it holds; the second batch of
  // a block sits one 3-row matrix further on its tile.
  BlockLayout split = ndLayout(shape, 2, 2, 1, 0, 2, 1, 0);
  package = ndStreamPackage(target, shape, split, std::nullopt);
  ASSERT_EQ(package.streams[0].pieces.size(), 6u);
  const StreamPiece &second = package.streams[0].pieces[1];
  EXPECT_EQ(second.tile, 0u);
  EXPECT_EQ(second.address, package.streams[0].pieces[0].address + 3 * 16);
  EXPECT_EQ(second.hostOffset, 35u * 2);
  EXPECT_EQ(second.rows, 3u);
  expectRoundTrip(target, package, shape);

  // Replicated: every replica gets its block, the result comes from the
  // first.
  const std::vector<int64_t> pair = {2, 5, 7};
  BlockLayout replicated = ndLayout(pair, 2, 1, 1, 0, 1, 0, 0);
  replicated.replicas = 2;
  replicated.replicaStride = 2;
  package = ndStreamPackage(target, pair, replicated, std::nullopt);
  EXPECT_EQ(package.streams[0].pieces.size(), 4u);
  EXPECT_EQ(package.streams[1].pieces.size(), 2u);
  expectRoundTrip(target, package, pair);
}

TEST(SimulatorTest, BatchLocalBufferRoundTrips) {
  TargetModel target = *TargetModel::byName("ipu21-4");
  // Rank 4, 2 x 3 = 6 batches on each tile of a column split (4 + 3
  // columns on tiles 1 and 2): each block's matrices follow one another at
  // one pitch on both sides, so it is one piece of 6 x 5 rows.
  const std::vector<int64_t> shape = {2, 3, 5, 7};
  BlockLayout columns = ndLayout(shape, 1, 1, 2, 1, 0, 0, 1);
  Package package = ndStreamPackage(target, shape, columns, std::nullopt);
  ASSERT_EQ(package.streams[0].pieces.size(), 2u);
  EXPECT_EQ(package.streams[0].pieces[0].rows, 30u);
  EXPECT_EQ(package.streams[0].pieces[1].rows, 30u);
  EXPECT_EQ(package.streams[0].pieces[1].hostOffset, 4u * 2);
  EXPECT_EQ(package.streams[0].pieces[1].rowBytes, 3u * 2);
  EXPECT_EQ(package.streams[0].pieces[1].tilePitch, 8u);
  expectRoundTrip(target, package, shape);

  // Rows split instead: a piece per batch and block.
  BlockLayout rows = ndLayout(shape, 1, 2, 1, 2, 0, 1, 0);
  package = ndStreamPackage(target, shape, rows, std::nullopt);
  EXPECT_EQ(package.streams[0].pieces.size(), 12u);
  expectRoundTrip(target, package, shape);
}

TEST(SimulatorTest, PhasesBetweenBatchDistributedAndLocalMoveEveryElement) {
  TargetModel target = *TargetModel::byName("ipu21-4");
  const std::vector<int64_t> shape = {3, 5, 7};
  BlockLayout distributed = ndLayout(shape, 3, 1, 1, 0, 1, 0, 0);
  BlockLayout local = ndLayout(shape, 1, 2, 2, 0, 0, 2, 1);
  BlockLayout pairs = ndLayout(shape, 2, 2, 1, 0, 2, 1, 0);
  expectRoundTrip(target, ndStreamPackage(target, shape, distributed, local),
                  shape);
  expectRoundTrip(target, ndStreamPackage(target, shape, local, distributed),
                  shape);
  expectRoundTrip(target, ndStreamPackage(target, shape, pairs, local), shape);
  expectRoundTrip(target, ndStreamPackage(target, shape, distributed, pairs),
                  shape);
}

TEST(SimulatorTest, TransposingStreamsTransposeEachMatrix) {
  // A host tensor [3, 7, 5] streamed transposed into [3, 5, 7] blocks (two
  // batch blocks, rows split in two), then streamed out as it is: element
  // (t, x, y) of the result is element (t, y, x) of the input.
  TargetModel target = *TargetModel::byName("ipu21-4");
  const std::vector<int64_t> host = {3, 7, 5}, device = {3, 5, 7};
  BlockLayout layout = ndLayout(device, 2, 2, 1, 0, 2, 1, 0);
  Package package = ndStreamPackage(target, device, layout, std::nullopt);
  package.streams[0].shape = host;
  package.streams[0].pieces.clear();
  ASSERT_EQ(layoutStreamPieces(layout, target.allocatableBase(MemoryClass::Standard),
                               /*allReplicas=*/true, /*transpose=*/true,
                               package.streams[0].pieces),
            std::nullopt);
  // One piece per batch of every block: a transposed batch is a host
  // matrix further on, not a row.
  EXPECT_EQ(package.streams[0].pieces.size(), 6u);
  ASSERT_EQ(validatePackage(package, target), std::nullopt);
  std::vector<HostTensor> inputs = {countingTensor(host)};
  SimulationResult result;
  ASSERT_EQ(simulate(package, target, inputs, result), std::nullopt);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].shape, device);
  std::vector<float> in = decode(inputs[0]), out = decode(result.outputs[0]);
  ASSERT_EQ(out.size(), in.size());
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t x = 0; x < 5; ++x)
      for (int64_t y = 0; y < 7; ++y)
        ASSERT_EQ(out[(t * 5 + x) * 7 + y], in[(t * 7 + y) * 5 + x])
            << "element (" << t << ", " << x << ", " << y << ")";
}

} // namespace

// Cycles per source op: steps grouped by their name's prefix, a sync
// counted for the step after it, the rows summing to the run.
TEST(OpCyclesTest, GroupsStepsByOpAndSumsToTheRun) {
  Package package;
  package.computeSets.resize(3);
  package.computeSets[0].name = "mm0.partials";
  package.computeSets[0].location = "m.mlir:3:5";
  package.computeSets[1].name = "mm0.sum";
  package.computeSets[1].location = "m.mlir:3:5";
  package.computeSets[2].name = "ew1";
  package.computeSets[2].location = "m.mlir:4:5";
  package.phases.resize(1);
  package.phases[0].name = "mm0.reduce";
  package.phases[0].phase.tiles = 4;
  package.phases[0].phase.addTransfer(0, 3, {1, 2}); // 3 words to 2 tiles.
  SimulationResult result;
  auto step = [](StepKind kind, uint32_t index, uint64_t cycles) {
    StepCycles s;
    s.kind = kind;
    s.index = index;
    s.cycles = cycles;
    return s;
  };
  result.steps = {step(StepKind::StreamIn, 0, 0),  step(StepKind::Compute, 0, 100),
                  step(StepKind::Sync, 0, 7),      step(StepKind::Exchange, 0, 40),
                  step(StepKind::Sync, 0, 7),      step(StepKind::Compute, 1, 20),
                  step(StepKind::Compute, 2, 30),  step(StepKind::Sync, 0, 7),
                  step(StepKind::StreamOut, 0, 0)};
  result.cycles = 100 + 7 + 40 + 7 + 20 + 30 + 7;
  std::vector<OpCycles> ops = cyclesByOp(package, result);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, "mm0");
  EXPECT_EQ(ops[0].location, "m.mlir:3:5");
  EXPECT_EQ(ops[0].steps, 3u);
  EXPECT_EQ(ops[0].computeCycles, 120u);
  EXPECT_EQ(ops[0].exchangeCycles, 40u);
  EXPECT_EQ(ops[0].syncCycles, 14u);
  EXPECT_EQ(ops[0].exchangeBytes, 3u * 4 * 2);
  EXPECT_EQ(ops[1].op, "ew1");
  EXPECT_EQ(ops[1].cycles(), 30u);
  EXPECT_EQ(ops[2].op, "sync"); // The last sync, before streaming out.
  EXPECT_EQ(ops[2].syncCycles, 7u);
  uint64_t sum = 0;
  for (const OpCycles &op : ops)
    sum += op.cycles();
  EXPECT_EQ(sum, result.cycles);

  // Beside another run: matched by op, ops of one run only get a zero.
  std::vector<OpCycles> other = {ops[1], ops[0]};
  other[1].computeCycles += 5;
  OpCycles extra;
  extra.op = "permute0";
  extra.exchangeCycles = 9;
  other.push_back(extra);
  std::vector<OpComparison> rows = compareOps(ops, other);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].op, "mm0");
  EXPECT_EQ(rows[0].cycles, 174u);
  EXPECT_EQ(rows[0].otherCycles, 179u);
  EXPECT_EQ(rows[2].op, "sync");
  EXPECT_EQ(rows[2].otherCycles, 0u);
  EXPECT_EQ(rows[3].op, "permute0");
  EXPECT_EQ(rows[3].cycles, 0u);
  EXPECT_EQ(rows[3].otherCycles, 9u);
}

//===----------------------------------------------------------------------===//
// Serial loops
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kLoopCount = 3, kChunkBytes = 64;

/// kLoopCount chunks of kChunkBytes through a loop on tile 0 of ipu21-4:
/// in iteration i, `slice.gather` copies chunk i of X (its src advancing)
/// into a fixed staging buffer, and `slice.scatter` copies that into chunk
/// i of Y (its dst advancing). Program: [stream in X, loop, sync, gather,
/// scatter, stream out Y].
struct LoopCase {
  TargetModel target;
  Package package;
  std::vector<HostTensor> inputs;
  uint32_t x = 0, staging = 0, y = 0;
};

LoopCase makeLoopCase() {
  LoopCase c;
  c.target = *TargetModel::byName("ipu21-4");
  c.x = c.target.allocatableBase(MemoryClass::Standard);
  c.staging = c.x + 0x400;
  c.y = c.x + 0x800;
  Package &p = c.package;
  p.compiler = "SimulatorTest";
  p.target = c.target.name;
  p.tiles = c.target.tiles;
  p.workload = "loop-slices";
  const std::vector<int64_t> shape = {kLoopCount, kChunkBytes / 4};
  HostStream in{"X", true, false, 0, ElementType::F32, shape, {}, {}, {}};
  HostStream out{"Y", false, false, 0, ElementType::F32, shape, {}, {}, {}};
  in.pieces.push_back(
      {0, c.x, 0, kLoopCount, kChunkBytes, kChunkBytes, kChunkBytes});
  out.pieces.push_back(
      {0, c.y, 0, kLoopCount, kChunkBytes, kChunkBytes, kChunkBytes});
  p.streams = {in, out};
  ComputeSet gather{"slice.gather", "copy", {0}, {c.x, c.staging},
                    {kChunkBytes},  "m.mlir:7:3", {kChunkBytes, 0}};
  ComputeSet scatter{"slice.scatter", "copy", {0}, {c.staging, c.y},
                     {kChunkBytes},   "m.mlir:7:3", {0, kChunkBytes}};
  p.computeSets = {gather, scatter};
  p.loops = {{"slice.loop", kLoopCount, 3, "m.mlir:7:3"}};
  p.program = {{StepKind::StreamIn, 0}, {StepKind::Loop, 0},
               {StepKind::Sync, 0},     {StepKind::Compute, 0},
               {StepKind::Compute, 1},  {StepKind::StreamOut, 1}};
  std::vector<float> values(kLoopCount * kChunkBytes / 4);
  for (size_t e = 0; e < values.size(); ++e)
    values[e] = float(e + 1); // Every element distinct: a misplaced one shows.
  c.inputs = {makeTensor(ElementType::F32, shape, values)};
  return c;
}

TEST(RunReportTest, LinesStateTheRunAndEscapeThePackagesText) {
  MatmulCase c = makeMatmulCase();
  c.package.workload = "mm\nforged=1";
  c.package.metadata = {{"finalist.mm0.0", "rows=8 fits=true"},
                        {"planner", "serial\x1b[31m"}};
  SimulationResult result;
  ASSERT_FALSE(simulate(c.package, c.target, c.inputs, result));
  std::vector<std::string> lines;
  ASSERT_EQ(summaryLines(c.package, c.target, result, lines), std::nullopt);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].rfind("workload=", 0), 0u);
  EXPECT_EQ(lines[1].rfind("weightReplicasMax=", 0), 0u) << lines[1];
  EXPECT_NE(lines[0].find(" cycles=" + std::to_string(result.cycles) + " "),
            std::string::npos);
  EXPECT_NE(lines[0].find("executionTiles=4"), std::string::npos);
  // A line per report: no text from the package breaks one or forges a key.
  for (const std::string &line : lines) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find(" forged=1"), std::string::npos) << line;
  }
  // Finalists have lines of their own, and only there.
  EXPECT_EQ(lines[4].find("finalist"), std::string::npos);
  EXPECT_EQ(finalistLines(c.package),
            (std::vector<std::string>{"finalist op=mm0 rank=0 rows=8 fits=true"}));

  // The op lines sum to the run, and the comparison's totals are signed.
  uint64_t cycles = 0;
  for (const OpCycles &op : cyclesByOp(c.package, result)) {
    const std::string line = opLine(op, result.cycles);
    EXPECT_NE(line.find(" cycles=" + std::to_string(op.cycles()) + " "), std::string::npos);
    cycles += op.cycles();
  }
  EXPECT_EQ(cycles, result.cycles);
  std::vector<std::string> compare =
      comparisonLines({}, "a.ipuexe", "b.ipuexe", 120, 100);
  ASSERT_EQ(compare.size(), 1u);
  EXPECT_NE(compare[0].find("deltaCycles=-20"), std::string::npos) << compare[0];
}

TEST(RunReportTest, LoadingNamesWhatIsWrong) {
  MatmulCase c = makeMatmulCase();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ipu-run-load-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto load = [&](const Package &package) {
    const std::string path = (dir / "p.ipuexe").string();
    EXPECT_EQ(writePackageFile(path, package), std::nullopt);
    LoadedPackage loaded;
    std::optional<std::string> error = loadPackageFile(path, 1u << 30, loaded);
    if (!error)
      EXPECT_EQ(loaded.target->tiles, package.tiles);
    return error.value_or("");
  };
  EXPECT_EQ(load(c.package), "");
  Package unknown = c.package;
  unknown.target = "ipu99";
  EXPECT_EQ(load(unknown).rfind("package target refused: unknown target 'ipu99'", 0), 0u);
  Package overridden = c.package;
  overridden.target += "+vertexCallCycles=25.5";
  EXPECT_EQ(load(overridden).rfind("package target refused: target '" + overridden.target +
                                   "': constant 'vertexCallCycles' counts whole units",
                                   0),
            0u);
  overridden.target = c.package.target + "+vertexCallCycles=50";
  EXPECT_EQ(load(overridden), "");
  Package invalid = c.package;
  invalid.phases[0].schedule.runs.clear();
  EXPECT_EQ(load(invalid).rfind("invalid package: ", 0), 0u);
  const std::string truncated = (dir / "t.ipuexe").string();
  {
    std::vector<uint8_t> bytes = serializePackage(c.package);
    std::FILE *file = std::fopen(truncated.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size() / 16 * 8, file);
    std::fclose(file);
  }
  LoadedPackage loaded;
  std::optional<std::string> error = loadPackageFile(truncated, 1u << 30, loaded);
  ASSERT_NE(error, std::nullopt);
  EXPECT_EQ(error->rfind("corrupt package", 0), 0u) << *error;
  std::filesystem::remove_all(dir);
}

} // namespace

TEST(SimulatorTest, LoopMovesEveryChunkAndCostsEveryIteration) {
  LoopCase c = makeLoopCase();
  const TargetModel &target = c.target;
  ASSERT_EQ(validatePackage(c.package, target), std::nullopt)
      << text(validatePackage(c.package, target));
  SimulationResult result;
  ASSERT_EQ(simulate(c.package, target, c.inputs, result), std::nullopt)
      << text(simulate(c.package, target, c.inputs, result));

  // Chunk i of X went through the staging buffer into chunk i of Y.
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(decode(result.outputs[0]), decode(c.inputs[0]));

  // Costs from the estimators, iteration by iteration at that iteration's
  // addresses, with the charge for addresses computed from the counter.
  ASSERT_GT(target.loopIterationCycles, 0u);
  ASSERT_GT(target.dynamicOffsetCycles, 0u);
  const KernelSpec *copy = lookupKernel("copy");
  ASSERT_NE(copy, nullptr);
  const int64_t params[] = {kChunkBytes};
  uint64_t gather = 0, scatter = 0;
  for (uint32_t i = 0; i < kLoopCount; ++i) {
    const uint32_t gatherAt[] = {c.x + i * kChunkBytes, c.staging};
    const uint32_t scatterAt[] = {c.staging, c.y + i * kChunkBytes};
    gather += estimateKernelCycles(*copy, params, target, gatherAt) +
              target.dynamicOffsetCycles;
    scatter += estimateKernelCycles(*copy, params, target, scatterAt) +
               target.dynamicOffsetCycles;
  }
  const uint64_t sync = uint64_t(kLoopCount) * target.syncCycles;
  const uint64_t control = uint64_t(kLoopCount) * target.loopIterationCycles;
  EXPECT_EQ(result.computeCycles, gather + scatter);
  EXPECT_EQ(result.syncCycles, sync);
  EXPECT_EQ(result.exchangeCycles, 0u);
  EXPECT_EQ(result.loopCycles, control);
  EXPECT_EQ(result.cycles, gather + scatter + sync + control);
  // The copy estimate does not depend on where its operands are, so every
  // iteration costs the first one's.
  const uint32_t first[] = {c.x, c.staging};
  const uint64_t body =
      target.syncCycles +
      2 * (estimateKernelCycles(*copy, params, target, first) +
           target.dynamicOffsetCycles);
  EXPECT_EQ(result.cycles, kLoopCount * body + control);

  // One record per program step, in its order; a body step's holds the sums
  // over its iterations.
  ASSERT_EQ(result.steps.size(), c.package.program.size());
  for (size_t s = 0; s < result.steps.size(); ++s) {
    EXPECT_EQ(result.steps[s].kind, c.package.program[s].kind);
    EXPECT_EQ(result.steps[s].index, c.package.program[s].index);
  }
  const std::vector<StepCycles> &steps = result.steps;
  EXPECT_EQ(steps[1].cycles, control);
  EXPECT_EQ(steps[1].runs, 1u);
  EXPECT_EQ(steps[1].groupCycles,
            std::vector<uint64_t>(result.tileGroups, control));
  EXPECT_EQ(steps[2].cycles, sync);
  EXPECT_EQ(steps[3].cycles, gather);
  EXPECT_EQ(steps[4].cycles, scatter);
  for (size_t s = 2; s <= 4; ++s)
    EXPECT_EQ(steps[s].runs, kLoopCount) << "step " << s;
  EXPECT_EQ(steps[0].runs, 1u);
  EXPECT_EQ(steps[5].runs, 1u);
  ASSERT_EQ(steps[3].groupCycles.size(), result.tileGroups);
  EXPECT_EQ(steps[3].groupCycles[0], gather); // Tile 0's group.
  EXPECT_EQ(steps[3].groupCycles[1], 0u);
  EXPECT_EQ(steps[3].busyTiles, 1u);
  EXPECT_EQ(steps[3].busyTileCycles, gather);
  EXPECT_EQ(steps[3].slowestTile, 0u);
  EXPECT_EQ(result.tileComputeCycles[0], gather + scatter);
}

TEST(SimulatorTest, LoopsInTheReports) {
  LoopCase c = makeLoopCase();
  SimulationResult result;
  ASSERT_EQ(simulate(c.package, c.target, c.inputs, result), std::nullopt);

  // The loop's control goes to its op, by name and location, with its
  // body's steps once per iteration.
  std::vector<OpCycles> ops = cyclesByOp(c.package, result);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].op, "slice");
  EXPECT_EQ(ops[0].location, "m.mlir:7:3");
  EXPECT_EQ(ops[0].loopCycles, result.loopCycles);
  EXPECT_EQ(ops[0].computeCycles, result.computeCycles);
  EXPECT_EQ(ops[0].syncCycles, result.syncCycles);
  EXPECT_EQ(ops[0].steps, 2 * kLoopCount);
  EXPECT_EQ(ops[0].cycles(), result.cycles);

  std::string trace = traceJson(c.package, c.target, result);
  EXPECT_NE(trace.find("\"name\": \"loop 'slice.loop' (3 iterations of 3 "
                       "steps)\", \"cat\": \"loop\""),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("\"runs\": 3"), std::string::npos);

  std::string html = profileHtml(c.package, c.target, result);
  EXPECT_NE(html.find("data-kind=\"loop\" data-cycles=\"" +
                      std::to_string(result.loopCycles) + "\""),
            std::string::npos);
  EXPECT_NE(html.find("\"loopCycles\": " + std::to_string(result.loopCycles)),
            std::string::npos);
  EXPECT_NE(html.find("over 3 iterations"), std::string::npos);
}

/// What profileData must hold of any run: every device step on the
/// timeline once, each phase and compute set once with all its runs, the
/// tile figures of the run's own tile cycles.
void expectProfileDataOfRun(const Package &package, const TargetModel &target,
                            const SimulationResult &result) {
  ProfileData data = profileData(package, target, result);
  std::vector<size_t> device;
  std::map<uint32_t, uint32_t> phaseRuns, computeRuns;
  for (size_t s = 0; s < result.steps.size(); ++s) {
    const StepCycles &step = result.steps[s];
    if (step.kind != StepKind::StreamIn && step.kind != StepKind::StreamOut)
      device.push_back(s);
    if (step.kind == StepKind::Exchange)
      phaseRuns[step.index] += step.runs;
    if (step.kind == StepKind::Compute)
      computeRuns[step.index] += step.runs;
  }
  EXPECT_EQ(data.timeline, device);
  std::map<uint32_t, uint32_t> gotPhases, gotComputes;
  for (const ProfilePhase &phase : data.phases) {
    EXPECT_TRUE(gotPhases.emplace(phase.index, phase.runs).second) << phase.name;
    EXPECT_EQ(phase.name, package.phases[phase.index].name);
    EXPECT_LE(phase.bound, phase.sendHorizon) << phase.name;
  }
  for (const ProfileComputeSet &set : data.computeSets) {
    EXPECT_TRUE(gotComputes.emplace(set.index, set.runs).second) << set.name;
    EXPECT_EQ(set.vertices, package.computeSets[set.index].tiles.size());
    EXPECT_LE(set.balance(), 1.0);
  }
  EXPECT_EQ(gotPhases, phaseRuns);
  EXPECT_EQ(gotComputes, computeRuns);

  const std::vector<uint64_t> &tiles = result.tileComputeCycles;
  ASSERT_FALSE(tiles.empty());
  EXPECT_EQ(data.maxTileCycles, *std::max_element(tiles.begin(), tiles.end()));
  EXPECT_EQ(tiles[data.busiestTile], data.maxTileCycles);
  EXPECT_EQ(data.idleTiles, uint64_t(std::count(tiles.begin(), tiles.end(), 0)));
  uint64_t least = 0;
  for (uint64_t cycles : tiles)
    if (cycles && (!least || cycles < least))
      least = cycles;
  EXPECT_EQ(data.minBusyTileCycles, least);
}

TEST(SimulatorTest, ProfileDataHoldsEveryStepOnce) {
  MatmulCase matmul = makeMatmulCase();
  SimulationResult result;
  ASSERT_EQ(simulate(matmul.package, matmul.target, matmul.inputs, result), std::nullopt);
  expectProfileDataOfRun(matmul.package, matmul.target, result);
  EXPECT_FALSE(profileData(matmul.package, matmul.target, result).hasLoops);

  LoopCase loop = makeLoopCase();
  ASSERT_EQ(simulate(loop.package, loop.target, loop.inputs, result), std::nullopt);
  expectProfileDataOfRun(loop.package, loop.target, result);
  ProfileData data = profileData(loop.package, loop.target, result);
  EXPECT_TRUE(data.hasLoops);
  // The loop body's compute set ran once per iteration.
  ASSERT_FALSE(data.computeSets.empty());
  EXPECT_EQ(data.computeSets[0].runs, kLoopCount);
}

TEST(SimulatorTest, MalformedLoopsFailWithoutCrashing) {
  LoopCase c = makeLoopCase();
  SimulationResult result;
  auto fails = [&](const Package &p, const std::string &expected) {
    auto error = simulate(p, c.target, c.inputs, result);
    ASSERT_TRUE(error) << "expected an error containing '" << expected << "'";
    EXPECT_NE(error->find(expected), std::string::npos) << *error;
    EXPECT_TRUE(result.outputs.empty());
  };
  Package p = c.package;
  p.program[1].index = 4;
  fails(p, "step 1 (loop 4): no such loop");
  p = c.package;
  p.loops[0].steps = 5;
  fails(p, "step 1 (loop 0 'slice.loop'): its body of 5 steps runs past the "
           "end of the program");
  p = c.package;
  p.program[4] = {StepKind::Loop, 0};
  // The loop again inside its own body: its body would leave the one
  // around it.
  fails(p, "step 4 (loop 0 'slice.loop'): its body of 3 steps runs past the "
           "end of the body around it");
  // The last iteration's chunk past the end of tile memory.
  p = c.package;
  p.computeSets[0].operandAddress[0] = c.target.interleaved.end() - 128;
  fails(p, "step 3 (compute set 0 'slice.gather', iteration 2): vertex 0 on "
           "tile 0: operand 'src' [");
}

/// Each element a stream's pieces write: (tile, tile address) -> host byte.
std::map<std::pair<uint32_t, uint64_t>, uint64_t>
elementsWritten(const std::vector<StreamPiece> &pieces, uint32_t bytes,
                uint64_t hostShift = 0) {
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> written;
  for (const StreamPiece &piece : pieces)
    for (uint32_t r = 0; r < piece.rows; ++r)
      for (uint32_t e = 0; e < piece.rowBytes / bytes; ++e) {
        const uint64_t stride = piece.hostElementStride ? piece.hostElementStride : bytes;
        written[{piece.tile, uint64_t(piece.address) + uint64_t(r) * piece.tilePitch +
                                 uint64_t(e) * bytes}] =
            hostShift + piece.hostOffset + uint64_t(r) * piece.hostPitch + e * stride;
      }
  return written;
}

TEST(SimulatorTest, OneBatchsStreamWritesWhatTheWholeStreamWritesThere) {
  // A repeated layer's weights: every layer's block on the tiles of one
  // layout, one after another, each layer's host tensor streamed into its
  // batch alone. Over random batch-local layouts, plain and transposed,
  // the batches' streams together write each element where the stream of
  // all the batches (one host tensor) writes it, from the same host
  // element, once.
  std::mt19937 random(11);
  const TargetModel target = *TargetModel::byName("ipu21-16");
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t batches = 1 + random() % 5, rows = 1 + random() % 9,
                  cols = 1 + random() % 12;
    const uint32_t gridRows = 1 + random() % std::min<int64_t>(rows, 3),
                   gridCols = 1 + random() % std::min<int64_t>(cols, 3);
    BlockLayout layout = ndLayout({batches, rows, cols}, /*gridBatches=*/1, gridRows,
                                  gridCols, /*base=*/0, 0, int64_t(gridCols), 1);
    layout.replicas = 1 + random() % 2;
    layout.replicaStride = int64_t(gridRows * gridCols);
    const bool transpose = random() % 2;
    const uint32_t address = target.allocatableBase(MemoryClass::Standard);
    std::vector<StreamPiece> whole;
    ASSERT_EQ(layoutStreamPieces(layout, address, true, transpose, whole), std::nullopt);
    const uint32_t bytes = elementBytes(layout.type);
    const uint64_t matrixBytes = uint64_t(rows) * cols * bytes;
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> together;
    for (int64_t b = 0; b < batches; ++b) {
      std::vector<StreamPiece> one;
      ASSERT_EQ(layoutStreamPieces(layout, address, true, transpose, one, b), std::nullopt);
      for (const auto &[where, host] : elementsWritten(one, bytes, uint64_t(b) * matrixBytes)) {
        EXPECT_LT(host - uint64_t(b) * matrixBytes, matrixBytes) << "trial " << trial;
        EXPECT_TRUE(together.emplace(where, host).second) << "trial " << trial;
      }
    }
    EXPECT_EQ(together, elementsWritten(whole, bytes)) << "trial " << trial;
  }
}
