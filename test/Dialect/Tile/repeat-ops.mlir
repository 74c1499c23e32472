// RUN: ipu-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ipu-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | ipu-opt -split-input-file | FileCheck %s

// Two layers of a matmul by a weight of their own and a residual add, and a
// body that also reads a value from before the repeat.
// CHECK-LABEL: func.func @two_layers
// CHECK:       ipu_tile.repeat 2 input(%{{.*}} : tensor<16x64xf32>) weights(%arg1, %arg2 : tensor<64x64xf32>, tensor<64x64xf32>) {
// CHECK:       ^bb0(%[[H:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x64xf32>):
// CHECK:         ipu_gemm.matmul %[[H]], %[[W]]
// CHECK:         ipu_tile.carry
// CHECK:       } -> tensor<16x64xf32>
func.func @two_layers(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %shared: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>) weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %a = ipu_tile.elementwise %m, %shared : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
    ^bb0(%p: f32, %q: f32):
      %s = arith.addf %p, %q : f32
      ipu_tile.yield %s : f32
    }
    ipu_tile.carry %a : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @weights_per_layer(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{has 1 weights; its body takes 1 weight slots, so 2 layers need 2}}
  %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>) weights(%w0 : tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    ipu_tile.carry %h : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @weight_type(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf16>) -> tensor<16x64xf32> {
  // expected-error @+1 {{weight slot 0 of layer 1 has type 'tensor<64x64xf16>', but the body reads the slot as 'tensor<64x64xf32>'}}
  %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>) weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf16>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    ipu_tile.carry %h : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @carried_type(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %y = ipu_tile.repeat 3 input(%x : tensor<16x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>):
    %t = ipu_tile.permute %h view [16, 64] permutation [0, 1] : tensor<16x64xf32> -> tensor<1x16x64xf32>
    // expected-error @+1 {{passes on 'tensor<1x16x64xf32>', but the next layer reads 'tensor<16x64xf32>'}}
    ipu_tile.carry %t : tensor<1x16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @input_type(%x: tensor<16x64xf16>) -> tensor<16x64xf32> {
  // expected-error @+1 {{input has type 'tensor<16x64xf16>', but the body reads the previous layer's value as 'tensor<16x64xf32>'}}
  %y = ipu_tile.repeat 3 input(%x : tensor<16x64xf16>) {
  ^bb0(%h: tensor<16x64xf32>):
    ipu_tile.carry %h : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @no_layers(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{attribute 'count' failed to satisfy constraint}}
  %y = ipu_tile.repeat 0 input(%x : tensor<16x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>):
    ipu_tile.carry %h : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
