//===- Simulator.cpp - Cycle-level execution of a package ----------------===//
//
// Executes the control program of a package step by step on host memory:
// one byte vector per touched tile, indexed by tile address. Values come from
// running the kernels natively; cycles come only from the kernel estimators,
// the exchange schedules as emitted and the target's sync and loop costs. A
// loop runs its body iteration by iteration, each compute set at the
// addresses of that iteration.
//
// The simulator trusts validatePackage for the deep checks (kernel operand
// layouts, stream bounds), but still bounds-checks every access it makes so
// that a package that slipped past validation gives an error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "IPU/Runtime/Simulator.h"

#include "IPU/Device/Kernels.h"
#include "IPU/Exchange/Timing.h"
#include "IPU/Runtime/HostLink.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/mman.h>
#include <thread>

using namespace ipu;

int64_t HostTensor::elements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

namespace {

/// Fresh tile memory holds this byte so that reading memory nobody wrote
/// gives deterministic garbage instead of zeros that could hide a bug.
constexpr uint8_t kUninitializedByte = 0xCD;

/// Tile groups reported per step: enough to see imbalance across the chip
/// (92 tiles a group on ipu21) at 16 values a step.
constexpr uint32_t kTileGroups = 16;

std::string typeString(ElementType type, const std::vector<int64_t> &shape) {
  std::string text = "tensor<";
  for (int64_t dim : shape)
    text += std::to_string(dim) + "x";
  text += std::string(elementTypeName(type)) + ">";
  return text;
}

std::string stepName(const Package &package, const Step &step) {
  auto quoted = [](const std::string &name) { return " '" + name + "'"; };
  switch (step.kind) {
  case StepKind::StreamIn:
  case StepKind::StreamOut: {
    std::string text =
        step.kind == StepKind::StreamIn ? "stream-in " : "stream-out ";
    text += std::to_string(step.index);
    if (step.index < package.streams.size())
      text += quoted(package.streams[step.index].name);
    return text;
  }
  case StepKind::Compute: {
    std::string text = "compute set " + std::to_string(step.index);
    if (step.index < package.computeSets.size())
      text += quoted(package.computeSets[step.index].name);
    return text;
  }
  case StepKind::Exchange: {
    std::string text = "exchange phase " + std::to_string(step.index);
    if (step.index < package.phases.size())
      text += quoted(package.phases[step.index].name);
    return text;
  }
  case StepKind::Sync:
    return "sync";
  case StepKind::Loop: {
    std::string text = "loop " + std::to_string(step.index);
    if (step.index < package.loops.size())
      text += quoted(package.loops[step.index].name);
    return text;
  }
  }
  return "unknown step";
}

/// Element count of a shape, or nothing when a dimension is negative or the
/// count overflows.
std::optional<uint64_t> checkedElements(const std::vector<int64_t> &shape) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && count > UINT64_MAX / static_cast<uint64_t>(dim))
      return std::nullopt;
    count *= static_cast<uint64_t>(dim);
  }
  return count;
}

