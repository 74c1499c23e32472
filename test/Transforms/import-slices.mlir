// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s

// timm's attention: qkv [1, T, 3 * H * Dh] reshaped to [1, T, 3, H, Dh],
// permuted (2, 0, 3, 1, 4) and unbound into q, k and v: each slice is a
// window of the one permute, which reads the projection directly.
// CHECK-LABEL: func.func @timm_qkv
// CHECK-DAG: ipu_tile.permute %arg0 view [1, 8, 3, 2, 8] permutation [2, 0, 3, 1, 4] offsets [0, 0, 0, 0, 0] sizes [1, 1, 2, 8, 8] : tensor<1x8x48xf32> -> tensor<1x2x8x8xf32>
// CHECK-DAG: ipu_tile.permute %arg0 view [1, 8, 3, 2, 8] permutation [2, 0, 3, 1, 4] offsets [1, 0, 0, 0, 0] sizes [1, 1, 2, 8, 8] : tensor<1x8x48xf32> -> tensor<1x2x8x8xf32>
// CHECK-DAG: ipu_tile.permute %arg0 view [1, 8, 3, 2, 8] permutation [2, 0, 3, 1, 4] offsets [2, 0, 0, 0, 0] sizes [1, 1, 2, 8, 8] : tensor<1x8x48xf32> -> tensor<1x2x8x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.extract_slice
func.func @timm_qkv(%qkv: tensor<1x8x48xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %v = tensor.expand_shape %qkv [[0], [1], [2, 3, 4]] output_shape [1, 8, 3, 2, 8] : tensor<1x8x48xf32> into tensor<1x8x3x2x8xf32>
  %e = tensor.empty() : tensor<3x1x2x8x8xf32>
  %p = linalg.transpose ins(%v : tensor<1x8x3x2x8xf32>) outs(%e : tensor<3x1x2x8x8xf32>) permutation = [2, 0, 3, 1, 4]
  %q = tensor.extract_slice %p[0, 0, 0, 0, 0] [1, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<3x1x2x8x8xf32> to tensor<1x2x8x8xf32>
  %k = tensor.extract_slice %p[1, 0, 0, 0, 0] [1, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<3x1x2x8x8xf32> to tensor<1x2x8x8xf32>
  %w = tensor.extract_slice %p[2, 0, 0, 0, 0] [1, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<3x1x2x8x8xf32> to tensor<1x2x8x8xf32>
  return %q, %k, %w : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// A slice of an activation as it is (the pooling head's [:, 0]): a window
// of the identity permute.
// CHECK-LABEL: func.func @first_token
// CHECK: ipu_tile.permute %arg0 view [1, 16, 64] permutation [0, 1, 2] offsets [0, 0, 0] sizes [1, 1, 64] : tensor<1x16x64xf32> -> tensor<1x64xf32>
func.func @first_token(%x: tensor<1x16x64xf32>) -> tensor<1x64xf32> {
  %t = tensor.extract_slice %x[0, 0, 0] [1, 1, 64] [1, 1, 1] : tensor<1x16x64xf32> to tensor<1x64xf32>
  return %t : tensor<1x64xf32>
}

// -----

// A strided slice is not a window: the import names it.
func.func @strided(%x: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{unsupported op 'tensor.extract_slice'}}
  %t = tensor.extract_slice %x[0, 0] [4, 16] [2, 1] : tensor<8x16xf32> to tensor<4x16xf32>
  return %t : tensor<4x16xf32>
}

// -----

// nn.MultiheadAttention's bias of zeros in f16, widened to f32 and added
// along the rows: a value that is the same everywhere fuses into its
// reader however it is read, as a constant of the body.
// CHECK-LABEL: func.func @zero_bias
// CHECK: ipu_tile.elementwise %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK:   arith.constant 0.000000e+00
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @zero_bias(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %b = arith.constant dense<0.0> : tensor<8xf16>
  %e1 = tensor.empty() : tensor<8xf32>
  %w = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%b : tensor<8xf16>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %0 = arith.addf %a, %c : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
