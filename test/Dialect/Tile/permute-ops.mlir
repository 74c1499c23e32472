// RUN: ipu-opt %s | ipu-opt | FileCheck %s
// RUN: ipu-opt %s -mlir-print-op-generic | ipu-opt | FileCheck %s

// CHECK-LABEL: func.func @split_heads
// CHECK: ipu_tile.permute %arg0 view [1, 8, 2, 8] permutation [0, 2, 1, 3] : tensor<1x8x16xf32> -> tensor<1x2x8x8xf32>
func.func @split_heads(%x: tensor<1x8x16xf32>) -> tensor<1x2x8x8xf32> {
  %h = ipu_tile.permute %x view [1, 8, 2, 8] permutation [0, 2, 1, 3] : tensor<1x8x16xf32> -> tensor<1x2x8x8xf32>
  return %h : tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @merge_heads
// CHECK: ipu_tile.permute %arg0 view [1, 2, 8, 8] permutation [0, 2, 1, 3] : tensor<1x2x8x8xf16> -> tensor<1x8x16xf16>
func.func @merge_heads(%h: tensor<1x2x8x8xf16>) -> tensor<1x8x16xf16> {
  %x = ipu_tile.permute %h view [1, 2, 8, 8] permutation [0, 2, 1, 3] : tensor<1x2x8x8xf16> -> tensor<1x8x16xf16>
  return %x : tensor<1x8x16xf16>
}

// CHECK-LABEL: func.func @split_qkv
// CHECK: ipu_tile.permute %arg0 view [1, 8, 3, 2, 8] permutation [2, 0, 3, 1, 4] offsets [1, 0, 0, 0, 0] sizes [1, 1, 2, 8, 8] : tensor<1x8x48xf32> -> tensor<1x2x8x8xf32>
func.func @split_qkv(%qkv: tensor<1x8x48xf32>) -> tensor<1x2x8x8xf32> {
  %k = ipu_tile.permute %qkv view [1, 8, 3, 2, 8] permutation [2, 0, 3, 1, 4] offsets [1, 0, 0, 0, 0] sizes [1, 1, 2, 8, 8] : tensor<1x8x48xf32> -> tensor<1x2x8x8xf32>
  return %k : tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @row_sum
// CHECK: ipu_tile.elementwise reduce add init 0.000000e+00 %arg0 : tensor<4x8xf32> -> tensor<4x1xf32>
func.func @row_sum(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = ipu_tile.elementwise reduce add init 0.0 %x : tensor<4x8xf32> -> tensor<4x1xf32> {
  ^bb0(%v: f32):
    ipu_tile.yield %v : f32
  }
  return %s : tensor<4x1xf32>
}
