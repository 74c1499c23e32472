// Exporter form: attention-torch-f32
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: HF SiglipAttention, eager path, 2 heads x 8, T=8, batch 1, f32:
//   q/k/v = linear(x).view(1, 8, 2, 8).transpose(1, 2)
//   w = softmax(matmul(q, k.transpose(-1, -2)) * 8**-0.5, dim=-1, dtype=float32).to(q.dtype)
//   o = matmul(w, v).transpose(1, 2).contiguous().reshape(1, 8, 16); out_proj(o)
// Args: x, Wq, Wk, Wv, Wo ([out, in], torch layout), bq, bk, bv, bo.
//   aten.linear -> matmul(x, t(W)) + add.Tensor(., b)  DecomposeComplexOps.cpp:8983-9048;
//     t -> linalg.transpose [1, 0] (DataMovement.cpp:1751-1813); rank3 x rank2 matmul
//     -> broadcast generic (d0,d1,d2)->(d1,d2) to 1x16x16 + linalg.batch_matmul
//     (Linear.cpp:501-600); bias generic map (d0,d1,d2)->(d2)  (as torch-linear-bias-f16)
//   view -> tensor.expand_shape [[0],[1],[2,3]]; reshape -> view -> tensor.collapse_shape
//     (DataMovement.cpp:814-1381)
//   transpose(1,2) -> linalg.transpose [0,2,1,3]. For K, canonicalize composes
//     transpose(1,2) and transpose(-1,-2) into ONE linalg.transpose [0,2,3,1].
//   rank4 x rank4 aten.matmul (legal: LowerToBackendContract.cpp:431-438) ->
//     tensor.collapse_shape [[0,1],[2],[3]] (B*H = 2) -> linalg.batch_matmul on
//     2x8x8 (zero fill) -> tensor.expand_shape back (Linear.cpp:612-676)
//   * scale -> aten.mul.Scalar: mulf(in, truncf(0.35355339059327379 : f64)) (not folded)
//     (Uncategorized.cpp:1491-1502)
//   softmax: as softmax-torch-f32.mlir on dim 3 (2-result max.dim generic with
//     -inf fill, keepdim maps (d0,d1,d2,0)); dtype=float32 / .to(f32) fold away
//   dropout(p=0, eval) removed (DecomposeComplexOps.cpp:7230-7245); .contiguous()
//     -> aten.clone -> identity generic, erased by canonicalize
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
#map = affine_map<(d0, d1, d2) -> (d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @attention(%arg0: tensor<1x8x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16x16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>) -> tensor<1x8x16xf32> {
    %cst = arith.constant 0xFF800000 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0.35355339059327379 : f64
    %0 = tensor.empty() : tensor<16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<16x16xf32>) outs(%0 : tensor<16x16xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<1x16x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<16x16xf32>) outs(%1 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %3 = tensor.empty() : tensor<1x8x16xf32>
    %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<1x8x16xf32>, tensor<1x16x16xf32>) outs(%4 : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %arg5 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%3 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.addf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x8x16xf32>
    %expanded = tensor.expand_shape %6 [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %7 = tensor.empty() : tensor<1x2x8x8xf32>
    %transposed_2 = linalg.transpose ins(%expanded : tensor<1x8x2x8xf32>) outs(%7 : tensor<1x2x8x8xf32>) permutation = [0, 2, 1, 3] 
    %transposed_3 = linalg.transpose ins(%arg2 : tensor<16x16xf32>) outs(%0 : tensor<16x16xf32>) permutation = [1, 0] 
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_3 : tensor<16x16xf32>) outs(%1 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %9 = linalg.batch_matmul ins(%arg0, %8 : tensor<1x8x16xf32>, tensor<1x16x16xf32>) outs(%4 : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %arg6 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%3 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.addf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x8x16xf32>
    %expanded_4 = tensor.expand_shape %10 [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %transposed_5 = linalg.transpose ins(%arg3 : tensor<16x16xf32>) outs(%0 : tensor<16x16xf32>) permutation = [1, 0] 
    %11 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_5 : tensor<16x16xf32>) outs(%1 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %12 = linalg.batch_matmul ins(%arg0, %11 : tensor<1x8x16xf32>, tensor<1x16x16xf32>) outs(%4 : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    %13 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %arg7 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%3 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.addf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x8x16xf32>
    %expanded_6 = tensor.expand_shape %13 [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %transposed_7 = linalg.transpose ins(%expanded_6 : tensor<1x8x2x8xf32>) outs(%7 : tensor<1x2x8x8xf32>) permutation = [0, 2, 1, 3] 
    %transposed_8 = linalg.transpose ins(%expanded_4 : tensor<1x8x2x8xf32>) outs(%7 : tensor<1x2x8x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed = tensor.collapse_shape %transposed_2 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %collapsed_9 = tensor.collapse_shape %transposed_8 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %14 = tensor.empty() : tensor<2x8x8xf32>
    %15 = linalg.fill ins(%cst_0 : f32) outs(%14 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %16 = linalg.batch_matmul ins(%collapsed, %collapsed_9 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%15 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_10 = tensor.expand_shape %16 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_10 : tensor<1x2x8x8xf32>) outs(%7 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.truncf %cst_1 : f64 to f32
      %35 = arith.mulf %in, %34 : f32
      linalg.yield %35 : f32
    } -> tensor<1x2x8x8xf32>
    %18 = tensor.empty() : tensor<1x2x8xi64>
    %19 = linalg.fill ins(%c0_i64 : i64) outs(%18 : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
    %20 = tensor.empty() : tensor<1x2x8xf32>
    %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
    %22:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%17 : tensor<1x2x8x8xf32>) outs(%21, %19 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_18: i64):
      %34 = linalg.index 3 : index
      %35 = arith.index_cast %34 : index to i64
      %36 = arith.maximumf %in, %out : f32
      %37 = arith.cmpf ogt, %in, %out : f32
      %38 = arith.select %37, %35, %out_18 : i64
      linalg.yield %36, %38 : f32, i64
    } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
    %expanded_11 = tensor.expand_shape %22#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
    %23 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %expanded_11 : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%7 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.subf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x2x8x8xf32>
    %24 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x2x8x8xf32>) outs(%7 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = math.exp %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x2x8x8xf32>
    %25 = tensor.empty() : tensor<1x2x8x1xf32>
    %26 = linalg.fill ins(%cst_0 : f32) outs(%25 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
    %27 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%24 : tensor<1x2x8x8xf32>) outs(%26 : tensor<1x2x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.addf %in, %out : f32
      linalg.yield %34 : f32
    } -> tensor<1x2x8x1xf32>
    %28 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%24, %27 : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%7 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.divf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x2x8x8xf32>
    %collapsed_12 = tensor.collapse_shape %28 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %collapsed_13 = tensor.collapse_shape %transposed_7 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %29 = linalg.batch_matmul ins(%collapsed_12, %collapsed_13 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%15 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_14 = tensor.expand_shape %29 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %30 = tensor.empty() : tensor<1x8x2x8xf32>
    %transposed_15 = linalg.transpose ins(%expanded_14 : tensor<1x2x8x8xf32>) outs(%30 : tensor<1x8x2x8xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_16 = tensor.collapse_shape %transposed_15 [[0], [1], [2, 3]] : tensor<1x8x2x8xf32> into tensor<1x8x16xf32>
    %transposed_17 = linalg.transpose ins(%arg4 : tensor<16x16xf32>) outs(%0 : tensor<16x16xf32>) permutation = [1, 0] 
    %31 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_17 : tensor<16x16xf32>) outs(%1 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %32 = linalg.batch_matmul ins(%collapsed_16, %31 : tensor<1x8x16xf32>, tensor<1x16x16xf32>) outs(%4 : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    %33 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %arg8 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%3 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %34 = arith.addf %in, %in_18 : f32
      linalg.yield %34 : f32
    } -> tensor<1x8x16xf32>
    return %33 : tensor<1x8x16xf32>
  }
}

