// RUN: ipu-opt %s -split-input-file -verify-diagnostics

func.func @moves_last_dim(%x: tensor<8x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{permutation moves the last dim (2 last); only the leading dims permute}}
  %y = ipu_tile.permute %x view [1, 8, 2, 8] permutation [0, 1, 3, 2] : tensor<8x16xf32> -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @repeated_dim(%x: tensor<8x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{permutation is not one of the view's 4 dims}}
  %y = ipu_tile.permute %x view [1, 8, 2, 8] permutation [0, 0, 1, 3] : tensor<8x16xf32> -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @wrong_count(%x: tensor<8x16xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{view of 256 elements for a source of 128 and a result of 128}}
  %y = ipu_tile.permute %x view [2, 8, 2, 8] permutation [0, 2, 1, 3] : tensor<8x16xf32> -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

func.func @runs_straddle_rows(%x: tensor<8x16xf32>) -> tensor<32x4xf32> {
  // expected-error @+1 {{the result's rows of 4 elements are not whole runs of the view's last dim (8)}}
  %y = ipu_tile.permute %x view [8, 2, 8] permutation [1, 0, 2] : tensor<8x16xf32> -> tensor<32x4xf32>
  return %y : tensor<32x4xf32>
}

// -----

func.func @retyped(%x: tensor<8x16xf32>) -> tensor<2x8x8xf16> {
  // expected-error @+1 {{source and result hold different element types: 'f32' and 'f16'}}
  %y = ipu_tile.permute %x view [8, 2, 8] permutation [1, 0, 2] : tensor<8x16xf32> -> tensor<2x8x8xf16>
  return %y : tensor<2x8x8xf16>
}

// -----

func.func @window_outside(%x: tensor<8x16xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{window [12, +8) of permuted dim 1 is not inside its 16 elements}}
  %y = ipu_tile.permute %x view [8, 16] permutation [0, 1] offsets [0, 12] sizes [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @window_of_another_size(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{view of 128 elements (a window of 64) for a source of 128 and a result of 128}}
  %y = ipu_tile.permute %x view [8, 16] permutation [0, 1] offsets [0, 8] sizes [8, 8] : tensor<8x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @offsets_alone(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{takes `offsets` and `sizes` together}}
  %y = "ipu_tile.permute"(%x) <{view = array<i64: 8, 16>, permutation = array<i64: 0, 1>, offsets = array<i64: 0, 0>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
