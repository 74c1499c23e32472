// RUN: ipu-opt %s -split-input-file -verify-diagnostics

func.func @arg_type(%x: tensor<8x32xf16>) -> tensor<8x32xf16> {
  // expected-error @+1 {{body argument 0 is 'f32' but input 0 holds 'f16'}}
  %y = ipu_tile.elementwise %x : tensor<8x32xf16> -> tensor<8x32xf16> {
  ^bb0(%v: f32):
    %t = arith.truncf %v : f32 to f16
    ipu_tile.yield %t : f16
  }
  return %y : tensor<8x32xf16>
}

// -----

func.func @yield_type(%x: tensor<8x32xf16>) -> tensor<8x32xf32> {
  // expected-error @+1 {{body yields 'f16' for a result of 'f32'}}
  %y = ipu_tile.elementwise %x : tensor<8x32xf16> -> tensor<8x32xf32> {
  ^bb0(%v: f16):
    ipu_tile.yield %v : f16
  }
  return %y : tensor<8x32xf32>
}

// -----

func.func @not_broadcastable(%x: tensor<8x32xf16>, %c: tensor<8xf16>) -> tensor<8x32xf16> {
  // expected-error @+1 {{input 1 of type 'tensor<8xf16>' is neither of the shape 8x32 the op iterates over, nor a vector of its last dimension (32), nor a single element, nor one value per row}}
  %y = ipu_tile.elementwise %x, %c : tensor<8x32xf16>, tensor<8xf16> -> tensor<8x32xf16> {
  ^bb0(%v: f16, %w: f16):
    %s = arith.addf %v, %w : f16
    ipu_tile.yield %s : f16
  }
  return %y : tensor<8x32xf16>
}

// -----

func.func @no_full_input(%b: tensor<32xf16>) -> tensor<8x32xf16> {
  // expected-error @+1 {{needs an input of the shape it iterates over 8, 32}}
  %y = ipu_tile.elementwise %b : tensor<32xf16> -> tensor<8x32xf16> {
  ^bb0(%v: f16):
    ipu_tile.yield %v : f16
  }
  return %y : tensor<8x32xf16>
}

// -----

func.func @f8_arithmetic(%x: tensor<8x32xf8E4M3FN>) -> tensor<8x32xf8E4M3FN> {
  // expected-error @+1 {{body: body op 0 'arith.addf' computes in f8E4M3FN; extend f8 values to f16 or f32 first}}
  %y = ipu_tile.elementwise %x : tensor<8x32xf8E4M3FN> -> tensor<8x32xf8E4M3FN> {
  ^bb0(%v: f8E4M3FN):
    %s = arith.addf %v, %v : f8E4M3FN
    ipu_tile.yield %s : f8E4M3FN
  }
  return %y : tensor<8x32xf8E4M3FN>
}

// -----

func.func @unsupported(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %y = ipu_tile.elementwise %x : tensor<8x32xf32> -> tensor<8x32xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.cos' op cannot run in a tile kernel}}
    %c = math.cos %v : f32
    ipu_tile.yield %c : f32
  }
  return %y : tensor<8x32xf32>
}

// -----

func.func @rounding(%x: tensor<8x32xf32>) -> tensor<8x32xf16> {
  %y = ipu_tile.elementwise %x : tensor<8x32xf32> -> tensor<8x32xf16> {
  ^bb0(%v: f32):
    // expected-error @+1 {{rounds other than to nearest even, which no tile kernel does}}
    %c = arith.truncf %v toward_zero : f32 to f16
    ipu_tile.yield %c : f16
  }
  return %y : tensor<8x32xf16>
}

// -----

ipu_tile.program @p {
  // expected-error @+1 {{broadcast 'diagonal' is not "full", "row", "scalar" or "column"}}
  ipu_tile.kernel @k broadcasts ["full", "diagonal"] {
  ^bb0(%v: f16, %w: f16):
    %s = arith.addf %v, %w : f16
    ipu_tile.yield %s : f16
  }
}

// -----

ipu_tile.program @p {
  // expected-error @+1 {{needs a "full" input: the block a vertex iterates over is its}}
  ipu_tile.kernel @k broadcasts ["row"] {
  ^bb0(%v: f16):
    ipu_tile.yield %v : f16
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @x : tensor<8x32xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @y : tensor<8x32xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{unknown kernel 'ew9.kernel': neither a device kernel nor an ipu_tile.kernel of the program}}
    ipu_tile.compute_set @ew kernel "ew9.kernel" operands [@x, @y] tiles [0, 1]
  }
}

// -----

// The bias's column blocks must be the output's: here the output is split
// in two column blocks, the bias is whole.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.kernel @k broadcasts ["full", "row"] {
    ^bb0(%v: f16, %w: f16):
      %s = arith.addf %v, %w : f16
      ipu_tile.yield %s : f16
    }
    ipu_tile.buffer @x : tensor<8x32xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<32xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_tile.buffer @y : tensor<8x32xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{vertex on tile 0: operand 'in1' is a 1x16 f16 block by its parameters, but buffer @b holds its 1x32 f16 block (0, 0) there}}
    ipu_tile.compute_set @ew kernel "k" operands [@x, @b, @y] tiles [0, 1]
  }
}

// -----

func.func @reduce_without_init(%x: tensor<8x32xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{takes `reduce` and `init` together}}
  %y = "ipu_tile.elementwise"(%x) ({
  ^bb0(%v: f32):
    ipu_tile.yield %v : f32
  }) {reduce = 1 : i32} : (tensor<8x32xf32>) -> tensor<8x1xf32>
  return %y : tensor<8x1xf32>
}

// -----

func.func @reduce_into_f16(%x: tensor<8x32xf16>) -> tensor<8x1xf16> {
  // expected-error @+1 {{reduces rows into one f32 value each: the result must be [..., R, 1] of f32, got 'tensor<8x1xf16>'}}
  %y = ipu_tile.elementwise reduce add init 0.0 %x : tensor<8x32xf16> -> tensor<8x1xf16> {
  ^bb0(%v: f16):
    ipu_tile.yield %v : f16
  }
  return %y : tensor<8x1xf16>
}

// -----

func.func @reduce_not_rows(%x: tensor<8x32xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{reduces rows into one f32 value each: the result must be [..., R, 1] of f32, got 'tensor<8x2xf32>'}}
  %y = ipu_tile.elementwise reduce max init 0xFFF0000000000000 %x : tensor<8x32xf32> -> tensor<8x2xf32> {
  ^bb0(%v: f32):
    ipu_tile.yield %v : f32
  }
  return %y : tensor<8x2xf32>
}

// -----

func.func @column_of_other_rows(%x: tensor<8x32xf32>, %m: tensor<4x1xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{input 1 of type 'tensor<4x1xf32>' is neither of the shape 8x32 the op iterates over}}
  %y = ipu_tile.elementwise %x, %m : tensor<8x32xf32>, tensor<4x1xf32> -> tensor<8x32xf32> {
  ^bb0(%v: f32, %w: f32):
    %s = arith.subf %v, %w : f32
    ipu_tile.yield %s : f32
  }
  return %y : tensor<8x32xf32>
}

// -----

ipu_tile.program @p {
  // expected-error @+1 {{body: a add reduction accumulates in f32, not f16}}
  ipu_tile.kernel @k broadcasts ["full"] reduce add init 0.0 {
  ^bb0(%v: f16):
    ipu_tile.yield %v : f16
  }
}
