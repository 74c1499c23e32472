//===- TargetModel.cpp - The ipu21 machine description --------------------===//
//
// Every number below cites its source, following shared/machine-model.md:
// "seed" means the logs in shared/seeds/, "assumption" means no public figure
// was found and the value is a parameter to revisit.
//
//===----------------------------------------------------------------------===//

#include "IPU/Target/TargetModel.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ipu {

namespace {
constexpr uint32_t kIpu21Tiles = 1472;
} // namespace

std::string_view memoryClassName(MemoryClass memoryClass) {
  switch (memoryClass) {
  case MemoryClass::Standard:
    return "standard";
  case MemoryClass::Interleaved:
    return "interleaved";
  }
  return "<invalid>";
}

std::optional<MemoryClass> parseMemoryClass(std::string_view name) {
  if (name == "standard")
    return MemoryClass::Standard;
  if (name == "interleaved")
    return MemoryClass::Interleaved;
  return std::nullopt;
}

TargetModel TargetModel::ipu21() {
  TargetModel t;
  t.name = "ipu21";

  // Chip.
  t.tiles = kIpu21Tiles; // Public GC200/C600 specs; seed `tile_count=1472`.
  t.clockHz = 1.5e9;     // Seed: 225672 cycles / 150.448 us = 1500 MHz.
  t.workersPerTile = 6;  // Graphcore assembly guide: 6 workers + supervisor.
  // Poplar Target::getDataPathWidth(), 64 bits: poplibs takes its vector
  // width as getDataPathWidth() / (isFloat ? 32 : 16) (f32v2, f16v4, ld64).
  t.vectorBytes = 8;

  // Tile memory: 624 KiB per tile (public specs), [0x4C000, 0xE8000). What a
  // program may use follows the user's stack (crates/ipu-target memory.rs,
  // crates/ipu-codegen memory.rs): 586,960 bytes a tile.
  t.tileMemoryBytes = 638976;
  // [0x4C000, 0x80000), 208 KiB, the only executable region; seed
  // `standard_ranges` end at 524288 = 0x80000 (IPU21_EXECUTABLE_MEMORY_LIMIT).
  t.standard = {MemoryClass::Standard, 0x4C000, 208 * 1024};
  // [0x80000, 0xE7BB0), 424,880 bytes: IPU21_APPLICATION_MEMORY_LIMIT, the
  // loader's limit (643 frames of 992 payload bytes); the last 1,104 bytes
  // of SRAM cannot be loaded.
  t.interleaved = {MemoryClass::Interleaved, 0x80000, 0xE7BB0 - 0x80000};
  // The runtime below IPU21_DATA_BASE = 0x586E0: the linked kernels in
  // [0x4C000, 0x50000) (the seed's linked_end = 319,432 is within), the
  // exchange window [0x50000, 0x58000) (EXCHANGE_WINDOW_BASE/BYTES) and the
  // runtime state, 0xE0 + 6 x 0x100 (RUNTIME_STATE_BYTES): 50,912 bytes, so
  // 162,080 standard bytes are left (IPU21_STANDARD_FIXED_BYTES). Until
  // issue 45: 8 KiB, and 630,784 usable bytes a tile.
  t.runtimeLinkedCodeBytes = 16384;
  t.exchangeWindowBytes = 32768;
  t.runtimeStateBytes = 1760;
  t.reservedStandardBytes =
      t.runtimeLinkedCodeBytes + t.exchangeWindowBytes + t.runtimeStateBytes;
  // IPU21_SUPERVISOR_FETCH_LOOKAHEAD, 8 x 8 bytes: the guard after exchange
  // rows (their package.rs, guard_after).
  t.fetchGuardBytes = 64;
  t.memoryElementBytes = 16384; // poplibs `TMEM_ELEMSIZE 0x4000`.

  // AMP: MACs per cycle by input and partials type (machine-model.md
  // "Compute").
  t.ampMacsF32F32 = 16;  // poplibs ConvModel: 8 conv units x 2 input elements.
  t.ampMacsF16F16 = 64;  // 16 conv units x 4; C600 280 TF f16; measured line.
  t.ampMacsF16F32 = 32;  // 8 conv units x 4: poplibs ConvPartial1x1Out has
                         // half-in/float-partials only with 8 conv units.
  t.ampMacsF8F16 = 128;  // C600 560 TF f8 = 2x the f16 rate.
  t.ampMacsF8F32 = 64;   // Assumption: half the f16-partials rate, as for f16.
  t.ampConvUnitsF16Partials = 16; // poplibs: 16 conv units with half partials.
  t.ampConvUnitsF32Partials = 8;  // poplibs: 8 conv units with float partials.
  t.ampGrainKF32 = 8;  // poplibs weights per conv unit: 8 float,
  t.ampGrainKF16 = 16; // 16 half,
  t.ampGrainKF8 = 32;  // 32 quarter (machine-model.md reference estimator).
  // poplibs lib/poplin/PerformanceEstimation.hpp,
  // getConvPartial1x1SupervisorOuterLoopCycleEstimateHalfFloat and the inner
  // loop estimate, for one conv group:
  t.ampSupervisorOverheadCycles = 50; // supervisorNonloopOverhead.
  t.ampLoopOverheadCycles = 24; // Conv-group loop 12 + 1, first in-group 10 + 1.
  t.ampWorkerStateCycles = 7;   // Worker state retention set-up, per worker.
  t.ampInPassOverheadCycles = 39; // Later in-group loop 15, 6 workers x 3 of
                                  // retained input-channel state, and 6 x 1
                                  // for a pass without output zeroing.
  t.ampOutPassOverheadCycles = 25; // Out-group loop 18-19 + output pass 6-7.
  t.ampColumnPassOverheadCycles = 0; // Folded into the out-group loop above.
  t.ampWorkerPassInstructions = 18;  // Worker loop: 37 - 3 x 4 rows - 7 saved
                                     // by state retention (rows >= 3).
  t.ampWorkerOneRowInstructions = 25; // 32 - 7 (poplibs' one-row path).
  t.ampWorkerTwoRowInstructions = 34; // 41 - 7 (poplibs' two-row path).
  t.ampIdleWorkerInstructions = 0;    // No work-list entry, no cycles.
  // poplibs getConvPartial1x1SupervisorOuterLoopCycleEstimateQuarter and its
  // inner loop, for f8 inputs (one conv group):
  t.ampF8SupervisorOverheadCycles = 46; // supervisorNonloopOverhead.
  t.ampF8LoopOverheadCycles = 21;       // cgLoopOverhead: 6 x 2 + 9.
  t.ampF8WorkerStateCycles = 0;         // No state retention on this path.
  t.ampF8InPassOverheadCycles = 0;      // Charged per pass below.
  t.ampF8OutPassOverheadCycles = 108;   // igLoopOverheadAfterSync:
                                        // 6 x 11 + 6 + 6 x 6 worker calls.
  t.ampF8ColumnPassOverheadCycles = 69; // ogLoopOverhead 6 x 6 + 10, plus the
                                        // first in-group's 131 - 108.
  t.ampF8WorkerPassInstructions = 37;   // 20 + 29 - 3 x 4 (without zeroing;
                                        // the first k pass saves 5).
  t.ampF8WorkerOneRowInstructions = 37; // 20 + 17.
  t.ampF8WorkerTwoRowInstructions = 42; // 20 + 22.
  t.ampF8IdleWorkerInstructions = 20;   // The worker overhead alone.
  t.ampMinWorkerTagCycles = 14; // "tag cost to worker with min cycles".
  // The measured AMP vertex ([N x 16] x [16 x 16], f16, tessellate-ipu "IPU
  // Peak Flops") fits 4.0 N + ~320 cycles; the poplibs terms above give
  // 4 N + 295 for the same call (N a multiple of 6), so entering the vertex
  // costs ~25 more.
  t.vertexCallCycles = 25;
  // Worker kernels: poplibs' recalibrated popops supervisor overhead (poplibs
  // commit 3eb5d5e0) and a loop prologue of 16-18 worker instructions
  // (machine-model.md).
  t.workerSupervisorCycles = 11;
  t.workerPrologueInstructions = 17;
  // poplibs' cast estimate: one 64-bit access a cycle, the f32 side
  // binding: 2 per 4 elements.
  t.workerCastInstructions = 2;
  // Generated elementwise kernels: worker instructions (thread cycles) per
  // 64-bit vector of the op's type, from poplibs 7eac0f2
  // lib/popops/popopsCycleEstimators.hpp (unaryOpPerfInfo, binaryOpPerfInfo;
  // docs/research/poplibs-elementwise.md has each line). Arithmetic is one
  // issue of its vector instruction; a transcendental or a divide is
  // charged poplibs' whole loop per vector ({c, false, k}: c cycles for k
  // elements, its loads and stores included), as the user's stack takes
  // poplibs' rates for what it did not measure (docs/Calibration.md). Until
  // issue 22 we took the loop less its load and store, about half.
  t.ewArithInstructionsF16 = 1;   // f16v4add/mul/sub/max: one issue each.
  t.ewArithInstructionsF32 = 1;   // f32v2add/mul/sub/max.
  t.ewFmaInstructionsF16 = 2;     // Assumption: a mul and an add.
  t.ewFmaInstructionsF32 = 2;
  t.ewDivideInstructionsF16 = 21; // DIVIDE H {21, false, 4}: via f32div.
  t.ewDivideInstructionsF32 = 10; // DIVIDE F {10, false, 2}.
  t.ewExpInstructionsF16 = 4;     // EXPONENT H {4, false, 4}: 2 x f16v2exp.
  t.ewExpInstructionsF32 = 6;     // EXPONENT F {6, false, 2}: 2 x f32exp.
  t.ewLogInstructionsF16 = 4;     // LOGARITHM H {4, false, 4}: 2 x f16v2ln.
  t.ewLogInstructionsF32 = 12;    // LOGARITHM F {12, false, 2}.
  t.ewTanhInstructionsF16 = 4;    // TANH H {4, false, 4}: 2 x f16v2tanh.
  t.ewTanhInstructionsF32 = 12;   // TANH F {12, false, 2}.
  t.ewErfInstructionsF16 = 52;    // ERF H {13, false, 1}: 13 per half.
  t.ewErfInstructionsF32 = 82;    // ERF F {41, false, 1}: 41 per float.
  t.ewSqrtInstructionsF16 = 23;   // SQRT H {23, false, 4}: via f32sqrt.
  t.ewSqrtInstructionsF32 = 10;   // SQRT F {10, false, 2}.
  t.ewRsqrtInstructionsF16 = 19;  // RSQRT H {19, false, 4}.
  t.ewRsqrtInstructionsF32 = 8;   // RSQRT F {8, false, 2}.
  // poplibs castWorkerCycles (PerformanceEstimation.cpp): f32 <-> f16 0.5
  // cycles an element, f16 <-> f8 ("quarter") 0.25, loads included.
  t.ewCastF32F16Instructions = 2;
  t.ewCastF16F8Instructions = 1;
  t.ewLoadStoreInstructions = 1; // One 64-bit ld64 or st64.
  // poplibs BroadcastVectorInner2D (the bias add over rows): 15 thread
  // cycles per half worklist entry (9 float); we take the half figure.
  t.ewRowOverheadInstructions = 15;
  // poplibs ContinuousReduce (docs/research/poplibs-reduce.md): 12 worker
  // cycles per output row, and one rpt bundle {ld64step; f32v4acc} per
  // 64-bit vector.
  t.reduceRowOverheadInstructions = 12;
  // A sum of f16 values into f32 (ContinuousReductionAcc.S Add H->F): 18
  // bundles a row, and {ld64step; f16v8acc} per 4 halves.
  t.reduceWidenedRowOverheadInstructions = 18;
  // A partial-sum reduction costs what the user's stack charges it (their
  // crates/ipu-codegen cost.rs GEMM reduction_work): (inner - 1 + epochs) x
  // partial bytes at one byte a cycle, plus a kernel launch per epoch
  // (formula a3efe02; the rate 90cec57, "IPU21 profiles sustain roughly one
  // output byte per cycle", their reading of unrecorded profiles; the launch
  // is poplibs' basicOpSupervisorOverhead). The rate was ours per output
  // byte until issue 45, four times too fast on a 4-way reduce.
  t.reducePartialBytesPerCycle = 1;
  t.kernelLaunchCycles = 11;
  // GELU, tanh form: the user's f16 kernel (device/gelu_f16.S, "tanh GeLU")
  // is "compute-bound at roughly ten tile cycles per element across the six
  // workers", + kernel_launch_cycles a call (their cost.rs, ada233b; the
  // kernel named tanh_approx in 2f1a9c3). Their cost model's figure from
  // their hardware runs; no cycle count of the run is recorded.
  t.geluTanhCyclesPerElement = 10;
  // GELU, erf form: the user has none. Assumption: their tanh figure scaled
  // by the scalar op counts of the two forms. tanh form: 8 arithmetic ops +
  // tanh as 1 - 2 / (exp(2z) + 1) (6 ops) = 14; erf form: 4 arithmetic ops +
  // erf by Abramowitz-Stegun 7.1.26 (t = 1 / (1 + p|x|): 4, the degree-5
  // polynomial by Horner: 9, exp(-x^2): 3, 1 - poly x exp: 2, the sign: 1)
  // = 23. 10 x 23 / 14 = 16.4, rounded up. (poplibs' ERF H alone is 13.)
  t.geluErfCyclesPerElement = 17;
  t.reduceVectorInstructions = 1;
  // Assumption: the vertex entry, the worker split and the row loop take
  // ~64 instructions of 8 bytes (a 64-bit bundle each), and the loop body
  // an instruction per worker instruction the estimate counts.
  t.ewKernelCodeBytes = 512;
  t.ewCodeBytesPerInstruction = 8;

  // Load/store paths.
  t.loadBytesPerCycleStandard = 8;     // poplibs PerformanceEstimation.
  t.loadBytesPerCycleInterleaved = 16; // ld128; Citadel microbenchmarks.
  t.storeBytesPerCycle = 8;            // Citadel microbenchmarks.

  // Exchange and synchronisation: ExchangeTiming.h holds the C600 timing
  // model's constants with their sources.
  t.exchange = ExchangeTimingModel();
  t.exchange.tiles = kIpu21Tiles;
  // The user's stack charges no sync apart from each phase's 600 cycles
  // (Poplar Target::getGlobalSyncCycles, exchange.phaseFixedCycles), which
  // covers the barrier into the phase; it finds no internal-sync figure
  // (docs/research/ipu21-exchange.md, 6). Our sync steps only bracket
  // phases and host streams, so they cost nothing of their own. (Until
  // issue 22: 100 per phase and 90 per sync, poplibs' CTC plan constants.)
  t.syncCycles = 0;
  // The user's hardware measurements (their crates/ipu-codegen cost.rs,
  // IPU21_TARGET_COSTS, docs/research/ipu21-exchange.md 7): a six-worker
  // local copy call costs 288 cycles, and memcpy moves 8 bytes a cycle
  // (Poplar Target::getMemcpyBytesPerCycle, as their stack uses it).
  t.localCopyCallCycles = 288;
  t.memcpyBytesPerCycle = 8;
  // Serial loops. poplibs' getDynamicSlice1DEstimate (popopsCycleEstimators
  // .cpp) charges its supervisor 1 + 6 + 1 + 6 cycles beyond the basic
  // overhead to read the offset and set up the workers' pointers. The
  // Repeat program's branch and counter update per iteration are an
  // assumption: a handful of supervisor instructions.
  t.dynamicOffsetCycles = 14;
  t.loopIterationCycles = 10;
  t.vertexStateHeaderBytes = 16; // Assumption.
  // The user's hardware measurement of a six-worker panel pack: 2,364
  // cycles for 640 elements, 3.7 cycles an element (their cost.rs, 4dc82fe);
  // 4 worker instructions an element over 6 workers every 6th cycle.
  t.transposeInstructionsPerElement = 4;
  t.vertexOperandBytes = 4;      // A 32-bit tile address per operand.
  t.vertexParamBytes = 8;        // Assumption: parameters as 64-bit values.
  t.bufferAlignmentBytes = 8;    // ld64/st64 need 8-byte aligned addresses.

  // Host link: the user's C600 measurement, a 453,752,832-byte resident
  // upload in about 116 ms (osmarks/ipu-stack 4496cf6, README): 3.91 GB/s,
  // at the 1.5 GHz clock 0.3835 cycles a byte. PCIe Gen4 x16's 32 GB/s
  // each way (machine-model.md) stays as the bound reports show beside it.
  t.hostLinkBytesPerSecond = 453752832 / 0.116;
  t.hostLinkPcieBoundBytesPerSecond = 32e9;
  t.hostCyclesPerByte = t.clockHz / t.hostLinkBytesPerSecond;
  // Assumption: about 2 us for the host sync that starts a stream (no
  // measurement of ours; the user's old one-transfer-per-phase layout took
  // about 157 us per host-sync phase, 4496cf6, with far smaller transfers).
  t.hostStreamLatencyCycles = 3000;
  return t;
}

