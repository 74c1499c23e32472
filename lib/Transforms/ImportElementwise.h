//===- ImportElementwise.h - Part of --ipu-import-linalg --------*- C++ -*-===//

#ifndef IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H
#define IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ipu_compiler {

/// Turns every elementwise linalg.generic and linalg.map of `module` into an
/// ipu_tile.elementwise and fuses chains of them; fails (with errors on the
/// ops) when a body holds something no tile kernel runs.
LogicalResult importElementwise(ModuleOp module);

} // namespace mlir::ipu_compiler

#endif // IPU_LIB_TRANSFORMS_IMPORTELEMENTWISE_H
