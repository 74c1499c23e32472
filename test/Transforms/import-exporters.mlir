// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s
//
// Contractions as torch-mlir (torch-backend-to-linalg-on-tensors) and
// StableHLO (stablehlo-legalize-to-linalg) emit them, each in the form its
// conversion code and lit tests give (see each case's source line), import
// to one ipu_gemm.matmul with nothing else left.

// From llvm/torch-mlir @0029fc2e (HEAD, 2026-08), path:
// CHECK-LABEL: func.func @torch_linear_rank2_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
// CHECK-NEXT: return
func.func @torch_linear_rank2_f32(%arg0: tensor<8x16xf32>, %arg1: tensor<32x16xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x32xf32>
  %transposed = linalg.transpose ins(%arg1 : tensor<32x16xf32>) outs(%0 : tensor<16x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<8x32xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = linalg.matmul ins(%arg0, %transposed : tensor<8x16xf32>, tensor<16x32xf32>) outs(%2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}

// -----

// From llvm/torch-mlir before commit df6098e43 (2024-09-07, PR #3660 "[TorchToLinalg] Use `linalg.transpose`
// CHECK-LABEL: func.func @torch_linear_rank2_legacy_generic_transpose_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
// CHECK-NEXT: return
func.func @torch_linear_rank2_legacy_generic_transpose_f32(%arg0: tensor<8x16xf32>, %arg1: tensor<32x16xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x32xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<32x16xf32>) outs(%0 : tensor<16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16x32xf32>
  %2 = tensor.empty() : tensor<8x32xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %4 = linalg.matmul ins(%arg0, %1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%3 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}

// -----

// From llvm/torch-mlir @0029fc2e, same path as torch-linear-rank3-f32.mlir with f16 dtype.
// CHECK-LABEL: func.func @torch_linear_rank3_f16
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<4x8x16xf16>, tensor<32x16xf16> -> tensor<4x8x32xf16>
// CHECK-NEXT: return
func.func @torch_linear_rank3_f16(%arg0: tensor<4x8x16xf16>, %arg1: tensor<32x16xf16>) -> tensor<4x8x32xf16> {
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

// -----

// From alternative torch-mlir input when aten.linear is decomposed on the PyTorch side before import
// CHECK-LABEL: func.func @torch_linear_rank3_coreaten_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<4x8x16xf32>, tensor<32x16xf32> -> tensor<4x8x32xf32>
// CHECK-NEXT: return
func.func @torch_linear_rank3_coreaten_f32(%arg0: tensor<4x8x16xf32>, %arg1: tensor<32x16xf32>) -> tensor<4x8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  %0 = tensor.empty() : tensor<16x32xf32>
  %transposed = linalg.transpose ins(%arg1 : tensor<32x16xf32>) outs(%0 : tensor<16x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<32x32xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %3 = linalg.matmul ins(%collapsed, %transposed : tensor<32x16xf32>, tensor<16x32xf32>) outs(%2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %expanded = tensor.expand_shape %3 [[0, 1], [2]] output_shape [4, 8, 32] : tensor<32x32xf32> into tensor<4x8x32xf32>
  return %expanded : tensor<4x8x32xf32>
}

// -----

// From llvm/torch-mlir @0029fc2e, ConvertAtenBmmOp (lib/Conversion/TorchToLinalg/Linear.cpp) with f16:
// CHECK-LABEL: func.func @torch_bmm_f16
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32} : tensor<4x8x16xf16>, tensor<4x16x32xf16> -> tensor<4x8x32xf16>
// CHECK-NEXT: return
func.func @torch_bmm_f16(%arg0: tensor<4x8x16xf16>, %arg1: tensor<4x16x32xf16>) -> tensor<4x8x32xf16> {
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

// -----

// From llvm/torch-mlir @0029fc2e, as torch-attn-scores-f32.mlir but f16 (ConvertAtenMatmulOp with
// CHECK-LABEL: func.func @torch_attn_scores_f16
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<2x4x8x16xf16>, tensor<2x4x8x16xf16> -> tensor<2x4x8x8xf16>
// CHECK-NEXT: return
func.func @torch_attn_scores_f16(%arg0: tensor<2x4x8x16xf16>, %arg1: tensor<2x4x8x16xf16>) -> tensor<2x4x8x8xf16> {
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

// -----

// From openxla/stablehlo @3c9301c1, DotGeneralOpConversion (StablehloToLinalgDotProduct.cpp) for a
// CHECK-LABEL: func.func @jax_dense_rank3_f16_f32acc
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32} : tensor<4x8x16xf16>, tensor<16x32xf16> -> tensor<4x8x32xf16>
// CHECK-NEXT: return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @jax_dense_rank3_f16_f32acc(%arg0: tensor<4x8x16xf16>, %arg1: tensor<16x32xf16>) -> tensor<4x8x32xf16> {
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

// -----

// From openxla/stablehlo @3c9301c1, DotGeneralOpConversion (StablehloToLinalgDotProduct.cpp): result rank 4, so
// CHECK-LABEL: func.func @jax_einsum_bhqd_bhkd_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT: return
#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @jax_einsum_bhqd_bhkd_f32(%arg0: tensor<2x4x8x16xf32>, %arg1: tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4x8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%1 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<2x4x8x8xf32>
  return %2 : tensor<2x4x8x8xf32>
}

// -----

// From openxla/stablehlo @3c9301c1, DotGeneralOpConversion (StablehloToLinalgDotProduct.cpp). A rank-2
// CHECK-LABEL: func.func @jax_dot_general_rank2_transpose_b_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
// CHECK-NEXT: return
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @jax_dot_general_rank2_transpose_b_f32(%arg0: tensor<8x16xf32>, %arg1: tensor<32x16xf32>) -> tensor<8x32xf32> {
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

// -----

// From openxla/stablehlo @3c9301c1, DotGeneralBatchMatMulOpConversion (StablehloToLinalgDotProduct.cpp,
// CHECK-LABEL: func.func @jax_batch_matmul_f32
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32} : tensor<4x8x16xf32>, tensor<4x16x32xf32> -> tensor<4x8x32xf32>
// CHECK-NEXT: return
func.func @jax_batch_matmul_f32(%arg0: tensor<4x8x16xf32>, %arg1: tensor<4x16x32xf32>) -> tensor<4x8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %2 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<4x8x16xf32>, tensor<4x16x32xf32>) outs(%1 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %2 : tensor<4x8x32xf32>
}

// -----

// What does not fold is refused, naming the op.
func.func @transposed_product(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x8xf32>) -> tensor<32x8xf32>
  // expected-error @+1 {{contraction result must end in N; it is a transposed product, not supported}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<32x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x8xf32>
  return %c : tensor<32x8xf32>
}

// -----

func.func @two_reductions(%a: tensor<8x4x4xf32>, %b: tensor<4x4x16xf32>) -> tensor<8x16xf32> {
  %empty = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{contraction must have one reduction (K), one parallel dim of B only (N) and parallel dims of A (M); this one does not}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k0, k1) -> (m, k0, k1)>, affine_map<(m, n, k0, k1) -> (k0, k1, n)>, affine_map<(m, n, k0, k1) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : tensor<8x4x4xf32>, tensor<4x4x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

// -----

// A transpose of batch dims is a real rearrangement: an ipu_tile.permute
// (one exchange phase), which the batched matmul reads.
// CHECK-LABEL: func.func @batch_transpose
// CHECK: %[[P:.*]] = ipu_tile.permute %arg1 view [4, 2, 16, 8] permutation [1, 0, 2, 3] : tensor<4x2x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK: ipu_gemm.matmul %arg0, %[[P]] {acc_type = f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
func.func @batch_transpose(%a: tensor<2x4x8x16xf32>, %b: tensor<4x2x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %e = tensor.empty() : tensor<2x4x16x8xf32>
  %t = linalg.transpose ins(%b : tensor<4x2x16x8xf32>) outs(%e : tensor<2x4x16x8xf32>) permutation = [1, 0, 2, 3]
  %ca = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %cb = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %init = tensor.empty() : tensor<8x8x8xf32>
  %c = linalg.batch_matmul ins(%ca, %cb : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%init : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %r = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}

// -----

// A dynamic batch is refused at the function, before any op.
// expected-error @+1 {{function 'dynamic_batch' takes 'tensor<?x8x16xf32>': the IPU compiler compiles static shapes only}}
func.func @dynamic_batch(%a: tensor<?x8x16xf32>, %b: tensor<?x16x8xf32>, %n: index) -> tensor<?x8x8xf32> {
  %init = tensor.empty(%n) : tensor<?x8x8xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<?x8x16xf32>, tensor<?x16x8xf32>) outs(%init : tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
  return %c : tensor<?x8x8xf32>
}