TargetModel TargetModel::ipu21WithTiles(uint32_t tiles) {
  TargetModel t = ipu21();
  t.tiles = tiles;
  t.exchange.tiles = tiles;
  t.name = "ipu21-" + std::to_string(tiles);
  return t;
}

namespace {

/// A preset by name: `ipu21` or `ipu21-N`.
std::optional<TargetModel> presetByName(std::string_view name) {
  if (name == "ipu21")
    return TargetModel::ipu21();
  constexpr std::string_view prefix = "ipu21-";
  if (name.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  // Only the canonical spelling ipu21WithTiles produces: decimal digits, no
  // sign, no leading zero, so each model has exactly one name.
  if (digits.empty() || digits.size() > 4 || digits.front() == '0')
    return std::nullopt;
  uint32_t tiles = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    tiles = tiles * 10 + static_cast<uint32_t>(c - '0');
  }
  if (tiles < 1 || tiles > kIpu21Tiles)
    return std::nullopt;
  return TargetModel::ipu21WithTiles(tiles);
}

/// The preset a model is a variant of: every field but the cost constants.
TargetModel presetOf(const TargetModel &model) {
  return model.tiles == kIpu21Tiles ? TargetModel::ipu21()
                                    : TargetModel::ipu21WithTiles(model.tiles);
}

/// The shortest spelling that reads back as `value`.
std::string spellValue(double value) {
  char text[64];
  const std::to_chars_result spelled = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, spelled.ptr);
}

