// A layer norm, a linear and a GELU as torch-mlir's f16 export writes them:
// the layer norm's mean computed twice (in f64 for the variance, in f32 for
// the normalisation), the linear's operands and its bias widened to f32, the
// sum rounded to f16 and reshaped to [1, T, C] for the GELU.
//
// Compiled, each is what our own block computes:
// - the two means are one (the same op once the f64 is computed in f32);
// - the bias is read as f16 by the matmul's epilogue, which widens it: no
//   kernel widens it on its own;
// - the GELU runs in the epilogue's kernel, across the reshape.
//
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | FileCheck %s
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=SELF
// RUN: rm -rf %t.in %t.ref && mkdir -p %t.in %t.ref
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg0.npy '<f2' 1,16,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg1.npy '<f2' 96,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg2.npy '<f2' 96 pattern
// RUN: ipu-mlir-run %s --inputs %t.in --outputs %t.ref > /dev/null
// RUN: ipu-run %t.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM

// One reduction each for the sum, the sum of squares (which widens and
// centres the f16 input where it reads it, as the normalisation does); the
// epilogue reads the matmul's f32 result and the f16 bias, and computes the
// GELU's tanh.
// CHECK:     ipu_tile.kernel @[[SUM:ew[0-9]+]].kernel broadcasts ["full"] reduce add
// CHECK:     ipu_tile.kernel @{{ew[0-9]+}}.kernel broadcasts ["column", "full"] reduce add
// CHECK-NOT: reduce add
// CHECK:     ipu_tile.kernel @[[EPILOGUE:ew[0-9]+]].kernel broadcasts ["full", "row"] {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f16):
// CHECK:       arith.extf %{{.*}} : f16 to f32
// CHECK:       arith.truncf
// CHECK:       math.tanh
// CHECK:     ipu_tile.compute_set @{{.*}} kernel "[[SUM]].kernel"
// CHECK-NOT: kernel "[[SUM]].kernel"
// CHECK:     ipu_tile.compute_set @mm0.{{.*}} kernel "gemm
// CHECK-NOT: ipu_tile.compute_set
// CHECK:     ipu_tile.compute_set @{{.*}} kernel "[[EPILOGUE]].kernel" operands [@mm0.out, @arg2,
// CHECK-NOT: ipu_tile.compute_set

