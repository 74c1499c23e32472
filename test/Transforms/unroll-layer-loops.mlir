// RUN: ipu-opt %s -split-input-file -ipu-unroll-layer-loops -verify-diagnostics | FileCheck %s

// Loops whose bounds and step give no layers: a loop of no iterations is
// its initial values (as upstream's scf.for is); a step of 0 or below is
// refused where the loop is, naming the way out.

// A loop of 0 iterations (lower bound = upper bound): what reads its
// result reads its initial value; no loop and no unrolled body remain.
// CHECK-LABEL: func.func @zero_trips
// CHECK-NOT:     scf.for
// CHECK-NOT:     arith.addf
// CHECK:         %[[M:.*]] = linalg.matmul ins(%arg0, %arg1 :
// CHECK:         return %[[M]]
func.func @zero_trips(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{a loop of 0 iterations (its lower bound is not below its upper bound): its results are its initial values}}
  %y = scf.for %i = %c0 to %c0 step %c1 iter_args(%h = %x) -> (tensor<16x64xf32>) {
    %s = arith.addf %h, %h : tensor<16x64xf32>
    scf.yield %s : tensor<16x64xf32>
  }
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%y, %w : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}

// -----

// A lower bound above the upper one: no iterations either.
// CHECK-LABEL: func.func @bounds_reversed
// CHECK-NOT:     scf.for
// CHECK:         return %arg0
func.func @bounds_reversed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  // expected-remark @+1 {{a loop of 0 iterations}}
  %y = scf.for %i = %c5 to %c1 step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %s = arith.addf %h, %h : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// An inner loop of no iterations inside an outer loop of two: the inner
// one goes first, then the outer one unrolls what is left.
// CHECK-LABEL: func.func @zero_trips_inside
// CHECK-NOT:     scf.for
// CHECK:         %[[A:.*]] = arith.mulf %arg0, %arg0
// CHECK-NEXT:    %[[B:.*]] = arith.mulf %[[A]], %[[A]]
// CHECK-NEXT:    return %[[B]]
// expected-remark @+1 {{unrolls a loop of 2 iterations}}
func.func @zero_trips_inside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %y = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    %m = arith.mulf %a, %a : tensor<4xf32>
    // expected-remark @+1 {{a loop of 0 iterations}}
    %z = scf.for %j = %c1 to %c1 step %c1 iter_args(%b = %m) -> (tensor<4xf32>) {
      %s = arith.addf %b, %b : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    scf.yield %z : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @step_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{a loop whose step is 0 never ends: give it a positive step}}
  %y = scf.for %i = %c0 to %c4 step %c0 iter_args(%h = %x) -> (tensor<4xf32>) {
    %s = arith.addf %h, %h : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// A step of 0 gives no iterations when the bounds are equal, but is
// refused all the same: no loop of scf.for's has it.
func.func @step_zero_no_trips(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a loop whose step is 0 never ends}}
  %y = scf.for %i = %c0 to %c0 step %c0 iter_args(%h = %x) -> (tensor<4xf32>) {
    scf.yield %h : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @step_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %cm1 = arith.constant -1 : index
  // expected-error @+1 {{a loop whose step is -1 counts down, which scf.for does not (its step must be positive): give it a positive step}}
  %y = scf.for %i = %c4 to %c0 step %cm1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %s = arith.addf %h, %h : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