/// Tile memories. Addresses are absolute tile addresses; the valid range
/// spans the target's memory regions (for ipu21 [0x4C000, 0xE8000), i.e.
/// tileMemoryBytes bytes). The whole device is one anonymous mapping, so
/// only the pages of memory elements a program touches are ever committed:
/// an element (TargetModel::memoryElementBytes) is filled with the
/// uninitialised pattern on its first touch. A SigLIP MLP touches a few
/// hundred KiB per tile, not all 624 KiB of all 1472 tiles.
class DeviceMemory {
public:
  explicit DeviceMemory(const TargetModel &target) {
    base = std::min(target.standard.base, target.interleaved.base);
    end = std::max(target.standard.end(), target.interleaved.end());
    if (end < base)
      end = base;
    tiles = target.tiles;
    span = end - base;
    elementBytes = std::max<uint64_t>(target.memoryElementBytes, 1);
    elementsPerTile = (span + elementBytes - 1) / elementBytes;
    touched.assign(size_t(tiles) * elementsPerTile, false);
    highWater.assign(size_t(tiles) * 2, 0);
    standard = target.standard;
    if (tiles && span) {
      void *mapping = mmap(nullptr, size_t(tiles) * span, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (mapping != MAP_FAILED)
        device = static_cast<uint8_t *>(mapping);
    }
  }
  ~DeviceMemory() {
    if (device)
      munmap(device, size_t(tiles) * span);
  }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  /// Whether the device memory could be reserved at all.
  bool valid() const { return device != nullptr || tiles == 0 || span == 0; }

  /// Pointer to `bytes` bytes at `address` on `tile`, or null when the range
  /// is outside tile memory.
  uint8_t *at(uint32_t tile, uint64_t address, uint64_t bytes) {
    if (!device || tile >= tiles || address < base || address > end ||
        bytes > end - address)
      return nullptr;
    uint64_t offset = address - base;
    uint8_t *memory = device + size_t(tile) * span;
    if (bytes) {
      uint64_t first = offset / elementBytes;
      uint64_t last = (offset + bytes - 1) / elementBytes;
      for (uint64_t e = first; e <= last; ++e) {
        std::vector<bool>::reference seen = touched[tile * elementsPerTile + e];
        if (seen)
          continue;
        seen = true;
        uint64_t begin = e * elementBytes;
        std::memset(memory + begin, kUninitializedByte,
                    std::min(elementBytes, span - begin));
      }
      int region = address >= standard.base && address < standard.end() ? 0 : 1;
      uint64_t &high = highWater[size_t(tile) * 2 + region];
      high = std::max(high, address + bytes);
    }
    return memory + offset;
  }

  /// Per memory class, the most bytes any tile uses from the class's base
  /// to the highest byte the program touched.
  uint64_t touchedBytes(const TargetModel &target, MemoryClass memoryClass) const {
    int region = memoryClass == MemoryClass::Standard ? 0 : 1;
    uint64_t regionBase = target.region(memoryClass).base, most = 0;
    for (uint32_t tile = 0; tile < tiles; ++tile) {
      uint64_t high = highWater[size_t(tile) * 2 + region];
      if (high > regionBase)
        most = std::max(most, high - regionBase);
    }
    return most;
  }

  /// Memory elements committed so far, over all tiles.
  uint64_t touchedElements() const {
    return static_cast<uint64_t>(std::count(touched.begin(), touched.end(), true));
  }

  std::string rangeString(uint64_t address, uint64_t bytes) const {
    return "[" + std::to_string(address) + ", " +
           std::to_string(address + bytes) + ") outside tile memory [" +
           std::to_string(base) + ", " + std::to_string(end) + ")";
  }

private:
  uint64_t base = 0;
  uint64_t end = 0;
  uint64_t span = 0;
  uint32_t tiles = 0;
  uint64_t elementBytes = 1;
  uint64_t elementsPerTile = 0;
  MemoryRegion standard{MemoryClass::Standard, 0, 0};
  uint8_t *device = nullptr;
  std::vector<bool> touched;       ///< Per tile and element.
  std::vector<uint64_t> highWater; ///< Per tile and class: highest end.
};

class Simulation {
public:
  Simulation(const Package &package, const TargetModel &target,
             const std::vector<HostTensor> &inputs, SimulationResult &result,
             unsigned threads, double timeLimitSeconds)
      : package(package), target(target), inputs(inputs), result(result),
        threads(threads), memory(target), activeTile(target.tiles, false),
        timeLimitSeconds(timeLimitSeconds),
        deadline(std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(timeLimitSeconds > 0 ? timeLimitSeconds
                                                                        : 0))) {}

  std::optional<std::string> run();

private:
  std::optional<std::string> checkInputs();
  std::optional<std::string> streamIn(const HostStream &stream);
  std::optional<std::string> streamOut(const HostStream &stream);
  /// Runs program step `s` once, in iteration `iteration` of its loop (0
  /// outside one), into `stats` and the result's totals.
  std::optional<std::string> runStep(size_t s, uint32_t iteration,
                                     StepCycles &stats);
  /// Runs the Loop step `s` and its body, appending their records: one
  /// per program step, a loop's nested in it included.
  std::optional<std::string> runLoop(size_t s);
  /// Runs every iteration of the Loop step `s`, whose record (and its
  /// body's, one per program step) start at result.steps[record]; a loop
  /// in the body runs whole in each iteration. `bodyEnd` is one past the
  /// body around it.
  std::optional<std::string> runIterations(size_t s, size_t record, size_t bodyEnd,
                                           unsigned depth);
  /// Per record, the cycles of its step's slowest run so far, whose slowest
  /// tile the record names.
  std::vector<uint64_t> slowestRun;
  std::optional<std::string> compute(const ComputeSet &computeSet,
                                     uint32_t iteration, uint64_t &cycles,
                                     std::vector<uint64_t> &groupCycles,
                                     StepCycles &stats);
  std::optional<std::string> exchange(const PackagePhase &phase,
                                      size_t phaseIndex, uint64_t &cycles);
  /// Per phase, its checked cost, or -1 before its first run.
  std::vector<int64_t> phaseCycles;

