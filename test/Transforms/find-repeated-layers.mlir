// RUN: ipu-opt %s -ipu-find-repeated-layers -verify-diagnostics -split-input-file
// RUN: ipu-opt %s -ipu-find-repeated-layers=outline=true -split-input-file 2> /dev/null | FileCheck %s

// Outlined: the first layer's ops are the body, the weights its operands
// slot by slot, and what read the last layer's output reads the result.
// CHECK-LABEL: func.func @three_layers
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W0:.*]]: tensor<64x64xf32>, %[[W1:.*]]: tensor<64x64xf32>, %[[W2:.*]]: tensor<64x64xf32>)
// CHECK:         %[[Y:.*]] = ipu_tile.repeat 3 input(%[[X]] : tensor<16x64xf32>) weights(%[[W0]], %[[W1]], %[[W2]] :
// CHECK-NEXT:    ^bb0(%[[H:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x64xf32>):
// CHECK-NEXT:      %[[M:.*]] = ipu_gemm.matmul %[[H]], %[[W]]
// CHECK-NEXT:      %[[A:.*]] = ipu_tile.elementwise %[[H]], %[[M]]
// CHECK:           ipu_tile.carry %[[A]] : tensor<16x64xf32>
// CHECK-NEXT:    } -> tensor<16x64xf32>
// CHECK-NEXT:    return %[[Y]]
// CHECK-LABEL: func.func @bodies_wired_differently
// CHECK:         %[[Y:.*]] = ipu_tile.repeat 2
// CHECK:         ipu_tile.carry
// CHECK:         ipu_gemm.matmul %[[Y]], %arg3
// Layers without weights of their own stay as they are.
// CHECK-LABEL: func.func @shared_weight
// CHECK-NOT:     ipu_tile.repeat
// CHECK:         ipu_gemm.matmul %arg0, %arg1
// CHECK-LABEL: func.func @one_layer
// CHECK-NOT:     ipu_tile.repeat
// Layers that each hold a repeat stay as they are: no repeat in a repeat.
// CHECK-LABEL: func.func @repeats_in_sequence
// CHECK:         %[[Y:.*]] = ipu_tile.repeat 2 input(%arg0
// CHECK:         ipu_tile.repeat 2 input(%[[Y]]
// A repeat that passes on its input unchanged is its input.
// CHECK-LABEL: func.func @identity_repeat
// CHECK-NOT:     ipu_tile.repeat
// CHECK:         %[[M:.*]] = ipu_gemm.matmul %arg0, %arg1
// CHECK-NEXT:    return %[[M]]

// Three layers, each a matmul by its own weight and a residual add whose
// body is the same: found, with the add (op 1 of each layer) passing the
// value on.
// expected-remark@+1 {{repeats one layer: layers=3 opsPerLayer=2 firstOp=0 endOp=6 weightsPerLayer=1 outputOp=1}}
func.func @three_layers(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %m0 = ipu_gemm.matmul %x, %w0 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a0 = ipu_tile.elementwise %x, %m0 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %p, %q : f32
    ipu_tile.yield %s : f32
  }
  %m1 = ipu_gemm.matmul %a0, %w1 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a1 = ipu_tile.elementwise %a0, %m1 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %p, %q : f32
    ipu_tile.yield %s : f32
  }
  %m2 = ipu_gemm.matmul %a1, %w2 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a2 = ipu_tile.elementwise %a1, %m2 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %p, %q : f32
    ipu_tile.yield %s : f32
  }
  return %a2 : tensor<16x64xf32>
}

// -----

// The third layer's body subtracts the other way round: it computes
// something else, so only the first two repeat.
// expected-remark@+1 {{repeats one layer: layers=2 opsPerLayer=2 firstOp=0 endOp=4}}
func.func @bodies_wired_differently(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %m0 = ipu_gemm.matmul %x, %w0 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a0 = ipu_tile.elementwise %x, %m0 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %p, %q : f32
    ipu_tile.yield %s : f32
  }
  %m1 = ipu_gemm.matmul %a0, %w1 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a1 = ipu_tile.elementwise %a0, %m1 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %p, %q : f32
    ipu_tile.yield %s : f32
  }
  %m2 = ipu_gemm.matmul %a1, %w2 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %a2 = ipu_tile.elementwise %a1, %m2 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.subf %q, %p : f32
    ipu_tile.yield %s : f32
  }
  return %a2 : tensor<16x64xf32>
}

// -----

// One weight read by every layer is not any layer's own, but a value they
// all read alike; and nothing repeats in a single layer.
// expected-remark@+1 {{repeats one layer: layers=3 opsPerLayer=1 firstOp=0 endOp=3 weightsPerLayer=0 outputOp=0}}
func.func @shared_weight(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %m0 = ipu_gemm.matmul %x, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %m1 = ipu_gemm.matmul %m0, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %m2 = ipu_gemm.matmul %m1, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  return %m2 : tensor<16x64xf32>
}

func.func @one_layer(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %m0 = ipu_gemm.matmul %x, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  return %m0 : tensor<16x64xf32>
}

// -----

// Two repeats in a row, alike but for their weights: as layers, each would
// hold a repeat.
// expected-remark@+1 {{repeats one layer: layers=2 opsPerLayer=1 firstOp=0 endOp=2 weightsPerLayer=2 outputOp=0}}
func.func @repeats_in_sequence(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %v0: tensor<64x64xf32>, %v1: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>) weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    ipu_tile.carry %m : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  %z = ipu_tile.repeat 2 input(%y : tensor<16x64xf32>) weights(%v0, %v1 : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    ipu_tile.carry %m : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}

// -----

// Layers that pass on their input unchanged repeat nothing: the repeat is
// removed, whatever its weights (which no op reads).
func.func @identity_repeat(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %m = ipu_gemm.matmul %x, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  // expected-remark @+1 {{a repeated layer that passes on its input unchanged repeats nothing: removed, its input is its result}}
  %y = ipu_tile.repeat 2 input(%m : tensor<16x64xf32>) weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %v: tensor<64x64xf32>):
    ipu_tile.carry %h : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
