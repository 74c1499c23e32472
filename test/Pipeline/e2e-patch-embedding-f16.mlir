// The f16 patch embedding as torch-mlir 20261001 exports it (operands in
// f16 accumulated in f32 onto an f32 bias, narrowed to f16 before the
// flatten and transpose), compiled for 16 tiles, run and checked.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s
// CHECK: numericalTest=PASS
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
