//===- Run.h - What ipu-run does, as library calls --------------*- C++ -*-===//
//
// Loading a package file for a run (read, decode, find its target,
// validate), and the seed-style report lines of a run: one line per source
// op, the planner's finalists, a comparison with another run, and the
// closing lines with cycles, efficiency, memory and the package's metadata.
// Every string that came from the package is escaped (reportValue).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_RUN_H
#define IPU_RUNTIME_RUN_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// A package file decoded and validated against its target.
struct LoadedPackage {
  Package package;
  std::optional<TargetModel> target;
  uint64_t fileBytes = 0;
  double readSeconds = 0, validateSeconds = 0;
};

/// Reads, decodes and validates the package at `path` (a run may ask for at
/// most `maxHostWork` units of simulation work, validatePackage's). Errors say what is wrong: "corrupt
/// package: ...", "package target 'X' is unknown; known targets: ...",
/// "invalid package: ...".
std::optional<std::string> loadPackageFile(const std::string &path, uint64_t maxHostWork,
                                           LoadedPackage &loaded);

/// "op=NAME location=L steps=... cycles=... sharePercent=..." for a row of
/// cyclesByOp in a run of `runCycles` cycles.
std::string opLine(const OpCycles &op, uint64_t runCycles);

/// The planner's re-ranked finalists as the package keeps them, best first:
/// "finalist op=mm0 rank=0 rows=... scheduledCycles=... fits=true".
std::vector<std::string> finalistLines(const Package &package);

/// "compare op=..." per row of compareOps, then the totals of the two runs:
/// "compare package=P other=O cycles=... otherCycles=... deltaCycles=...".
std::vector<std::string> comparisonLines(const std::vector<OpComparison> &rows,
                                         const std::string &path,
                                         const std::string &otherPath, uint64_t cycles,
                                         uint64_t otherCycles);

/// The closing lines of a run of `package`: the workload's cycles by kind
/// with its GEMM rate against the f16 peak and against the peak of its own
/// types; its weights' replicas and what loading them costs (weightLoad);
/// the memory the program touched; its code and state on the busiest
/// tile; the package's metadata (finalists apart). Fails only when the
/// package's reserved area cannot be tallied.
std::optional<std::string> summaryLines(const Package &package, const TargetModel &target,
                                        const SimulationResult &result,
                                        std::vector<std::string> &lines);

/// The weights a package loads before its first run (streams marked
/// `weight`), and what loading them costs: the link carries each host byte
/// once, then the exchange fans the copies out to their replicas
/// (hostLinkLoad). A weight an argument streams into several layouts has
/// the copies of all of them.
struct WeightLoad {
  /// The most copies of one matrix weight (a tensor of more than one row)
  /// the tiles hold: a plan's replicas of its blocks; 1 when every matrix
  /// is stored once, 0 without any.
  uint32_t replicasMax = 0;
  /// The same for row weights (biases, layer norm's scale and shift),
  /// which stay beside the blocks that read them.
  uint32_t rowReplicasMax = 0;
  uint64_t residentBytes = 0; ///< Every copy, as the tiles hold them.
  uint64_t linkBytes = 0;     ///< Each host byte once.
  uint64_t linkCycles = 0;    ///< At the link's measured rate (hostStreamCycles).
  uint64_t fanOutBytes = 0;
  /// Each stream's fan-out, a timed exchange phase of its own (hostFanOut).
  uint64_t fanOutCycles = 0;
  uint64_t cycles() const { return linkCycles + fanOutCycles; }
};

WeightLoad weightLoad(const Package &package, const TargetModel &target);

/// "weightReplicasMax=... rowWeightReplicasMax=... weightBytesResident=...
/// weightLoadLinkBytes=... weightLoadLinkCycles=... weightLoadFanOutBytes=...
/// weightLoadFanOutCycles=... weightLoadCycles=...".
std::string weightLoadLine(const WeightLoad &load);

/// A run of every image of a batch (Package::images runs of the program;
/// one for a package of one image).
struct BatchRun {
  uint32_t runs = 0;   ///< Runs of the program.
  uint32_t images = 0; ///< Images they computed (imagesPerRun each).
  uint64_t deviceCycles = 0; ///< The runs' cycles, summed.
  /// The same with streams during the runs at the link's PCIe bound.
  uint64_t deviceCyclesPcieBound = 0;
  /// Each image's arguments and results over the host link
  /// (TargetModel::hostStreamCycles per stream, each byte once,
  /// hostLinkLoad): between runs they cross it while the tiles wait, which
  /// the per-run figures leave out. Then the exchange fans the copies out
  /// to their other tiles.
  uint64_t linkCycles = 0;
  uint64_t linkCyclesPcieBound = 0;
  uint64_t linkBytes = 0;
  uint64_t fanOutCycles = 0;
  uint64_t fanOutBytes = 0;
  std::vector<HostTensor> outputs; ///< The batch's results (appendImageResults).
};

/// The images one run of `package` computes, and the rule that counted
/// them: "sequential", 1 when it runs a batch one image after another
/// (Package::images runs); "batchDim", for a batch computed together, the
/// extent of the dim the exporter marked on an input (HostStream::batchDim,
/// the lowest-indexed marked input); unmarked, "pixels", the leading dim of
/// its first input when that is [B, C, H, W] (rank 4 or more), else
/// "unmarked" (at rank 3 the leading dim may be heads or tokens) or
/// "noInput", 1.
struct ImageCount {
  uint32_t images = 1;
  const char *rule = "unmarked";
};
ImageCount countImages(const Package &package);
/// countImages(package).images.
uint32_t imagesPerRun(const Package &package);

/// Adds one run to `batch`.
void addImage(const Package &package, const TargetModel &target,
              const SimulationResult &image, BatchRun &batch);

/// "batch images=B deviceCyclesPerImage=... imageLinkCyclesPerImage=...
/// imageFanOutCyclesPerImage=... cyclesPerImageWithLink=... ...
/// imagesPerSecond=... imagesPerSecondPcieBound=...": the batch's time,
/// device, link and fan-out apart, at the target's clock; images a second
/// with the link at its measured rate and at its PCIe bound, and without it;
/// last, the rule that counted the images (`imagesCountedBy`, countImages).
std::string batchLine(const Package &package, const TargetModel &target,
                      const BatchRun &batch);

} // namespace ipu

#endif // IPU_RUNTIME_RUN_H
