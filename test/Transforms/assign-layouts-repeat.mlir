// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-plan-gemm --ipu-assign-layouts 2> /dev/null | FileCheck %s

// A repeated layer's weights: each layer's tensor of a slot streams from
// the host in the one layout (and memory class, and transposition) every
// op of the body wants the slot in, and the body reads the slot in it; the
// previous layer's value is where the input arrives, and each op of the
// body moves it where it needs it.
// CHECK-LABEL: func.func @three_layers
// CHECK:      %[[X:.*]] = ipu_tile.from_host %arg0 : tensor<16x64xf32> -> tensor<16x64xf32, [[XL:#ipu_tile.layout<[^>]*>]]>
// CHECK-NEXT: %[[W0:.*]] = ipu_tile.from_host %arg1 {resident, transpose} : tensor<64x64xf32> -> tensor<64x64xf32, [[WL:#ipu_tile.layout<[^>]*>]]>
// CHECK-NEXT: %[[W1:.*]] = ipu_tile.from_host %arg2 {resident, transpose} : tensor<64x64xf32> -> tensor<64x64xf32, [[WL]]>
// CHECK-NEXT: %[[W2:.*]] = ipu_tile.from_host %arg3 {resident, transpose} : tensor<64x64xf32> -> tensor<64x64xf32, [[WL]]>
// CHECK-NEXT: %[[B0:.*]] = ipu_tile.from_host %arg4 in interleaved {resident} : tensor<64xf32> -> tensor<64xf32, [[BL:#ipu_tile.layout<[^>]*>]]>
// CHECK-NEXT: %[[B1:.*]] = ipu_tile.from_host %arg5 in interleaved {resident} : tensor<64xf32> -> tensor<64xf32, [[BL]]>
// CHECK-NEXT: %[[B2:.*]] = ipu_tile.from_host %arg6 in interleaved {resident} : tensor<64xf32> -> tensor<64xf32, [[BL]]>
// CHECK-NEXT: ipu_tile.repeat 3 input(%[[X]] : tensor<16x64xf32, [[XL]]>) weights(%[[W0]], %[[W1]], %[[W2]], %[[B0]], %[[B1]], %[[B2]] :
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<16x64xf32, [[XL]]>, %[[W:.*]]: tensor<64x64xf32, [[WL]]>, %[[B:.*]]: tensor<64xf32, [[BL]]>):
// CHECK-NEXT:   %[[HM:.*]] = ipu_tile.relayout %[[H]]
// CHECK-NEXT:   %[[M:.*]] = ipu_gemm.matmul %[[HM]], %[[W]] {{.*}}transpose_rhs
// CHECK-NEXT:   %[[MR:.*]] = ipu_tile.relayout %[[M]]
// CHECK-NEXT:   %[[A:.*]] = ipu_tile.elementwise %[[H]], %[[MR]], %[[B]] :
// CHECK:        ipu_tile.carry %[[A]] : tensor<16x64xf32, [[XL]]>
// CHECK-NEXT: } -> tensor<16x64xf32, [[XL]]>
func.func @three_layers(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>, %b2: tensor<64xf32>) -> tensor<16x64xf32> {
  %y = ipu_tile.repeat 3 input(%x : tensor<16x64xf32>) weights(%w0, %w1, %w2, %b0, %b1, %b2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>):
    %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %a = ipu_tile.elementwise %h, %m, %b : tensor<16x64xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32> {
    ^bb0(%p: f32, %q: f32, %c: f32):
      %s = arith.addf %p, %q : f32
      %t = arith.addf %s, %c : f32
      ipu_tile.yield %t : f32
    }
    ipu_tile.carry %a : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// The body also reads values from before the layers, which every layer
// shares: a weight V (as B) and a bias b, both function arguments. Each
// arrives once, outside the repeat, where the body's op wants it: V
// resident and transposed as the planner's orientation needs it, b in the
// elementwise op's layout; the body reads those streams.
// CHECK-LABEL: func.func @shared_operands
// CHECK-DAG:  %[[V:.*]] = ipu_tile.from_host %arg1 {resident, transpose} : tensor<64x64xf32> -> tensor<64x64xf32, #ipu_tile.layout
// CHECK-DAG:  %[[B:.*]] = ipu_tile.from_host %arg2 {{.*}}: tensor<64xf32> -> tensor<64xf32, #ipu_tile.layout
// CHECK:      ipu_tile.repeat 2
// CHECK:        ipu_gemm.matmul %{{.*}}, %[[V]] {{.*}}transpose_rhs
// CHECK:        ipu_tile.elementwise %{{.*}}, %[[B]] :
// CHECK:        ipu_tile.carry
func.func @shared_operands(%x: tensor<16x64xf32>, %v: tensor<64x64xf32>, %b: tensor<64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>) weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
    %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %p = ipu_gemm.matmul %m, %v : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %a = ipu_tile.elementwise %p, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32> {
    ^bb0(%q: f32, %c: f32):
      %s = arith.addf %q, %c : f32
      ipu_tile.yield %s : f32
    }
    ipu_tile.carry %a : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
