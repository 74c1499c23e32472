// Row reductions (softmax, layer norm) as exporters write them
// (examples/exporters/, whose headers cite each form's source) import to
// ipu_tile.elementwise ops with `reduce`, their statistics read back as
// column inputs; the errors below name the op and what is at fault.
// RUN: ipu-opt %ipu_src_root/examples/exporters/softmax-torch-f32.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-fuse-elementwise | FileCheck %s --check-prefix=TORCH
// RUN: ipu-opt %ipu_src_root/examples/exporters/softmax-torch-f16.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-fuse-elementwise | FileCheck %s --check-prefix=TORCH16
// RUN: ipu-opt %ipu_src_root/examples/exporters/softmax-stablehlo.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-fuse-elementwise | FileCheck %s --check-prefix=HLO
// RUN: ipu-opt %ipu_src_root/examples/exporters/layernorm-torch-f32.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-fuse-elementwise | FileCheck %s --check-prefix=LN
// RUN: ipu-opt %ipu_src_root/examples/exporters/layernorm-stablehlo.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-fuse-elementwise | FileCheck %s --check-prefix=LNHLO
// RUN: ipu-opt %s -split-input-file --ipu-set-target=target=ipu21-16 --ipu-import-linalg -ipu-fuse-elementwise -verify-diagnostics | FileCheck %s

// torch-mlir: max.dim (its argmax unused) with -inf, exp(x - max) fused,
// the sum, the division; nothing else is left.
// TORCH-LABEL: func.func @softmax
// TORCH-NOT: linalg.
// TORCH-NOT: tensor.
// TORCH: %[[MAX:.*]] = ipu_tile.elementwise reduce max init 0xFFF0000000000000 %arg0 : tensor<2x4x24xf32> -> tensor<2x4x1xf32>
// TORCH-NEXT: ^bb0(%[[A:.*]]: f32):
// TORCH-NEXT: ipu_tile.yield %[[A]] : f32
// TORCH: %[[EXP:.*]] = ipu_tile.elementwise %arg0, %[[MAX]] : tensor<2x4x24xf32>, tensor<2x4x1xf32> -> tensor<2x4x24xf32>
// TORCH: arith.subf
// TORCH-NEXT: math.exp
// TORCH: %[[SUM:.*]] = ipu_tile.elementwise reduce add init 0.000000e+00 %[[EXP]] : tensor<2x4x24xf32> -> tensor<2x4x1xf32>
// TORCH: %[[Y:.*]] = ipu_tile.elementwise %[[EXP]], %[[SUM]] : tensor<2x4x24xf32>, tensor<2x4x1xf32> -> tensor<2x4x24xf32>
// The sums are softmax's (each in [1, 24]): a multiply by their
// reciprocal, which the kernel computes once a row.
// TORCH-NEXT: ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32):
// TORCH-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// TORCH-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// TORCH-NEXT: arith.mulf %[[E]], %[[R]] : f32
// TORCH: return %[[Y]]

// f16 in, computed in f32 (torch-mlir always upcasts softmax), f16 out:
// the final truncation fuses into the division. The widening has two
// readers, the max and the exp: each widens the f16 input where it reads
// it, so the f32 copy never reaches memory.
// TORCH16-LABEL: func.func @softmax
// TORCH16-NOT: linalg.
// TORCH16: reduce max init 0xFFF0000000000000 %arg0 : tensor<2x4x24xf16> -> tensor<2x4x1xf32>
// TORCH16-NEXT: ^bb0(%[[H:.*]]: f16):
// TORCH16-NEXT: arith.extf %[[H]] : f16 to f32
// TORCH16: ipu_tile.elementwise %{{.*}}, %arg0 : tensor<2x4x1xf32>, tensor<2x4x24xf16> -> tensor<2x4x24xf32>
// TORCH16: arith.extf
// TORCH16-NEXT: arith.subf
// TORCH16-NEXT: math.exp
// TORCH16: reduce add
// TORCH16: -> tensor<2x4x24xf16>
// TORCH16: arith.divf
// TORCH16-NEXT: arith.mulf
// TORCH16-NEXT: arith.truncf