  /// Copies the rows of `piece` between a host tensor of `hostBytes` bytes
  /// and tile memory, in the direction of `toDevice`.
  std::optional<std::string> copyPiece(const StreamPiece &piece,
                                       ElementType type, uint8_t *host,
                                       uint64_t hostBytes, bool toDevice);

  const Package &package;
  const TargetModel &target;
  const std::vector<HostTensor> &inputs;
  SimulationResult &result;
  unsigned threads;
  DeviceMemory memory;
  std::vector<bool> activeTile;
  std::vector<bool> outputWritten;
  /// The wall-clock budget (0: none), checked before every step run.
  double timeLimitSeconds;
  std::chrono::steady_clock::time_point deadline;
  uint64_t stepsRun = 0;
};

std::optional<std::string> Simulation::checkInputs() {
  // Every argument a stream reads is checked up front, so that a bad input
  // fails before any work is done.
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice)
      continue;
    std::string what = "input " + std::to_string(stream.index) + " (stream '" +
                       stream.name + "')";
    if (stream.index >= inputs.size())
      return what + " is missing: " + std::to_string(inputs.size()) +
             " inputs given";
    const HostTensor &input = inputs[stream.index];
    if (input.type != stream.type || input.shape != stream.shape)
      return what + ": expected " + typeString(stream.type, stream.shape) +
             ", got " + typeString(input.type, input.shape);
    std::optional<uint64_t> elements = checkedElements(input.shape);
    if (!elements || *elements > UINT64_MAX / elementBytes(input.type) ||
        input.bytes.size() != *elements * elementBytes(input.type))
      return what + ": holds " + std::to_string(input.bytes.size()) +
             " bytes, which does not match " +
             typeString(input.type, input.shape);
  }
  return std::nullopt;
}

std::optional<std::string> Simulation::copyPiece(const StreamPiece &piece,
                                                 ElementType type,
                                                 uint8_t *host,
                                                 uint64_t hostBytes,
                                                 bool toDevice) {
  if (piece.rows == 0 || piece.rowBytes == 0)
    return std::nullopt;
  uint64_t lastRow = piece.rows - 1;
  // 64-bit arithmetic throughout: rows x pitch cannot overflow, offsets are
  // checked against the tensor size before use.
  uint64_t tileSpan = lastRow * piece.tilePitch + piece.rowBytes;
  if (piece.hostPitch != 0 && lastRow > (UINT64_MAX / 4) / piece.hostPitch)
    return std::string("host pitch overflows");
  // A strided piece gathers elements `hostElementStride` apart on the host.
  uint64_t element = elementBytes(type);
  bool strided = piece.hostElementStride != 0;
  if (strided && (piece.rowBytes % element != 0 ||
                  piece.hostElementStride > (UINT64_MAX / 4) / piece.rowBytes))
    return std::string("host element stride out of range");
  uint64_t hostRowSpan =
      strided ? (piece.rowBytes / element - 1) * piece.hostElementStride + element
              : piece.rowBytes;
  uint64_t hostSpan = lastRow * piece.hostPitch + hostRowSpan;
  if (piece.hostOffset > hostBytes || hostSpan > hostBytes - piece.hostOffset)
    return "host range [" + std::to_string(piece.hostOffset) + ", " +
           std::to_string(piece.hostOffset + hostSpan) +
           ") outside the tensor of " + std::to_string(hostBytes) + " bytes";
  uint8_t *tile = memory.at(piece.tile, piece.address, tileSpan);
  if (!tile) {
    if (piece.tile >= target.tiles)
      return "tile " + std::to_string(piece.tile) + " out of range";
    return "tile " + std::to_string(piece.tile) + " range " +
           memory.rangeString(piece.address, tileSpan);
  }
  for (uint64_t row = 0; row < piece.rows; ++row) {
    uint8_t *tileRow = tile + row * piece.tilePitch;
    uint8_t *hostRow = host + piece.hostOffset + row * piece.hostPitch;
    if (!strided) {
      if (toDevice)
        std::memcpy(tileRow, hostRow, piece.rowBytes);
      else
        std::memcpy(hostRow, tileRow, piece.rowBytes);
      continue;
    }
    for (uint64_t e = 0; e < piece.rowBytes / element; ++e) {
      uint8_t *hostElement = hostRow + e * piece.hostElementStride;
      if (toDevice)
        std::memcpy(tileRow + e * element, hostElement, element);
      else
        std::memcpy(hostElement, tileRow + e * element, element);
    }
  }
  return std::nullopt;
}

