// RUN: ipu-opt %s -split-input-file -ipu-place-storage -verify-diagnostics | FileCheck %s

// Buffers live at the same time get disjoint addresses. Weights stay
// resident. The runtime (50,912 bytes, to 0x586E0) and the vertex state
// and exchange code (reserved_bytes) sit below the first buffer: the code
// on a 16 KiB element of its own from 0x5C000, with its 64-byte fetch
// guard, so buffers start at 0x60000 (31,008 reserved bytes). The gather
// reads @arg0 and writes @lhs: with room to spare they take SRAM conflict
// units (16 KiB elements) of their own, @arg0 from the next element at
// 0x64000, so that the exchange may read one while it writes the other;
// the peak pays for it (16,448 bytes against the 192-byte bound).
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @mm
  // CHECK-SAME: memory_bound = array<i64: 192, 128>, memory_peak = array<i64: 16448, 128>
  // CHECK-SAME: reserved_bytes = 31008
  // CHECK: ipu_tile.buffer @arg0 : {{.*}} in standard at 409600
  // CHECK: ipu_tile.buffer @arg1 : {{.*}} in interleaved at 524288
  // CHECK: ipu_tile.buffer @lhs : {{.*}} in standard at 393216
  // CHECK: ipu_tile.buffer @out : {{.*}} in standard at 393344
  // expected-remark @+1 {{placed buffers=4 reservedBytes=31008 peakStandardBytes=16448 boundStandardBytes=192 peakInterleavedBytes=128 boundInterleavedBytes=128 standardBytesAvailable=162080 interleavedBytesAvailable=424880}}
  ipu_tile.program @mm {
    ipu_tile.buffer @arg0 : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @arg1 : tensor<16x8xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
    ipu_tile.buffer @lhs : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_tile.buffer @out : tensor<8x8xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @arg0 from 0
    ipu_exchange.stream_in @arg1 from 1 {weight}
    ipu_exchange.sync
    ipu_exchange.phase @gather {
      ipu_exchange.copy @arg0 to @lhs
    }
    ipu_exchange.sync
    ipu_tile.compute_set @partials kernel "gemm" operands [@lhs, @arg1, @out] tiles [0, 1, 2, 3] params [4, 16, 4, 1, 0, 0, 1, 0, 4, 16, 4, 1, 0, 0, 1, 0, 4, 16, 4, 1, 0, 0, 1, 0, 4, 16, 4, 1, 0, 0, 1, 0]
    ipu_exchange.sync
    ipu_exchange.stream_out @out to 0
  }
}

// -----

// Two 160000-byte buffers live at once on tile 0 cannot share 162,080 bytes. The
// memory map comes as notes at each buffer's op: the one that does not fit,
// then the ones live beside it, largest first, with their addresses.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error-re @+1 {{storage does not fit on 'ipu21-4': {{.*}}tile 0{{.*}}standard{{.*}}160000 bytes}}
  ipu_tile.program @overflow {
    // expected-note @+1 {{'x' holds [0x586e0, 0x7f7e0) (160000 bytes) on tile 0, live at step 1}}
    ipu_tile.buffer @x : tensor<200x200xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-note @+1 {{'y' needs 160000 standard bytes on tile 0 at step 1, of 162080 allocatable there; the 1 buffers live beside it take 160000}}
    ipu_tile.buffer @y : tensor<200x200xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @x from 0
    ipu_exchange.stream_in @y from 1
    ipu_exchange.stream_out @x to 0
    ipu_exchange.stream_out @y to 1
  }
}

// -----

// Placement comes before scheduling (the exchange's rules depend on the
// addresses): the exchange code is sized from a timed schedule on
// provisional addresses.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @unscheduled
  // CHECK-SAME: reserved_bytes = 31008
  // expected-remark @+1 {{placed buffers=2 reservedBytes=31008 peakStandardBytes=16400 boundStandardBytes=80}}
  ipu_tile.program @unscheduled {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @p {
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

// N-D buffers take their largest block on every tile they span, batches
// included: @local holds all 4 batches of [8 x 4] f32 on tile 0 (512
// bytes), @spread one batch per tile (128 bytes), and both are live at
// once on tile 0, so the max-live bound is 512 + 128.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @batches
  // CHECK-SAME: memory_bound = array<i64: 640, 0>, memory_peak = array<i64: 640, 0>
  // CHECK: ipu_tile.buffer @spread : {{.*}} in standard at
  // CHECK: ipu_tile.buffer @local : {{.*}} in standard at
  // expected-remark-re @+1 {{placed buffers=2 reservedBytes={{[0-9]+}} peakStandardBytes=640 boundStandardBytes=640}}
  ipu_tile.program @batches {
    ipu_tile.buffer @spread : tensor<4x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 4, batch_stride = 1>> in standard
    ipu_tile.buffer @local : tensor<4x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @spread from 0
    ipu_exchange.stream_in @local from 1
    ipu_exchange.stream_out @spread to 0
    ipu_exchange.stream_out @local to 1
  }
}
