// RUN: ipu-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ipu-opt %s -split-input-file -verify-diagnostics | ipu-opt -split-input-file | FileCheck %s

// A serial loop over 4 chunks of a 64x8 matrix held in a serial layout:
// each iteration copies chunk i out (a dynamic slice), then back into
// another serial buffer (a dynamic update). The loop round-trips, its
// steps are symbols of its own, and the buffers it shares with the steps
// outside stay live over it, so that @tmp (used only inside) may share
// bytes with @spare (used only after the loop) but @out may not.
// CHECK-LABEL: ipu_tile.program @serial
// CHECK: ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
// CHECK: ipu_tile.loop @mm.serial count 4 {
// CHECK-NEXT: ipu_exchange.sync
// CHECK-NEXT: ipu_tile.compute_set @mm.slice kernel "copy" operands [@a, @tmp] tiles [0 to 4] {serial_operands = array<i32: 0>}
// CHECK-NEXT: ipu_tile.compute_set @mm.update kernel "copy" operands [@tmp, @out] tiles [0 to 4] {serial_operands = array<i32: 1>}
// CHECK-NEXT: }
// The serial layout of a 2-D tensor, printed when it differs from 1.
// CHECK: func.func private @serial_layout(tensor<64x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, serial = 4>>)
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @serial {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @spare : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @out : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362464
    ipu_exchange.stream_in @a from 0
    ipu_tile.loop @mm.serial count 4 {
      ipu_exchange.sync
      ipu_tile.compute_set @mm.slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      ipu_tile.compute_set @mm.update kernel "copy" operands [@tmp, @out] tiles [0, 1, 2, 3] {serial_operands = array<i32: 1>}
    }
    ipu_exchange.sync
    ipu_exchange.stream_in @spare from 1
    ipu_exchange.stream_out @spare to 1
    ipu_exchange.stream_out @out to 0 {host_shape = array<i64: 64, 8>}
  }
  func.func private @serial_layout(tensor<64x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, serial = 4>>)
}

// -----

// @out is used after the loop too: it lives over the whole loop, so @tmp,
// used inside it, cannot share its bytes.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @clash {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    // expected-error @+1 {{overlaps buffer @out on tile 0, bytes [362720, 362784), while both are live at step 3 ('ipu_tile.compute_set' @mm.slice)}}
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @out : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_exchange.stream_in @a from 0
    ipu_tile.loop @mm.serial count 4 {
      ipu_exchange.sync
      ipu_tile.compute_set @mm.slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      ipu_tile.compute_set @mm.update kernel "copy" operands [@tmp, @out] tiles [0, 1, 2, 3] {serial_operands = array<i32: 1>}
    }
    ipu_exchange.stream_out @out to 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @nosync {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{'ipu_tile.loop' op body must start with an ipu_exchange.sync: it separates one iteration's last superstep from the next one's first}}
    ipu_tile.loop @l count 4 {
      ipu_tile.compute_set @slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @zero {
    // expected-error @+1 {{'ipu_tile.loop' op count must be in [1, 2^32), got 0}}
    ipu_tile.loop @l count 0 {
      ipu_exchange.sync
    }
  }
}

// -----

