// RUN: ipu-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown target 'ipu99'; known: ipu21, ipu21-N (1 <= N <= 1472), either followed by +CONSTANT=VALUE overrides of cost constants}}
module attributes {ipu_tile.target = #ipu_tile.target<"ipu99">} {}

// -----

// expected-error @+1 {{'ipu_tile.target' must be a #ipu_tile.target, got "ipu21"}}
module attributes {ipu_tile.target = "ipu21"} {}

// -----

// expected-error @+1 {{layout needs a 2-D grid and 2 strides, got 3 and 2}}
func.func private @grid_rank() attributes {l = #ipu_tile.layout<grid = [1, 1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{grid [0, 1] must be at least 1 in each dimension}}
func.func private @grid_zero() attributes {l = #ipu_tile.layout<grid = [0, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{base tile must not be negative, got -1}}
func.func private @base() attributes {l = #ipu_tile.layout<grid = [1, 1], base = -1, strides = [1, 0], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{replicas must be at least 1, got 0}}
func.func private @replicas() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 0, replica_stride = 0>}

// -----

// expected-error @+1 {{grid [16, 1] is larger than the tensor 8x4}}
func.func private @grid_too_big(tensor<8x4xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>>)

// -----

// A vector is one row: 8 columns cannot split into 16 blocks.
// expected-error @+1 {{grid [1, 16] is larger than the tensor 1x8}}
func.func private @rank1(tensor<8xf32, #ipu_tile.layout<grid = [1, 16], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0>>)

// -----

// expected-error @+1 {{element type 'i32' is not f32, f16, f8E4M3FN or f8E5M2}}
func.func private @int(tensor<8x4xi32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>>)

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'memory_class' [standard, interleaved]}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in fast
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{type must be a static tensor of rank 1 or more with a #ipu_tile.layout encoding, got 'tensor<8x4xf32>'}}
    ipu_tile.buffer @a : tensor<8x4xf32> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4'}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [8, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4'}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 2, replica_stride = 1>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{needs 262144 bytes per tile, standard memory has 162080}}
    ipu_tile.buffer @a : tensor<256x256xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{address 311296 + 128 bytes lies outside standard memory [362208, 524288)}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 311296
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{unknown kernel 'conv'}}
    ipu_tile.compute_set @cs kernel "conv" operands [@a] tiles [0] params []
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{kernel 'gemm' takes 3 operands, got 1}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a] tiles [0] params [8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{expected 16 params (2 tiles x 8), got 8}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [0, 1] params [8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{tile 4 is outside the target}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [4] params [8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{tile 0 has two vertices}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [0, 0] params [8, 4, 4, 0, 0, 0, 0, 0, 8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: gemm: parameter 'accType' = 2 is not f32 or f16}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [0] params [8, 4, 4, 0, 2, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'lhs' spans 512 bytes, buffer @a holds 128}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [0] params [8, 16, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 1: operand 'lhs' buffer @a has no block on that tile}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [1] params [8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{operand @missing is not an ipu_tile.buffer}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@missing, @missing, @missing] tiles [0] params [8, 4, 4, 0, 0, 0, 0, 0]
  }
}

// -----

// expected-error @+1 {{reference entries must be dictionaries with 'op' (string), 'arguments' (array<i32>), 'result' (integer) and 'type' (element type), got "matmul"}}
ipu_tile.program @p attributes {reference = ["matmul"]} {
}

// -----

// expected-error @+1 {{row_splits needs 3 boundaries for the grid, got 2}}
func.func private @splits_count() attributes {l = #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, row_splits = [0, 4]>}

// -----

// expected-error @+1 {{col_splits must increase: boundary 2 (3) follows 3}}
func.func private @splits_order() attributes {l = #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0, col_splits = [0, 3, 3]>}

// -----

// expected-error @+1 {{row_splits must start at 0, got 1}}
func.func private @splits_start() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [1, 4]>}

// -----

// expected-error @+1 {{tile_map needs 4 tiles (blocks x replicas), got 3}}
func.func private @map_size() attributes {l = #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 2, replica_stride = 2, tile_map = [0, 1, 2]>}

// -----

// expected-error @+1 {{tile_map holds negative tile -1}}
func.func private @map_negative() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [-1]>}

// -----

// expected-error @+1 {{'tile_map' given twice}}
func.func private @map_twice() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [0], tile_map = [0]>}

// -----

// expected-error @+1 {{expected row_splits, col_splits, tile_map, batch_grid, batch_stride, batch_splits, serial or folded, got 'tiles'}}
func.func private @unknown_field() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tiles = [0]>}

