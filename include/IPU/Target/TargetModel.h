//===- TargetModel.h - The one description of an IPU-class machine -------===//
//
// Every number of the machine lives here and nowhere else. Passes, the
// package translator and the simulator all read a TargetModel. The `ipu21`
// preset follows shared/machine-model.md; the small presets keep every number
// of `ipu21` except the tile count, so lit tests stay readable.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TARGET_TARGETMODEL_H
#define IPU_TARGET_TARGETMODEL_H

#include "IPU/Support/ElementType.h"
#include "IPU/Target/ExchangeTiming.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

/// Tile memory classes. Standard memory is the only executable region;
/// interleaved memory allows 128-bit loads at full rate.
enum class MemoryClass : uint8_t { Standard = 0, Interleaved = 1 };

std::string_view memoryClassName(MemoryClass memoryClass);
std::optional<MemoryClass> parseMemoryClass(std::string_view name);

/// A contiguous address range of one memory class on every tile.
struct MemoryRegion {
  MemoryClass memoryClass;
  uint32_t base;  ///< First byte address.
  uint32_t bytes; ///< Size of the region.
  uint32_t end() const { return base + bytes; }
};

struct TargetModel {
  std::string name;

  // Chip.
  uint32_t tiles = 0;
  double clockHz = 0;
  uint32_t workersPerTile = 0;
  /// Bytes a worker loads, stores or computes on in one vector instruction
  /// (f32v2, f16v4, ld64/st64): the lanes of the elementwise and reduce
  /// kernels.
  uint32_t vectorBytes = 0;

  // Tile memory. `reservedStandardBytes` at the bottom of standard memory hold
  // the runtime (its three parts below); the placement pass must not hand
  // them out. `interleaved` ends where the loader can still write.
  uint32_t tileMemoryBytes = 0;
  MemoryRegion standard{MemoryClass::Standard, 0, 0};
  MemoryRegion interleaved{MemoryClass::Interleaved, 0, 0};
  uint32_t runtimeLinkedCodeBytes = 0; ///< The linked runtime kernels.
  uint32_t exchangeWindowBytes = 0;    ///< The host exchange window.
  uint32_t runtimeStateBytes = 0;      ///< Worker stacks and sync slots.
  uint32_t reservedStandardBytes = 0;  ///< The three above.
  uint32_t memoryElementBytes = 0;
  /// Exchange code sits on memory elements of its own (no transfer may
  /// read or write an element it executes from), followed by this many
  /// bytes the supervisor may fetch ahead.
  uint32_t fetchGuardBytes = 0;

  // AMP (accumulating matrix product) unit. The MAC rate depends on the
  // input type and on the partials (accumulator) type; see
  // shared/machine-model.md "Compute" for each figure's source.
  uint32_t ampMacsF32F32 = 0; ///< f32 inputs, f32 partials.
  uint32_t ampMacsF16F16 = 0; ///< f16 inputs, f16 partials.
  uint32_t ampMacsF16F32 = 0; ///< f16 inputs, f32 partials.
  uint32_t ampMacsF8F16 = 0;  ///< f8 inputs, f16 partials.
  uint32_t ampMacsF8F32 = 0;  ///< f8 inputs, f32 partials.
  /// Conv units working on one pass: each produces one output column, so
  /// this is the pass width in columns of n.
  uint32_t ampConvUnitsF16Partials = 0;
  uint32_t ampConvUnitsF32Partials = 0;
  /// Input elements one conv unit holds: the pass depth in k.
  uint32_t ampGrainKF32 = 0, ampGrainKF16 = 0, ampGrainKF8 = 0;
  /// AMP vertex overheads of the f16 (and f32) input path, named after the
  /// poplibs ConvPartial1x1 estimate terms they stand for (TargetModel.cpp
  /// cites each).
  uint32_t ampSupervisorOverheadCycles = 0; ///< Once per vertex.
  uint32_t ampLoopOverheadCycles = 0;       ///< Once per vertex.
  uint32_t ampWorkerStateCycles = 0;        ///< Per worker, once per vertex.
  uint32_t ampInPassOverheadCycles = 0;     ///< Per k pass after the first.
  uint32_t ampOutPassOverheadCycles = 0;    ///< Per (k, n) pass.
  uint32_t ampColumnPassOverheadCycles = 0; ///< Per n pass.
  /// A worker's instructions in one pass: set-up plus 4 a row from three
  /// rows on; one and two rows take their own code paths.
  uint32_t ampWorkerPassInstructions = 0;
  uint32_t ampWorkerOneRowInstructions = 0;
  uint32_t ampWorkerTwoRowInstructions = 0;
  uint32_t ampIdleWorkerInstructions = 0; ///< A worker without rows.
  /// The f8 input path (poplibs' quarter estimate), same terms.
  uint32_t ampF8SupervisorOverheadCycles = 0;
  uint32_t ampF8LoopOverheadCycles = 0;
  uint32_t ampF8WorkerStateCycles = 0;
  uint32_t ampF8InPassOverheadCycles = 0;
  uint32_t ampF8OutPassOverheadCycles = 0;
  uint32_t ampF8ColumnPassOverheadCycles = 0;
  uint32_t ampF8WorkerPassInstructions = 0;
  uint32_t ampF8WorkerOneRowInstructions = 0;
  uint32_t ampF8WorkerTwoRowInstructions = 0;
  uint32_t ampF8IdleWorkerInstructions = 0;
  /// poplibs charges the least loaded worker at least this much more than
  /// nothing: when every worker has the same rows it sets the pass time.
  uint32_t ampMinWorkerTagCycles = 0;
  /// Cycles to enter one vertex (supervisor call, vertex state). The
  /// residual of the measured AMP line against the poplibs vertex estimate.
  uint32_t vertexCallCycles = 0;

