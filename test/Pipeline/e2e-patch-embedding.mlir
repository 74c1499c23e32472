// A vision transformer's patch embedding as torch-mlir writes it,
// Conv2d(3, 32, kernel 14, stride 14) with bias, then flatten(2) and
// transpose(1, 2), on 16 tiles: the im2col is one exchange phase (runs of
// 14 pixels), the filters are one matrix, and the bias is the matmul's
// epilogue. The result is checked against the convolution computed
// independently from its definition (npy.py patch-embedding), exactly on
// inputs whose products and sums are exact in f32, as well as by --check.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | FileCheck %s
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/pe.ipuexe
// The arguments in the shapes the function declares, as PyTorch holds
// them: [1, 3, 56, 56], [32, 3, 14, 14] and [32]; the result [1, 16, 32].
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 1,3,56,56 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg1.npy '<f4' 32,3,14,14 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg2.npy '<f4' 32 flat
// RUN: ipu-run %t/pe.ipuexe --inputs %t/in --outputs %t/out --check --quiet | FileCheck %s --check-prefix=SIM
// RUN: %python %S/../Run/Inputs/npy.py patch-embedding %t/in/arg0.npy %t/in/arg1.npy %t/in/arg2.npy %t/out/result0.npy 1,3,56,56 32,14,14 | FileCheck %s --check-prefix=CONV

// CHECK: ipu_exchange.copy @arg0 to @permute0.out view [1, 3, 4, 14, 4, 14] permutation [0, 2, 4, 1, 3, 5]
// CHECK: ipu_tile.compute_set @mm0.partials

// SIM: checkpoint={{[0-9]+}} operation=permute {{.*}} exact {{.*}} mismatches=0
// SIM: numericalTest=PASS
// CONV: patch-embedding: 512 elements match, largest error 0

func.func @patch_embedding(%x: tensor<1x3x56x56xf32>, %w: tensor<32x3x14x14xf32>, %b: tensor<32xf32>) -> tensor<1x16x32xf32> {
  %e0 = tensor.empty() : tensor<1x32x4x4xf32>
  %bias = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e0 : tensor<1x32x4x4xf32>) dimensions = [0, 2, 3]
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<14> : vector<2xi64>} ins(%x, %w : tensor<1x3x56x56xf32>, tensor<32x3x14x14xf32>) outs(%bias : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<1x32x4x4xf32> into tensor<1x32x16xf32>
  %e1 = tensor.empty() : tensor<1x16x32xf32>
  %t = linalg.transpose ins(%flat : tensor<1x32x16xf32>) outs(%e1 : tensor<1x16x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x16x32xf32>
}