std::optional<std::string> Simulation::streamIn(const HostStream &stream) {
  if (!stream.toDevice)
    return std::string("stream is not a host-to-device stream");
  const HostTensor &input = inputs[stream.index];
  // copyPiece takes a mutable host pointer for both directions; it only
  // reads from it when streaming in.
  auto *host = const_cast<uint8_t *>(input.bytes.data());
  for (size_t i = 0; i < stream.pieces.size(); ++i)
    if (auto error =
            copyPiece(stream.pieces[i], stream.type, host, input.bytes.size(), true))
      return "piece " + std::to_string(i) + ": " + *error;
  return std::nullopt;
}

std::optional<std::string> Simulation::streamOut(const HostStream &stream) {
  if (stream.toDevice)
    return std::string("stream is not a device-to-host stream");
  std::optional<uint64_t> elements = checkedElements(stream.shape);
  // A result larger than the whole device cannot come from it; refusing it
  // keeps a corrupt shape from exhausting host memory.
  uint64_t deviceBytes = uint64_t(target.tiles) * target.tileMemoryBytes;
  if (!elements || *elements > deviceBytes / elementBytes(stream.type))
    return "result " + typeString(stream.type, stream.shape) +
           " is larger than the device memory";
  uint64_t bytes = *elements * elementBytes(stream.type);

  // Result indices are below the stream count once validated; bounding them
  // here keeps `index + 1` from wrapping for a package that was not.
  if (stream.index >= package.streams.size())
    return "result index " + std::to_string(stream.index) +
           " is out of range [0, " + std::to_string(package.streams.size()) +
           ")";
  if (stream.index >= result.outputs.size()) {
    result.outputs.resize(stream.index + 1);
    outputWritten.resize(stream.index + 1, false);
  }
  HostTensor &output = result.outputs[stream.index];
  if (!outputWritten[stream.index]) {
    outputWritten[stream.index] = true;
    output.type = stream.type;
    output.shape = stream.shape;
    // Bytes no piece covers keep the uninitialised pattern.
    output.bytes.assign(bytes, kUninitializedByte);
  } else if (output.type != stream.type || output.shape != stream.shape) {
    return "result " + std::to_string(stream.index) + " was streamed out as " +
           typeString(output.type, output.shape) + " before, now as " +
           typeString(stream.type, stream.shape);
  }
  for (size_t i = 0; i < stream.pieces.size(); ++i)
    if (auto error = copyPiece(stream.pieces[i], stream.type, output.bytes.data(),
                               output.bytes.size(), false))
      return "piece " + std::to_string(i) + ": " + *error;
  return std::nullopt;
}