/// How far an override may move a constant from its preset value, either
/// way: far enough for any sensitivity study, near enough that no cost
/// figure leaves the ranges the compiler and the simulator count in.
constexpr double kMostOverrideFactor = 16;

} // namespace

void TargetModel::Constant::set(TargetModel &target, double value) const {
  if (rate) {
    target.*rate = value;
    return;
  }
  const uint32_t whole = static_cast<uint32_t>(std::llround(std::clamp(value, 0.0, 4294967295.0)));
  (field ? target.*field : target.exchange.*exchangeField) = whole;
}

std::string TargetModel::canonicalName() const {
  const TargetModel preset = presetOf(*this);
  std::string spelled = preset.name;
  for (const Constant &constant : constants())
    if (constant.get(*this) != constant.get(preset))
      spelled += "+" + std::string(constant.name) + "=" + spellValue(constant.get(*this));
  return spelled;
}

std::optional<TargetModel> TargetModel::byName(std::string_view name, std::string *why) {
  auto refuse = [&](const std::string &reason) -> std::optional<TargetModel> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  const size_t plus = name.find('+');
  const std::string_view presetName = name.substr(0, plus);
  std::optional<TargetModel> target = presetByName(presetName);
  if (!target)
    return refuse("unknown target '" + std::string(presetName) + "'; known: " + knownNames());
  if (plus == std::string_view::npos)
    return target;
  const TargetModel preset = *target;
  const std::string quoted = "target '" + std::string(name) + "'";
  std::string_view rest = name.substr(plus + 1);
  for (;;) {
    const size_t next = rest.find('+');
    const std::string_view item = rest.substr(0, next);
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      return refuse(quoted + ": '" + std::string(item) + "' is not CONSTANT=VALUE");
    const std::string_view key = item.substr(0, equals), text = item.substr(equals + 1);
    const std::vector<Constant> &table = constants();
    auto constant = std::find_if(table.begin(), table.end(),
                                 [&](const Constant &c) { return key == c.name; });
    if (constant == table.end())
      return refuse(quoted + ": '" + std::string(key) +
                    "' is no cost constant of the target (TargetModel::constants())");
    double value = 0;
    const std::from_chars_result read = std::from_chars(text.data(), text.data() + text.size(), value);
    if (read.ec != std::errc() || read.ptr != text.data() + text.size() || !std::isfinite(value))
      return refuse(quoted + ": constant '" + std::string(key) + "' takes a number, got '" +
                    std::string(text) + "'");
    const double base = constant->get(preset);
    if (!(value >= base / kMostOverrideFactor && value <= base * kMostOverrideFactor))
      return refuse(quoted + ": constant '" + std::string(key) + "' = " + std::string(text) +
                    " is not within 1/16x and 16x of " + preset.name + "'s " + spellValue(base));
    if (!constant->fractional() && value != std::floor(value))
      return refuse(quoted + ": constant '" + std::string(key) + "' counts whole units, got " +
                    std::string(text));
    constant->set(*target, value);
    if (next == std::string_view::npos)
      break;
    rest = rest.substr(next + 1);
  }
  // One name per model: a value spelled otherwise, a constant given twice
  // or out of order, or one at its preset's value is refused with the name
  // to write instead.
  const std::string canonical = target->canonicalName();
  if (canonical != name)
    return refuse(quoted + " is not spelled canonically: write '" + canonical +
                  "' (constants in the order of TargetModel::constants(), each once, "
                  "values as std::to_chars spells them, none at the preset's value)");
  target->name = canonical;
  return target;
}

