//===- ImportFrozen.h - Part of --ipu-import-linalg -------------*- C++ -*-===//

#ifndef IPU_LIB_TRANSFORMS_IMPORTFROZEN_H
#define IPU_LIB_TRANSFORMS_IMPORTFROZEN_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ipu_compiler {

/// What a frozen export adds, made into what the import takes: a gather of
/// a constant arange becomes its table, cf.assert on constants folds away
/// (otherwise it is refused), scaled_dot_product_attention's guard of
/// wholly masked rows is dropped, and float tensor constants that are not
/// splats become function arguments after the function's own, each
/// carrying its value as `ipu_tile.constant`. Fails with errors on the ops.
LogicalResult importFrozenModel(ModuleOp module);

} // namespace mlir::ipu_compiler

#endif // IPU_LIB_TRANSFORMS_IMPORTFROZEN_H
