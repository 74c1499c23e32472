// A batch of two as exporters write it: one frozen position embedding
// added to every image ((d0, d1, d2) -> (0, d1, d2)), the sum flattened
// and split again into rows of another width (the pooling head's [B * D]
// into [B, D]). The import repeats the weight per image; the reshape moves
// the result's rows. Checked op by op and against upstream MLIR's
// execution of this module.
// RUN: rm -rf %t && mkdir -p %t/in %t/ref
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t/lowered.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: ipu-translate --ipu-to-package %t/lowered.mlir -o %t/batch.ipuexe
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 2,4,8 pattern
// RUN: ipu-mlir-run %s --inputs %t/in --outputs %t/ref > /dev/null
// RUN: ipu-run %t/batch.ipuexe --inputs %t/in --expect %t/ref --check --quiet | FileCheck %s --check-prefix=SIM

// REMARK: remark: repeats 1 frozen weight along the dims an elementwise op broadcasts it over
// SIM: expect result=0 {{.*}} shape=(4, 16) {{.*}} mismatches=0
// SIM: expected={{.*}} numericalTest=PASS
// SIM: referencePrecision=f32 {{.*}} numericalTest=PASS

func.func @batch(%x: tensor<2x4x8xf32>) -> tensor<4x16xf32> {
  %pe = arith.constant dense<[[[0.5, -0.25, 0.125, 0.0, 0.375, -0.5, 0.25, -0.125], [0.25, 0.0, -0.375, 0.5, -0.125, 0.125, 0.0, 0.25], [-0.5, 0.375, 0.25, -0.25, 0.0, 0.125, -0.125, 0.5], [0.125, 0.25, 0.0, -0.5, 0.5, -0.375, 0.375, 0.0]]]> : tensor<1x4x8xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %pe : tensor<2x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  %t = linalg.tanh ins(%y : tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %flat = tensor.collapse_shape %t [[0, 1, 2]] : tensor<2x4x8xf32> into tensor<64xf32>
  %rows = tensor.expand_shape %flat [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %z = linalg.exp ins(%rows : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}
