// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s

// Tile lists, splits and tile maps are written as ranges and repeats
// (`a to b [step s]`, `(terms) x n step s`) and print so where that is
// shorter; plain lists still read, and short ones print plain.

// CHECK: module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">}
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  ipu_tile.program @p {
    // CHECK: ipu_tile.buffer @a : tensor<64x16xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0 to 68 step 4], tile_map = [0 to 16]>> in standard
    ipu_tile.buffer @a : tensor<64x16xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0,
        row_splits = [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64],
        tile_map = [0 to 4, 4, 5, 6, 7, (8, 9) x 2 step 2, 12 to 16 step 1]>> in standard
    // CHECK: ipu_tile.buffer @b : tensor<64x16xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0 to 68 step 4], tile_map = [15 to -1 step -1]>> in standard
    ipu_tile.buffer @b : tensor<64x16xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0,
        row_splits = [0 to 68 step 4], tile_map = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]>> in standard
    // CHECK: ipu_tile.compute_set @all kernel "copy" operands [@a, @b] tiles [0 to 16]{{$}}
    ipu_tile.compute_set @all kernel "copy" operands [@a, @b] tiles [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    // CHECK: ipu_tile.compute_set @nested kernel "copy" operands [@a, @b] tiles [(0, 1, 8, 9) x 4 step 2]{{$}}
    ipu_tile.compute_set @nested kernel "copy" operands [@a, @b] tiles [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]
    // CHECK: ipu_tile.compute_set @few kernel "copy" operands [@a, @b] tiles [3, 1, 2]{{$}}
    ipu_tile.compute_set @few kernel "copy" operands [@a, @b] tiles [3, 1 to 3]
  }
}

// A range inside an irregular list prints as a range; six values counting
// down print plain.
// CHECK-LABEL: func.func private @irregular
// CHECK-SAME: row_splits = [0, 5 to 65 step 4, 64], tile_map = [5, 4, 3, 2, 1, 0, 0 to 10]>
func.func private @irregular(tensor<64x8xf32, #ipu_tile.layout<grid = [16, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0, 5 to 65 step 4, 64], tile_map = [5 to -1 step -1, 0 to 10]>>)

// Split points that are balanced splits of balanced splits print as such
// (a staged reduction's rows: 729 into 46 blocks, each into 4), and read
// back either way, with the fewest levels that give the same points; one
// range prints as a list.
// CHECK-LABEL: func.func private @balanced
// CHECK-SAME: row_splits = balanced 729 into [46, 4], tile_map = [0 to 184]>
// CHECK-SAME: row_splits = balanced 10 into [2, 4]>
// CHECK-SAME: row_splits = [0, 3, 6, 9, 12]>
func.func private @balanced() attributes {
  a = #ipu_tile.layout<grid = [184, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0,
      row_splits = [0 to 640 step 4, (639, 643, 647, 651) x 6 step 15, 729], tile_map = [0 to 184]>,
  b = #ipu_tile.layout<grid = [8, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0,
      row_splits = balanced 10 into [2, 2, 2]>,
  c = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0,
      row_splits = balanced 12 into [2, 2]>}