// -----

// expected-error @+1 {{row_splits end at 9, the tensor has 10 rows}}
func.func private @splits_end(tensor<10x4xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, row_splits = [0, 5, 9]>>)

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4': block (1, 0) replica 0 and block (0, 0) replica 0 share tile 2}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, tile_map = [2, 2]>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: parameter 'weightClass' = 1 but operand 'rhs' buffer @a is in standard memory}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @a, @a] tiles [0] params [8, 4, 4, 0, 0, 0, 1, 0]
  }
}

// -----

// An element type that fails to parse reaches the layout's verifier as a
// null type: an error, not a crash (found by the compile fuzzer).
// expected-error @+2 {{undefined symbol alias id 'f16'}}
// expected-error @+1 {{#ipu_tile.layout: the element type did not parse}}
func.func private @unparsed_element(tensor<8x16x!f16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>>)

// -----

// Values the layout model holds in 32 bits are range-checked, never
// truncated: tile 2^32 would become tile 0.
// expected-error @+1 {{tile_map[1] = 4294967296 is out of range [0, 2^32)}}
func.func private @map_wide() attributes {l = #ipu_tile.layout<grid = [2, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, tile_map = [1, 4294967296]>}

// -----

// expected-error @+1 {{grid[0] = 4294967297 is out of range [1, 2^32)}}
func.func private @grid_wide() attributes {l = #ipu_tile.layout<grid = [4294967297, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{base tile 4294967296 is out of range [0, 2^32)}}
func.func private @base_wide() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 4294967296, strides = [1, 0], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{replicas = 4294967298 is out of range [1, 2^32)}}
func.func private @replicas_wide() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 4294967298, replica_stride = 1>}

// -----

// expected-error @+1 {{strides[1] = 2147483648 is out of range [-2^31, 2^31)}}
func.func private @stride_wide() attributes {l = #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 2147483648], replicas = 1, replica_stride = 0>}

// -----

// expected-error @+1 {{replica_stride = -2147483649 is out of range [-2^31, 2^31)}}
func.func private @replica_stride_wide() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = -2147483649>}

// -----

// expected-error @+1 {{reference 'result' = 4294967296 : i64 is out of range [-1, 2^31)}}
ipu_tile.program @result_wide attributes {reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 4294967296 : i64, type = f32}]} {
}

// -----

// expected-error @+1 {{'flops' = -1 must not be negative}}
ipu_tile.program @flops attributes {flops = -1 : i64} {
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{'reserved_bytes' = 162088 : i64 is out of range [0, 162080] (the standard memory of 'ipu21-4')}}
  ipu_tile.program @reserved attributes {reserved_bytes = 162088 : i64} {
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{address 362212 is not a multiple of 8 bytes, the alignment --ipu-place-storage gives buffers}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362212
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{address 524292 is not a multiple of 8 bytes}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in interleaved at 524292
  }
}

// -----

// Placed over the exchange code and vertex state the placement kept free.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p attributes {reserved_bytes = 144 : i64} {
    // expected-error @+1 {{address 362344 lies over the program's reserved bytes: 50912 of runtime image and 144 of exchange code and vertex state leave standard buffers from 362352}}
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362344
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362352
  }
}

// -----

