// RUN: ipu-opt %s --ipu-fuse-sibling-matmuls --split-input-file 2>/dev/null | FileCheck %s

// Each quantised (here narrowed) after a reshape that splits its rows into
// images: the narrowing runs on the whole before the reshape, and each head
// split reads the whole, as attention's f8 query, key and value do.
// CHECK-LABEL: func.func @qkv_quantised
// CHECK:         %[[MM:.*]] = ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<6x2xf32> -> tensor<4x6xf32>
// CHECK:         %[[NARROW:.*]] = ipu_tile.elementwise %[[MM]] : tensor<4x6xf32> -> tensor<4x6xf16>
// CHECK:         ipu_tile.permute %[[NARROW]] view [2, 2, 6, 1] permutation [0, 2, 1, 3] offsets [0, 0, 0, 0] sizes [2, 2, 2, 1] : tensor<4x6xf16> -> tensor<2x2x2x1xf16>
// CHECK:         ipu_tile.permute %[[NARROW]] view [2, 2, 6, 1] permutation [0, 2, 1, 3] offsets [0, 2, 0, 0] sizes [2, 2, 2, 1] : tensor<4x6xf16> -> tensor<2x2x2x1xf16>
// CHECK:         ipu_tile.permute %[[NARROW]] view [2, 2, 6, 1] permutation [0, 2, 1, 3] offsets [0, 4, 0, 0] sizes [2, 2, 2, 1] : tensor<4x6xf16> -> tensor<2x2x2x1xf16>
// CHECK-NOT:     ipu_tile.elementwise
func.func @qkv_quantised(%x: tensor<4x2xf32>,
               %wq: tensor<2x2xf32> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>},
               %wk: tensor<2x2xf32> {ipu_tile.constant = dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>},
               %wv: tensor<2x2xf32> {ipu_tile.constant = dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>})
    -> (tensor<2x2x2x1xf16>, tensor<2x2x2x1xf16>, tensor<2x2x2x1xf16>) {
  %q = ipu_gemm.matmul %x, %wq {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %q3 = ipu_tile.permute %q view [4, 2] permutation [0, 1] : tensor<4x2xf32> -> tensor<2x2x2xf32>
  %q16 = ipu_tile.elementwise %q3 : tensor<2x2x2xf32> -> tensor<2x2x2xf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to f16
    ipu_tile.yield %t : f16
  }
  %qh = ipu_tile.permute %q16 view [2, 2, 2, 1] permutation [0, 2, 1, 3] : tensor<2x2x2xf16> -> tensor<2x2x2x1xf16>
  %k = ipu_gemm.matmul %x, %wk {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %k3 = ipu_tile.permute %k view [4, 2] permutation [0, 1] : tensor<4x2xf32> -> tensor<2x2x2xf32>
  %k16 = ipu_tile.elementwise %k3 : tensor<2x2x2xf32> -> tensor<2x2x2xf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to f16
    ipu_tile.yield %t : f16
  }
  %kh = ipu_tile.permute %k16 view [2, 2, 2, 1] permutation [0, 2, 1, 3] : tensor<2x2x2xf16> -> tensor<2x2x2x1xf16>
  %v = ipu_gemm.matmul %x, %wv {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %v3 = ipu_tile.permute %v view [4, 2] permutation [0, 1] : tensor<4x2xf32> -> tensor<2x2x2xf32>
  %v16 = ipu_tile.elementwise %v3 : tensor<2x2x2xf32> -> tensor<2x2x2xf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to f16
    ipu_tile.yield %t : f16
  }
  %vh = ipu_tile.permute %v16 view [2, 2, 2, 1] permutation [0, 2, 1, 3] : tensor<2x2x2xf16> -> tensor<2x2x2x1xf16>
  return %qh, %kh, %vh : tensor<2x2x2x1xf16>, tensor<2x2x2x1xf16>, tensor<2x2x2x1xf16>
}

// -----

// A reshape of a window: one permute of the whole, its window taken of the
// view it reshapes (of the view's rank, not the result's).
// CHECK-LABEL: func.func @qkv_reshaped
// CHECK:         %[[MM:.*]] = ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
// CHECK:         ipu_tile.permute %[[MM]] view [4, 4] permutation [0, 1] offsets [0, 0] sizes [4, 2] : tensor<4x4xf32> -> tensor<2x2x2xf32>
// CHECK:         ipu_tile.permute %[[MM]] view [4, 4] permutation [0, 1] offsets [0, 2] sizes [4, 2] : tensor<4x4xf32> -> tensor<2x2x2xf32>
func.func @qkv_reshaped(%x: tensor<4x2xf32>,
               %wq: tensor<2x2xf32> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>},
               %wk: tensor<2x2xf32> {ipu_tile.constant = dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>})
    -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %q = ipu_gemm.matmul %x, %wq {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %q3 = ipu_tile.permute %q view [4, 2] permutation [0, 1] : tensor<4x2xf32> -> tensor<2x2x2xf32>
  %k = ipu_gemm.matmul %x, %wk {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %k3 = ipu_tile.permute %k view [4, 2] permutation [0, 1] : tensor<4x2xf32> -> tensor<2x2x2xf32>
  return %q3, %k3 : tensor<2x2x2xf32>, tensor<2x2x2xf32>
}
