// Exporter form: torch-cast-f32-f16-f8e4m3fn
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: x.to(torch.float16).to(torch.float8_e4m3fn) on [1, 8, 32] f32.
// Export turns aten.to.dtype into aten._to_copy; torch-mlir's decomposition
// table (python/torch_mlir/extras/fx_decomp_util.py:41) turns that into
// prims.convert_element_type, decomposed to aten.to.dtype
// (DecomposeComplexOps.cpp:10779-10795); each aten.to.dtype is one generic
// (Uncategorized.cpp:1504-1528) whose body is convertScalarToDtype
// (lib/Conversion/Utils/Utils.cpp:288-369): a plain arith.truncf, also for
// f16 -> f8E4M3FN (only 16-bit <-> 16-bit conversions go through f32).
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
  func.func @torch_cast_chain(%arg0: tensor<1x8x32xf32>) -> tensor<1x8x32xf8E4M3FN> {
    %0 = tensor.empty() : tensor<1x8x32xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x32xf32>) outs(%0 : tensor<1x8x32xf16>) {
    ^bb0(%in: f32, %out: f16):
      %4 = arith.truncf %in : f32 to f16
      linalg.yield %4 : f16
    } -> tensor<1x8x32xf16>
    %2 = tensor.empty() : tensor<1x8x32xf8E4M3FN>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<1x8x32xf16>) outs(%2 : tensor<1x8x32xf8E4M3FN>) {
    ^bb0(%in: f16, %out: f8E4M3FN):
      %4 = arith.truncf %in : f16 to f8E4M3FN
      linalg.yield %4 : f8E4M3FN
    } -> tensor<1x8x32xf8E4M3FN>
    return %3 : tensor<1x8x32xf8E4M3FN>
  }
}
