// RUN: ipu-opt %s | ipu-opt | FileCheck %s
// RUN: ipu-opt %s --emit-bytecode | ipu-opt | FileCheck %s

// CHECK-LABEL: func.func @graph
// CHECK:       ipu_tile.elementwise %arg0, %arg1 : tensor<8x32xf16>, tensor<32xf16> -> tensor<8x32xf16> {
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f16, %[[B:.*]]: f16):
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[B]] : f16
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[S]] : f16
// CHECK-NEXT:    ipu_tile.yield %[[T]] : f16
func.func @graph(%x: tensor<8x32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %y = ipu_tile.elementwise %x, %b : tensor<8x32xf16>, tensor<32xf16> -> tensor<8x32xf16> {
  ^bb0(%v: f16, %w: f16):
    %s = arith.addf %v, %w : f16
    %t = math.tanh %s : f16
    ipu_tile.yield %t : f16
  }
  return %y : tensor<8x32xf16>
}

// A scalar input, and a cast to f8.
// CHECK-LABEL: func.func @scale_cast
// CHECK:       ipu_tile.elementwise %arg0, %arg1 : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf8E4M3FN>
func.func @scale_cast(%x: tensor<4x8xf32>, %s: tensor<1xf32>) -> tensor<4x8xf8E4M3FN> {
  %y = ipu_tile.elementwise %x, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf8E4M3FN> {
  ^bb0(%v: f32, %k: f32):
    %m = arith.mulf %v, %k : f32
    %q = arith.truncf %m : f32 to f8E4M3FN
    ipu_tile.yield %q : f8E4M3FN
  }
  return %y : tensor<4x8xf8E4M3FN>
}

// CHECK-LABEL: ipu_tile.program @p
// CHECK:       ipu_tile.kernel @ew0.kernel broadcasts ["full", "row"] {
// CHECK:       ipu_tile.compute_set @ew0 kernel "ew0.kernel" operands [@x, @b, @y] tiles [0, 1]
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.kernel @ew0.kernel broadcasts ["full", "row"] {
    ^bb0(%v: f16, %w: f16):
      %s = arith.addf %v, %w : f16
      ipu_tile.yield %s : f16
    }
    ipu_tile.buffer @x : tensor<8x32xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<32xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_tile.buffer @y : tensor<8x32xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.compute_set @ew0 kernel "ew0.kernel" operands [@x, @b, @y] tiles [0, 1]
  }
}
