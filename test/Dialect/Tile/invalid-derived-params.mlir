// RUN: ipu-opt %s -split-input-file -verify-diagnostics

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #one> in standard
    ipu_tile.buffer @c : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{kernel 'gemm' needs 'acc_type' (or explicit 'params')}}
    ipu_tile.compute_set @mm kernel "gemm" operands [@a, @b, @c] tiles [0]
  }
}

// -----

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #one> in standard
    ipu_tile.buffer @c : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{gives both 'params' and 'acc_type': the parameters already say what the kernel accumulates in}}
    ipu_tile.compute_set @mm kernel "gemm" operands [@a, @b, @c] tiles [0] params [4, 8, 4, 1, 0, 0, 0, 0] {acc_type = f32}
  }
}

// -----

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #one> in standard
    ipu_tile.buffer @c : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{'acc_type' must be f32 or f16, got 'bf16'}}
    ipu_tile.compute_set @mm kernel "gemm" operands [@a, @b, @c] tiles [0] {acc_type = bf16}
  }
}

// -----

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<4x8xf16, #one> in standard
    // expected-error @+1 {{kernel 'copy' accumulates nothing: 'acc_type' does not apply}}
    ipu_tile.compute_set @cp kernel "copy" operands [@a, @b] tiles [0] {acc_type = f32}
  }
}

// -----

// Derived parameters are checked as given ones are: B's block must have as
// many rows as A's has columns.
#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<6x4xf16, #one> in standard
    ipu_tile.buffer @c : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'rhs' spans 64 bytes, buffer @b holds 48}}
    ipu_tile.compute_set @mm kernel "gemm" operands [@a, @b, @c] tiles [0] {acc_type = f32}
  }
}

// -----

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
#other = #ipu_tile.layout<grid = [1, 1], base = 1, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<8x4xf16, #other> in standard
    ipu_tile.buffer @c : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'rhs' buffer @b has no block on that tile}}
    ipu_tile.compute_set @mm kernel "gemm" operands [@a, @b, @c] tiles [0] {acc_type = f32}
  }
}

// -----

#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @in : tensor<4x6xf32, #one> in standard
    ipu_tile.buffer @out : tensor<4x4xf32, #one> in standard
    // expected-error @+1 {{vertex on tile 0: input rows of 6 elements are not a whole number of 4-element output rows}}
    ipu_tile.compute_set @sum kernel "reduce" operands [@in, @out] tiles [0]
  }
}

// -----

// `tiles of` must name a buffer.
#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<4x8xf16, #one> in standard
    // expected-error @+1 {{tiles of @cp: not an ipu_tile.buffer with a layout}}
    ipu_tile.compute_set @cp kernel "copy" operands [@a, @b] tiles of @cp
  }
}

// -----

// Tiles given twice, as a list and as a buffer's.
#one = #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x8xf16, #one> in standard
    ipu_tile.buffer @b : tensor<4x8xf16, #one> in standard
    // expected-error @+1 {{needs its tiles either as a list or as 'of @buffer', not both}}
    ipu_tile.compute_set @cp kernel "copy" operands [@a, @b] tiles of @b {tiles = array<i32: 0>}
  }
}

// -----

// Explicit parameters follow the buffer's tiles: a row for each of its 4.
#four = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x8xf16, #four> in standard
    ipu_tile.buffer @b : tensor<8x8xf16, #four> in standard
    // expected-error @+1 {{expected 4 params (4 tiles of @b x 1), got 2}}
    ipu_tile.compute_set @cp kernel "copy" operands [@a, @b] tiles of @b params [32, 32]
  }
}
