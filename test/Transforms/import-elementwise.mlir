// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -ipu-fuse-elementwise -verify-diagnostics | FileCheck %s
//
// Elementwise linalg ops become ipu_tile.elementwise with their scalar body;
// chains fuse into one op. Exporter forms are in examples/exporters/ (and
// compiled end to end in test/Pipeline/e2e-elementwise.mlir).

// torch-mlir's bias add (map (d2) for the bias) and GELU tanh, x^3 as
// math.fpowi, constants captured from the function: one op, the bias a row.
// CHECK-LABEL: func.func @bias_gelu
// CHECK:       %[[R:.*]] = ipu_tile.elementwise %arg0, %arg1 : tensor<1x8x32xf16>, tensor<32xf16> -> tensor<1x8x32xf16> {
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f16, %[[B:.*]]: f16):
// CHECK-DAG:     arith.constant 4.470830e-02 : f16
// CHECK-DAG:     arith.constant 1.000000e+00 : f16
// CHECK:         %[[S:.*]] = arith.addf %[[X]], %[[B]] : f16
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[S]], %[[S]] : f16
// CHECK-NEXT:    arith.mulf %[[SQ]], %[[S]] : f16
// CHECK-NOT:     math.fpowi
// CHECK:         math.tanh
// CHECK:         ipu_tile.yield
// CHECK:       return %[[R]]
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
func.func @bias_gelu(%x: tensor<1x8x32xf16>, %b: tensor<32xf16>) -> tensor<1x8x32xf16> {
  %c3 = arith.constant 3 : i64
  %cst = arith.constant 4.470830e-02 : f16
  %beta = arith.constant 7.978520e-01 : f16
  %one = arith.constant 1.000000e+00 : f16
  %half = arith.constant 5.000000e-01 : f16
  %e = tensor.empty() : tensor<1x8x32xf16>
  %0 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<1x8x32xf16>, tensor<32xf16>) outs(%e : tensor<1x8x32xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %s = arith.addf %in, %in_0 : f16
    linalg.yield %s : f16
  } -> tensor<1x8x32xf16>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<1x8x32xf16>) outs(%e : tensor<1x8x32xf16>) {
  ^bb0(%in: f16, %out: f16):
    %p = math.fpowi %in, %c3 : f16, i64
    %m = arith.mulf %p, %cst : f16
    %a = arith.addf %in, %m : f16
    %k = arith.mulf %a, %beta : f16
    %t = math.tanh %k : f16
    %o = arith.addf %t, %one : f16
    %h = arith.mulf %o, %half : f16
    %r = arith.mulf %in, %h : f16
    linalg.yield %r : f16
  } -> tensor<1x8x32xf16>
  return %1 : tensor<1x8x32xf16>
}

// -----

// A value used twice fuses once: SiLU is x * sigmoid(x), x an input once.
// CHECK-LABEL: func.func @silu
// CHECK:       ipu_tile.elementwise %arg0 : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK-NOT:   ipu_tile.elementwise
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %y = linalg.mul ins(%s, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A value with two users is computed once: no fusion into either.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-3: ipu_tile.elementwise
func.func @shared(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.exp ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %b = linalg.negf ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %c = linalg.abs ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %b, %c : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The casts to f8 before an f8 matmul (linalg.map form): one op.
// CHECK-LABEL: func.func @cast_chain
// CHECK:       ipu_tile.elementwise %arg0 : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:         arith.truncf %{{.*}} : f16 to f8E4M3FN
func.func @cast_chain(%x: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %e16 = tensor.empty() : tensor<4x8xf16>
  %h = linalg.map { arith.truncf } ins(%x : tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>)
  %e8 = tensor.empty() : tensor<4x8xf8E4M3FN>
  %q = linalg.map { arith.truncf } ins(%h : tensor<4x8xf16>) outs(%e8 : tensor<4x8xf8E4M3FN>)
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @unsupported_body_op(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    // expected-error @+1 {{'math.sin' op cannot run in a tile kernel: a body of 'ipu_tile.elementwise' holds only arith.constant, arith.addf}}
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @column_not_a_statistic(%x: tensor<8x16xf32>, %m: tensor<8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{input 1 is one value per row, but not the [..., R, 1] value of a row reduction}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<8x16xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.subf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @broadcast_only(%b: tensor<16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{a broadcast that no elementwise op reads in full; only elementwise ops on a tensor of the result's shape compile}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @transposed_read(%x: tensor<16x16xf32>, %m: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  // expected-error @+1 {{input 1 is read through affine_map<(d0, d1) -> (d1, d0)>; only the whole tensor, a vector of the last dimension, a single element or one value per row broadcast onto the result}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.subf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// Elementwise arith and math ops on whole tensors become generics first
// (upstream's elementwise-to-linalg conversion), then one fused op; the
// comparison's i1 tensor is fused into its select and stays a scalar.
// CHECK-LABEL: func.func @tensor_level
// CHECK:       %[[R:.*]] = ipu_tile.elementwise %arg0, %arg1 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf16> {
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32):
// CHECK:         %[[S:.*]] = arith.addf %[[X]], %[[W]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[S]], %[[X]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[P]] : f32
// CHECK-NEXT:    %[[C:.*]] = arith.cmpf ogt, %[[E]], %[[X]] : f32
// CHECK-NEXT:    %[[M:.*]] = arith.select %[[C]], %[[E]], %[[X]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK-NEXT:    ipu_tile.yield %[[T]] : f16
// CHECK:       return %[[R]]
// CHECK-NOT:   linalg.generic
func.func @tensor_level(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xf16> {
  %s = arith.addf %x, %w : tensor<8x16xf32>
  %p = arith.mulf %s, %x : tensor<8x16xf32>
  %e = math.exp %p : tensor<8x16xf32>
  %c = arith.cmpf ogt, %e, %x : tensor<8x16xf32>
  %m = arith.select %c, %e, %x : tensor<8x16xi1>, tensor<8x16xf32>
  %y = arith.truncf %m : tensor<8x16xf32> to tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}

// -----

// A comparison's i1 tensor that no op selects on has no tile buffer.
func.func @returned_comparison(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xi1> {
  // expected-error @+1 {{an elementwise result of 'tensor<8x16xi1>': tile buffers hold floats (f32, f16, f8E4M3FN, f8E5M2); use a comparison or integer inside the elementwise op that reads it (arith.select on an arith.cmpf), not as a value of its own}}
  %c = arith.cmpf ogt, %x, %w : tensor<8x16xf32>
  return %c : tensor<8x16xi1>
}