  // Worker kernels (reduce, copy, casts): a supervisor launches the workers,
  // each runs a loop prologue and its share of 64-bit vectors.
  uint32_t workerSupervisorCycles = 0;     ///< Per vertex.
  uint32_t workerPrologueInstructions = 0; ///< Per worker.
  /// Worker instructions to convert 4 elements between f32 and f16.
  uint32_t workerCastInstructions = 0;
  /// Worker instructions per element of a block transpose (a load and a
  /// store each).
  uint32_t transposeInstructionsPerElement = 0;

  // Generated elementwise kernels (Elementwise.h): worker instructions per
  // 64-bit vector of the op's type (4 x f16, 2 x f32), by op kind. These
  // are rates (the estimator sums them per vector and rounds the worker's
  // total up once), so they are doubles: half of 1 instruction a vector is
  // half an instruction, not 1.
  double ewArithInstructionsF16 = 0; ///< add, sub, mul, max, min, neg, abs, cmp, select.
  double ewArithInstructionsF32 = 0;
  double ewFmaInstructionsF16 = 0;
  double ewFmaInstructionsF32 = 0;
  double ewDivideInstructionsF16 = 0;
  double ewDivideInstructionsF32 = 0;
  double ewExpInstructionsF16 = 0;
  double ewExpInstructionsF32 = 0;
  double ewLogInstructionsF16 = 0;
  double ewLogInstructionsF32 = 0;
  double ewTanhInstructionsF16 = 0;
  double ewTanhInstructionsF32 = 0;
  double ewErfInstructionsF16 = 0;
  double ewErfInstructionsF32 = 0;
  double ewSqrtInstructionsF16 = 0;
  double ewSqrtInstructionsF32 = 0;
  double ewRsqrtInstructionsF16 = 0;
  double ewRsqrtInstructionsF32 = 0;
  /// Conversions per 4 elements: between f32 and f16, and between f16 and
  /// an f8 type (f32 and f8 convert through f16).
  double ewCastF32F16Instructions = 0;
  double ewCastF16F8Instructions = 0;
  /// A 64-bit load or store of one operand's vector.
  double ewLoadStoreInstructions = 0;
  /// Per loop over a row (or the whole block when it is contiguous).
  uint32_t ewRowOverheadInstructions = 0;
  /// A row reduction: per output row (its loop set-up, folding the vector
  /// accumulator and storing the value), and per 64-bit vector the combine,
  /// which issues with the load of the reduced input (a rate, as above).
  uint32_t reduceRowOverheadInstructions = 0;
  /// The same for a sum of f16 values into f32 accumulators, which runs at
  /// f16's lanes (sumsWidenedHalves).
  uint32_t reduceWidenedRowOverheadInstructions = 0;
  double reduceVectorInstructions = 0;
  /// The partial-sum reduction (`reduce`) is charged as the user's stack
  /// charges it: per partial byte read, (count - 1 + epochs) partials of
  /// `reducePartialBytesPerCycle` (a rate, rounded up per reduce), plus
  /// `kernelLaunchCycles` an epoch (one epoch: the vertex reads every
  /// partial at once).
  double reducePartialBytesPerCycle = 0;
  uint32_t kernelLaunchCycles = 0;
  /// A GELU body (x times a function of tanh or erf of x: see
  /// gatingTranscendental) costs at least this many tile cycles an element
  /// of its block (a rate, rounded up per block), plus `kernelLaunchCycles`
  /// a call.
  double geluTanhCyclesPerElement = 0;
  double geluErfCyclesPerElement = 0;
  /// A generated kernel's code on a tile: a fixed part and a part per
  /// instruction of its body's loop.
  uint32_t ewKernelCodeBytes = 0;
  uint32_t ewCodeBytesPerInstruction = 0;