std::optional<std::string>
Simulation::compute(const ComputeSet &computeSet, uint32_t iteration,
                    uint64_t &cycles, std::vector<uint64_t> &groupCycles,
                    StepCycles &stats) {
  const KernelSpec *kernel = lookupKernel(package, computeSet.kernel);
  if (!kernel)
    return "unknown kernel '" + computeSet.kernel + "'";
  if (kernel->elementwise && !kernel->elementwise->entry)
    return "kernel '" + computeSet.kernel +
           "' is generated, and its code is not compiled (CompiledKernels)";
  size_t vertices = computeSet.tiles.size();
  size_t operandCount = kernel->operandNames.size();
  size_t paramCount = kernel->paramNames.size();
  if (computeSet.operandAddress.size() != vertices * operandCount)
    return "operandAddress holds " +
           std::to_string(computeSet.operandAddress.size()) +
           " entries, expected " + std::to_string(vertices * operandCount);
  if (computeSet.params.size() != vertices * paramCount)
    return "params holds " + std::to_string(computeSet.params.size()) +
           " entries, expected " + std::to_string(vertices * paramCount);
  const std::vector<uint32_t> &advance = computeSet.operandAdvance;
  if (!advance.empty() && advance.size() != vertices * operandCount)
    return "operandAdvance holds " + std::to_string(advance.size()) +
           " entries, expected " + std::to_string(vertices * operandCount);

  // Resolve every operand serially: it allocates tile memory on first touch
  // and bounds-checks, so the parallel part below only runs kernels.
  std::vector<uint8_t *> operands(vertices * operandCount);
  // Where the operands are in this iteration, for the kernels and their
  // estimators alike; and which vertices compute them from the counter.
  std::vector<uint32_t> addresses(vertices * operandCount);
  std::vector<bool> dynamic(vertices, false);
  std::vector<bool> seen(target.tiles, false);
  bool repeatedTile = false;
  for (size_t v = 0; v < vertices; ++v) {
    uint32_t tile = computeSet.tiles[v];
    std::string where =
        "vertex " + std::to_string(v) + " on tile " + std::to_string(tile);
    if (tile >= target.tiles)
      return where + ": tile out of range";
    repeatedTile |= seen[tile];
    seen[tile] = true;
    activeTile[tile] = true;
    const int64_t *params = computeSet.params.data() + v * paramCount;
    if (auto error = checkKernelParams(*kernel, params))
      return where + ": " + *error;
    for (size_t o = 0; o < operandCount; ++o) {
      const size_t i = v * operandCount + o;
      // Below 2^32 x 2^32: cannot wrap.
      uint64_t step = advance.empty() ? 0 : advance[i];
      uint64_t address = computeSet.operandAddress[i] + iteration * step;
      dynamic[v] = dynamic[v] || step != 0;
      uint64_t bytes = kernelOperandBytes(*kernel, params, o);
      uint8_t *pointer = memory.at(tile, address, bytes);
      if (!pointer)
        return where + ": operand '" + std::string(kernel->operandNames[o]) +
               "' " + memory.rangeString(address, bytes);
      operands[i] = pointer;
      addresses[i] = static_cast<uint32_t>(address); // Inside tile memory.
    }
  }

  std::vector<uint64_t> vertexCycles(vertices, 0);
  auto runRange = [&](size_t begin, size_t end) {
    for (size_t v = begin; v < end; ++v) {
      const int64_t *params = computeSet.params.data() + v * paramCount;
      executeKernel(*kernel, params, target, operands.data() + v * operandCount);
      vertexCycles[v] = estimateKernelCycles(*kernel, params, target,
                                             addresses.data() + v * operandCount);
      // A vertex whose operands move with the loop reads the counter and
      // sets its pointers first (poplibs' dynamic slice supervisor).
      if (dynamic[v])
        vertexCycles[v] += target.dynamicOffsetCycles;
    }
  };
  // Each vertex writes only its own tile, so tiles run in parallel with a
  // result independent of the thread count. Two vertices on one tile might
  // touch the same bytes; such a set runs in vertex order.
  size_t workers = repeatedTile ? 1 : std::min<size_t>(threads, vertices);
  if (workers <= 1) {
    runRange(0, vertices);
  } else {
    std::vector<std::thread> pool;
    size_t chunk = (vertices + workers - 1) / workers;
    for (size_t begin = 0; begin < vertices; begin += chunk)
      pool.emplace_back(runRange, begin, std::min(vertices, begin + chunk));
    for (std::thread &thread : pool)
      thread.join();
  }

  // The compute set ends when its slowest tile does; vertices sharing a tile
  // run one after another.
  std::vector<uint64_t> tileCycles(target.tiles, 0);
  cycles = 0;
  for (size_t v = 0; v < vertices; ++v) {
    uint64_t &tile = tileCycles[computeSet.tiles[v]];
    tile += vertexCycles[v];
    cycles = std::max(cycles, tile);
  }
  groupCycles.assign(result.tileGroups, 0);
  for (uint32_t tile = 0; tile < target.tiles; ++tile) {
    uint64_t &group = groupCycles[uint64_t(tile) * result.tileGroups / target.tiles];
    group = std::max(group, tileCycles[tile]);
  }
  // Per tile over the run, and this step's spread over its tiles.
  for (uint32_t tile = 0; tile < target.tiles; ++tile) {
    result.tileComputeCycles[tile] += tileCycles[tile];
    stats.busyTileCycles += tileCycles[tile];
    if (tileCycles[tile] > tileCycles[stats.slowestTile])
      stats.slowestTile = tile;
  }
  stats.busyTiles =
      static_cast<uint32_t>(std::count(seen.begin(), seen.end(), true));
  return std::nullopt;
}