std::string TargetModel::knownNames() {
  return "ipu21, ipu21-N (1 <= N <= " + std::to_string(kIpu21Tiles) +
         "), either followed by +CONSTANT=VALUE overrides of cost constants";
}

double TargetModel::peakFlopsF16() const {
  return static_cast<double>(tiles) * ampMacsF16F16 * 2.0 * clockHz;
}

uint32_t TargetModel::ampMacsPerCycle(ElementType inputType,
                                      ElementType partialsType) const {
  const bool halfPartials = partialsType == ElementType::F16;
  switch (inputType) {
  case ElementType::F32:
    // f32 inputs only accumulate in f32.
    return halfPartials ? 0 : ampMacsF32F32;
  case ElementType::F16:
    return halfPartials ? ampMacsF16F16 : ampMacsF16F32;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return halfPartials ? ampMacsF8F16 : ampMacsF8F32;
  }
  return 0;
}

uint32_t TargetModel::ampGrainK(ElementType inputType) const {
  switch (inputType) {
  case ElementType::F32:
    return ampGrainKF32;
  case ElementType::F16:
    return ampGrainKF16;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return ampGrainKF8;
  }
  return 0;
}

uint32_t TargetModel::ampPassColumns(ElementType partialsType) const {
  return partialsType == ElementType::F16 ? ampConvUnitsF16Partials
                                          : ampConvUnitsF32Partials;
}