// SELF: numericalTest=PASS
// UPSTREAM: expect result=0 {{.*}} shape=(1, 16, 96) {{.*}} mismatches=0
// UPSTREAM: numericalTest=PASS

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @ln_linear_gelu(%x: tensor<1x16x64xf16>, %w: tensor<96x64xf16>, %b: tensor<96xf16>) -> tensor<1x16x96xf16> {
  %zero64 = arith.constant 0.000000e+00 : f64
  %zero = arith.constant 0.000000e+00 : f32
  %n64 = arith.constant 6.400000e+01 : f64
  %n = arith.constant 6.400000e+01 : f32
  %eps = arith.constant 9.9999999999999995E-7 : f64
  %c3 = arith.constant 3 : i64
  %k0 = arith.constant 4.470830e-02 : f16
  %k1 = arith.constant 7.978520e-01 : f16
  %one = arith.constant 1.000000e+00 : f16
  %half = arith.constant 5.000000e-01 : f16
  // The layer norm (no affine part), in f32 with f64 statistics.
  %e32 = tensor.empty() : tensor<1x16x64xf32>
  %up = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x16x64xf16>) outs(%e32 : tensor<1x16x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x16x64xf32>
  %e64 = tensor.empty() : tensor<1x16x64xf64>
  %up64 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%up : tensor<1x16x64xf32>) outs(%e64 : tensor<1x16x64xf64>) {
  ^bb0(%in: f32, %out: f64):
    %0 = arith.extf %in : f32 to f64
    linalg.yield %0 : f64
  } -> tensor<1x16x64xf64>
  %r64 = tensor.empty() : tensor<1x16x1xf64>
  %z64 = linalg.fill ins(%zero64 : f64) outs(%r64 : tensor<1x16x1xf64>) -> tensor<1x16x1xf64>
  %sum64 = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%up64 : tensor<1x16x64xf64>) outs(%z64 : tensor<1x16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %out : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x1xf64>
  %mean64 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum64 : tensor<1x16x1xf64>) outs(%r64 : tensor<1x16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.divf %in, %n64 : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x1xf64>
  %centred64 = linalg.generic {indexing_maps = [#id3, #rows3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%up64, %mean64 : tensor<1x16x64xf64>, tensor<1x16x1xf64>) outs(%e64 : tensor<1x16x64xf64>) {
  ^bb0(%in: f64, %m: f64, %out: f64):
    %0 = arith.subf %in, %m : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x64xf64>
  %squares = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%centred64, %centred64 : tensor<1x16x64xf64>, tensor<1x16x64xf64>) outs(%e64 : tensor<1x16x64xf64>) {
  ^bb0(%a: f64, %c: f64, %out: f64):
    %0 = arith.mulf %a, %c : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x64xf64>
  %sumsq = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%squares : tensor<1x16x64xf64>) outs(%z64 : tensor<1x16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %out : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x1xf64>
  %var64 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sumsq : tensor<1x16x1xf64>) outs(%r64 : tensor<1x16x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.divf %in, %n64 : f64
    linalg.yield %0 : f64
  } -> tensor<1x16x1xf64>
  %r32 = tensor.empty() : tensor<1x16x1xf32>
  %var = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%var64 : tensor<1x16x1xf64>) outs(%r32 : tensor<1x16x1xf32>) {
  ^bb0(%in: f64, %out: f32):
    %0 = arith.truncf %in : f64 to f32
    linalg.yield %0 : f32
  } -> tensor<1x16x1xf32>
  %z32 = linalg.fill ins(%zero : f32) outs(%r32 : tensor<1x16x1xf32>) -> tensor<1x16x1xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%up : tensor<1x16x64xf32>) outs(%z32 : tensor<1x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<1x16x1xf32>
  %mean = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<1x16x1xf32>) outs(%r32 : tensor<1x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    linalg.yield %0 : f32
  } -> tensor<1x16x1xf32>
  %eh = tensor.empty() : tensor<1x16x64xf16>
  %normed = linalg.generic {indexing_maps = [#id3, #rows3, #rows3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%up, %mean, %var : tensor<1x16x64xf32>, tensor<1x16x1xf32>, tensor<1x16x1xf32>) outs(%eh : tensor<1x16x64xf16>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %out: f16):
    %epsf = arith.truncf %eps : f64 to f32
    %0 = arith.addf %v, %epsf : f32
    %1 = math.rsqrt %0 : f32
    %2 = arith.subf %in, %m : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.truncf %3 : f32 to f16
    linalg.yield %4 : f16
  } -> tensor<1x16x64xf16>
  // The linear: x W^T + b, with everything widened to f32.
  %flat = tensor.collapse_shape %normed [[0, 1], [2]] : tensor<1x16x64xf16> into tensor<16x64xf16>
  %eb = tensor.empty() : tensor<96xf32>
  %b32 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%b : tensor<96xf16>) outs(%eb : tensor<96xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<96xf32>
  %ex = tensor.empty() : tensor<16x64xf32>
  %x32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%flat : tensor<16x64xf16>) outs(%ex : tensor<16x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<16x64xf32>
  %ewt = tensor.empty() : tensor<64x96xf16>
  %wt = linalg.transpose ins(%w : tensor<96x64xf16>) outs(%ewt : tensor<64x96xf16>) permutation = [1, 0]
  %ew = tensor.empty() : tensor<64x96xf32>
  %w32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wt : tensor<64x96xf16>) outs(%ew : tensor<64x96xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<64x96xf32>
  %ey = tensor.empty() : tensor<16x96xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<16x96xf32>) -> tensor<16x96xf32>
  %mm = linalg.matmul ins(%x32, %w32 : tensor<16x64xf32>, tensor<64x96xf32>) outs(%zy : tensor<16x96xf32>) -> tensor<16x96xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b32 : tensor<16x96xf32>, tensor<96xf32>) outs(%ey : tensor<16x96xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<16x96xf32>
  %eyh = tensor.empty() : tensor<16x96xf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<16x96xf32>) outs(%eyh : tensor<16x96xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<16x96xf16>
  // The GELU (tanh form) on [1, T, C].
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [1, 16, 96] : tensor<16x96xf16> into tensor<1x16x96xf16>
  %eg = tensor.empty() : tensor<1x16x96xf16>
  %gelu = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3 : tensor<1x16x96xf16>) outs(%eg : tensor<1x16x96xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = math.fpowi %in, %c3 : f16, i64
    %1 = arith.mulf %0, %k0 : f16
    %2 = arith.addf %in, %1 : f16
    %3 = arith.mulf %2, %k1 : f16
    %4 = math.tanh %3 : f16
    %5 = arith.addf %4, %one : f16
    %6 = arith.mulf %5, %half : f16
    %7 = arith.mulf %in, %6 : f16
    linalg.yield %7 : f16
  } -> tensor<1x16x96xf16>
  return %gelu : tensor<1x16x96xf16>
}
