//===- TargetModel.cpp - The ipu21 machine description --------------------===//
//
// Every number below cites its source, following shared/machine-model.md:
// "seed" means the logs in shared/seeds/, "assumption" means no public figure
// was found and the value is a parameter to revisit.
//
//===----------------------------------------------------------------------===//

#include "IPU/Target/TargetModel.h"

#include <algorithm>

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

  // Tile memory: 624 KiB per tile (public specs).
  t.tileMemoryBytes = 638976;
  // [0x4C000, 0x80000), 208 KiB, the only executable region; seed
  // `standard_ranges` end at 524288 = 0x80000.
  t.standard = {MemoryClass::Standard, 0x4C000, 208 * 1024};
  // [0x80000, 0xE8000), 416 KiB; poplibs: interleaved is the upper part.
  t.interleaved = {MemoryClass::Interleaved, 0x80000, 416 * 1024};
  // Runtime image at the bottom of standard memory; seed `linked_end` is
  // about 8 KiB above the base.
  t.reservedStandardBytes = 8192;
  t.memoryElementBytes = 16384; // poplibs `TMEM_ELEMSIZE 0x4000`.

  // AMP.
  t.ampMacsF32 = 16;  // poplibs ConvModel: 8 conv units x 2 input elements.
  t.ampMacsF16 = 64;  // 16 conv units x 4; C600 280 TFLOPS f16.
  t.ampMacsF8 = 128;  // 16 x 8; C600 560 TFLOPS f8.
  t.ampGrainKF32 = 8; // machine-model.md reference AMP estimator.
  t.ampGrainKF16 = 16;
  t.ampGrainKF8 = 32;
  t.ampGrainN = 16;                   // Same: n pads to 16 output columns.
  t.ampWeightLoadBytesPerCycle = 16;  // Same: weight block bytes at 16 B/cycle.
  t.vertexSetupCycles = 50;           // Assumption (machine-model.md).
  t.workerDispatchCycles = 20;        // Assumption (machine-model.md).

  // Load/store paths.
  t.loadBytesPerCycleStandard = 8;     // poplibs PerformanceEstimation.
  t.loadBytesPerCycleInterleaved = 16; // ld128; Citadel microbenchmarks.
  t.storeBytesPerCycle = 8;            // Citadel microbenchmarks.

  // Exchange and synchronisation.
  t.exchangeBytesPerCycle = 4;  // 8 TB/s / (1472 x 1.33 GHz); IPUModel.
  t.exchangeLatencyCycles = 32; // Assumption.
  t.syncCycles = 150;           // Assumption.

  // Host link: PCIe Gen4 x16, about 32 GB/s each way.
  t.hostBytesPerSecond = 32e9;
  return t;
}

TargetModel TargetModel::ipu21WithTiles(uint32_t tiles) {
  TargetModel t = ipu21();
  t.tiles = tiles;
  t.name = "ipu21-" + std::to_string(tiles);
  return t;
}

std::optional<TargetModel> TargetModel::byName(std::string_view name) {
  if (name == "ipu21")
    return ipu21();
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
  return ipu21WithTiles(tiles);
}

std::string TargetModel::knownNames() {
  return "ipu21, ipu21-N (1 <= N <= " + std::to_string(kIpu21Tiles) + ")";
}

double TargetModel::peakFlopsF16() const {
  return static_cast<double>(tiles) * ampMacsF16 * 2.0 * clockHz;
}

uint32_t TargetModel::ampMacsPerCycle(ElementType inputType) const {
  switch (inputType) {
  case ElementType::F32:
    return ampMacsF32;
  case ElementType::F16:
    return ampMacsF16;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return ampMacsF8;
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

uint64_t TargetModel::exchangeCycles(uint64_t bytes) const {
  // A zero width only occurs in a default-constructed model; treat it as one
  // byte per cycle rather than dividing by zero.
  uint64_t width = std::max<uint32_t>(exchangeBytesPerCycle, 1);
  return (bytes + width - 1) / width;
}

} // namespace ipu
