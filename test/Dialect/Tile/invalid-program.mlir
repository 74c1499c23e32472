// What must hold across the steps of a program: placed buffers live at one
// step share no bytes of a tile, and a sync separates a compute set from
// the exchange phases that feed it or read it.
// RUN: ipu-opt %s -split-input-file -verify-diagnostics

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    // expected-error @+1 {{overlaps buffer @a on tile 0, bytes [362272, 362336), while both are live at step 1 ('ipu_exchange.stream_in'): @a holds [362208, 362336), @b [362272, 362400)}}
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362272
    ipu_exchange.stream_in @a from 0
    ipu_exchange.stream_in @b from 1
    ipu_exchange.stream_out @a to 0
    ipu_exchange.stream_out @b to 1
  }
}

// -----

// A weight is resident: a buffer placed over it later in the program
// overlaps it all the same.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @w : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in interleaved at 524288
    // expected-error @+1 {{overlaps buffer @w on tile 2, bytes [524288, 524320), while both are live at step 2 ('ipu_exchange.stream_in')}}
    ipu_tile.buffer @x : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 2, strides = [0, 0], replicas = 1, replica_stride = 0>> in interleaved at 524288
    ipu_exchange.stream_in @w from 0 {weight}
    ipu_exchange.sync
    ipu_exchange.stream_in @x from 1
    ipu_exchange.stream_out @x to 0
  }
}

// -----

// Equal addresses: the second buffer starts where the first does.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{overlaps buffer @b on tile 3, bytes [362208, 362224), while both are live at step 1 ('ipu_exchange.stream_in'): @b holds [362208, 362224), @a [362208, 362240)}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @b : tensor<1x4xf32, #ipu_tile.layout<grid = [1, 1], base = 3, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_exchange.stream_in @b from 1
    ipu_exchange.stream_in @a from 0
    ipu_exchange.stream_out @a to 0
    ipu_exchange.stream_out @b to 1
  }
}

// -----

// No syncs at all: the compute set would read the gathered buffer before
// the exchange has written it.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [-1, 0], replicas = 1, replica_stride = 0, tile_map = [3, 2, 1, 0]>> in standard
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [-1, 0], replicas = 1, replica_stride = 0, tile_map = [3, 2, 1, 0]>> in standard
    ipu_exchange.stream_in @a from 0
    ipu_exchange.phase @gather {
      ipu_exchange.copy @a to @b
    }
    // expected-error @+1 {{'ipu_tile.compute_set' op uses buffer @b, which 'ipu_exchange.phase' @gather writes in the same superstep: an ipu_exchange.sync must separate them}}
    ipu_tile.compute_set @move kernel "copy" operands [@b, @c] tiles [0, 1, 2, 3] params [32, 32, 32, 32]
    ipu_exchange.stream_out @c to 0
  }
}

// -----

// A phase reading a compute set's result needs a sync after the compute.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @a from 0
    ipu_exchange.sync
    ipu_tile.compute_set @move kernel "copy" operands [@a, @b] tiles [0, 1, 2, 3] params [32, 32, 32, 32]
    // expected-error @+1 {{'ipu_exchange.phase' op reads buffer @b, which 'ipu_tile.compute_set' @move uses in the same superstep: an ipu_exchange.sync must separate them}}
    ipu_exchange.phase @collect {
      ipu_exchange.copy @b to @c
    }
    ipu_exchange.sync
    ipu_exchange.stream_out @c to 0
  }
}

// -----

// Two phases of one superstep share buffers only to read them.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 1], base = 2, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @a from 0
    ipu_exchange.sync
    ipu_exchange.phase @first {
      ipu_exchange.copy @a to @b
    }
    // expected-error @+1 {{'ipu_exchange.phase' op reads buffer @b, which 'ipu_exchange.phase' @first writes in the same superstep: an ipu_exchange.sync must separate them}}
    ipu_exchange.phase @second {
      ipu_exchange.copy @b to @c
    }
    ipu_exchange.sync
    ipu_exchange.stream_out @c to 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{'func.func' op is not a step an ipu_tile.program can run (host streams, syncs, exchange phases, compute sets) nor a buffer}}
    func.func private @f()
  }
}
