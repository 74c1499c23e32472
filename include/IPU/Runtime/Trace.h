//===- Trace.h - A simulated run as a Chrome trace-event file ------------===//
//
// What Perfetto (ui.perfetto.dev) and chrome://tracing open: one track for
// the program's steps and one per tile group, each step a slice. Trace
// timestamps are microseconds, so a slice's ts and dur are cycles at the
// target's clock; every slice also carries its exact cycles in its args,
// and the metadata states both units.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_TRACE_H
#define IPU_RUNTIME_TRACE_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <optional>
#include <string>

namespace ipu {

/// The trace of `result` (a run of `package` on `target`) as JSON text.
std::string traceJson(const Package &package, const TargetModel &target,
                      const SimulationResult &result);

/// Writes traceJson to `path`; a message naming the path when it cannot.
std::optional<std::string> writeTrace(const std::string &path,
                                      const Package &package,
                                      const TargetModel &target,
                                      const SimulationResult &result);

} // namespace ipu

#endif // IPU_RUNTIME_TRACE_H
