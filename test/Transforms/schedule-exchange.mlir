// RUN: ipu-opt %s -split-input-file -ipu-schedule-exchange -verify-diagnostics | FileCheck %s

// Four arrival tiles each send 2 rows (16 words) to both tiles of their
// block row; each destination receives 32 words: the endpoint bound.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @mm {
    ipu_tile.buffer @arg0 : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @lhs : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_exchange.stream_in @arg0 from 0
    ipu_exchange.sync
    // CHECK: ipu_exchange.phase @gather attributes {schedule = #ipu_exchange.schedule<strategy = greedy, transfers = 4, bound = 32, horizon = 32, runs = dense<[0, 0, 16, 0, 1, 0, 16, 16, 2, 0, 16, 0, 3, 0, 16, 16]> : tensor<16xi32>>}
    // expected-remark @+1 {{scheduled transfers=4 endpointLowerBound=32 horizon=32 horizonOverBound=1.000 lowerBoundGap=0 strategy=greedy runs=4 phaseCycles=100}}
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
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @a.t : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 3, strides = [-1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b.all : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 4, replica_stride = 1>> in standard
    // CHECK: ipu_exchange.phase @both attributes {schedule = #ipu_exchange.schedule<strategy = {{[a-z]+}}, transfers = 5, bound = 20
    // expected-remark @+1 {{scheduled transfers=5 endpointLowerBound=20}}
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
// words and receives 8, but every pair of broadcasts shares a destination,
// so they run one after another: 12 cycles, the tighter bound.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @cyclic {
    ipu_tile.buffer @x : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @y : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 1, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @z : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @x.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [1, 2]>> in standard
    ipu_tile.buffer @y.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [2, 0]>> in standard
    ipu_tile.buffer @z.all : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 0, tile_map = [0, 1]>> in standard
    // CHECK: ipu_exchange.phase @rotate attributes {schedule = #ipu_exchange.schedule<strategy = {{[a-z]+}}, transfers = 3, bound = 8, horizon = 12
    // expected-remark @+1 {{scheduled transfers=3 endpointLowerBound=8 horizon=12 horizonOverBound=1.500 lowerBoundGap=4 strategy=greedy runs=3 phaseCycles=100 tighterBound=12 horizonOverTighterBound=1.000}}
    ipu_exchange.phase @rotate {
      ipu_exchange.copy @x to @x.all
      ipu_exchange.copy @y to @y.all
      ipu_exchange.copy @z to @z.all
    }
  }
}
