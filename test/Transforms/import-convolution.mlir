// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s

// A patch embedding as torch-mlir writes Conv2d(3, 32, 14, stride=14) with
// its bias, then flatten(2).transpose(1, 2): the im2col is one permute of
// the image (runs of 14 pixels), the filters are one [32, 588] matrix, and
// the bias is the matmul's epilogue.
// CHECK-LABEL: func.func @patch_embedding
// CHECK-NOT:   linalg.conv
// CHECK:       %[[P:.*]] = ipu_tile.permute %arg0 view [1, 3, 4, 14, 4, 14] permutation [0, 2, 4, 1, 3, 5] : tensor<1x3x56x56xf32> -> tensor<1x16x588xf32>
// CHECK:       %[[W:.*]] = ipu_tile.permute %arg1 view [32, 588] permutation [0, 1] : tensor<32x3x14x14xf32> -> tensor<32x588xf32>
// CHECK:       %[[Y:.*]] = ipu_gemm.matmul %[[P]], %[[W]] {acc_type = f32, transpose_rhs} : tensor<1x16x588xf32>, tensor<32x588xf32> -> tensor<1x16x32xf32>
// CHECK:       %[[B:.*]] = ipu_tile.elementwise
// CHECK-SAME:    %[[Y]], %arg2
// CHECK:       return %[[B]]
func.func @patch_embedding(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>, %b: tensor<32xf32>) -> tensor<1x16x32xf32> {
  %e0 = tensor.empty() : tensor<1x32x4x4xf32>
  %bias = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e0 : tensor<1x32x4x4xf32>) dimensions = [0, 2, 3]
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%bias : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<1x32x4x4xf32> into tensor<1x32x16xf32>
  %e1 = tensor.empty() : tensor<1x16x32xf32>
  %t = linalg.transpose ins(%flat : tensor<1x32x16xf32>) outs(%e1 : tensor<1x16x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x16x32xf32>
}

// -----

// No bias, a zero padding (torch-mlir pads even by zero), f16 operands
// accumulated in f32, and the transpose as an older torch-mlir writes it.
// CHECK-LABEL: func.func @unbiased
// CHECK:       %[[P:.*]] = ipu_tile.permute %arg0 view [2, 3, 2, 14, 2, 14] permutation [0, 2, 4, 1, 3, 5] : tensor<2x3x28x28xf16> -> tensor<2x4x588xf16>
// CHECK:       %[[Y:.*]] = ipu_gemm.matmul %[[P]], %{{.*}} {acc_type = f32, transpose_rhs} : tensor<2x4x588xf16>, tensor<16x588xf16> -> tensor<2x4x16xf32>
// CHECK:       return %[[Y]]
func.func @unbiased(%x: tensor<2x3x28x28xf16>, %w: tensor<16x3x14x14xf16>) -> tensor<2x4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %zero = arith.constant 0.0 : f16
  %padded = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f16
  } : tensor<2x3x28x28xf16> to tensor<2x3x28x28xf16>
  %e0 = tensor.empty() : tensor<2x16x2x2xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%padded, %w : tensor<2x3x28x28xf16>, tensor<16x3x14x14xf16>) outs(%z : tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<2x16x2x2xf32> into tensor<2x16x4xf32>
  %e1 = tensor.empty() : tensor<2x4x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%flat : tensor<2x16x4xf32>) outs(%e1 : tensor<2x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x16xf32>
  return %t : tensor<2x4x16xf32>
}

// -----

