// RUN: ipu-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{runs must be quintuples (transfer, first word, words, start, paired), got 3 integers}}
func.func private @runs() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 1, bound = 1, horizon = 1, runs = dense<[0, 0, 1]> : tensor<3xi32>>}

// -----

// expected-error @+1 {{horizon 3 is below the lower bound 4}}
func.func private @horizon() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 1, bound = 4, horizon = 3, runs = dense<[0, 0, 3, 0, 0]> : tensor<5xi32>>}

// -----

// expected-error @+1 {{run 0 names transfer 2, the phase has 2}}
func.func private @transfer() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 2, bound = 1, horizon = 4, runs = dense<[2, 0, 1, 0, 0]> : tensor<5xi32>>}

// -----

// expected-error @+1 {{run 0 needs a non-negative first word and start and a positive word count}}
func.func private @words() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 1, bound = 1, horizon = 4, runs = dense<[0, 0, 0, 0, 0]> : tensor<5xi32>>}

// -----

// expected-error @+1 {{run 0 sends until event 6, after the horizon 4}}
func.func private @late() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 1, bound = 1, horizon = 4, runs = dense<[0, 0, 2, 4, 0]> : tensor<5xi32>>}

// -----

// A paired run sends two words an event.
// expected-error @+1 {{run 0 sends until event 7, after the horizon 6}}
func.func private @pairedLate() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = 1, bound = 1, horizon = 6, runs = dense<[0, 0, 6, 4, 1]> : tensor<5xi32>>}

// -----

// expected-error @+1 {{run 0 has paired = 2; it is 0 or 1}}
func.func private @pairedFlag() attributes {s = #ipu_exchange.schedule<strategy = timed, transfers = 1, bound = 1, horizon = 9, runs = dense<[0, 0, 2, 0, 2]> : tensor<5xi32>>}

// -----

// expected-error @+1 {{transfers, bound and horizon must not be negative}}
func.func private @negative() attributes {s = #ipu_exchange.schedule<strategy = greedy, transfers = -1, bound = 1, horizon = 4, runs = dense<[0, 0, 2, 0, 0]> : tensor<5xi32>>}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{has no copies}}
    ipu_exchange.phase @empty {
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{body may only hold ipu_exchange.copy, got ipu_exchange.sync}}
    ipu_exchange.phase @wrong {
      ipu_exchange.sync
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x8xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @shape {
      // expected-error @+1 {{source and dest hold different tensors}}
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @self {
      // expected-error @+1 {{copies buffer @a onto itself}}
      ipu_exchange.copy @a to @a
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @missing {
      // expected-error @+1 {{dest @nowhere is not an ipu_tile.buffer}}
      ipu_exchange.copy @a to @nowhere
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{buffer @ghost is not an ipu_tile.buffer}}
    ipu_exchange.stream_in @ghost from 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{result index must not be negative}}
    ipu_exchange.stream_out @a to -1
  }
}

// -----

func.func @outside() {
  // expected-error @+1 {{expects parent op 'ipu_exchange.phase'}}
  ipu_exchange.copy @a to @b
  return
}

// -----

// Placed so that the destination overwrites its source on tile 0.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362224
    ipu_exchange.stream_in @a from 0
    ipu_exchange.sync
    ipu_exchange.phase @gather {
      // expected-error @+1 {{destination @b [362224, 362352) overlaps its source @a [362208, 362240) on tile 0}}
      ipu_exchange.copy @a to @b
    }
    ipu_exchange.sync
    ipu_exchange.stream_out @b to 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @twice {
      ipu_exchange.copy @a to @b
      // expected-error @+1 {{writes @b, which the copy from @a already writes in phase @twice}}
      ipu_exchange.copy @c to @b
    }
  }
}

// -----

// The same elements in another shape are another tensor.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<2x4x8xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard
    ipu_tile.buffer @b : tensor<8x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @shape {
      // expected-error @+1 {{source and dest hold different tensors}}
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

// Gathering batch-distributed blocks (64 bytes on tiles 0 and 1) onto tile
// 0, batch-local (128 bytes), over the source's bytes there.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<2x4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard at 362208
    ipu_tile.buffer @b : tensor<2x4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362240
    ipu_exchange.stream_in @a from 0
    ipu_exchange.sync
    ipu_exchange.phase @gather {
      // expected-error @+1 {{destination @b [362240, 362368) overlaps its source @a [362208, 362272) on tile 0}}
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<2x8x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 2>> in standard
    ipu_exchange.phase @heads {
      // expected-error @+1 {{a permuted copy moves the 256 elements of its view between buffers of one element type, not 'tensor<8x16xf32}}
      ipu_exchange.copy @a to @b view [8, 4, 8] permutation [1, 0, 2]
    }
  }
}

// -----

// A window must fit the destination, and comes with a view.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @window {
      // expected-error @+1 {{a permuted copy moves the 64 elements of the window of its view of 128 between buffers of one element type, not 'tensor<8x16xf32}}
      ipu_exchange.copy @a to @b view [8, 16] permutation [0, 1] offsets [0, 8] sizes [8, 8]
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.phase @alone {
      // expected-error @+1 {{takes `offsets` and `sizes` together, with a `view`}}
      "ipu_exchange.copy"() <{source = @a, dest = @b, offsets = array<i64: 0, 0>, sizes = array<i64: 8, 4>}> : () -> ()
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<2x8x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 2>> in standard
    ipu_exchange.phase @heads {
      // expected-error @+1 {{permutation moves the last dim (1 last); only the leading dims permute}}
      ipu_exchange.copy @a to @b view [8, 2, 8] permutation [0, 2, 1]
    }
  }
}
