//===- GemmProgram.h - Planning a program's matmuls together ---*- C++ -*-===//
//
// The matmuls of one program share tile memory: each is planned next to
// what the others hold, with weights capped when they would not all fit,
// and the finalists re-ranked by their scheduled and placed programs.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMPROGRAM_H
#define IPU_PLANNING_GEMMPROGRAM_H

#include "IPU/Planning/GemmSearch.h"

#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// A matmul of a program whose matmuls share tile memory.
struct ProgramGemm {
  GemmProblem problem; ///< rhsIsWeight: B is resident for the whole program.
  GemmPlanConstraints constraints;
  /// A plan the user gave: checked (checkGemmPlan, the constraints) and
  /// costed, never replaced. The search then holds it as its one finalist.
  std::optional<GemmPlan> given;
  GemmPlanSearch search;            ///< Filled by planGemmProgram.
  std::optional<std::string> error; ///< Why it could not be planned.
  double seconds = 0;               ///< Its planning time.
  /// Standard bytes per tile the program's other ops (softmax, layer norm)
  /// hold at once while the weights are resident: an estimate, their
  /// operands and result spread evenly over the tiles.
  uint64_t coexistingStandardBytes = 0;
  /// Standard bytes per tile the program's other ops keep for its whole
  /// run: the generated kernels' code and their vertices' state.
  uint64_t residentStandardBytes = 0;
  /// Interleaved bytes per tile they keep: their resident row vectors
  /// (layer norm's scale and shift), replicated over their tiles.
  uint64_t residentInterleavedBytes = 0;
  /// The most transient bytes per tile (MemoryBudget::transientCapBytes)
  /// this matmul's plan may take: set when placing the program showed its
  /// buffers overflow a tile the planner's even spread does not see.
  uint64_t transientCapBytes = UINT64_MAX;
  /// The weight cap planGemmProgram gave this matmul (MemoryBudget), 0 when
  /// none was needed.
  uint64_t weightCapBytes = 0;
};

/// Plans the matmuls of one program in program order (a given plan is kept
/// or refused with the reason), each next to the others' memory: the resident weights and code and the transient peak of
/// those already planned, and the least the later ones' weights can take
/// (spread over every tile). When a matmul then finds no plan that fits,
/// the program is planned again with each resident weight capped at a share
/// of tile memory proportional to its size (tighter shares until every
/// matmul fits): weights replicated less, for memory, where the greedy
/// order would have spent it all on the first ones.
///
/// With `rerank` > 0, each matmul's best `rerank` finalists are then lowered,
/// scheduled and placed (scheduleGemmPlan, in parallel, deterministic) in
/// a last pass in program order, and the one with the fewest scheduled
/// cycles whose buffers fit wins; the finalists are reordered so.
void planGemmProgram(const TargetModel &target, std::vector<ProgramGemm> &gemms,
                     unsigned finalistCount, unsigned rerank = 0);

} // namespace ipu

#endif // IPU_PLANNING_GEMMPROGRAM_H
