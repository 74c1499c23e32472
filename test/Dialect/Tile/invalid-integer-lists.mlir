// RUN: ipu-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{a range's step cannot be 0}}
func.func private @step_zero() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [0 to 4 step 0]>}

// -----

// expected-error @+1 {{the range 4 to 0 step 1 is empty}}
func.func private @empty_range() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [4 to 0]>}

// -----

// expected-error @+1 {{a repeat needs a count of at least 1, got 0}}
func.func private @repeat_none() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [(0) x 0 step 1]>}

// -----

// expected-error @+1 {{the list has more than 16777216 values}}
func.func private @too_long() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [(0 to 1000000) x 1000000000000 step 1]>}

// -----

// expected-error @+1 {{a value of the list leaves the 64-bit integer range}}
func.func private @overflow() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [(9223372036854775800) x 2 step 9223372036854775800]>}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{tile 4294967296 does not fit 32 bits}}
    ipu_tile.compute_set @cs kernel "copy" operands [@a, @a] tiles [0, 4294967296]
  }
}

// -----

// expected-error @+1 {{expected 'x'}}
func.func private @no_count() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [(0, 1)]>}

// -----

// expected-error @+1 {{a block of 1 cannot be split into 2 non-empty parts}}
func.func private @balanced_empty() attributes {l = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, row_splits = balanced 3 into [2, 2]>}

// -----

// expected-error @+1 {{expected 'into'}}
func.func private @balanced_syntax() attributes {l = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, row_splits = balanced 8 [2, 2]>}
