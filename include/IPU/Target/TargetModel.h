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

  // Tile memory. `reservedStandardBytes` at the bottom of standard memory hold
  // the runtime image; the placement pass must not hand them out.
  uint32_t tileMemoryBytes = 0;
  MemoryRegion standard{MemoryClass::Standard, 0, 0};
  MemoryRegion interleaved{MemoryClass::Interleaved, 0, 0};
  uint32_t reservedStandardBytes = 0;
  uint32_t memoryElementBytes = 0;

  // AMP (accumulating matrix product) unit.
  uint32_t ampMacsF32 = 0; ///< MAC per cycle, f32 inputs.
  uint32_t ampMacsF16 = 0; ///< MAC per cycle, f16 inputs.
  uint32_t ampMacsF8 = 0;  ///< MAC per cycle, f8 inputs.
  uint32_t ampGrainKF32 = 0, ampGrainKF16 = 0, ampGrainKF8 = 0;
  uint32_t ampGrainN = 0;              ///< Output columns per AMP block.
  uint32_t ampWeightLoadBytesPerCycle = 0;
  uint32_t vertexSetupCycles = 0;      ///< Assumption: per vertex.
  uint32_t workerDispatchCycles = 0;   ///< Assumption: per worker.

  // Load/store paths.
  uint32_t loadBytesPerCycleStandard = 0;
  uint32_t loadBytesPerCycleInterleaved = 0;
  uint32_t storeBytesPerCycle = 0;

  // Exchange and synchronisation.
  uint32_t exchangeBytesPerCycle = 0; ///< Per tile, each way.
  uint32_t exchangeLatencyCycles = 0; ///< Send to receive, constant.
  uint32_t syncCycles = 0;            ///< Internal BSP barrier.

  // Host link (never counted in device cycles).
  double hostBytesPerSecond = 0;

  /// The `ipu21` preset (Mk2 class, C600 generation), 1472 tiles.
  static TargetModel ipu21();
  /// `ipu21` with fewer tiles, for tests: names `ipu21-4`, `ipu21-16`, ...
  static TargetModel ipu21WithTiles(uint32_t tiles);
  /// Looks a preset up by name: `ipu21` or `ipu21-N` (1 <= N <= 1472).
  static std::optional<TargetModel> byName(std::string_view name);
  /// Names accepted by byName, for diagnostics.
  static std::string knownNames();

  /// Peak f16 FLOP/s of the whole chip (2 FLOP per MAC).
  double peakFlopsF16() const;
  /// AMP MACs per cycle for an input element type.
  uint32_t ampMacsPerCycle(ElementType inputType) const;
  /// AMP inner-dimension grain for an input element type.
  uint32_t ampGrainK(ElementType inputType) const;
  /// The region of a memory class.
  const MemoryRegion &region(MemoryClass memoryClass) const;
  /// Bytes a placement may hand out in a memory class on one tile.
  uint32_t allocatableBytes(MemoryClass memoryClass) const;
  /// First allocatable address of a memory class.
  uint32_t allocatableBase(MemoryClass memoryClass) const;
  /// Cycles to exchange `bytes` from or to one tile at the exchange width.
  uint64_t exchangeCycles(uint64_t bytes) const;
};

} // namespace ipu

#endif // IPU_TARGET_TARGETMODEL_H
