// The pooling head at batch 2 in small: a [B, D] value reshaped in place
// to [B, 1, D] (its buffer stays the [B, D] one) meets a batched matmul's
// [B, 1, D] result, laid out a batch per tile group. The relayout reads
// the [B, D] buffer as the reshaped value (a permuted copy with its view),
// and the host reference reads the in-place reshape's value row-major.
// Checked op by op and against upstream MLIR's execution of this module.
// RUN: rm -rf %t && mkdir -p %t/in %t/ref
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t/lowered.mlir
// RUN: FileCheck %s --input-file=%t/lowered.mlir
// RUN: ipu-translate --ipu-to-package %t/lowered.mlir -o %t/reshape.ipuexe
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 2,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg1.npy '<f4' 2,1,8 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg2.npy '<f4' 2,8,64 pattern
// RUN: ipu-mlir-run %s --inputs %t/in --outputs %t/ref > /dev/null
// RUN: ipu-run %t/reshape.ipuexe --inputs %t/in --expect %t/ref --check --quiet | FileCheck %s --check-prefix=SIM

// CHECK: ipu_exchange.phase @{{.*}}.gather
// CHECK-NEXT: ipu_exchange.copy {{.*}} view [2, 1, 64] permutation [0, 1, 2]
// SIM: expect result=0 {{.*}} shape=(2, 1, 64) {{.*}} mismatches=0
// SIM: expected={{.*}} numericalTest=PASS
// SIM: referencePrecision=f32 {{.*}} mismatches=0 numericalTest=PASS

func.func @reshape(%x: tensor<2x64xf32>, %a: tensor<2x1x8xf32>, %b: tensor<2x8x64xf32>) -> tensor<2x1x64xf32> {
  %e = tensor.empty() : tensor<2x64xf32>
  %t = linalg.tanh ins(%x : tensor<2x64xf32>) outs(%e : tensor<2x64xf32>) -> tensor<2x64xf32>
  %r = tensor.expand_shape %t [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf32> into tensor<2x1x64xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x1x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x1x64xf32>) -> tensor<2x1x64xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x1x8xf32>, tensor<2x8x64xf32>) outs(%f : tensor<2x1x64xf32>) -> tensor<2x1x64xf32>
  %s = linalg.add ins(%y, %r : tensor<2x1x64xf32>, tensor<2x1x64xf32>) outs(%e2 : tensor<2x1x64xf32>) -> tensor<2x1x64xf32>
  return %s : tensor<2x1x64xf32>
}
