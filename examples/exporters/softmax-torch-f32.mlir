// Exporter form: softmax-torch-f32
// Source: llvm/torch-mlir@0029fc2e102c6d604696b33eb618116b4957a2e3
// torch: F.softmax(x, dim=-1) on [2, 4, 24] f32 (torch.export keeps the CIA op
// aten.softmax.int: it is not in python/torch_mlir/extras/fx_decomp_util.py:5-60).
//   aten.softmax.int / aten._softmax -> getSoftmaxResult
//     lib/Dialect/Torch/Transforms/DecomposeComplexOps.cpp:2498-2532 (2535-2622):
//     to.dtype(x, acc) [folds for f32: TorchOps.cpp:967-989], max.dim keepdim,
//     sub.Tensor, exp, sum.dim_IntList keepdim, div.Tensor
//   the max is aten.max.dim WITH indices (createMaxAlongDimension,
//     DecomposeComplexOps.cpp:105-121), lowered by ConvertAtenMinMaxDimOp
//     lib/Conversion/TorchToLinalg/Reduction.cpp:43-283: a 2-result generic
//     (value + i64 index, linalg.index/cmpf ogt/select), output maps DROP the
//     reduced dim, init fill -inf (getFloatInf, allow-non-finites=true by default:
//     lib/Conversion/Utils/Utils.cpp:662-667, include/torch-mlir/Conversion/Passes.td:107-109),
//     body arith.maximumf (not maxnumf); keepdim is a tensor.expand_shape
//     afterwards. The index result is dead but is NOT removed by canonicalize
//     (its out block argument is used by the select).
//   sum.dim_IntList keepdim: createReductionLinalgGeneric
//     lib/Conversion/TorchToLinalg/Utils.cpp:210-263: keepdim reductions are
//     generics whose output map has 0 for the reduced dim, (d0,d1,d2)->(d0,d1,0),
//     fill 0.0, body addf(in, out) (Reduction.cpp:298-300, 358-366).
//   sub/div broadcast the 2x4x1 operand with (d0,d1,0) (Utils.cpp:265-396);
//     sub alpha=1.0 (f64, truncf) and mulf by 1.0 fold away.
//     Uncategorized.cpp:457-459 (exp), 1067-1092 (sub), 1207-1221 (div)
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
  func.func @softmax(%arg0: tensor<2x4x24xf32>) -> tensor<2x4x24xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %c0_i64 = arith.constant 0 : i64
    %0 = tensor.empty() : tensor<2x4xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<2x4xi64>) -> tensor<2x4xi64>
    %2 = tensor.empty() : tensor<2x4xf32>
    %3 = linalg.fill ins(%cst_0 : f32) outs(%2 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4x24xf32>) outs(%3, %1 : tensor<2x4xf32>, tensor<2x4xi64>) {
    ^bb0(%in: f32, %out: f32, %out_1: i64):
      %12 = linalg.index 2 : index
      %13 = arith.index_cast %12 : index to i64
      %14 = arith.maximumf %in, %out : f32
      %15 = arith.cmpf ogt, %in, %out : f32
      %16 = arith.select %15, %13, %out_1 : i64
      linalg.yield %14, %16 : f32, i64
    } -> (tensor<2x4xf32>, tensor<2x4xi64>)
    %expanded = tensor.expand_shape %4#0 [[0], [1, 2]] output_shape [2, 4, 1] : tensor<2x4xf32> into tensor<2x4x1xf32>
    %5 = tensor.empty() : tensor<2x4x24xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded : tensor<2x4x24xf32>, tensor<2x4x1xf32>) outs(%5 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.subf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x24xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x4x24xf32>) outs(%5 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = math.exp %in : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x24xf32>
    %8 = tensor.empty() : tensor<2x4x1xf32>
    %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<2x4x24xf32>) outs(%9 : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %in, %out : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7, %10 : tensor<2x4x24xf32>, tensor<2x4x1xf32>) outs(%5 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.divf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x24xf32>
    return %11 : tensor<2x4x24xf32>
  }
}