// StableHLO: reductions without the unit dim, keepdims by copies and
// broadcasts, max(reduce, -inf): the same four ops.
// HLO-LABEL: func.func @softmax
// HLO-NOT: linalg.
// HLO-NOT: tensor.
// HLO-COUNT-4: ipu_tile.elementwise
// HLO-NOT: ipu_tile.elementwise
// HLO: return

// torch-mlir's two-pass layer norm: sum, mean, the sum of the centred
// values' squares, rsqrt(var + eps) on the statistics, then one op for
// scale and bias. The centred values have two readers, and each centres
// where it reads (one subtract), so they never reach memory.
// LN-LABEL: func.func @layernorm
// LN-NOT: linalg.
// LN-NOT: tensor.
// LN: %[[S:.*]] = ipu_tile.elementwise reduce add init 0.000000e+00 %arg0
// LN: %[[MEAN:.*]] = ipu_tile.elementwise %[[S]] : tensor<1x8x1xf32> -> tensor<1x8x1xf32>
// LN: %[[SS:.*]] = ipu_tile.elementwise reduce add init 0.000000e+00 %arg0, %[[MEAN]] : tensor<1x8x24xf32>, tensor<1x8x1xf32> -> tensor<1x8x1xf32>
// LN-NEXT: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32):
// LN-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[M]]
// LN-NEXT: arith.mulf %[[D]], %[[D]]
// LN: %[[R:.*]] = ipu_tile.elementwise %[[SS]] : tensor<1x8x1xf32> -> tensor<1x8x1xf32>
// LN: math.rsqrt
// LN: ipu_tile.elementwise %arg2, %arg1, %[[R]], %arg0, %[[MEAN]] : tensor<24xf32>, tensor<24xf32>, tensor<1x8x1xf32>, tensor<1x8x24xf32>, tensor<1x8x1xf32> -> tensor<1x8x24xf32>
// LN-NEXT: ^bb0(
// LN-NEXT: arith.subf

// Flax: E[x^2] - E[x]^2 clipped at 0.
// LNHLO-LABEL: func.func @layernorm
// LNHLO-NOT: linalg.
// LNHLO-NOT: tensor.
// LNHLO: reduce add init 0.000000e+00 %arg0
// LNHLO: reduce add init 0.000000e+00 %arg0
// LNHLO: arith.mulf
// LNHLO: arith.maximumf
// LNHLO: math.rsqrt

// linalg.softmax, decomposed by MLIR, imports the same way.
// CHECK-LABEL: func.func @named_softmax
// CHECK-NOT: linalg.
// CHECK: reduce max
// CHECK: math.exp
// CHECK: reduce add
// CHECK: arith.divf %cst, %{{.*}} : f32
// CHECK-NEXT: arith.mulf
func.func @named_softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-remark @+1 {{softmax: divides by the row sums of exp(x - max x) as a multiply by their reciprocal, once a row (each sum is in [1, the row's length])}}
  %y = linalg.softmax dimension(1) ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// A division by row sums that are not softmax's (they may be 0, or tiny)
// stays a division.
// CHECK-LABEL: func.func @sum_normalised
// CHECK: reduce add
// CHECK: ^bb0(%[[V:.*]]: f32, %[[T:.*]]: f32):
// CHECK-NEXT: arith.divf %[[V]], %[[T]] : f32
// CHECK-NEXT: ipu_tile.yield
func.func @sum_normalised(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = ipu_tile.elementwise reduce add init 0.0 %x : tensor<8x16xf32> -> tensor<8x1xf32> {
  ^bb0(%v: f32):
    ipu_tile.yield %v : f32
  }
  %y = ipu_tile.elementwise %x, %s : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32> {
  ^bb0(%v: f32, %t: f32):
    %q = arith.divf %v, %t : f32
    ipu_tile.yield %q : f32
  }
  return %y : tensor<8x16xf32>
}

// -----

func.func @column_sum(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{reduces a dimension other than the last: only row reductions (along the last dimension) compile, got the output map affine_map<(d0, d1) -> (d1)>}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @product(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{a row reduction's body must fold one value into its accumulator with arith.addf, arith.maximumf or arith.maxnumf}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @accumulator_read_twice(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{a row reduction's body must fold one value into its accumulator with arith.addf, arith.maximumf or arith.maxnumf, and read the accumulator nowhere else}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %out : f32
    %a = arith.addf %m, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @running_init(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{the init of a row reduction must be a constant (linalg.fill of a scalar or a splat)}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}
