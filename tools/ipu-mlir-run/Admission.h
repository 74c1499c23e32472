//===- Admission.h - What ipu-mlir-run agrees to run ----------*- C++ -*-===//
//
// ipu-mlir-run JITs a module on the host: whatever it admits runs as the
// user. It admits what ipu-opt imports (func, arith, math, tensor, linalg,
// scf.for of constant bounds, scf.if, cf.assert, on tensors of static
// shape) and nothing that could reach outside the module (calls,
// declarations, the llvm dialect, buffers, branches that loop), and sizes
// the run's work and memory from the static shapes before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_MLIR_RUN_ADMISSION_H
#define IPU_MLIR_RUN_ADMISSION_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ipu_mlir_run {

struct RunLimits {
  uint64_t maxBytes = 0;
  uint64_t maxWork = 0;
};

/// An upper bound of what the run does: `work` counts scalar operations
/// (every op once per iteration of the loops and linalg iteration spaces
/// around it), `bytes` the tensors every op allocates, loops included
/// (the lowering frees nothing before the run ends). Both saturate.
struct RunEstimate {
  uint64_t work = 0;
  uint64_t bytes = 0;
};

/// Nothing if every op of `module` is one ipu-mlir-run runs and the
/// estimate is within `limits`; otherwise the refusal, naming the op, its
/// location (escaped) and why. `estimate` is filled in either way when the
/// ops are admitted.
std::optional<std::string> admitModule(mlir::ModuleOp module, const RunLimits &limits,
                                       RunEstimate &estimate);

/// Inserts a cf.assert before every tensor.extract, tensor.insert and
/// slice whose indices are not all in bounds by construction: an index
/// read from the data would otherwise read or write any host address. A
/// failed check prints its message and aborts the run.
void guardIndices(mlir::ModuleOp module);

/// `op`'s location as file:line:col (escaped), or "unknown location".
std::string locationText(mlir::Operation *op);

} // namespace ipu_mlir_run

#endif // IPU_MLIR_RUN_ADMISSION_H
