// Exporter form: torch-quick-gelu-f16
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: x * torch.sigmoid(1.702 * x) (HF QuickGELUActivation) on [1, 8, 32] f16.
// 1.702 * x is exported as aten.mul.Tensor(x, 1.702); the fx importer rewrites
// it to aten.mul.Scalar (python/torch_mlir/extras/fx_importer.py:2103, 2842-2848).
//   mul.Scalar: mulf(x, truncf(1.702 : f64 -> f16))  Uncategorized.cpp:1491-1502
//   (arith.truncf of an inexact constant is not folded, so it stays in the body)
//   sigmoid                                          Uncategorized.cpp:677-695
//   mul.Tensor: mulf(x, sigmoid)                     Uncategorized.cpp:1164-1177
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
  func.func @torch_quick_gelu_f16(%arg0: tensor<1x8x32xf16>) -> tensor<1x8x32xf16> {
    %cst = arith.constant 1.000000e+00 : f16
    %cst_0 = arith.constant 1.702000e+00 : f64
    %0 = tensor.empty() : tensor<1x8x32xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %4 = arith.truncf %cst_0 : f64 to f16
      %5 = arith.mulf %in, %4 : f16
      linalg.yield %5 : f16
    } -> tensor<1x8x32xf16>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %4 = arith.negf %in : f16
      %5 = math.exp %4 : f16
      %6 = arith.addf %5, %cst : f16
      %7 = arith.divf %cst, %6 : f16
      linalg.yield %7 : f16
    } -> tensor<1x8x32xf16>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %2 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_1: f16, %out: f16):
      %4 = arith.mulf %in, %in_1 : f16
      linalg.yield %4 : f16
    } -> tensor<1x8x32xf16>
    return %3 : tensor<1x8x32xf16>
  }
}