uint32_t TargetModel::loadBytesPerCycle(MemoryClass memoryClass) const {
  return memoryClass == MemoryClass::Interleaved ? loadBytesPerCycleInterleaved
                                                 : loadBytesPerCycleStandard;
}

const std::vector<TargetModel::Constant> &TargetModel::constants() {
  static const std::vector<Constant> table = {
      {"ampMacsF32F32", &TargetModel::ampMacsF32F32, "poplibs ConvModel", false},
      {"ampMacsF16F16", &TargetModel::ampMacsF16F16,
       "poplibs; C600 specs; tessellate-ipu measurement", false},
      {"ampMacsF16F32", &TargetModel::ampMacsF16F32,
       "poplibs ConvPartial1x1Out (8 conv units)", false},
      {"ampMacsF8F16", &TargetModel::ampMacsF8F16, "C600 specs (2x f16)", false},
      {"ampMacsF8F32", &TargetModel::ampMacsF8F32,
       "half the f16-partials rate", true},
      {"ampConvUnitsF16Partials", &TargetModel::ampConvUnitsF16Partials,
       "poplibs", false},
      {"ampConvUnitsF32Partials", &TargetModel::ampConvUnitsF32Partials,
       "poplibs", false},
      {"ampGrainKF32", &TargetModel::ampGrainKF32, "poplibs", false},
      {"ampGrainKF16", &TargetModel::ampGrainKF16, "poplibs", false},
      {"ampGrainKF8", &TargetModel::ampGrainKF8, "poplibs", false},
      {"ampSupervisorOverheadCycles", &TargetModel::ampSupervisorOverheadCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampLoopOverheadCycles", &TargetModel::ampLoopOverheadCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampWorkerStateCycles", &TargetModel::ampWorkerStateCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampInPassOverheadCycles", &TargetModel::ampInPassOverheadCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampOutPassOverheadCycles", &TargetModel::ampOutPassOverheadCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampWorkerPassInstructions", &TargetModel::ampWorkerPassInstructions,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampWorkerOneRowInstructions", &TargetModel::ampWorkerOneRowInstructions,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampWorkerTwoRowInstructions", &TargetModel::ampWorkerTwoRowInstructions,
       "poplibs ConvPartial1x1 estimate", false},
      {"ampF8SupervisorOverheadCycles",
       &TargetModel::ampF8SupervisorOverheadCycles,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8LoopOverheadCycles", &TargetModel::ampF8LoopOverheadCycles,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8OutPassOverheadCycles", &TargetModel::ampF8OutPassOverheadCycles,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8ColumnPassOverheadCycles",
       &TargetModel::ampF8ColumnPassOverheadCycles,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8WorkerPassInstructions", &TargetModel::ampF8WorkerPassInstructions,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8WorkerOneRowInstructions",
       &TargetModel::ampF8WorkerOneRowInstructions,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8WorkerTwoRowInstructions",
       &TargetModel::ampF8WorkerTwoRowInstructions,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampF8IdleWorkerInstructions", &TargetModel::ampF8IdleWorkerInstructions,
       "poplibs ConvPartial1x1 quarter estimate", false},
      {"ampMinWorkerTagCycles", &TargetModel::ampMinWorkerTagCycles,
       "poplibs ConvPartial1x1 estimate", false},
      {"vertexCallCycles", &TargetModel::vertexCallCycles,
       "residual of the tessellate-ipu measurement", true},
      {"workerSupervisorCycles", &TargetModel::workerSupervisorCycles,
       "poplibs 3eb5d5e0 popops supervisor overhead", false},
      {"workerPrologueInstructions", &TargetModel::workerPrologueInstructions,
       "machine-model.md worker loop prologue", false},
      {"workerCastInstructions", &TargetModel::workerCastInstructions,
       "poplibs cast estimate", false},
#define IPU_EW_CONSTANT(field, source, assumption)                               \
  {#field, &TargetModel::field, source, assumption}
#define IPU_RATE_CONSTANT(field, source, assumption)                             \
  {#field, nullptr, source, assumption, nullptr, &TargetModel::field}
      IPU_RATE_CONSTANT(ewArithInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewArithInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewFmaInstructionsF16, "a mul and an add", true),
      IPU_RATE_CONSTANT(ewFmaInstructionsF32, "a mul and an add", true),
      IPU_RATE_CONSTANT(ewDivideInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewDivideInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewExpInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewExpInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewLogInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewLogInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewTanhInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewTanhInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewErfInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewErfInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewSqrtInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewSqrtInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewRsqrtInstructionsF16, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewRsqrtInstructionsF32, "poplibs popopsCycleEstimators.hpp", false),
      IPU_RATE_CONSTANT(ewCastF32F16Instructions, "poplibs castWorkerCycles", false),
      IPU_RATE_CONSTANT(ewCastF16F8Instructions, "poplibs castWorkerCycles", false),
      IPU_RATE_CONSTANT(ewLoadStoreInstructions, "one ld64/st64 issue", true),
      IPU_EW_CONSTANT(ewRowOverheadInstructions,
                      "poplibs BroadcastVectorInner2D per entry", false),
      IPU_EW_CONSTANT(reduceRowOverheadInstructions,
                      "poplibs ContinuousReduce per output", false),
      IPU_EW_CONSTANT(reduceWidenedRowOverheadInstructions,
                      "poplibs ContinuousReductionAcc.S Add H->F per output", false),
      IPU_RATE_CONSTANT(reduceVectorInstructions,
                      "poplibs ContinuousReduce rpt bundle", false),
      IPU_EW_CONSTANT(ewKernelCodeBytes, "assumption: 64 bundles", true),
      IPU_EW_CONSTANT(ewCodeBytesPerInstruction, "assumption: 64-bit bundles", true),
#undef IPU_EW_CONSTANT
      {"loadBytesPerCycleStandard", &TargetModel::loadBytesPerCycleStandard,
       "poplibs PerformanceEstimation", false},
      {"loadBytesPerCycleInterleaved",
       &TargetModel::loadBytesPerCycleInterleaved, "Citadel microbenchmarks",
       false},
      {"storeBytesPerCycle", &TargetModel::storeBytesPerCycle,
       "Citadel microbenchmarks", false},
      {"exchange.phaseFixedCycles", nullptr,
       "Poplar Target getGlobalSyncCycles (the user's stack)", false,
       &ExchangeTimingModel::phaseFixedCycles},
      {"exchange.receiveGuardEvents", nullptr,
       "the user's stack scheduled_receive_window", false,
       &ExchangeTimingModel::receiveGuardEvents},
      {"exchange.rowPhaseEvents", nullptr,
       "the user's stack receiver phase (2 per row)", false,
       &ExchangeTimingModel::rowPhaseEvents},
      {"exchange.plannerLatencyEvents", nullptr,
       "Poplar Target getMaxIPUSyncDelay (the user's stack)", false,
       &ExchangeTimingModel::plannerLatencyEvents},
      {"localCopyCallCycles", &TargetModel::localCopyCallCycles,
       "the user's hardware measurement", false},
      {"memcpyBytesPerCycle", &TargetModel::memcpyBytesPerCycle,
       "Poplar Target getMemcpyBytesPerCycle (the user's stack)", false},
      {"loopIterationCycles", &TargetModel::loopIterationCycles,
       "assumption: a Repeat's branch and counter update", true},
      {"dynamicOffsetCycles", &TargetModel::dynamicOffsetCycles,
       "poplibs getDynamicSlice1DEstimate supervisor", false},
      {"vertexStateHeaderBytes", &TargetModel::vertexStateHeaderBytes,
       "assumption", true},
      {"transposeInstructionsPerElement",
       &TargetModel::transposeInstructionsPerElement,
       "the user's hardware measurement (panel pack, 3.7 cycles an element)", false},
      IPU_RATE_CONSTANT(reducePartialBytesPerCycle,
       "the user's cost model, cost.rs 90cec57/a3efe02 (unrecorded profiles)",
       false),
      IPU_RATE_CONSTANT(geluTanhCyclesPerElement,
       "the user's cost model, cost.rs ada233b (f16 tanh GELU kernel)", false),
      IPU_RATE_CONSTANT(geluErfCyclesPerElement,
       "the tanh figure x erf/tanh GELU op counts (23/14)", true),
      {"kernelLaunchCycles", &TargetModel::kernelLaunchCycles,
       "the user's kernel_launch_cycles (poplibs basicOpSupervisorOverhead)",
       false},
      {"vertexOperandBytes", &TargetModel::vertexOperandBytes,
       "32-bit tile addresses (Graphcore IPU memory architecture)", false},
      {"vertexParamBytes", &TargetModel::vertexParamBytes, "assumption", true},
      {"bufferAlignmentBytes", &TargetModel::bufferAlignmentBytes,
       "64-bit load/store alignment (Graphcore IPU ISA ld64/st64)", false},
  };
#undef IPU_RATE_CONSTANT
  return table;
}

const MemoryRegion &TargetModel::region(MemoryClass memoryClass) const {
  return memoryClass == MemoryClass::Standard ? standard : interleaved;
}

uint32_t TargetModel::allocatableBytes(MemoryClass memoryClass) const {
  const MemoryRegion &r = region(memoryClass);
  if (memoryClass != MemoryClass::Standard)
    return r.bytes;
  return r.bytes > reservedStandardBytes ? r.bytes - reservedStandardBytes : 0;
}

uint32_t TargetModel::allocatableBase(MemoryClass memoryClass) const {
  const MemoryRegion &r = region(memoryClass);
  if (memoryClass != MemoryClass::Standard)
    return r.base;
  return r.base + std::min(reservedStandardBytes, r.bytes);
}

uint64_t TargetModel::localCopyCycles(uint64_t mostBytesOnATile) const {
  if (mostBytesOnATile == 0)
    return 0;
  uint64_t rate = std::max<uint32_t>(memcpyBytesPerCycle, 1);
  return localCopyCallCycles + (mostBytesOnATile + rate - 1) / rate;
}

} // namespace ipu
