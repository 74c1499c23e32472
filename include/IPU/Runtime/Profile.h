//===- Profile.h - A simulated run as a self-contained HTML report -------===//
//
// `ipu-run --profile DIR` writes DIR/profile.html: the program's steps as a
// timeline, every tile's compute cycles as a heatmap, a table of exchange
// phases (schedule horizon against the endpoint lower bound), a table of
// compute sets (slowest tile, mean, balance) and memory touched against the
// tile's regions. Everything is inline SVG and HTML drawn here, with the
// same figures as JSON in <script type="application/json"
// id="profile-data">; the page loads nothing. Times are device cycles, and
// microseconds at the target clock.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_PROFILE_H
#define IPU_RUNTIME_PROFILE_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <optional>
#include <string>

namespace ipu {

/// The report of `result` (a run of `package` on `target`) as HTML text.
std::string profileHtml(const Package &package, const TargetModel &target,
                        const SimulationResult &result);

/// Creates `directory` if needed and writes profileHtml to
/// `directory`/profile.html; a message naming the path when it cannot.
std::optional<std::string> writeProfile(const std::string &directory,
                                        const Package &package,
                                        const TargetModel &target,
                                        const SimulationResult &result);

} // namespace ipu

#endif // IPU_RUNTIME_PROFILE_H