std::optional<std::string> Simulation::exchange(const PackagePhase &phase,
                                                size_t phaseIndex,
                                                uint64_t &cycles) {
  const ExchangePhase &transfers = phase.phase;
  size_t count = transfers.size();
  if (transfers.words.size() != count ||
      transfers.destBegin.size() != count + 1)
    return std::string("transfer tables have inconsistent sizes");
  if (auto error = transfers.validate())
    return *error;
  if (transfers.tiles > target.tiles)
    return "phase spans " + std::to_string(transfers.tiles) +
           " tiles, the target has " + std::to_string(target.tiles);
  if (phase.sourceAddress.size() != count || phase.destAddress.size() != count)
    return "address tables hold " + std::to_string(phase.sourceAddress.size()) +
           " source and " + std::to_string(phase.destAddress.size()) +
           " destination entries for " + std::to_string(count) + " transfers";
  // The schedule is what the cycles come from, so it is checked under every
  // rule of the exchange rather than trusted, once per phase (a loop runs
  // the same phase again), and its cost is the timing of its own events:
  // the last receiver's end, plus the phase's fixed cost and local copies.
  if (phaseIndex >= phaseCycles.size())
    phaseCycles.resize(package.phases.size(), -1);
  if (phaseCycles[phaseIndex] < 0) {
    TransferAddresses addresses = phase.addresses();
    if (auto error = checkTimedSchedule(target, transfers, phase.schedule, addresses))
      return "illegal schedule: " + *error;
    phaseCycles[phaseIndex] = int64_t(
        timedPhaseCost(target, transfers, phase.schedule, addresses).cycles);
  }

  // Bulk-synchronous semantics: every transfer reads the state at the start
  // of the phase. Stage all sends first, then deliver them. For a package
  // validatePackage accepts this is also what the machine does in schedule
  // order: no byte is written twice, and every word a phase both sends and
  // overwrites on a tile is sent strictly before the word overwriting it is
  // sent (hence before it lands), so no send sees a write of its own phase.
  std::vector<uint64_t> stageOffset(count + 1, 0);
  for (size_t t = 0; t < count; ++t)
    stageOffset[t + 1] = stageOffset[t] + uint64_t(transfers.words[t]) * target.exchangeWordBytes();
  std::vector<uint8_t> stage(stageOffset[count]);
  for (size_t t = 0; t < count; ++t) {
    uint64_t bytes = stageOffset[t + 1] - stageOffset[t];
    const uint8_t *source =
        memory.at(transfers.source[t], phase.sourceAddress[t], bytes);
    if (!source)
      return "transfer " + std::to_string(t) + ": source on tile " +
             std::to_string(transfers.source[t]) + " " +
             memory.rangeString(phase.sourceAddress[t], bytes);
    std::memcpy(stage.data() + stageOffset[t], source, bytes);
  }
  // Destinations are written in transfer order, so overlapping writes (which
  // validation rejects) at least resolve deterministically.
  for (size_t t = 0; t < count; ++t) {
    uint64_t bytes = stageOffset[t + 1] - stageOffset[t];
    for (const uint32_t *dest = transfers.destinationsBegin(t),
                        *destEnd = transfers.destinationsEnd(t);
         dest != destEnd; ++dest) {
      uint8_t *destination = memory.at(*dest, phase.destAddress[t], bytes);
      if (!destination)
        return "transfer " + std::to_string(t) + ": destination on tile " +
               std::to_string(*dest) + " " +
               memory.rangeString(phase.destAddress[t], bytes);
      std::memcpy(destination, stage.data() + stageOffset[t], bytes);
    }
  }
  cycles = uint64_t(phaseCycles[phaseIndex]);
  return std::nullopt;
}

