// Exporter form: torch-linear-bias-f16
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: nn.Linear(16, 32, bias=True) on x: [1, 8, 16] f16 (model.half()).
// torch.export keeps aten.linear (a CompositeImplicitAutograd op that
// run_decompositions preserves because torch-mlir's table does not list it);
// torch-mlir then decomposes it:
//   aten.linear -> aten.matmul(x, aten.t(W)) + aten.add.Tensor(.., b, alpha=1)
//     lib/Dialect/Torch/Transforms/DecomposeComplexOps.cpp:8981-9048
//   aten.t -> aten.transpose.int(0, 1)       DecomposeComplexOps.cpp:4793-4821
//   aten.transpose.int -> linalg.transpose   lib/Conversion/TorchToLinalg/DataMovement.cpp:1751-1813
//   aten.matmul (rank 3 x rank 2 stays legal, LowerToBackendContract.cpp:431-438)
//     -> rhs broadcast generic (d0,d1,d2)->(d1,d2), zero-filled f32 init,
//        linalg.batch_matmul, truncf generic  TorchToLinalg/Linear.cpp:283-606
//        (f16 accumulates in f32: lib/Dialect/Torch/Utils/Utils.cpp:732-734;
//         broadcastToGivenShape/convertTensorToElementType: TorchToLinalg/Utils.cpp:398,631)
//   aten.add.Tensor -> generic, bias map (d0,d1,d2)->(d2), body
//     addf(lhs, mulf(rhs, sitofp(1))); canonicalize folds the alpha away
//     TorchToLinalg/Uncategorized.cpp:1038-1065, Utils.cpp:265-395
// Status: DERIVED, not captured (no torch/torch-mlir binary was run). Built op by
// op from the conversion patterns cited above, then normalised with
//   mlir-opt-22 --canonicalize --resolve-shaped-type-result-dims --cse --canonicalize
// (the upstream-MLIR cleanup passes that torch-backend-to-linalg-on-tensors-
// backend-pipeline runs after TorchToLinalg;
// lib/Dialect/TorchConversion/Transforms/Passes.cpp:70-120), so constants
// are hoisted to the function entry, commuted to the RHS and de-duplicated,
// and identical tensor.empty ops are CSE'd, as in real torch-mlir output.
// Differences from a real export: real fx-imported functions are @main and the
// weights/biases are frozen dense_resource constants (import_frozen_program);
// here they are function arguments.
#map = affine_map<(d0, d1, d2) -> (d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
module {
  func.func @torch_linear_bias_f16(%arg0: tensor<1x8x16xf16>, %arg1: tensor<32x16xf16>, %arg2: tensor<32xf16>) -> tensor<1x8x32xf16> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<16x32xf16>
    %transposed = linalg.transpose ins(%arg1 : tensor<32x16xf16>) outs(%0 : tensor<16x32xf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<1x16x32xf16>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<16x32xf16>) outs(%1 : tensor<1x16x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x16x32xf16>
    %3 = tensor.empty() : tensor<1x8x32xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<1x8x16xf16>, tensor<1x16x32xf16>) outs(%4 : tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %6 = tensor.empty() : tensor<1x8x32xf16>
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<1x8x32xf32>) outs(%6 : tensor<1x8x32xf16>) {
    ^bb0(%in: f32, %out: f16):
      %9 = arith.truncf %in : f32 to f16
      linalg.yield %9 : f16
    } -> tensor<1x8x32xf16>
    %8 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7, %arg2 : tensor<1x8x32xf16>, tensor<32xf16>) outs(%6 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_0: f16, %out: f16):
      %9 = arith.addf %in, %in_0 : f16
      linalg.yield %9 : f16
    } -> tensor<1x8x32xf16>
    return %8 : tensor<1x8x32xf16>
  }
}

