//===- Profile.h - A simulated run as a self-contained HTML report -------===//
//
// `ipu-run --profile DIR` writes DIR/profile.html: the program's steps as a
// timeline, every tile's compute cycles as a heatmap, a table per source op
// (its location, cycles by kind, exchange bytes), a table of exchange
// phases (schedule horizon against the endpoint lower bound), a table of
// compute sets (slowest tile, mean, balance), memory touched against the
// tile's regions, and with --compare the two runs per op. Everything is inline SVG and HTML drawn here, with the
// same figures as JSON in <script type="application/json"
// id="profile-data">; the page loads nothing. Times are device cycles, and
// microseconds at the target clock.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_PROFILE_H
#define IPU_RUNTIME_PROFILE_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/OpCycles.h"
#include "IPU/Runtime/Simulator.h"

#include <optional>
#include <string>

namespace ipu {

/// Another run set beside this one (ipu-run --compare).
struct ProfileComparison {
  std::string name; ///< The other package.
  const std::vector<OpComparison> *ops = nullptr;
  uint64_t cycles = 0; ///< The other run's total.
};

/// An exchange phase of the run, once however often it ran.
struct ProfilePhase {
  std::string name;
  uint32_t index = 0;
  uint32_t runs = 0; ///< A loop body's phase once per iteration.
  uint64_t cycles = 0; ///< Per run: horizon, fixed cost and local copies.
  uint64_t transfers = 0;
  uint64_t sendHorizon = 0; ///< The timed horizon: last receiver end.
  uint64_t bound = 0;       ///< timedScheduleReport's lower bound, in events.
};

/// A compute set of the run, once however often it ran.
struct ProfileComputeSet {
  std::string name, kernel;
  uint32_t index = 0;
  uint32_t runs = 0; ///< A loop body's compute set once per iteration.
  uint64_t vertices = 0;
  /// Per run: the slowest tile's. In a loop body, the mean over its
  /// iterations (which differ only where advancing operands change memory
  /// class) rounded up, so that it bounds the mean tile's.
  uint64_t cycles = 0;
  uint32_t slowestTile = 0;
  uint32_t busyTiles = 0;
  /// The first step running it: its cycles, and its busy tiles' summed
  /// over its runs.
  uint64_t stepCycles = 0, stepBusyTileCycles = 0;
  uint32_t stepRuns = 1;
  double mean() const {
    return busyTiles && stepRuns
               ? double(stepBusyTileCycles) / busyTiles / stepRuns
               : 0;
  }
  double balance() const {
    return busyTiles && stepCycles
               ? double(stepBusyTileCycles) / busyTiles / double(stepCycles)
               : 0;
  }
};

/// The figures of a run that the report draws, computed once.
struct ProfileData {
  bool hasLoops = false;
  /// The program's steps on the device, by index (host streams cost no
  /// cycles and are left out).
  std::vector<size_t> timeline;
  /// Phases and compute sets in the order they first ran.
  std::vector<ProfilePhase> phases;
  std::vector<ProfileComputeSet> computeSets;
  /// Over the tiles' compute cycles: the most and its tile, the tiles with
  /// none, the least that is not 0 (0 when all are), and the mean.
  uint64_t maxTileCycles = 0, busiestTile = 0, idleTiles = 0;
  uint64_t minBusyTileCycles = 0;
  double meanTileCycles = 0;
};

/// The figures of `result`, a run of `package` on `target`.
ProfileData profileData(const Package &package, const TargetModel &target,
                        const SimulationResult &result);

/// The report of `result` (a run of `package` on `target`) as HTML text,
/// with a comparison table when `other` is given.
std::string profileHtml(const Package &package, const TargetModel &target,
                        const SimulationResult &result,
                        const ProfileComparison *other = nullptr);

/// Creates `directory` if needed and writes profileHtml to
/// `directory`/profile.html; a message naming the path when it cannot.
std::optional<std::string> writeProfile(const std::string &directory,
                                        const Package &package,
                                        const TargetModel &target,
                                        const SimulationResult &result,
                                        const ProfileComparison *other = nullptr);

} // namespace ipu

#endif // IPU_RUNTIME_PROFILE_H