  // Load/store paths.
  uint32_t loadBytesPerCycleStandard = 0;
  uint32_t loadBytesPerCycleInterleaved = 0;
  uint32_t storeBytesPerCycle = 0;

  // Exchange and synchronisation. The exchange's timing (route latency,
  // receive controls, the fixed cost of a phase) is its own model, with the
  // sources of its constants in ExchangeTiming.h.
  ExchangeTimingModel exchange;
  /// A sync step of the program: the barrier around each exchange phase,
  /// which the phase's fixed cost already carries (see TargetModel.cpp).
  uint32_t syncCycles = 0;
  /// A tile's copy of its own words in a phase (a transfer whose destination
  /// includes its source moves no word over the exchange): one six-worker
  /// copy call, then memcpy at its rate.
  uint32_t localCopyCallCycles = 0;
  uint32_t memcpyBytesPerCycle = 0;
  /// Serial loops (a repeated sequence of steps): the control program's
  /// branch and counter update per iteration, and what a vertex whose
  /// operand moves with the iteration (poplibs' dynamic slice and update)
  /// pays to compute its address from the loop counter.
  uint32_t loopIterationCycles = 0;
  uint32_t dynamicOffsetCycles = 0;
  /// Vertex state in standard memory: a header, an address per operand and
  /// a value per parameter.
  uint32_t vertexStateHeaderBytes = 0;
  uint32_t vertexOperandBytes = 0;
  uint32_t vertexParamBytes = 0;
  /// Buffers start on multiples of this (64-bit loads), and the reserved
  /// exchange code and vertex state are rounded up to it.
  uint32_t bufferAlignmentBytes = 0;

  /// The exchange's word (exchange.wordBytes): every phase moves whole
  /// words, so a block's rows are padded to whole words (a layout made for
  /// this target carries it as BlockLayout::wordBytes).
  uint32_t exchangeWordBytes() const { return exchange.wordBytes; }

  /// Vertex state of one vertex of a kernel with `operands` operands and
  /// `params` parameters.
  uint64_t vertexStateBytes(uint64_t operands, uint64_t params) const {
    return vertexStateHeaderBytes + operands * vertexOperandBytes +
           params * vertexParamBytes;
  }

  // Host link. Streams before the run (weights at initialisation, the
  // inputs) are not counted in device cycles, as the seeds'
  // deviceMicroseconds; weights streamed during the run (a repeated
  // layer's, per iteration) are: the tiles wait for them.
  /// The host link's rate, bytes a second: the user's C600 measurement.
  double hostLinkBytesPerSecond = 0;
  /// The link's bound (PCIe Gen4 x16), for reports beside the measured rate.
  double hostLinkPcieBoundBytesPerSecond = 0;
  /// Device cycles per byte over the host link (at hostLinkBytesPerSecond).
  double hostCyclesPerByte = 0;
  /// Fixed device cycles of one stream during the run: the host sync that
  /// starts it.
  uint32_t hostStreamLatencyCycles = 0;
  /// Device cycles a stream of `bytes` takes during the run.
  uint64_t hostStreamCycles(uint64_t bytes) const {
    return hostStreamLatencyCycles +
           static_cast<uint64_t>(static_cast<double>(bytes) * hostCyclesPerByte + 0.999999);
  }
  /// The same at the PCIe bound.
  uint64_t hostStreamCyclesPcieBound(uint64_t bytes) const {
    const double perByte =
        hostLinkPcieBoundBytesPerSecond > 0 ? clockHz / hostLinkPcieBoundBytesPerSecond : 0;
    return hostStreamLatencyCycles +
           static_cast<uint64_t>(static_cast<double>(bytes) * perByte + 0.999999);
  }

