// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s

// CHECK: module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">}
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK: ipu_tile.program @mm attributes {flops = 1024 : i64, reference = [{arguments = array<i32: 0, 1>, op = "matmul", result = 0 : i32, type = f32}]}
  ipu_tile.program @mm attributes {flops = 1024 : i64, reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 0 : i32, type = f32}]} {
    // CHECK: ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in "standard" at 319488
    ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in "standard" at 319488
    // CHECK: ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in "interleaved"
    ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in "interleaved"
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in "standard"
    // CHECK: ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0, 1, 2, 3] params [4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1]
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0, 1, 2, 3]
        params [4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1, 4, 16, 2, 1, 0, 0, 1]
  }
}

// Explicit boundaries and tile maps round-trip; absent ones stay absent.
// CHECK-LABEL: func.func private @explicit
// CHECK-SAME: #ipu_tile.layout<grid = [3, 2], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0, 2, 7, 10], col_splits = [0, 6, 8], tile_map = [5, 4, 3, 2, 1, 0]>
func.func private @explicit(tensor<10x8xf32, #ipu_tile.layout<grid = [3, 2], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [5, 4, 3, 2, 1, 0], row_splits = [0, 2, 7, 10], col_splits = [0, 6, 8]>>)

// Placed buffers may share bytes when their lives do not meet (@b reuses
// @a's bytes once the gather has read them) or when they share no tile (@c
// and @m); syncs separate the exchange from the compute around it.
// CHECK-LABEL: ipu_tile.program @reuse
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @reuse {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in "standard" at 319488
    ipu_tile.buffer @m : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in "standard" at 319616
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in "standard" at 319488
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 1, strides = [0, 0], replicas = 1, replica_stride = 0>> in "standard" at 319616
    ipu_exchange.stream_in @a from 0
    ipu_exchange.stream_in @c from 1
    ipu_exchange.sync
    ipu_exchange.phase @gather {
      ipu_exchange.copy @a to @m
    }
    ipu_exchange.sync
    ipu_tile.compute_set @move kernel "copy" operands [@m, @b] tiles [0] params [128]
    ipu_exchange.sync
    ipu_exchange.stream_out @b to 0
    ipu_exchange.stream_out @c to 1
  }
}