std::optional<std::string> Simulation::runStep(size_t s, uint32_t iteration,
                                               StepCycles &stats) {
  const Step &step = package.program[s];
  // The caller names its limit: what it gives the simulation is what its
  // run has left.
  if (timeLimitSeconds > 0 && std::chrono::steady_clock::now() > deadline) {
    return "the time limit ran out at program step " +
           std::to_string(s) + (iteration ? " (iteration " + std::to_string(iteration) + ")" : "") +
           ", after " + std::to_string(stepsRun) + " steps run and " +
           std::to_string(result.cycles) + " simulated cycles";
  }
  ++stepsRun;
  uint64_t cycles = 0;
  std::vector<uint64_t> groupCycles;
  std::optional<std::string> error;
  // A deserialised kind may hold any byte; only the known ones run.
  if (static_cast<unsigned>(step.kind) > static_cast<unsigned>(StepKind::Loop))
    return "step " + std::to_string(s) + ": unknown step kind " +
           std::to_string(static_cast<unsigned>(step.kind));
  switch (step.kind) {
  case StepKind::StreamIn:
  case StepKind::StreamOut:
    if (step.index >= package.streams.size()) {
      error = "no such stream";
    } else if (step.kind == StepKind::StreamOut) {
      error = streamOut(package.streams[step.index]);
    } else if (const std::vector<uint32_t> &layers = package.streams[step.index].layerStreams;
               layers.empty()) {
      error = streamIn(package.streams[step.index]);
    } else if (iteration >= layers.size() || layers[iteration] >= package.streams.size()) {
      error = "no stream for iteration " + std::to_string(iteration);
    } else {
      // A layer's weights, streamed during the run: the tiles wait for the
      // host link, which carries each byte once, then for the exchange that
      // fans the copies out.
      const HostStream &layer = package.streams[layers[iteration]];
      error = streamIn(layer);
      const HostLinkLoad load = hostLinkLoad(layer, target);
      const uint64_t link = target.hostStreamCycles(load.linkBytes);
      cycles = link + load.fanOutCycles;
      result.hostCycles += link;
      result.hostCyclesPcieBound += target.hostStreamCyclesPcieBound(load.linkBytes);
      result.hostBytes += load.linkBytes;
      result.exchangeCycles += load.fanOutCycles;
    }
    break;
  case StepKind::Compute:
    if (step.index >= package.computeSets.size())
      error = "no such compute set";
    else
      error = compute(package.computeSets[step.index], iteration, cycles,
                      groupCycles, stats);
    result.computeCycles += cycles;
    break;
  case StepKind::Exchange:
    if (step.index >= package.phases.size())
      error = "no such exchange phase";
    else
      error = exchange(package.phases[step.index], step.index, cycles);
    result.exchangeCycles += cycles;
    break;
  case StepKind::Sync:
    cycles = target.syncCycles;
    result.syncCycles += cycles;
    break;
  case StepKind::Loop:
    error = "a loop step runs as a loop, not as one step"; // runIterations.
    break;
  }
  if (error)
    return "step " + std::to_string(s) + " (" + stepName(package, step) +
           (step.kind == StepKind::Loop || iteration == 0
                ? std::string()
                : ", iteration " + std::to_string(iteration)) +
           "): " + *error;
  if (groupCycles.empty())
    groupCycles.assign(result.tileGroups, cycles);
  stats.cycles = cycles;
  stats.groupCycles = std::move(groupCycles);
  result.cycles += cycles;
  return std::nullopt;
}

std::optional<std::string> Simulation::runLoop(size_t s) {
  const Step &step = package.program[s];
  if (step.index >= package.loops.size())
    return "step " + std::to_string(s) + " (" + stepName(package, step) + "): no such loop";
  const size_t steps = package.loops[step.index].steps;
  const size_t record = result.steps.size();
  for (size_t b = 0; b <= steps && s + b < package.program.size(); ++b) {
    const Step &body = package.program[s + b];
    result.steps.push_back({body.kind, body.index, 0, {}});
    result.steps.back().groupCycles.assign(result.tileGroups, 0);
    result.steps.back().runs = 0;
  }
  slowestRun.resize(result.steps.size(), 0);
  return runIterations(s, record, package.program.size(), 0);
}