// A vertex works on exactly its tile's block: m = 2 would leave half of
// the 4-row block of @a unread and half of @c unwritten.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 1: operand 'lhs' is a 2x16 f16 block by its parameters, but buffer @a holds its 4x16 f16 block (0, 0) there}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0, 1, 2, 3]
        params [4, 16, 2, 1, 0, 0, 1, 0, 2, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0, 4, 16, 2, 1, 0, 0, 1, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_tile.buffer @b : tensor<16x4xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
    ipu_tile.buffer @c : tensor<8x4xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'out' is a 4x2 f16 block by its parameters, but buffer @c holds its 4x2 f32 block (0, 0) there}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0]
        params [4, 16, 2, 1, 0, 1, 1, 0]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in interleaved
    // expected-error @+1 {{vertex on tile 2: operand 'src' is 16 bytes by its parameters, but buffer @a holds the 32 bytes of its 2x4 f32 block (2, 0) there}}
    ipu_tile.compute_set @stage kernel "copy" operands [@a, @b] tiles [0, 1, 2, 3] params [32, 32, 16, 32]
  }
}

// -----

// expected-error @+1 {{reference 'inner' (blocks of K accumulated apart) must be an integer in [1, 2^32), got 0 : i32}}
ipu_tile.program @inner attributes {reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 0 : i32, type = f32, inner = 0 : i32}]} {
}

// -----

// N-D layouts: the leading dimensions are batches.

// expected-error @+1 {{#ipu_tile.layout applies to tensors of rank 1 (a vector is one row) or more, got rank 0}}
func.func private @rank0(tensor<f32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>>)

// -----

// expected-error @+1 {{batch_grid must be at least 1, got 0}}
func.func private @batch_grid_zero() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 0>}

// -----

// expected-error @+1 {{batch_grid = 4 is not in [1, batches = 3] for the tensor 3x8x4}}
func.func private @batch_grid_large(tensor<3x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 4, batch_stride = 1>>)

// -----

// Batches multiply across every leading dimension: 2 x 3 = 6.
// expected-error @+1 {{batch_grid = 7 is not in [1, batches = 6] for the tensor 2x3x8x4}}
func.func private @batch_grid_4d(tensor<2x3x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 7, batch_stride = 1>>)

// -----

// expected-error @+1 {{batch_grid = 2 needs leading batch dimensions, but the tensor 8x4 is 2-D (one batch)}}
func.func private @batch_grid_2d(tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>>)

// -----

// expected-error @+1 {{batch_stride = 2147483648 is out of range [-2^31, 2^31)}}
func.func private @batch_stride_range() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 2147483648>}

// -----

// expected-error @+1 {{'batch_grid' given twice}}
func.func private @batch_grid_twice() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_grid = 2>}

// -----

// expected-error @+1 {{batch_splits needs 3 boundaries for the grid, got 2}}
func.func private @batch_splits_count() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1, batch_splits = [0, 3]>}

// -----

// expected-error @+1 {{batch_splits must start at 0, got 1}}
func.func private @batch_splits_start() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1, batch_splits = [1, 2, 3]>}

// -----

// expected-error @+1 {{batch_splits must increase: boundary 2 (2) follows 2}}
func.func private @batch_splits_order() attributes {l = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1, batch_splits = [0, 2, 2]>}

// -----

// expected-error @+1 {{batch_splits end at 5, the tensor 2x3x8x4 has 6 batches}}
func.func private @batch_splits_end(tensor<2x3x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1, batch_splits = [0, 1, 5]>>)

// -----

// A tile map names a tile per (batch block, block, replica).
// expected-error @+1 {{tile_map needs 4 tiles (batch blocks x blocks x replicas), got 2}}
func.func private @batch_map_size() attributes {l = #ipu_tile.layout<grid = [2, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, tile_map = [0, 1]>}

// -----

// The grid's two entries bound the last two dimensions, not the leading ones.
// expected-error @+1 {{grid [4, 1] is larger than the tensor 2x4}}
func.func private @batch_grid_rows(tensor<8x2x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>>)

// -----

// BlockLayout::validate judges N-D layouts on the target, naming the batch
// block.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4': block (1, 0, 0) replica 0 and block (0, 0, 0) replica 0 share tile 0}}
    ipu_tile.buffer @a : tensor<2x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4': block (2, 0, 0) replica 0 is on tile 4, outside [0, 4)}}
    ipu_tile.buffer @a : tensor<3x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 3, batch_stride = 2>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{layout does not fit target 'ipu21-4': 5 x 1 x 1 blocks x 1 replicas need more than the 4 tiles}}
    ipu_tile.buffer @a : tensor<5x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 5, batch_stride = 1>> in standard
  }
}

