//===- ipu-opt.cpp - The IPU compiler's optimizer driver ------------------===//
//
// mlir-opt with the IPU dialects and passes. The input is read here first
// so that IR nesting deeper than the parser's recursion can take is refused
// with an error instead of overflowing the stack (IPU/Support/Nesting.h).
//
//===----------------------------------------------------------------------===//

#include "IPU/Support/Nesting.h"
#include "IPU/Transforms/Passes.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

/// Ops exporters write that no dialect here defines, refused by name with
/// the way out, before the parser's generic "unregistered operation".
static std::optional<std::string> refuseKnownForeignOps(llvm::StringRef text) {
  static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kKnown[] = {
      {"tm_tensor.attention",
       "torch-mlir's scaled_dot_product_attention with a mask, which is not "
       "linalg: export scaled_dot_product_attention without a mask, or as "
       "explicit matmul and softmax"},
  };
  for (const auto &[name, why] : kKnown)
    for (llvm::StringRef form : {(llvm::Twine("\"") + name + "\"(").str(),
                                 (name + llvm::Twine(" ")).str()}) {
      size_t at = text.find(form);
      if (at == llvm::StringRef::npos)
        continue;
      size_t line = text.take_front(at).count('\n') + 1;
      size_t column = at - text.take_front(at).rfind('\n');
      return std::to_string(line) + ":" + std::to_string(column) + ": error: '" +
             name.str() + "' (" + why.str() + ")";
    }
  return std::nullopt;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  mlir::ipu_compiler::registerCompilerDialects(registry);
  mlir::ipu_compiler::registerAllPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "IPU compiler optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &message);
  if (!input) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (std::optional<std::string> refused =
          ipu::checkTextualIr(input->getBuffer())) {
    llvm::errs() << inputFilename << ": error: " << *refused << "\n";
    return 1;
  }
  if (std::optional<std::string> refused = refuseKnownForeignOps(input->getBuffer())) {
    llvm::errs() << inputFilename << ":" << *refused << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &message);
  if (!output) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
