// A layer norm with its mean and variance in f64, as torch-mlir's f32 export
// writes it, compiled for 16 tiles (the f64 computed in f32), run and checked.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s
// CHECK: numericalTest=PASS
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @layer_norm(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.000000e+00 : f64
  %n = arith.constant 6.400000e+01 : f64
  %eps = arith.constant 9.9999999999999995E-7 : f64
  %e64 = tensor.empty() : tensor<16x64xf64>
  %up = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e64 : tensor<16x64xf64>) {
  ^bb0(%in: f32, %out: f64):
    %0 = arith.extf %in : f32 to f64
    linalg.yield %0 : f64
  } -> tensor<16x64xf64>
  %e1 = tensor.empty() : tensor<16x1xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e1 : tensor<16x1xf64>) -> tensor<16x1xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%up : tensor<16x64xf64>) outs(%z : tensor<16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %out : f64
    linalg.yield %0 : f64
  } -> tensor<16x1xf64>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<16x1xf64>) outs(%e1 : tensor<16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.divf %in, %n : f64
    linalg.yield %0 : f64
  } -> tensor<16x1xf64>
  %centred = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%up, %mean : tensor<16x64xf64>, tensor<16x1xf64>) outs(%e64 : tensor<16x64xf64>) {
  ^bb0(%in: f64, %m: f64, %out: f64):
    %0 = arith.subf %in, %m : f64
    linalg.yield %0 : f64
  } -> tensor<16x64xf64>
  %squares = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%centred : tensor<16x64xf64>) outs(%z : tensor<16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.mulf %in, %in : f64
    %1 = arith.addf %0, %out : f64
    linalg.yield %1 : f64
  } -> tensor<16x1xf64>
  %e32 = tensor.empty() : tensor<16x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%centred, %squares : tensor<16x64xf64>, tensor<16x1xf64>) outs(%e32 : tensor<16x64xf32>) {
  ^bb0(%c: f64, %s: f64, %out: f32):
    %0 = arith.divf %s, %n : f64
    %1 = arith.addf %0, %eps : f64
    %2 = math.rsqrt %1 : f64
    %3 = arith.mulf %c, %2 : f64
    %4 = arith.truncf %3 : f64 to f32
    linalg.yield %4 : f32
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
