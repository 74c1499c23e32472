// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s

// A layer norm as torch-mlir's f32 export computes it: mean and variance in
// f64 (its decomposition upcasts them), the result narrowed back to f32.
// The tiles have no f64: the f64 values are computed in f32, the upcast
// and the narrowing disappear, and the rest imports as an f32 layer norm.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT:   f64
// CHECK:       ipu_tile.elementwise reduce add init 0.000000e+00 %arg0 : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK:       arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:       ipu_tile.elementwise reduce add
// CHECK:       math.rsqrt %{{.*}} : f32
// CHECK-NOT:   f64
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
// expected-remark @+1 {{computes the f64 intermediates of 21 ops in f32: the tiles have no f64}}
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

// -----

// A function that takes or returns f64 is not the export's upcast: it is
// left as it is, and refused where the tiles need another type.
func.func @f64_argument(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %e = tensor.empty() : tensor<4x8xf64>
  // expected-error @+1 {{'ipu_tile.elementwise' op body argument 0 is 'f64'; inputs must be f32, f16, f8E4M3FN or f8E5M2}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf64>) outs(%e : tensor<4x8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %in : f64
    linalg.yield %0 : f64
  } -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// An f64 constant held as a resource blob cannot be rewritten: the function
// keeps its f64, which is refused where the tiles need another type.
// expected-remark @below {{takes 1 frozen weight as an argument}}
func.func @f64_blob(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %scale = arith.constant dense_resource<scale> : tensor<1x4xf64>
  %e = tensor.empty() : tensor<1x4xf32>
  // expected-error @+1 {{'ipu_tile.elementwise' op body argument 1 is 'f64'; inputs must be f32, f16, f8E4M3FN or f8E5M2}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<1x4xf32>, tensor<1x4xf64>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%in: f32, %s: f64, %out: f32):
    %0 = arith.extf %in : f32 to f64
    %1 = arith.mulf %0, %s : f64
    %2 = arith.truncf %1 : f64 to f32
    linalg.yield %2 : f32
  } -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      scale: "0x08000000000000000000F03F000000000000F03F000000000000F03F000000000000F03F"
    }
  }
#-}
