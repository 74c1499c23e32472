//===- OpCycles.h - A simulated run's cycles per source op ---------------===//
//
// The steps a compiler op lowered to share its name's prefix (`mm0` for
// `mm0.gather`, `mm0.partials`, `mm0.reduce`, `mm0.sum`) and carry its
// source location: grouping a run's steps by the prefix answers "which op
// of my model took the cycles". A sync belongs to the op of the step after
// it (the lowering puts one before each phase). A loop's control overhead
// belongs to the loop's name and location like any other step's cycles,
// and a loop body's steps count once per iteration. The location survives a
// textual round trip only when ipu-opt prints it (--mlir-print-debuginfo);
// otherwise it is the op's line in the lowered IR.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_OPCYCLES_H
#define IPU_RUNTIME_OPCYCLES_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ipu {

struct OpCycles {
  std::string op;       ///< The steps' name prefix.
  std::string location; ///< Its first step's source location, "" if none.
  /// Compute sets and phases run (syncs and loop steps apart; a loop
  /// body's once per iteration).
  uint32_t steps = 0;
  uint64_t computeCycles = 0, exchangeCycles = 0, syncCycles = 0;
  uint64_t loopCycles = 0; ///< Its Loop steps' control overhead.
  uint64_t hostCycles = 0; ///< Its streams during the run (layerStreams).
  /// Bytes its phases deliver (a broadcast word counted per destination,
  /// and per run).
  uint64_t exchangeBytes = 0;
  uint64_t cycles() const {
    return computeCycles + exchangeCycles + syncCycles + loopCycles + hostCycles;
  }
};

/// The op a step name belongs to: the name up to its first '.'.
std::string opOfStep(const std::string &stepName);

/// Every op of `result` (a run of `package`), in order of first step; a
/// sync after the last op's steps is its own row, "sync". The rows' cycles
/// sum to result.cycles.
std::vector<OpCycles> cyclesByOp(const Package &package,
                                 const SimulationResult &result);

/// One op's cycles in two runs (--compare): matched by name; an op only one
/// run has is 0 in the other.
struct OpComparison {
  std::string op, location;
  uint64_t cycles = 0, otherCycles = 0;
};

/// The ops of `ops` in order, then those only `other` has.
std::vector<OpComparison> compareOps(const std::vector<OpCycles> &ops,
                                     const std::vector<OpCycles> &other);

} // namespace ipu

#endif // IPU_RUNTIME_OPCYCLES_H
