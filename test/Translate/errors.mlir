// RUN: ipu-translate --ipu-to-package %s -split-input-file -verify-diagnostics -o /dev/null

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    // expected-error @+1 {{buffer has no address: run --ipu-place-storage before --ipu-to-package}}
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_exchange.stream_in @a from 0
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362272
    // expected-error @+1 {{phase is not scheduled: run --ipu-schedule-exchange before --ipu-to-package}}
    ipu_exchange.phase @p {
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362272
    // expected-error @+1 {{schedule was made for 3 transfers, the phase has 4: reschedule it}}
    ipu_exchange.phase @p attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 3, bound = 4, horizon = 12, runs = dense<[0, 0, 4, 0, 0, 1, 0, 4, 4, 0, 2, 0, 4, 8, 0]> : tensor<15xi32>>} {
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

// A schedule that the checker rejects never reaches a package: transfers 0
// and 1 both land on tile 0 at once.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error-re @+1 {{package fails validation: {{.*}}}}
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_tile.buffer @b : tensor<4x4xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0>> in standard at 362272
    ipu_exchange.phase @p attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 4, bound = 16, horizon = 16, runs = dense<[0, 0, 4, 0, 0, 1, 0, 4, 0, 0, 2, 0, 4, 8, 0, 3, 0, 4, 12, 0]> : tensor<20xi32>>} {
      ipu_exchange.copy @a to @b
    }
  }
}

// -----

// expected-error @+1 {{expected exactly one ipu_tile.program, found 0 (run --ipu-compile first)}}
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
}

// -----

// A reference op of a kind the package does not hold (the wire format has
// one union member per kind).
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{reference op 'conv' is not a kind the package holds (matmul, elementwise, permute, streamed)}}
  ipu_tile.program @p attributes {reference = [{op = "conv", arguments = array<i32: 0>, result = 0 : i32, type = f32}]} {
    ipu_tile.buffer @a : tensor<4x4xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard at 362208
    ipu_exchange.stream_in @a from 0
  }
}
