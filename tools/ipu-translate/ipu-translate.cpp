//===- ipu-translate.cpp - Translations out of the IPU dialects -----------===//

#include "IPU/Translate/ToPackage.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::ipu_compiler::registerToPackageTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "IPU translation driver\n"));
}