  /// The `ipu21` preset (Mk2 class, C600 generation), 1472 tiles.
  static TargetModel ipu21();
  /// `ipu21` with fewer tiles, for tests: names `ipu21-4`, `ipu21-16`, ...
  static TargetModel ipu21WithTiles(uint32_t tiles);
  /// Looks a target up by name: a preset, `ipu21` or `ipu21-N` (1 <= N <=
  /// 1472), optionally followed by cost constants of constants() set to
  /// other values, `ipu21+vertexCallCycles=12.5+exchange.phaseFixedCycles=1200`
  /// (sensitivity studies: the name travels with the module and the
  /// package, so the compiler, the translator and the simulator all use the
  /// same model). Only the canonical spelling is taken (canonicalName): the
  /// constants in the table's order, each once, each value as
  /// std::to_chars writes it and unlike the preset's; a value within 1/16x
  /// and 16x of the preset's, whole for a whole-unit constant. `why`, when
  /// given, says what is wrong with a name that is refused.
  static std::optional<TargetModel> byName(std::string_view name, std::string *why = nullptr);
  /// Names accepted by byName, for diagnostics.
  static std::string knownNames();
  /// The name byName takes for this model: its preset's, then every
  /// constant of constants() whose value differs from the preset's.
  std::string canonicalName() const;

  /// Peak f16 FLOP/s of the whole chip (2 FLOP per MAC at the f16-partials
  /// rate, as the seed reports it).
  double peakFlopsF16() const;
  /// AMP MACs per cycle for an input and a partials type (f32 or f16).
  uint32_t ampMacsPerCycle(ElementType inputType, ElementType partialsType) const;
  /// Pass depth in k for an input element type.
  uint32_t ampGrainK(ElementType inputType) const;
  /// Pass width in n (conv units) for a partials type.
  uint32_t ampPassColumns(ElementType partialsType) const;
  /// Load bytes per cycle from a memory class.
  uint32_t loadBytesPerCycle(MemoryClass memoryClass) const;
  /// The region of a memory class.
  const MemoryRegion &region(MemoryClass memoryClass) const;
  /// Bytes a placement may hand out in a memory class on one tile.
  uint32_t allocatableBytes(MemoryClass memoryClass) const;
  /// First allocatable address of a memory class.
  uint32_t allocatableBase(MemoryClass memoryClass) const;
  /// Cycles of a phase's local copies, from the most bytes any tile copies
  /// to itself (0: none).
  uint64_t localCopyCycles(uint64_t mostBytesOnATile) const;
  /// The planner's estimate of a phase whose busiest tile sends or receives
  /// `words`, before any schedule: the words, the planner's route latency
  /// and the fixed cost of a phase.
  uint64_t plannedExchangeCycles(uint64_t words) const {
    return words + exchange.plannerLatencyEvents + exchange.phaseFixedCycles;
  }

  /// One cost constant of the model, for reports and sensitivity studies:
  /// a whole-unit field (cycles, bytes, instructions of one call), a rate
  /// that may be fractional (`rate`), or a field of the exchange timing.
  struct Constant {
    const char *name;
    uint32_t TargetModel::*field; ///< Or, when null, rate or exchangeField.
    const char *source;
    bool assumption; ///< No public figure: a parameter to revisit.
    uint32_t ExchangeTimingModel::*exchangeField = nullptr;
    double TargetModel::*rate = nullptr;
    /// Whether the value may be fractional (a rate); else it is whole.
    bool fractional() const { return rate != nullptr; }
    double get(const TargetModel &target) const {
      if (rate)
        return target.*rate;
      return field ? target.*field : target.exchange.*exchangeField;
    }
    /// Sets the value; a whole-unit field takes `value` rounded to the
    /// nearest whole number (callers check with get).
    void set(TargetModel &target, double value) const;
  };
  /// Every cost constant, in declaration order.
  static const std::vector<Constant> &constants();
};

} // namespace ipu

#endif // IPU_TARGET_TARGETMODEL_H