// An f16 patch embedding as torch-mlir 20261001 exports it: f16 operands
// accumulated in f32 onto an f32 bias, the result narrowed to f16 before it
// is flattened. The narrowing follows the matmul and its bias.
// CHECK-LABEL: func.func @narrowed
// CHECK:       %[[Y:.*]] = ipu_gemm.matmul %{{.*}}, %{{.*}} {acc_type = f32, transpose_rhs} : tensor<1x4x588xf16>, tensor<16x588xf16> -> tensor<1x4x16xf32>
// CHECK:       %[[B:.*]] = ipu_tile.elementwise %[[Y]], %arg2 : tensor<1x4x16xf32>, tensor<16xf32> -> tensor<1x4x16xf32>
// CHECK:       %[[N:.*]] = ipu_tile.elementwise %[[B]] : tensor<1x4x16xf32> -> tensor<1x4x16xf16>
// CHECK:         arith.truncf
// CHECK:       return %[[N]]
func.func @narrowed(%x: tensor<1x3x28x28xf16>, %w: tensor<16x3x14x14xf16>, %b: tensor<16xf32>) -> tensor<1x4x16xf16> {
  %e0 = tensor.empty() : tensor<1x16x2x2xf32>
  %bias = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e0 : tensor<1x16x2x2xf32>) dimensions = [0, 2, 3]
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x28x28xf16>, tensor<16x3x14x14xf16>) outs(%bias : tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %e1 = tensor.empty() : tensor<1x16x2x2xf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x16x2x2xf32>) outs(%e1 : tensor<1x16x2x2xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x16x2x2xf16>
  %flat = tensor.collapse_shape %n [[0], [1], [2, 3]] : tensor<1x16x2x2xf16> into tensor<1x16x4xf16>
  %e2 = tensor.empty() : tensor<1x4x16xf16>
  %t = linalg.transpose ins(%flat : tensor<1x16x4xf16>) outs(%e2 : tensor<1x4x16xf16>) permutation = [0, 2, 1]
  return %t : tensor<1x4x16xf16>
}

// -----

func.func @overlapping(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>) -> tensor<1x49x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x7x7xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  // expected-error @+1 {{its strides differ from its kernel 14x14}}
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<7> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%z : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<1x32x7x7xf32> into tensor<1x32x49xf32>
  %e1 = tensor.empty() : tensor<1x49x32xf32>
  %t = linalg.transpose ins(%flat : tensor<1x32x49xf32>) outs(%e1 : tensor<1x49x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x49x32xf32>
}

// -----

func.func @dilated(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>) -> tensor<1x32x3x3xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x3x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1x32x3x3xf32>) -> tensor<1x32x3x3xf32>
  // expected-error @+1 {{it is dilated}}
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%z : tensor<1x32x3x3xf32>) -> tensor<1x32x3x3xf32>
  return %conv : tensor<1x32x3x3xf32>
}

// -----

func.func @padded(%x: tensor<1x3x54x54xf32>, %w: tensor<32x3x14x14xf32>) -> tensor<1x32x4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x3x54x54xf32> to tensor<1x3x56x56xf32>
  %e0 = tensor.empty() : tensor<1x32x4x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  // expected-error @+1 {{its input is padded}}
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%padded, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%z : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %conv : tensor<1x32x4x4xf32>
}

// -----

// An NCHW result, which no flatten and transpose consume.
func.func @nchw(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>) -> tensor<1x32x4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x4x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  // expected-error @+1 {{its result is not flattened and transposed to [N, patches, channels] (an NCHW result is not supported yet)}}
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%z : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %conv : tensor<1x32x4x4xf32>
}

// -----

// A residual accumulated into the convolution is not a bias.
func.func @accumulating(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>, %r: tensor<1x32x4x4xf32>) -> tensor<1x16x32xf32> {
  // expected-error @+1 {{it accumulates into something other than zeros or a bias broadcast along N, H and W}}
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%r : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<1x32x4x4xf32> into tensor<1x32x16xf32>
  %e1 = tensor.empty() : tensor<1x16x32xf32>
  %t = linalg.transpose ins(%flat : tensor<1x32x16xf32>) outs(%e1 : tensor<1x16x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x16x32xf32>
}

// -----

// so400m's 384-pixel images make 27 patches of 14 and leave 6 pixels over,
// which Conv2d drops: the image's window of whole patches, then the im2col.
// CHECK-LABEL: func.func @cropped
// CHECK:       %[[C:.*]] = ipu_tile.permute %arg0 view [1, 3, 60, 60] permutation [0, 1, 2, 3] offsets [0, 0, 0, 0] sizes [1, 3, 56, 56] : tensor<1x3x60x60xf32> -> tensor<1x3x56x56xf32>
// CHECK:       ipu_tile.permute %[[C]] view [1, 3, 4, 14, 4, 14] permutation [0, 2, 4, 1, 3, 5] : tensor<1x3x56x56xf32> -> tensor<1x16x588xf32>
func.func @cropped(%x: tensor<1x3x60x60xf32>, %w: tensor<32x3x14x14xf32>) -> tensor<1x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x4x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x60x60xf32>, tensor<32x3x14x14xf32>) outs(%z : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<1x32x4x4xf32> into tensor<1x32x16xf32>
  %e1 = tensor.empty() : tensor<1x16x32xf32>
  %t = linalg.transpose ins(%flat : tensor<1x32x16xf32>) outs(%e1 : tensor<1x16x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x16x32xf32>
}
