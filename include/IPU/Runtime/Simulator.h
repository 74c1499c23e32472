//===- Simulator.h - Cycle-level execution of a package ------------------===//
//
// Executes a validated package step by step: host streams copy tensors in
// and out (not counted), compute sets run their kernels natively on tile
// memory and cost the slowest tile's estimate, exchange phases move words as
// scheduled and cost their horizon, syncs cost the barrier, loops run their
// body `count` times and cost the control program's per-iteration overhead.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_SIMULATOR_H
#define IPU_RUNTIME_SIMULATOR_H

#include "IPU/Package/Package.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; ///< Row-major, unpadded.
  int64_t elements() const;
};

/// One program step as run. A step of a loop body runs once per iteration:
/// its cycles, groupCycles and busyTileCycles are sums over its `runs`. A
/// Loop step's own cycles are its control overhead over all iterations
/// (count x TargetModel::loopIterationCycles); its body's steps follow it.
struct StepCycles {
  StepKind kind;
  uint32_t index;
  uint64_t cycles;
  /// Per tile group (SimulationResult::tileGroups), the cycles its busiest
  /// tile spends in the step: a compute set's slowest vertex in the group;
  /// the whole step for exchanges, syncs and loops, which every tile takes
  /// part in.
  std::vector<uint64_t> groupCycles;
  /// Compute sets only: the tile that ends the step (the lowest-numbered of
  /// the slowest; in a loop body, of the slowest iteration, the first of
  /// them), how many tiles run a vertex in it, and the cycles those tiles
  /// spend in it in total (their mean is busyTileCycles / busyTiles / runs).
  uint32_t slowestTile = 0;
  uint32_t busyTiles = 0;
  uint64_t busyTileCycles = 0;
  /// Times the step ran: in a loop body, the product of the counts of the
  /// loops around it (a Loop step's own: times its loop was entered);
  /// otherwise 1.
  uint32_t runs = 1;
};

struct SimulationResult {
  uint64_t cycles = 0;
  uint64_t computeCycles = 0;
  uint64_t exchangeCycles = 0;
  uint64_t syncCycles = 0;
  /// The Loop steps' control overhead, kept apart from syncCycles (it is
  /// no barrier): cycles = compute + exchange + sync + loop + host cycles.
  uint64_t loopCycles = 0;
  /// Streams during the run (a repeated layer's weights, each layer): the
  /// cycles the tiles wait for the host link, and the bytes it carried.
  /// Streams before the run (weights at initialisation, inputs) cost none.
  /// The link carries each byte once (hostLinkLoad); the exchange that fans
  /// copies out to other tiles counts in exchangeCycles.
  uint64_t hostCycles = 0;
  uint64_t hostBytes = 0;
  /// hostCycles at the link's PCIe bound (TargetModel::hostStreamCyclesPcieBound).
  uint64_t hostCyclesPcieBound = 0;
  uint32_t activeTiles = 0; ///< Tiles running at least one vertex.
  /// Per memory class, the most bytes any tile spans from the class's base
  /// to the highest byte the program touched: derived from the addresses
  /// the program uses, not from what the compiler reports.
  uint64_t touchedBytes[2] = {0, 0};
  uint64_t touchedElements = 0; ///< Memory elements committed, all tiles.
  std::vector<StepCycles> steps; ///< One per program step, in its order.
  /// Each loop the program ran (a serial split, a repeated layer), in
  /// program order: its iterations and the cycles it took in all, control
  /// included; a loop inside another's body sums every run of it.
  struct LoopCycles {
    uint32_t loop = 0; ///< Index into Package::loops.
    uint32_t iterations = 0;
    uint64_t cycles = 0;
  };
  std::vector<LoopCycles> loops;
  /// Tiles are reported in this many groups of consecutive tiles (group g
  /// holds tiles [g * tiles / groups, (g + 1) * tiles / groups)).
  uint32_t tileGroups = 0;
  /// Per tile, the cycles it spends running vertices, summed over the
  /// compute steps (its vertices' estimates; zero on a tile that runs none).
  /// Its maximum is at most computeCycles, equal when one tile is the
  /// slowest of every compute step.
  std::vector<uint64_t> tileComputeCycles;
  std::vector<HostTensor> outputs; ///< By result index.
};

/// Runs `package` with `inputs` indexed by argument. The package must have
/// passed validatePackage. Fails with a message when an input is missing or
/// has the wrong type or shape, or when `timeLimitSeconds` (0: none) of wall
/// clock have passed before a step starts (naming the step and how far the
/// run got).
std::optional<std::string> simulate(const Package &package,
                                    const TargetModel &target,
                                    const std::vector<HostTensor> &inputs,
                                    SimulationResult &result,
                                    double timeLimitSeconds = 0);

} // namespace ipu

#endif // IPU_RUNTIME_SIMULATOR_H
