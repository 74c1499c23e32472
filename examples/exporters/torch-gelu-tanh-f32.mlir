// Exporter form: torch-gelu-tanh-f32
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: F.gelu(x, approximate="tanh") on [1, 8, 32] f32.
//   TorchToLinalg/Uncategorized.cpp:789-833. Note beta prints as 7.977240e-01:
//   torch-mlir's constant 0.7977240352174656 differs from sqrt(2/pi)=0.797884561.
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
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @torch_gelu_tanh_f32(%arg0: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
    %cst = arith.constant 5.000000e-01 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 7.977240e-01 : f32
    %cst_2 = arith.constant 4.471500e-02 : f32
    %c3_i64 = arith.constant 3 : i64
    %0 = tensor.empty() : tensor<1x8x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x32xf32>) outs(%0 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %2 = math.fpowi %in, %c3_i64 : f32, i64
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in, %3 : f32
      %5 = arith.mulf %4, %cst_1 : f32
      %6 = math.tanh %5 : f32
      %7 = arith.addf %6, %cst_0 : f32
      %8 = arith.mulf %7, %cst : f32
      %9 = arith.mulf %in, %8 : f32
      linalg.yield %9 : f32
    } -> tensor<1x8x32xf32>
    return %1 : tensor<1x8x32xf32>
  }
}
