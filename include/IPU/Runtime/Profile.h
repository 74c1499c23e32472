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
