//===- ToPackage.h - Placed ipu_tile programs to packages --------*- C++ -*-===//

#ifndef IPU_TRANSLATE_TOPACKAGE_H
#define IPU_TRANSLATE_TOPACKAGE_H

#include "IPU/Package/Package.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ipu_compiler {

/// Builds the package of the module's single placed program. Every buffer
/// must have an address and every phase a schedule; errors name the op.
FailureOr<ipu::Package> buildPackage(ModuleOp module);

/// Registers `--ipu-to-package` with mlir-translate style tools.
void registerToPackageTranslation();

} // namespace mlir::ipu_compiler

#endif // IPU_TRANSLATE_TOPACKAGE_H
