// What exporters emit, each compiled for 16 tiles, packaged, simulated and
// checked against the host reference (every element of every result and
// checkpoint). The forms are those of test/Transforms/import-exporters.mlir.
// RUN: split-file %s %t
// RUN: ipu-opt %t/bmm.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/bmm.ipuexe
// RUN: ipu-run %t/bmm.ipuexe --check | FileCheck %s --check-prefix=BMM
// RUN: ipu-opt %t/bmm.mlir --ipu-compile="target=ipu21-16" | FileCheck %s --check-prefix=BMM-IR
// RUN: ipu-opt %t/transposed_b.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/transposed_b.ipuexe
// RUN: ipu-run %t/transposed_b.ipuexe --check | FileCheck %s --check-prefix=TRANSPOSED_B
// RUN: ipu-opt %t/rank3_linear.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/rank3_linear.ipuexe
// RUN: ipu-run %t/rank3_linear.ipuexe --check | FileCheck %s --check-prefix=RANK3_LINEAR
// RUN: ipu-opt %t/dense_f32acc.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/dense_f32acc.ipuexe
// RUN: ipu-run %t/dense_f32acc.ipuexe --check | FileCheck %s --check-prefix=DENSE_F32ACC
// RUN: ipu-opt %t/attention_scores.mlir --ipu-compile="target=ipu21-16 images=together" | ipu-translate --ipu-to-package -o %t/attention_scores.ipuexe
// RUN: ipu-run %t/attention_scores.ipuexe --check | FileCheck %s --check-prefix=ATTENTION_SCORES
// RUN: ipu-opt %t/qk.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/qk.ipuexe
// RUN: ipu-run %t/qk.ipuexe --check | FileCheck %s --check-prefix=QK

// The 4 batches run side by side, each on 4 tiles of its own.
// BMM-IR: ipu_tile.buffer @mm0.out : tensor<4x8x32xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, batch_grid = 4, batch_stride = 4>>
// BMM-IR: compute_set @mm0.partials kernel "gemm_t" operands [@arg0, @arg1, @mm0.out] tiles of @mm0.out {acc_type = f32}
// BMM: numericalTest=PASS elementsCompared=1024
// TRANSPOSED_B: numericalTest=PASS elementsCompared=256
// RANK3_LINEAR: numericalTest=PASS elementsCompared=1024
// DENSE_F32ACC: numericalTest=PASS elementsCompared=1024
// ATTENTION_SCORES: numericalTest=PASS elementsCompared=512
// Q x K^T with K an activation takes the swapped orientation, which
// reads K as it is: q, k and the scores are all checked.
// QK: numericalTest=PASS elementsCompared=2048

//--- bmm.mlir
// torch-mlir torch.bmm, f16 with f32 accumulation: linalg.batch_matmul then a truncf generic.
func.func @main(%arg0: tensor<4x8x16xf16>, %arg1: tensor<4x16x32xf16>) -> tensor<4x8x32xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %2 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<4x8x16xf16>, tensor<4x16x32xf16>) outs(%1 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %3 = tensor.empty() : tensor<4x8x32xf16>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2 : tensor<4x8x32xf32>) outs(%3 : tensor<4x8x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %5 = arith.truncf %in : f32 to f16
    linalg.yield %5 : f16
  } -> tensor<4x8x32xf16>
  return %4 : tensor<4x8x32xf16>
}

//--- transposed_b.mlir
// StableHLO dot_general contracting [1]x[1]: a transposed-B linalg.generic.
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<32x16xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<32x16xf32>) outs(%1 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

//--- rank3_linear.mlir
// torch-mlir nn.Linear on [B, S, D]: weight transposed, broadcast along B, linalg.batch_matmul, truncf.
func.func @main(%arg0: tensor<4x8x16xf16>, %arg1: tensor<32x16xf16>) -> tensor<4x8x32xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x32xf16>
  %transposed = linalg.transpose ins(%arg1 : tensor<32x16xf16>) outs(%0 : tensor<16x32xf16>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<4x16x32xf16>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<16x32xf16>) outs(%1 : tensor<4x16x32xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<4x16x32xf16>
  %3 = tensor.empty() : tensor<4x8x32xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<4x8x16xf16>, tensor<4x16x32xf16>) outs(%4 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %6 = tensor.empty() : tensor<4x8x32xf16>
  %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<4x8x32xf32>) outs(%6 : tensor<4x8x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %8 = arith.truncf %in : f32 to f16
    linalg.yield %8 : f16
  } -> tensor<4x8x32xf16>
  return %7 : tensor<4x8x32xf16>
}

//--- dense_f32acc.mlir
// JAX Dense on [B, S, D] with preferred_element_type=f32, then .astype(f16): extf in the generic body, a truncf generic after.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%arg0: tensor<4x8x16xf16>, %arg1: tensor<16x32xf16>) -> tensor<4x8x32xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8x16xf16>, tensor<16x32xf16>) outs(%1 : tensor<4x8x32xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %5 = arith.extf %in : f16 to f32
    %6 = arith.extf %in_0 : f16 to f32
    %7 = arith.mulf %5, %6 : f32
    %8 = arith.addf %out, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<4x8x32xf32>
  %3 = tensor.empty() : tensor<4x8x32xf16>
  %4 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2 : tensor<4x8x32xf32>) outs(%3 : tensor<4x8x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %5 = arith.truncf %in : f32 to f16
    linalg.yield %5 : f16
  } -> tensor<4x8x32xf16>
  return %4 : tensor<4x8x32xf16>
}

//--- attention_scores.mlir
// torch-mlir q @ k.transpose(-2, -1) on [B, H, S, D]: transpose, collapse, batch_matmul, truncf, expand.
func.func @main(%arg0: tensor<2x4x8x16xf16>, %arg1: tensor<2x4x8x16xf16>) -> tensor<2x4x8x8xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4x16x8xf16>
  %transposed = linalg.transpose ins(%arg1 : tensor<2x4x8x16xf16>) outs(%0 : tensor<2x4x16x8xf16>) permutation = [0, 1, 3, 2]
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x4x8x16xf16> into tensor<8x8x16xf16>
  %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x8xf16> into tensor<8x16x8xf16>
  %1 = tensor.empty() : tensor<8x8x8xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<8x8x16xf16>, tensor<8x16x8xf16>) outs(%2 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %4 = tensor.empty() : tensor<8x8x8xf16>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<8x8x8xf32>) outs(%4 : tensor<8x8x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %6 = arith.truncf %in : f32 to f16
    linalg.yield %6 : f16
  } -> tensor<8x8x8xf16>
  %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf16> into tensor<2x4x8x8xf16>
  return %expanded : tensor<2x4x8x8xf16>
}

//--- qk.mlir
// Q x K^T with both operands activations: q and k are projections of x,
// then torch-mlir's q @ k.transpose(-2, -1) on [H, S, D].
func.func @scores(%x: tensor<4x16x32xf32>, %wq: tensor<4x32x8xf32>, %wk: tensor<4x32x8xf32>) -> tensor<4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %q = linalg.batch_matmul ins(%x, %wq : tensor<4x16x32xf32>, tensor<4x32x8xf32>) outs(%f : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %k = linalg.batch_matmul ins(%x, %wk : tensor<4x16x32xf32>, tensor<4x32x8xf32>) outs(%f : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %et = tensor.empty() : tensor<4x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<4x16x8xf32>) outs(%et : tensor<4x8x16xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%fs : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %s : tensor<4x16x16xf32>
}
