//===- Pipeline.cpp - The ipu-compile pipeline ----------------------------===//

#include "IPU/Transforms/Passes.h"
#include "IPU/Transforms/TileLowering.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::ipu_compiler::buildCompilePipeline(OpPassManager &pm,
                               const CompilePipelineOptions &options) {
  IPUSetTargetOptions target;
  target.target = options.target;
  pm.addPass(createIPUSetTarget(target));
  // Layers written as a loop become the layers an exporter unrolls.
  pm.addPass(createIPUUnrollLayerLoops());
  // On the exporter's ops, before import rewrites them.
  if (options.images != ImagesMode::Together) {
    IPUSeparateImagesOptions images;
    images.minimumRank = options.images == ImagesMode::Auto ? 4 : 1;
    pm.addPass(createIPUSeparateImages(images));
  }
  pm.addPass(createIPUImportLinalg());
  // Exporters compute some values twice (a layer norm's mean, once for
  // itself and once inside its variance); computed once, they also leave
  // their producers one reader to fuse into.
  pm.addPass(createCSEPass());
  // Q, K and V as one matmul: on every layer alike, before they are found.
  pm.addPass(createIPUFuseSiblingMatmuls());
  // Before fusion, which would merge the last layer's output into what
  // reads it after the layers.
  IPUFindRepeatedLayersOptions repeat;
  repeat.outline = options.repeatLayers || options.streamWeights;
  repeat.streamWeights = options.streamWeights;
  pm.addPass(createIPUFindRepeatedLayers(repeat));
  pm.addPass(createIPUFuseElementwise());
  IPUPlanGemmOptions plan;
  plan.finalists = options.finalists;
  plan.rerank = options.rerank;
  plan.partials = options.partials;
  plan.maxWeightReplicas = options.maxWeightReplicas;
  // The memory model is an estimate: a placed copy of the program decides.
  plan.validateStorage = true;
  pm.addPass(createIPUPlanGemm(plan));
  pm.addPass(createIPUAssignLayouts());
  pm.addPass(createIPULowerToTile());
  IPUPlaceStorageOptions storage;
  storage.memoryProfile = options.memoryProfile;
  pm.addPass(createIPUPlaceStorage(storage));
  // After placement: the exchange's rules depend on the addresses.
  IPUScheduleExchangeOptions schedule;
  schedule.dumpDir = options.dumpPhases;
  pm.addPass(createIPUScheduleExchange(schedule));
  if (!options.dataFile.empty()) {
    IPUExportDataOptions data;
    data.file = options.dataFile;
    pm.addPass(createIPUExportData(data));
  }
}

void mlir::ipu_compiler::registerAllPasses() {
  registerIPUPasses();
  PassPipelineRegistration<CompilePipelineOptions>(
      "ipu-compile",
      "Import, plan, lower, place and schedule: linalg on tensors to a "
      "placed ipu_tile program",
      buildCompilePipeline);
}

void mlir::ipu_compiler::registerCompilerDialects(DialectRegistry &registry) {
  // cf: torch-mlir's exports carry cf.assert (index checks of gathers).
  registry.insert<ipu_gemm::IPUGemmDialect, ipu_tile::IPUTileDialect,
                  ipu_exchange::IPUExchangeDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, tensor::TensorDialect, linalg::LinalgDialect,
                  cf::ControlFlowDialect, scf::SCFDialect>();
  ipu_tile::registerTileLoweringModels(registry);
}
