// RUN: ipu-opt %s -split-input-file -verify-diagnostics

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @no_layout(%a: tensor<8x16xf16>) -> tensor<8x16xf16> {
  // expected-error @+1 {{result must have a #ipu_tile.layout encoding, got 'tensor<8x16xf16>'}}
  %0 = ipu_tile.from_host %a : tensor<8x16xf16> -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @not_an_argument(%a: tensor<8x16xf16, #rows>) -> tensor<8x16xf16, #rows> {
  %e = tensor.empty() : tensor<8x16xf16>
  // expected-error @+1 {{source must be a function argument (a host tensor)}}
  %0 = ipu_tile.from_host %e : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
  return %0 : tensor<8x16xf16, #rows>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @shape(%a: tensor<8x16xf16>) -> tensor<16x8xf16, #rows> {
  // expected-error @+1 {{result shape must be the argument's, got 'tensor<16x8xf16, #ipu_tile.layout}}
  %0 = ipu_tile.from_host %a : tensor<8x16xf16> -> tensor<16x8xf16, #rows>
  return %0 : tensor<16x8xf16, #rows>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @transposed_shape(%a: tensor<8x16xf16>) -> tensor<8x16xf16, #rows> {
  // expected-error @+1 {{result shape must be the argument's transposed, got}}
  %0 = ipu_tile.from_host %a {transpose} : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
  return %0 : tensor<8x16xf16, #rows>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @memory_class(%a: tensor<8x16xf16>) -> tensor<8x16xf16, #rows> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'memory_class' [standard, interleaved]}}
  %0 = ipu_tile.from_host %a in fast : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
  return %0 : tensor<8x16xf16, #rows>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @relayout_changes_tensor(%a: tensor<8x16xf16, #rows>) -> tensor<8x16xf32, #rows> {
  // expected-error @+1 {{changes the tensor, not only its layout}}
  %0 = ipu_tile.relayout %a : tensor<8x16xf16, #rows> -> tensor<8x16xf32, #rows>
  return %0 : tensor<8x16xf32, #rows>
}

// -----

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
func.func @relayout_from_host(%a: tensor<8x16xf16>) -> tensor<8x16xf16, #rows> {
  // expected-error @+1 {{source and result must have #ipu_tile.layout encodings}}
  %0 = ipu_tile.relayout %a : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
  return %0 : tensor<8x16xf16, #rows>
}
