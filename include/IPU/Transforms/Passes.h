//===- Passes.h - IPU compiler passes ----------------------------*- C++ -*-===//

#ifndef IPU_TRANSFORMS_PASSES_H
#define IPU_TRANSFORMS_PASSES_H

#include "IPU/Dialect/Exchange/IR/Exchange.h"
#include "IPU/Dialect/Gemm/IR/Gemm.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::ipu_compiler {

#define GEN_PASS_DECL
#include "IPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "IPU/Transforms/Passes.h.inc"

/// How `--ipu-compile` runs a batch of images.
enum class ImagesMode { Auto, Sequence, Together };

/// Options of the `ipu-compile` pipeline.
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target when the module names none"),
                             llvm::cl::init("ipu21")};
  Option<unsigned> finalists{*this, "finalists",
                             llvm::cl::desc("Plans kept per matmul"),
                             llvm::cl::init(4)};
  Option<unsigned> rerank{
      *this, "rerank",
      llvm::cl::desc("Finalists per matmul lowered, scheduled and placed to "
                     "choose among (0: the analytical best)"),
      llvm::cl::init(4)};
  Option<std::string> partials{
      *this, "partials",
      llvm::cl::desc("AMP partials for f32-accumulating matmuls: f32, f16 or any"),
      llvm::cl::init("")};
  Option<unsigned> maxWeightReplicas{
      *this, "max-weight-replicas",
      llvm::cl::desc("Keep at most N copies of each weight's blocks resident "
                     "(0: any; 1: every weight stored once, as a stack of "
                     "layers keeps them)"),
      llvm::cl::init(0)};
  Option<bool> repeatLayers{
      *this, "repeat-layers",
      llvm::cl::desc("Compile the identical layers an exporter unrolled as "
                     "one body run once per layer (ipu_tile.repeat)"),
      llvm::cl::init(false)};
  Option<bool> streamWeights{
      *this, "stream-weights",
      llvm::cl::desc("With repeat-layers: stream each layer's weights from the "
                     "host as the layer starts (the device waits for the host "
                     "link) instead of holding every layer's"),
      llvm::cl::init(false)};
  Option<ImagesMode> images{
      *this, "images",
      llvm::cl::desc("A batch of images (every argument's leading dim)"),
      llvm::cl::init(ImagesMode::Auto),
      llvm::cl::values(
          clEnumValN(ImagesMode::Auto, "auto",
                     "as sequence when every argument has rank 4 or more (a "
                     "batch of images, [B, C, H, W])"),
          clEnumValN(ImagesMode::Sequence, "sequence",
                     "compile one image, run once per image, when nothing "
                     "mixes images (--ipu-separate-images)"),
          clEnumValN(ImagesMode::Together, "together", "compute the batch at once"))};
  Option<std::string> memoryProfile{
      *this, "memory-profile",
      llvm::cl::desc("Write the placed memory as JSON to this file"),
      llvm::cl::init("")};
  Option<std::string> dataFile{
      *this, "data-file",
      llvm::cl::desc("Write the weights and exchange run tables to this file "
                     "and refer to them from the IR (--ipu-export-data)"),
      llvm::cl::init("")};
  Option<std::string> dumpPhases{
      *this, "dump-phases",
      llvm::cl::desc("Write every exchange phase, with its transfers' "
                     "addresses, to this directory"),
      llvm::cl::init("")};
};

/// import, set target, plan, lower, place, schedule; then, with a data
/// file, export the data.
void buildCompilePipeline(OpPassManager &pm,
                          const CompilePipelineOptions &options);
/// Registers every pass and the `ipu-compile` pipeline.
void registerAllPasses();

/// The dialects the compiler reads and writes, and the ops' lowering models
/// (TileLowerableOpInterface): a tool calls this once on its registry. The
/// dialects promise those models, so a context without them fails loudly.
void registerCompilerDialects(DialectRegistry &registry);

} // namespace mlir::ipu_compiler

#endif // IPU_TRANSFORMS_PASSES_H
