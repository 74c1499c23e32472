// RUN: ipu-opt %s -split-input-file -ipu-schedule-exchange -verify-diagnostics | FileCheck %s
//
// The buffers are placed (as --ipu-place-storage placed them): the
// exchange's rules depend on the addresses.

// Four arrival tiles each send 2 rows (16 words) to both tiles of their
// block row: one of those is the sender itself, a local copy (each tile
// copies 64 bytes: 288 + 8 cycles); each tile receives 16 words over the
// exchange. Every message starts late enough (28-29 events) that its
// receiver's source select falls after the phase entry: ttm is negative
// between neighbouring tiles.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @mm {
    ipu_tile.buffer @arg0 : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 385176
    ipu_tile.buffer @lhs : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard at 385048
    ipu_exchange.stream_in @arg0 from 0
    ipu_exchange.sync
    // CHECK: ipu_exchange.phase @gather attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 4, bound = 76, horizon = 76, runs = dense<[0, 0, 16, 28, 0, 1, 0, 16, 29, 0, 2, 0, 16, 28, 0, 3, 0, 16, 29, 0]> : tensor<20xi32>>}
    // expected-remark @+1 {{scheduled transfers=4 lowerBound=76 endpointEvents=16 latency=60 horizon=76 horizonOverBound=1.000 lowerBoundGap=0 strategy=timed runs=4 pairedRuns=0 localCopyWords=64 phaseCycles=972 fixedCycles=600 localCopyCycles=296 codeBytes=96 pointerEvents=4 sourceEvents=8}}
    ipu_exchange.phase @gather {
      ipu_exchange.copy @arg0 to @lhs
    }
    ipu_exchange.stream_out @lhs to 0
  }
}

// -----

// Two copies in one phase share the timetable; transfers are numbered in
// copy order.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @two {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 385184
    ipu_tile.buffer @a.t : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 3, strides = [-1, 0], replicas = 1, replica_stride = 0>> in standard at 385200
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 385056
    ipu_tile.buffer @b.all : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 4, replica_stride = 1>> in standard at 385120
    // CHECK: ipu_exchange.phase @both attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 5, bound = 80, horizon = 81, runs = dense<[0, 0, 4, 47, 0, 1, 0, 4, 47, 0, 2, 0, 4, 45, 0, 3, 0, 4, 27, 0, 4, 0, 16, 31, 0]> : tensor<25xi32>>}
    // expected-remark @+1 {{scheduled transfers=5 lowerBound=80 endpointEvents=20 latency=60 horizon=81 horizonOverBound=1.012 lowerBoundGap=1 strategy=timed runs=5 pairedRuns=0 localCopyWords=16 phaseCycles=977 fixedCycles=600 localCopyCycles=296 codeBytes=124 pointerEvents=7 sourceEvents=11}}
    ipu_exchange.phase @both {
      ipu_exchange.copy @a to @a.t
      ipu_exchange.copy @b to @b.all
    }
  }
}

// -----

// Rows of 3 f16 elements split by columns are not whole 32-bit words.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @odd {
    ipu_tile.buffer @a : tensor<2x3xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<2x3xf16, #ipu_tile.layout<grid = [1, 3], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @p {
      // expected-error @+1 {{cannot rearrange @a into @b}}
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

// Three broadcasts, each from one tile to the other two: every tile sends 4
// words and receives 8; every pair of broadcasts shares a destination.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @cyclic {
    ipu_tile.buffer @x : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 385064
    ipu_tile.buffer @y : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 1, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 385064
    ipu_tile.buffer @z : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 385064
    ipu_tile.buffer @x.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [1, 2]>> in standard at 385080
    ipu_tile.buffer @y.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [2, 0]>> in standard at 385096
    ipu_tile.buffer @z.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [0, 1]>> in standard at 385112
    // CHECK: ipu_exchange.phase @rotate attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 3, bound = 68, horizon = 72, runs = dense<[0, 0, 4, 31, 0, 1, 0, 4, 39, 0, 2, 0, 4, 33, 0]> : tensor<15xi32>>}
    // expected-remark @+1 {{scheduled transfers=3 lowerBound=68 endpointEvents=8 latency=60 horizon=72 horizonOverBound=1.059 lowerBoundGap=4 strategy=timed runs=3 pairedRuns=0 localCopyWords=0 phaseCycles=672 fixedCycles=600 localCopyCycles=0 codeBytes=100 pointerEvents=5 sourceEvents=10}}
    ipu_exchange.phase @rotate {
      ipu_exchange.copy @x to @x.all
      ipu_exchange.copy @y to @y.all
      ipu_exchange.copy @z to @z.all
    }
  }
}

// -----

// Unplaced buffers have no addresses to schedule on.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @unplaced {
    // expected-error @+1 {{buffer has no address: run --ipu-place-storage first}}
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @a.t : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 3, strides = [-1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @p {
      ipu_exchange.copy @a to @a.t
    }
  }
}
