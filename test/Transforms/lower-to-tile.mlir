// RUN: ipu-opt %s -split-input-file -ipu-assign-layouts -ipu-lower-to-tile -verify-diagnostics | FileCheck %s

// Weights land in the plan's layout and memory class; the activation
// arrives split by rows and is gathered (broadcast along each block row)
// into the plan's layout before the compute set.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @mm attributes {estimated_cycles = 100 : i64, flops = 2048 : i64, reference = [{arguments = array<i32: 0, 1>, inner = 1 : i32, op = "matmul", partials = f32, result = 0 : i32, type = f32}], results = 1 : i32}
  // CHECK-NEXT: ipu_tile.buffer @arg0 : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
  // CHECK-NEXT: ipu_tile.buffer @arg1 : tensor<16x8xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
  // CHECK-NEXT: ipu_tile.buffer @mm0.lhs : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
  // CHECK-NEXT: ipu_tile.buffer @mm0.out : tensor<8x8xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>> in standard
  // CHECK-NEXT: ipu_exchange.stream_in @arg0 from 0
  // CHECK-NEXT: ipu_exchange.stream_in @arg1 from 1 {weight}
  // CHECK-NEXT: ipu_exchange.sync
  // CHECK-NEXT: ipu_exchange.phase @mm0.gather {
  // CHECK-NEXT:   ipu_exchange.copy @arg0 to @mm0.lhs
  // CHECK-NEXT: }
  // CHECK-NEXT: ipu_exchange.sync
  // CHECK-NEXT: ipu_tile.compute_set @mm0.partials kernel "gemm" operands [@mm0.lhs, @arg1, @mm0.out] tiles of @mm0.out {acc_type = f32}
  // CHECK-NEXT: ipu_exchange.sync
  // CHECK-NEXT: ipu_exchange.stream_out @mm0.out to 0
  // CHECK-NOT: func.func
  func.func @mm(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %c = ipu_gemm.matmul %a, %b {acc_type = f32, plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 100>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// A chain: the first result is rearranged into the second matmul's layout.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // The reference recomputes the chain: mm1 reads the value of mm0 (-1),
  // which leaves as checkpoint stream 1, after the function's one result.
  // CHECK-LABEL: ipu_tile.program @chain attributes {estimated_cycles = 20 : i64, flops = 2560 : i64, reference = [{arguments = array<i32: 0, 1>, inner = 1 : i32, op = "matmul", partials = f32, result = 1 : i32, type = f32}, {arguments = array<i32: -1, 2>, inner = 1 : i32, op = "matmul", partials = f32, result = 0 : i32, type = f32}], results = 1 : i32}
  // CHECK: ipu_tile.compute_set @mm0.partials
  // CHECK-NEXT: ipu_exchange.stream_out @mm0.out to 1
  // CHECK: ipu_exchange.phase @mm1.gather {
  // CHECK-NEXT: ipu_exchange.copy @mm0.out to @mm1.lhs
  // CHECK: ipu_tile.compute_set @mm1.partials kernel "gemm" operands [@mm1.lhs, @arg2, @mm1.out] tiles of @mm1.out
  // CHECK: ipu_exchange.stream_out @mm1.out to 0
  func.func @chain(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %d: tensor<8x4xf32>) -> tensor<8x4xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=64 cycles=996}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=16 boundCycles=16 cycles=960}}
    %e = ipu_gemm.matmul %c, %d {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
    return %e : tensor<8x4xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @unplanned(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-error @+1 {{matmul has no plan: run --ipu-plan-gemm first}}
    %c = ipu_gemm.matmul %a, %b : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// Inner partitions with a complete reduction and local weight staging: the
// partial sums of block i sit side by side in the gathered buffer of tile i,
// which sums them.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @complete
  // CHECK: ipu_tile.buffer @arg1 : tensor<16x8xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
  // CHECK: ipu_tile.buffer @mm0.lhs : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [1, 2], replicas = 1, replica_stride = 0>> in standard
  // CHECK: ipu_tile.buffer @mm0.rhs.staged : tensor<16x8xf16, {{.*}}> in interleaved
  // CHECK: ipu_tile.buffer @mm0.psums : tensor<8x16xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, col_splits = [0, 8, 16], tile_map = [0, 2, 1, 3]>> in standard
  // CHECK: ipu_tile.buffer @mm0.gathered : tensor<8x16xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0, col_splits = [0, 16]>> in standard
  // CHECK: ipu_tile.buffer @mm0.out : tensor<8x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
  // CHECK: ipu_exchange.phase @mm0.gather
  // CHECK: ipu_tile.compute_set @mm0.stage kernel "copy" operands [@arg1, @mm0.rhs.staged] tiles of @mm0.rhs.staged{{$}}
  // CHECK-NEXT: ipu_tile.compute_set @mm0.partials kernel "gemm" operands [@mm0.lhs, @mm0.rhs.staged, @mm0.psums] tiles of @mm0.rhs.staged {acc_type = f32}
  // CHECK-NEXT: ipu_exchange.sync
  // CHECK-NEXT: ipu_exchange.phase @mm0.reduce {
  // CHECK-NEXT:   ipu_exchange.copy @mm0.psums to @mm0.gathered
  // CHECK-NEXT: }
  // CHECK-NEXT: ipu_exchange.sync
  // CHECK-NEXT: ipu_tile.compute_set @mm0.sum kernel "reduce" operands [@mm0.gathered, @mm0.out] tiles of @mm0.out{{$}}
  func.func @complete(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=16 boundCycles=16 cycles=968}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 2, orientation = normal, weights = standard, reduction = complete, staging = true, cycles = 100>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// A staged reduction splits each block's rows again over its inner tiles:
// every tile sums one share and keeps that part of C.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @staged
  // CHECK: ipu_tile.buffer @mm0.gathered : tensor<8x16xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0, 2, 4, 6, 8], col_splits = [0, 16], tile_map = [0, 2, 1, 3]>> in standard
  // CHECK: ipu_tile.buffer @mm0.out : tensor<8x8xf32, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [0, 0], replicas = 1, replica_stride = 0, row_splits = [0, 2, 4, 6, 8], tile_map = [0, 2, 1, 3]>> in standard
  // CHECK: ipu_tile.compute_set @mm0.sum kernel "reduce" operands [@mm0.gathered, @mm0.out] tiles of @mm0.out{{$}}
  func.func @staged(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=16 boundCycles=16 cycles=968}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 2, orientation = normal, weights = interleaved, reduction = staged, staging = false, cycles = 100>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// Swapped: the weights are streamed transposed (B^T, 8 x 16) and gemm_t
// holds blocks of A in the AMP.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @swapped
  // CHECK: ipu_tile.buffer @arg1 : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 2, replica_stride = 2>> in standard
  // CHECK: ipu_exchange.stream_in @arg1 from 1 {transpose, weight}
  // CHECK: ipu_tile.compute_set @mm0.partials kernel "gemm_t" operands [@mm0.lhs, @arg1, @mm0.out] tiles of @mm0.out {acc_type = f32}
  func.func @swapped(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// A swapped plan needs B transposed, which only a weight stream provides.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @swapped_activation(%a: tensor<8x16xf16>, %p: tensor<16x4xf16>, %q: tensor<4x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=16 cycles=960}}
    %b = ipu_gemm.matmul %p, %q {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<16x4xf16>, tensor<4x8xf16> -> tensor<16x8xf16>
    // expected-error @+2 {{needs B^T, and B is an activation given as B: no kernel transposes it (the planner never picks this)}}
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @other_op(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{cannot lower 'math.exp' to tiles: the IPU compiler compiles linalg on tensors as torch-mlir}}
    %e = math.exp %a : tensor<8x8xf32>
    return %e : tensor<8x8xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // expected-error @+1 {{argument 0 has type 'tensor<f32>'; only static tensors of rank >= 1 of f32, f16 or f8 (without an encoding) are supported}}
  func.func @scalar_arg(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @passthrough(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{result 0 must be computed by the function: it is argument 0 unchanged, which the device would only copy; return what the function computes from it}}
    return %a : tensor<8x8xf32>
  }
}

// -----

// An argument that is both A and (swapped, so transposed) B of one matmul
// arrives twice: split by rows for the gather of A, and transposed in the
// plan's layout as weights. Gathering A from the transposed weights would
// compute A^T x A.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @self
  // CHECK-NEXT: ipu_tile.buffer @arg0 : tensor<8x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
  // CHECK-NEXT: ipu_tile.buffer @arg0.1 : tensor<8x8xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [1, 0], replicas = 2, replica_stride = 2>> in standard
  // CHECK: ipu_exchange.stream_in @arg0 from 0
  // CHECK-NEXT: ipu_exchange.stream_in @arg0.1 from 0 {transpose, weight}
  // CHECK: ipu_exchange.copy @arg0 to @mm0.lhs
  // CHECK: ipu_tile.compute_set @mm0.partials kernel "gemm_t" operands [@mm0.lhs, @arg0.1, @mm0.out]
  func.func @self(%a: tensor<8x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=16 cycles=960}}
    %c = ipu_gemm.matmul %a, %a {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// Weights shared by two plans are streamed once per layout, each in its
// plan's layout and class; plans that agree share one buffer. An activation
// B is gathered into its plan's weight class. Two plans that want the
// activation in one layout share its one relayout (mm2 reads mm0.lhs).
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: ipu_tile.program @shared
  // CHECK-NEXT: ipu_tile.buffer @arg0 :
  // CHECK-NEXT: ipu_tile.buffer @arg1 : tensor<16x8xf16, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>> in interleaved
  // CHECK-NEXT: ipu_tile.buffer @arg1.1 : tensor<16x8xf16, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 4, replica_stride = 1>> in standard
  // CHECK-NOT: @arg1.2
  // CHECK: ipu_tile.buffer @mm3.rhs : tensor<8x8xf32, {{.*}}> in interleaved
  // CHECK: ipu_exchange.stream_in @arg1 from 1 {weight}
  // CHECK-NEXT: ipu_exchange.stream_in @arg1.1 from 1 {weight}
  // CHECK: compute_set @mm0.partials kernel "gemm" operands [@mm0.lhs, @arg1, @mm0.out]
  // CHECK: compute_set @mm1.partials kernel "gemm" operands [@arg0, @arg1.1, @mm1.out]
  // CHECK-NOT: @mm2.lhs
  // CHECK: compute_set @mm2.partials kernel "gemm" operands [@mm0.lhs, @arg1, @mm2.out]
  // CHECK: ipu_exchange.copy @mm2.out to @mm3.rhs
  // CHECK: compute_set @mm3.partials kernel "gemm" operands [@mm1.out, @mm3.rhs, @mm3.out] tiles of @mm3.out {acc_type = f32}
  func.func @shared(%a: tensor<8x16xf16>, %w: tensor<16x8xf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %c = ipu_gemm.matmul %a, %w {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    %d = ipu_gemm.matmul %a, %w {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    %e = ipu_gemm.matmul %a, %w {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    // expected-remark @+1 {{relayout of operand 1 of 'ipu_gemm.matmul' into interleaved: transfers=16 boundCycles=64 cycles=1028}}
    %f = ipu_gemm.matmul %d, %e {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    return %c, %d, %f : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// -----

// A repeated layer that passes on its input unchanged: its result would be
// what the last layer was given, which no reference op computes.
// (--ipu-find-repeated-layers, in --ipu-compile, removes such a repeat.)
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @identity_repeat(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{a repeated layer that passes on its input unchanged repeats nothing: remove the repeat (--ipu-find-repeated-layers does)}}
    %y = ipu_tile.repeat 2 input(%a : tensor<8x8xf32>) {
    ^bb0(%h: tensor<8x8xf32>):
      ipu_tile.carry %h : tensor<8x8xf32>
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