// Loops nest: a layer's loop holds a serial split. @w, written in the
// outer body and read in every inner iteration, lives over the whole inner
// loop, so a buffer used only after its last read in the body (@tmp in the
// next case) cannot share its bytes; @tmp may share @spare's, used only
// after the loops.
// CHECK-LABEL: ipu_tile.program @nested
// CHECK: ipu_tile.loop @layers count 2 {
// CHECK-NEXT: ipu_exchange.sync
// CHECK-NEXT: ipu_tile.compute_set @w.slice
// CHECK-NEXT: ipu_tile.loop @mm.serial count 4 {
// CHECK-NEXT: ipu_exchange.sync
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @nested {
    ipu_tile.buffer @weights : tensor<2x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @w : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362464
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @spare : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @out : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362976
    ipu_exchange.stream_in @weights from 0
    ipu_tile.loop @layers count 2 {
      ipu_exchange.sync
      ipu_tile.compute_set @w.slice kernel "copy" operands [@weights, @w] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      ipu_tile.loop @mm.serial count 4 {
        ipu_exchange.sync
        ipu_tile.compute_set @mm.read kernel "copy" operands [@w, @tmp] tiles [0, 1, 2, 3]
        ipu_tile.compute_set @mm.update kernel "copy" operands [@tmp, @out] tiles [0, 1, 2, 3] {serial_operands = array<i32: 1>}
      }
    }
    ipu_exchange.sync
    ipu_exchange.stream_in @spare from 1
    ipu_exchange.stream_out @spare to 1
    ipu_exchange.stream_out @out to 0 {host_shape = array<i64: 64, 8>}
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @nested_clash {
    ipu_tile.buffer @weights : tensor<2x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @w : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    // expected-error @+1 {{overlaps buffer @w on tile 0, bytes [362720, 362784), while both are live at step 7 ('ipu_tile.compute_set' @mm.tmp)}}
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362720
    ipu_tile.buffer @out : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362976
    ipu_exchange.stream_in @weights from 0
    ipu_tile.loop @layers count 2 {
      ipu_exchange.sync
      ipu_tile.compute_set @w.slice kernel "copy" operands [@weights, @w] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      ipu_tile.loop @mm.serial count 4 {
        ipu_exchange.sync
        ipu_tile.compute_set @mm.read kernel "copy" operands [@w, @out] tiles [0, 1, 2, 3] {serial_operands = array<i32: 1>}
        ipu_tile.compute_set @mm.tmp kernel "copy" operands [@out, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      }
    }
    ipu_exchange.stream_out @out to 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @too_deep {
    ipu_tile.loop @l0 count 2 {
      ipu_exchange.sync
      ipu_tile.loop @l1 count 2 {
        ipu_exchange.sync
        ipu_tile.loop @l2 count 2 {
          ipu_exchange.sync
          ipu_tile.loop @l3 count 2 {
            ipu_exchange.sync
            // expected-error @+1 {{'ipu_tile.loop' op lies 4 loops deep; loops nest at most 4 deep}}
            ipu_tile.loop @l4 count 2 {
              ipu_exchange.sync
            }
          }
        }
      }
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @stream {
    ipu_tile.buffer @a : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.loop @l count 2 {
      ipu_exchange.sync
      // expected-error @+1 {{'ipu_exchange.stream_in' op cannot be in a loop body: streams in run once, unless they stream one layer per iteration}}
      ipu_exchange.stream_in @a from 0
    }
  }
}

// -----

// A stream out in a loop body leaves in every iteration; the host keeps the
// last one's (a repeated layer's checkpoints).
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @stream_out {
    ipu_tile.buffer @a : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.loop @l count 2 {
      ipu_exchange.sync
      ipu_exchange.stream_out @a to 0
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @outside {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{'ipu_tile.compute_set' op has serial operands but is not in an ipu_tile.loop: a chunk per iteration needs iterations}}
    ipu_tile.compute_set @slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @chunks {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.loop @l count 3 {
      ipu_exchange.sync
      // expected-error @+1 {{'ipu_tile.compute_set' op serial operand 0 (@a) must hold the loop's 3 chunks on each of its tiles (a batch-local or serial layout of 3 batches), but its layout holds 4 batches over 1 tile groups}}
      ipu_tile.compute_set @slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @index {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @tmp : tensor<16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.loop @l count 4 {
      ipu_exchange.sync
      // expected-error @+1 {{'ipu_tile.compute_set' op serial operand 2 is not one of its 2 operands}}
      ipu_tile.compute_set @slice kernel "copy" operands [@a, @tmp] tiles [0, 1, 2, 3] {serial_operands = array<i32: 2>}
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @shape {
    ipu_tile.buffer @a : tensor<4x16x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    // expected-error @+1 {{'ipu_exchange.stream_in' op host_shape holds 500 elements, buffer @a holds 512}}
    ipu_exchange.stream_in @a from 0 {host_shape = array<i64: 50, 10>}
  }
}

// -----

// expected-error @+1 {{serial = 3 does not divide the 64 rows of the tensor 64x8}}
func.func private @indivisible(tensor<64x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, serial = 3>>)

// -----

// expected-error @+1 {{serial = 2 cuts the rows of a matrix, but the tensor 2x32x8 has 2 batches: fold them or lay the batches out}}
func.func private @batched(tensor<2x32x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, serial = 2>>)

// -----

// expected-error @+1 {{a serial layout keeps its chunks batch-local: batch_grid, batch_stride and batch_splits must be left out}}
func.func private @grid(tensor<2x32x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, batch_grid = 2, serial = 2>>)