// -----

// A vertex works on its tile's whole block: every batch the block holds.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @src : tensor<4x2x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard
    ipu_tile.buffer @dst : tensor<4x2x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, batch_stride = 1>> in standard
    // expected-error @+1 {{vertex on tile 1: operand 'src' is 32 bytes by its parameters, but buffer @src holds the 64 bytes of its 2x2x4 f32 block (1, 0, 0) there}}
    ipu_tile.compute_set @cs kernel "copy" operands [@src, @dst] tiles [1] params [32]
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<2x4x8xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @c : tensor<2x4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'lhs' is a 4x8 f16 block by its parameters, but buffer @a holds its 2x4x8 f16 block (0, 0) there}}
    ipu_tile.compute_set @cs kernel "gemm" operands [@a, @b, @c] tiles [0] params [4, 8, 4, 1, 0, 0, 0, 0]
  }
}

// -----

// expected-error @+1 {{reference 'transpose_rhs' must be a bool, got 1 : i32}}
ipu_tile.program @p attributes {reference = [{op = "matmul", arguments = array<i32: 0, 1>, result = 0 : i32, type = f32, transpose_rhs = 1 : i32}]} {
}

// -----

// 2^62 batches of one f32 are 2^64 bytes: refused, not wrapped to 0.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{more than 2^64 bytes: no standard memory holds a block of it}}
    ipu_tile.buffer @a : tensor<4611686018427387904x1x1xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{more than 2^64 bytes: no interleaved memory holds a block of it}}
    ipu_tile.buffer @a : tensor<1x4611686018427387904xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in interleaved
  }
}

// -----

// A folded layout lays out the leading dims as rows: it has no batches, and
// a 2-D tensor has nothing to fold.
// expected-error @+1 {{a folded layout has no batches: batch_grid, batch_stride and batch_splits must be left out}}
func.func private @folded_batches() -> tensor<2x8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, batch_grid = 2, folded>>

// -----

// expected-error @+1 {{folded needs leading dimensions to fold into the rows, but the tensor 8x4 is 2-D}}
func.func private @folded_matrix() -> tensor<8x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, folded>>

// -----

// The grid splits the folded rows: 2 x 8 = 16 rows hold 16 blocks, not 17.
// expected-error @+1 {{grid [17, 1] is larger than the tensor 16x4}}
func.func private @folded_grid() -> tensor<2x8x4xf32, #ipu_tile.layout<grid = [17, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, folded>>

// -----

// What the passes record on a program is typed and range-checked.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{'memory_peak' must hold two byte counts (standard, interleaved), got array<i64: 128>}}
  ipu_tile.program @p attributes {memory_peak = array<i64: 128>} {
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{'estimated_cycles' = -5 must not be negative}}
  ipu_tile.program @p attributes {estimated_cycles = -5 : i64} {
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{attribute 'reserved_bytes' failed to satisfy constraint: 64-bit signless integer attribute}}
  ipu_tile.program @p attributes {reserved_bytes = "many"} {
  }
}

// -----

// expected-error @+1 {{argument 0's 'ipu_tile.batch_dim' must be a dimension of its ranked tensor type 'tensor<2x8x32xf32>' (0 to rank - 1), got 3 : i64}}
func.func private @batch_dim_past_rank(tensor<2x8x32xf32> {ipu_tile.batch_dim = 3 : i64})

// -----

// expected-error @+1 {{argument 0's 'ipu_tile.batch_dim' must be a dimension of its ranked tensor type 'tensor<2x8x32xf32>' (0 to rank - 1), got -1 : i64}}
func.func private @batch_dim_negative(tensor<2x8x32xf32> {ipu_tile.batch_dim = -1 : i64})

// -----

// expected-error @+1 {{argument 0's 'ipu_tile.batch_dim' must be a dimension of its ranked tensor type 'tensor<2x8x32xf32>' (0 to rank - 1), got "0"}}
func.func private @batch_dim_text(tensor<2x8x32xf32> {ipu_tile.batch_dim = "0"})