std::optional<std::string> Simulation::runIterations(size_t s, size_t record, size_t bodyEnd,
                                                     unsigned depth) {
  const Step &step = package.program[s];
  const std::string where =
      "step " + std::to_string(s) + " (" + stepName(package, step) + "): ";
  if (step.index >= package.loops.size())
    return where + "no such loop";
  if (depth >= PackageLimits::kMaxLoopDepth)
    return where + "loops nest more than " + std::to_string(PackageLimits::kMaxLoopDepth) +
           " deep";
  const PackageLoop &loop = package.loops[step.index];
  if (loop.steps > bodyEnd - s - 1)
    return where + "its body of " + std::to_string(loop.steps) +
           " steps runs past the end of " +
           (depth ? "the body around it" : "the program");
  // The control program's branch and counter update, every iteration, on
  // every tile; recorded before the body, whose records follow in program
  // order.
  const uint64_t cyclesBefore = result.cycles;
  // A loop nested in another runs once per outer iteration: one entry, in
  // program order, sums its runs.
  size_t entry = 0;
  while (entry < result.loops.size() && result.loops[entry].loop != step.index)
    ++entry;
  if (entry == result.loops.size())
    result.loops.push_back({step.index, 0, 0});
  const uint64_t control = uint64_t(loop.count) * target.loopIterationCycles;
  StepCycles &controlRecord = result.steps[record];
  controlRecord.cycles += control;
  for (uint64_t &group : controlRecord.groupCycles)
    group += control;
  ++controlRecord.runs;
  result.loopCycles += control;
  result.cycles += control;

  const size_t end = s + 1 + loop.steps;
  for (uint32_t i = 0; i < loop.count; ++i)
    for (size_t b = s + 1; b < end; ++b) {
      const Step &body = package.program[b];
      const size_t bodyRecord = record + (b - s);
      if (body.kind == StepKind::Loop) {
        if (auto error = runIterations(b, bodyRecord, end, depth + 1))
          return error;
        b += package.loops[body.index].steps; // Past the body it ran.
        continue;
      }
      StepCycles run{body.kind, body.index, 0, {}};
      if (auto error = runStep(b, i, run))
        return error;
      StepCycles &sum = result.steps[bodyRecord];
      sum.cycles += run.cycles;
      for (size_t g = 0; g < sum.groupCycles.size(); ++g)
        sum.groupCycles[g] += run.groupCycles[g];
      sum.busyTileCycles += run.busyTileCycles;
      sum.busyTiles = std::max(sum.busyTiles, run.busyTiles);
      if (sum.runs == 0 || run.cycles > slowestRun[bodyRecord]) {
        slowestRun[bodyRecord] = run.cycles;
        sum.slowestTile = run.slowestTile;
      }
      ++sum.runs;
    }
  result.loops[entry].iterations += loop.count;
  result.loops[entry].cycles += result.cycles - cyclesBefore;
  return std::nullopt;
}

std::optional<std::string> Simulation::run() {
  result = SimulationResult();
  result.tileGroups = std::min<uint32_t>(target.tiles, kTileGroups);
  result.tileComputeCycles.assign(target.tiles, 0);
  if (!memory.valid())
    return "cannot reserve " + std::to_string(target.tiles) + " x " +
           std::to_string(target.tileMemoryBytes) +
           " bytes of address space for tile memory";
  if (auto error = checkInputs())
    return error;

  for (size_t s = 0; s < package.program.size(); ++s) {
    const Step &step = package.program[s];
    if (step.kind == StepKind::Loop) {
      if (auto error = runLoop(s))
        return error;
      s += package.loops[step.index].steps; // Past the body it ran.
      continue;
    }
    StepCycles stats{step.kind, step.index, 0, {}};
    if (auto error = runStep(s, 0, stats))
      return error;
    result.steps.push_back(std::move(stats));
  }
  result.activeTiles = static_cast<uint32_t>(
      std::count(activeTile.begin(), activeTile.end(), true));
  result.touchedBytes[0] = memory.touchedBytes(target, MemoryClass::Standard);
  result.touchedBytes[1] = memory.touchedBytes(target, MemoryClass::Interleaved);
  result.touchedElements = memory.touchedElements();
  return std::nullopt;
}

} // namespace

std::optional<std::string> ipu::simulate(const Package &package,
                                         const TargetModel &target,
                                         const std::vector<HostTensor> &inputs,
                                         SimulationResult &result,
                                         double timeLimitSeconds) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  Simulation simulation(package, target, inputs, result, threads, timeLimitSeconds);
  if (auto error = simulation.run()) {
    // Partial outputs of a failed run must not be mistaken for results.
    result.outputs.clear();
    return error;
  }
  return std::nullopt;
}
