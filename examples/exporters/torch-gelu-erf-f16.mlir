// Exporter form: torch-gelu-erf-f16
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: F.gelu(x) (approximate="none") on [1, 8, 32] f16.
//   TorchToLinalg/Uncategorized.cpp:789-804 -> buildUnitNormalCdf/buildNormalCdf
//   (Uncategorized.cpp:118-140): 0.5 * (1 + erf((x - 0) / sqrt(2))) * x.
// canonicalize drops the subf x, 0.0; math.sqrt(2.0 : f16) is NOT folded for f16
// (the math folder only handles f32/f64), so it stays inside the body.
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
  func.func @torch_gelu_erf_f16(%arg0: tensor<1x8x32xf16>) -> tensor<1x8x32xf16> {
    %cst = arith.constant 5.000000e-01 : f16
    %cst_0 = arith.constant 2.000000e+00 : f16
    %cst_1 = arith.constant 1.000000e+00 : f16
    %0 = tensor.empty() : tensor<1x8x32xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %2 = math.sqrt %cst_0 : f16
      %3 = arith.divf %in, %2 : f16
      %4 = math.erf %3 : f16
      %5 = arith.addf %4, %cst_1 : f16
      %6 = arith.mulf %5, %cst : f16
      %7 = arith.mulf %in, %6 : f16
      linalg.yield %7 : f16
    } -> tensor<1x8x32xf16>
    return %1 : tensor<1x8x32xf16>
  }
}
