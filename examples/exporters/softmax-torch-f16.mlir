// Exporter form: softmax-torch-f16
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: F.softmax(x, dim=-1, dtype=torch.float32).to(torch.float16) on
// [2, 4, 24] f16 (the HF SiglipAttention eager form).
//   DecomposeAtenSoftmaxIntOp (DecomposeComplexOps.cpp:2535-2574): dtype given ->
//     aten.to.dtype(x, f32) -> generic arith.extf f16->f32 (Uncategorized.cpp:1504-1528)
//   getSoftmaxResult (DecomposeComplexOps.cpp:2504-2532) in f32: its own
//     to.dtype(f32) folds (same type); max.dim/sub/exp/sum/div exactly as in
//     softmax-torch-f32.mlir (fill -inf, maximumf, (d0,d1,0) keepdim maps).
//   .to(torch.float16) -> generic arith.truncf f32->f16.
// NB: plain F.softmax(x, -1) on f16 (no dtype) gives the SAME IR: getSoftmaxResult
// compares a tensor type with the accumulator element type
// (getDefaultAccType(f16) = f32, lib/Dialect/Torch/Utils/Utils.cpp:732-734), so it
// always upcasts to f32 and truncates the result back to f16.
// Status: DERIVED, not captured (no torch/torch-mlir binary was run). Built op by
// op from the conversion patterns cited above, then normalised with
//   mlir-opt-22 --canonicalize --resolve-shaped-type-result-dims --cse --canonicalize
// (the upstream-MLIR cleanup passes that torch-backend-to-linalg-on-tensors-
// backend-pipeline runs after TorchToLinalg;
// lib/Dialect/TorchConversion/Transforms/Passes.cpp:70-120), so constants
// are hoisted to the function entry, commuted to the RHS and de-duplicated,
// and identical tensor.empty ops are CSE-d, as in real torch-mlir output.
// Differences from a real export: real fx-imported functions are @main and
// weights/biases are frozen dense_resource constants; here they are arguments.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @softmax(%arg0: tensor<2x4x24xf16>) -> tensor<2x4x24xf16> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %c0_i64 = arith.constant 0 : i64
    %0 = tensor.empty() : tensor<2x4x24xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x24xf16>) outs(%0 : tensor<2x4x24xf32>) {
    ^bb0(%in: f16, %out: f32):
      %15 = arith.extf %in : f16 to f32
      linalg.yield %15 : f32
    } -> tensor<2x4x24xf32>
    %2 = tensor.empty() : tensor<2x4xi64>
    %3 = linalg.fill ins(%c0_i64 : i64) outs(%2 : tensor<2x4xi64>) -> tensor<2x4xi64>
    %4 = tensor.empty() : tensor<2x4xf32>
    %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %6:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<2x4x24xf32>) outs(%5, %3 : tensor<2x4xf32>, tensor<2x4xi64>) {
    ^bb0(%in: f32, %out: f32, %out_1: i64):
      %15 = linalg.index 2 : index
      %16 = arith.index_cast %15 : index to i64
      %17 = arith.maximumf %in, %out : f32
      %18 = arith.cmpf ogt, %in, %out : f32
      %19 = arith.select %18, %16, %out_1 : i64
      linalg.yield %17, %19 : f32, i64
    } -> (tensor<2x4xf32>, tensor<2x4xi64>)
    %expanded = tensor.expand_shape %6#0 [[0], [1, 2]] output_shape [2, 4, 1] : tensor<2x4xf32> into tensor<2x4x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded : tensor<2x4x24xf32>, tensor<2x4x1xf32>) outs(%0 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %15 = arith.subf %in, %in_1 : f32
      linalg.yield %15 : f32
    } -> tensor<2x4x24xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7 : tensor<2x4x24xf32>) outs(%0 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %15 = math.exp %in : f32
      linalg.yield %15 : f32
    } -> tensor<2x4x24xf32>
    %9 = tensor.empty() : tensor<2x4x1xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%8 : tensor<2x4x24xf32>) outs(%10 : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %15 = arith.addf %in, %out : f32
      linalg.yield %15 : f32
    } -> tensor<2x4x1xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %11 : tensor<2x4x24xf32>, tensor<2x4x1xf32>) outs(%0 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %15 = arith.divf %in, %in_1 : f32
      linalg.yield %15 : f32
    } -> tensor<2x4x24xf32>
    %13 = tensor.empty() : tensor<2x4x24xf16>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x4x24xf32>) outs(%13 : tensor<2x4x24xf16>) {
    ^bb0(%in: f32, %out: f16):
      %15 = arith.truncf %in : f32 to f16
      linalg.yield %15 : f16
    } -> tensor<2x4x24xf16>
    return %14 : tensor<2x4x24xf16>
  }
}

