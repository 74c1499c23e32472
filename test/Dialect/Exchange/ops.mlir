// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s
// Bytecode keeps schedules exactly (their runs are delta-coded varints).
// RUN: ipu-opt %s --emit-bytecode | ipu-opt | FileCheck %s
// Printed IR can elide them.
// RUN: ipu-opt %s --mlir-elide-elementsattrs-if-larger=4 | FileCheck %s --check-prefix=ELIDED
// ELIDED: runs = dense_resource<__elided__> : tensor<10xi32>

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @a.bcast : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    // CHECK: ipu_exchange.stream_in @a from 0 {weight}
    ipu_exchange.stream_in @a from 0 {weight}
    // CHECK-NEXT: ipu_exchange.sync
    ipu_exchange.sync
    // CHECK-NEXT: ipu_exchange.phase @gather attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 2, bound = 66, horizon = 73, runs = dense<[0, 0, 8, 0, 0, 1, 0, 8, 0, 0]> : tensor<10xi32>>} {
    // CHECK-NEXT:   ipu_exchange.copy @a to @a.bcast
    // CHECK-NEXT: }
    ipu_exchange.phase @gather attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 2, bound = 66, horizon = 73, runs = dense<[0, 0, 8, 0, 0, 1, 0, 8, 0, 0]> : tensor<10xi32>>} {
      ipu_exchange.copy @a to @a.bcast
    }
    // CHECK: ipu_exchange.stream_out @a.bcast to 0
    ipu_exchange.stream_out @a.bcast to 0
  }
}
