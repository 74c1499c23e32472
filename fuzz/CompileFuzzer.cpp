//===- CompileFuzzer.cpp - libFuzzer target for parse, verify, compile ---===//
//
// Treats the input as MLIR text: parses and verifies it with the dialects
// ipu-opt knows, runs --ipu-compile on a 4-tile target, and, when that
// succeeds, builds the package and validates it. Any input may be refused
// with a diagnostic; none may crash, and a program the compiler accepted
// must give a package the loader accepts (checked, else a trap).
//
//===----------------------------------------------------------------------===//

#include "IPU/Support/Nesting.h"
#include "IPU/Translate/ToPackage.h"
#include "IPU/Transforms/Passes.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {
/// One registry and context for the whole run: dialects load once, as in a
/// long-lived compiler; each input parses into a module of its own.
MLIRContext &context() {
  static MLIRContext *instance = [] {
    DialectRegistry registry;
    mlir::ipu_compiler::registerCompilerDialects(registry);
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    mlir::ipu_compiler::registerAllPasses();
    return ctx;
  }();
  return *instance;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Large inputs only slow the search down; real programs here are small.
  if (size > 16384)
    return 0;
  MLIRContext &ctx = context();
  // Diagnostics are the expected outcome for most inputs: keep them quiet.
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  // MLIR's lexer stops at a NUL: give it a terminated copy, as a file read
  // by ipu-opt would be.
  std::string text(reinterpret_cast<const char *>(data), size);
  // ipu-opt refuses what the parser cannot take (nesting that overflows
  // its stack, lists LLVM 22's linalg parsers crash on); so does this target.
  if (ipu::checkTextualIr(text))
    return 0;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module)
    return 0;
  PassManager pm(&ctx);
  mlir::ipu_compiler::CompilePipelineOptions options;
  options.target = "ipu21-4";
  mlir::ipu_compiler::buildCompilePipeline(pm, options);
  if (failed(pm.run(*module)))
    return 0;
  FailureOr<ipu::Package> package = mlir::ipu_compiler::buildPackage(*module);
  if (failed(package))
    return 0;
  std::optional<ipu::TargetModel> target =
      ipu::TargetModel::byName(package->target);
  std::optional<std::string> error =
      target ? ipu::validatePackage(*package, *target)
             : std::optional<std::string>("unknown target " + package->target);
  if (error) {
    std::fprintf(stderr, "compiled program gives an invalid package: %s\n",
                 error->c_str());
    std::abort();
  }
  return 0;
}
