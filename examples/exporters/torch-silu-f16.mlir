// Exporter form: torch-silu-f16
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: F.silu(x) on [1, 8, 32] f16. aten.silu is illegal for the backend
// (LowerToBackendContract.cpp:496) and is decomposed into
//   aten.mul.Tensor(aten.sigmoid(x), x)   DecomposeComplexOps.cpp:7208-7222
// giving two generics (no fusion in the pipeline):
//   sigmoid: 1 / (exp(-x) + 1)            Uncategorized.cpp:677-695
//   mul.Tensor: mulf(sigmoid, x)          Uncategorized.cpp:1164-1177
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
  func.func @torch_silu_f16(%arg0: tensor<1x8x32xf16>) -> tensor<1x8x32xf16> {
    %cst = arith.constant 1.000000e+00 : f16
    %0 = tensor.empty() : tensor<1x8x32xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %3 = arith.negf %in : f16
      %4 = math.exp %3 : f16
      %5 = arith.addf %4, %cst : f16
      %6 = arith.divf %cst, %5 : f16
      linalg.yield %6 : f16
    } -> tensor<1x8x32xf16>
    %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %arg0 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_0: f16, %out: f16):
      %3 = arith.mulf %in, %in_0 : f16
      linalg.yield %3 : f16
    } -> tensor<1x8x32xf16>
    return %2 : tensor<1x8x32xf16>
  }
}
