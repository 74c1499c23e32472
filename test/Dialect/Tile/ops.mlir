// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s

// CHECK: module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">}
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK: ipu_tile.program @mm attributes {flops = 1024 : i64, reference = [{arguments = array<i32: 0, 1>, op = "matmul", result = 0 : i32, type = f32}]}
  ipu_tile.program @mm attributes {flops = 1024 : i64, reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 0 : i32, type = f32}]} {
    // CHECK: ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard at 362208
    ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard at 362208
    // CHECK: ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
    ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
    // CHECK: ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0 to 4] params [4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0]
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0, 1, 2, 3]
        params [4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0]
    // A compute set on the tiles of a buffer keeps that form.
    ipu_tile.buffer @d : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
    // CHECK: ipu_tile.compute_set @cp kernel "copy" operands [@c, @d] tiles of @d{{$}}
    ipu_tile.compute_set @cp kernel "copy" operands [@c, @d] tiles of @d
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
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @m : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362336
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 1, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362336
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

// N-D tensors: the leading dimensions are batches. Batch fields print only
// when they differ from their defaults, in a fixed order whatever order
// they were written in.
// CHECK-LABEL: func.func private @batch_local
// CHECK-SAME: tensor<3x8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 1, strides = [1, 0], replicas = 1, replica_stride = 0>>
func.func private @batch_local(tensor<3x8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 1, strides = [1, 0], replicas = 1, replica_stride = 0, batch_grid = 1, batch_stride = 0>>)

// CHECK-LABEL: func.func private @batch_distributed
// CHECK-SAME: tensor<3x8x16xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0, batch_grid = 3, batch_stride = 2>>
func.func private @batch_distributed(tensor<3x8x16xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0, batch_stride = 2, batch_grid = 3>>)

// CHECK-LABEL: func.func private @batch_local_4d
// CHECK-SAME: tensor<2x3x4x8xf32, #ipu_tile.layout<grid = [1, 1], base = 3, strides = [0, 0], replicas = 2, replica_stride = -1>>
func.func private @batch_local_4d(tensor<2x3x4x8xf32, #ipu_tile.layout<grid = [1, 1], base = 3, strides = [0, 0], replicas = 2, replica_stride = -1>>)

// 2 x 3 = 6 batches cut at 0, 1, 6, blocks placed by a tile map.
// CHECK-LABEL: func.func private @batch_distributed_4d
// CHECK-SAME: tensor<2x3x4x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_splits = [0, 1, 6], row_splits = [0, 1, 4], tile_map = [3, 2, 1, 0]>>
func.func private @batch_distributed_4d(tensor<2x3x4x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [3, 2, 1, 0], batch_splits = [0, 1, 6], batch_grid = 2, row_splits = [0, 1, 4]>>)

// Rank-3 buffers in a program: streamed in batch-distributed, gathered
// batch-local by one phase, multiplied as one [8 x 8] x [8 x 4] gemm (a
// block of 2 batches is their rows one after another) and streamed out.
// CHECK-LABEL: ipu_tile.program @batched
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @batched attributes {flops = 512 : i64, reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 0 : i32, type = f32, transpose_rhs = false}]} {
    // CHECK: ipu_tile.buffer @a : tensor<2x4x8xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard
    ipu_tile.buffer @a : tensor<2x4x8xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard
    ipu_tile.buffer @local : tensor<2x4x8xf16, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @c : tensor<2x4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @a from 0
    ipu_exchange.stream_in @b from 1
    ipu_exchange.sync
    // CHECK: ipu_exchange.copy @a to @local
    ipu_exchange.phase @gather {
      ipu_exchange.copy @a to @local
    }
    ipu_exchange.sync
    // CHECK: ipu_tile.compute_set @mm kernel "gemm" operands [@local, @b, @c] tiles [2] params [8, 8, 4, 1, 0, 0, 0, 0]
    ipu_tile.compute_set @mm kernel "gemm" operands [@local, @b, @c] tiles [2] params [8, 8, 4, 1, 0, 0, 0, 0]
    ipu_exchange.sync
    ipu_exchange.stream_out @c to 0
  }
}
