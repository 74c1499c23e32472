// RUN: ipu-opt %s -split-input-file -verify-diagnostics

func.func @inner_mismatch(%a: tensor<8x16xf16>, %b: tensor<32x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{inner dimensions differ: A has K = 16, B has K = 32}}
  %c = ipu_gemm.matmul %a, %b : tensor<8x16xf16>, tensor<32x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @result_shape(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x4xf32> {
  // expected-error @+1 {{result shape must end in 8x8, got 'tensor<8x4xf32>'}}
  %c = ipu_gemm.matmul %a, %b : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

func.func @mixed_types(%a: tensor<8x16xf16>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{operand element types differ: 'f16' and 'f32'}}
  %c = ipu_gemm.matmul %a, %b : tensor<8x16xf16>, tensor<16x8xf32> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @bad_element(%a: tensor<8x16xi8>, %b: tensor<16x8xi8>) -> tensor<8x8xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %c = ipu_gemm.matmul %a, %b : tensor<8x16xi8>, tensor<16x8xi8> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @bad_acc(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{accumulation type must be f32 or f16, got 'bf16'}}
  %c = ipu_gemm.matmul %a, %b {acc_type = bf16} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @rank(%a: tensor<2x8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{ranks must be A: r >= 2, B: 2 or r, C: r; got 3, 2 and 2}}
  %c = ipu_gemm.matmul %a, %b : tensor<2x8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @dynamic(%a: tensor<?x16xf16>, %b: tensor<16x8xf16>) -> tensor<?x8xf32> {
  // expected-error @+1 {{shapes must be static}}
  %c = ipu_gemm.matmul %a, %b : tensor<?x16xf16>, tensor<16x8xf16> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

func.func @plan_too_many_rows(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{plan splits 8 rows into 9 parts}}
  %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 9, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @plan_too_many_cols(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{plan splits 8 columns into 9 parts}}
  %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 1, cols = 9, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @plan_too_many_inner(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{plan splits the inner dimension 16 into 17 parts}}
  %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 1, cols = 1, inner = 17, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @plan_too_many_tiles(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-error @+1 {{plan needs 6 tiles, target 'ipu21-4' has 4}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 3, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// expected-error @+1 {{row partitions must be at least 1, got 0}}
func.func private @zero_rows() attributes {p = #ipu_gemm.plan<rows = 0, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}

// -----

// expected-error @+2 {{expected ::mlir::ipu_gemm::Orientation to be one of: normal, swapped}}
// expected-error @+1 {{failed to parse IPUGemm_PlanAttr parameter 'orientation' which is to be a `::mlir::ipu_gemm::Orientation`}}
func.func private @orientation() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = sideways, weights = standard, reduction = complete, staging = false, cycles = 0>}

// -----

// expected-error @+2 {{expected ::mlir::ipu_tile::MemoryClass to be one of: standard, interleaved}}
// expected-error @+1 {{failed to parse IPUGemm_PlanAttr parameter 'weights' which is to be a `::mlir::ipu_tile::MemoryClass`}}
func.func private @weights() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = fast, reduction = complete, staging = false, cycles = 0>}

// -----

// expected-error @+1 {{estimated cycles must not be negative, got -1}}
func.func private @cycles() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = -1>}

// -----

// expected-error @+1 {{column partitions must be at least 1, got 0}}
func.func private @constraint_cols() attributes {p = #ipu_gemm.constraints<cols = 0>}

// -----

// expected-error @+2 {{expected one of [normal, swapped] for GEMM orientation, got: up}}
// expected-error @+1 {{failed to parse IPUGemm_ConstraintsAttr parameter 'orientation'}}
func.func private @constraint_orientation() attributes {p = #ipu_gemm.constraints<orientation = up>}

// -----

// expected-error @+2 {{expected one of [standard, interleaved] for Tile memory class, got: l2}}
// expected-error @+1 {{failed to parse IPUGemm_ConstraintsAttr parameter 'weights'}}
func.func private @constraint_weights() attributes {p = #ipu_gemm.constraints<weights = l2>}

// -----

// expected-error @+2 {{expected ::mlir::ipu_gemm::Reduction to be one of: complete, staged}}
// expected-error @+1 {{failed to parse IPUGemm_PlanAttr parameter 'reduction'}}
func.func private @reduction() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 2, orientation = normal, weights = standard, reduction = tree, staging = false, cycles = 0>}

// -----

// expected-error @+1 {{a staged reduction needs inner > 1}}
func.func private @staged_inner() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = staged, staging = false, cycles = 0>}

// -----

// expected-error @+1 {{staging copies standard weights to interleaved memory; weights are 'interleaved'}}
func.func private @staging_class() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = true, cycles = 0>}

// -----

// expected-error @+2 {{expected one of [complete, staged] for Reduction of inner partials, got: sum}}
// expected-error @+1 {{failed to parse IPUGemm_ConstraintsAttr parameter 'reduction'}}
func.func private @constraint_reduction() attributes {p = #ipu_gemm.constraints<reduction = sum>}

// -----

// expected-error @+1 {{staging copies B for the AMP, which holds A when the orientation is swapped}}
func.func private @staging_swapped() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = true, cycles = 0>}

// -----

// expected-error @+1 {{partials 'f8' is not "f32" or "f16"}}
func.func private @bad_partials() attributes {p = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, partials = "f8", cycles = 0>}

// -----

// expected-error @+1 {{partials 'half' is not "f32", "f16" or "any"}}
func.func private @bad_partials_constraint() attributes {c = #ipu_gemm.constraints<partials = "half">}

// -----

// f32 partials would not be the f16 accumulation the op asks for.
func.func @partials_against_acc(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf16> {
  // expected-error @+1 {{plan accumulates in f32 partials but the op asks for f16 accumulation}}
  %c = ipu_gemm.matmul %a, %b {acc_type = f16, plan = #ipu_gemm.plan<rows = 1, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf16>
  return %c : tensor<8x8xf16>
}

// -----

// Plans hold partitions in 32 bits: 2^32 + 1 rows would become 1.
// expected-error @+1 {{row partitions = 4294967297 is out of range [1, 2^32)}}
func.func private @rows_wide() attributes {p = #ipu_gemm.plan<rows = 4294967297, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}

// -----

// expected-error @+1 {{inner partitions = 4294967296 is out of range [1, 2^32)}}
func.func private @constraint_inner_wide() attributes {c = #ipu_gemm.constraints<inner = 4294967296>}

// -----

func.func @rank_one(%a: tensor<16xf16>, %b: tensor<16x8xf16>) -> tensor<8xf32> {
  // expected-error @+1 {{ranks must be A: r >= 2, B: 2 or r, C: r; got 1, 2 and 1}}
  %c = ipu_gemm.matmul %a, %b : tensor<16xf16>, tensor<16x8xf16> -> tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

func.func @batch_mismatch(%a: tensor<4x8x16xf16>, %b: tensor<2x16x8xf16>) -> tensor<4x8x8xf32> {
  // expected-error @+1 {{leading (batch) dims of A, B and C differ: 'tensor<4x8x16xf16>', 'tensor<2x16x8xf16>' and 'tensor<4x8x8xf32>'}}
  %c = ipu_gemm.matmul %a, %b : tensor<4x8x16xf16>, tensor<2x16x8xf16> -> tensor<4x8x8xf32>
  return %c : tensor<4x8x8xf32>
}

// -----

func.func @transposed_rhs_inner(%a: tensor<8x16xf16>, %b: tensor<8x32xf16>) -> tensor<8x8xf32> {
  // B^T is [N x K]: 8x32 has K = 32.
  // expected-error @+1 {{inner dimensions differ: A has K = 16, B has K = 32}}
  %c = ipu_gemm.matmul %a, %b {transpose_rhs} : tensor<8x16xf16>, tensor<8x32xf16> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @transposed_lhs_folded(%a: tensor<2x16x8xf16>, %b: tensor<16x8xf16>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{a transposed A with leading dims needs a batched B}}
  %c = ipu_gemm.matmul %a, %b {transpose_lhs} : tensor<2x16x8xf16>, tensor<16x8xf16> -> tensor<2x8x8xf32>
  return %c : tensor<2x8x8xf32>
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @batches_exceed_tiles(%a: tensor<2x8x16xf16>, %b: tensor<2x16x8xf16>) -> tensor<2x8x8xf32> {
    // expected-error @+1 {{plan needs 6 tiles (2 batches side by side), target 'ipu21-4' has 4}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 3, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>} : tensor<2x8x16xf16>, tensor<2x16x8xf16> -> tensor<2x8x8xf32>
    return %c : tensor<2x8x8xf32>
  }
}

// -----

// expected-error @+1 {{gathered weights are gathered into interleaved memory, without staging; weights are 'standard'}}
func.func private @gathered_standard() attributes {p = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0, gathered = true>}

// -----

// expected-error @+1 {{gathered weights need rows > 1: with one row block nothing is replicated}}
func.func private @gathered_one_row() attributes {p = #ipu_gemm.plan<rows = 1, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0, gathered = true>}

// -----

// expected-error @+1 {{homes = standard needs gathered = true: only gathered weights stay in homes apart from their blocks}}
func.func private @homes_not_gathered() attributes {p = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0, homes = standard>}

// -----

// expected-error @+1 {{homes = standard needs gathered weights; gathered = false}}
func.func private @homes_constraint_not_gathered() attributes {c = #ipu_gemm.constraints<gathered = false, homes = standard>}

// -----

// expected-error @+1 {{a serial split keeps its weights resident: gathered = true does not apply}}
func.func private @serial_gathered() attributes {p = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0, gathered = true, serial = 4>}

// -----

// expected-error @+1 {{serial partitions must be at least 1, got 0}}
func.func private @serial_zero() attributes {p = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0, serial = 0>}

// -----

// expected-error @+1 {{serial partitions must be at least 1, got -2}}
func.func private @serial_constraint() attributes {c = #ipu_gemm.constraints<serial = -2>}

// -----

// expected-error @+1 {{psums = interleaved needs inner > 1: with inner = 1 the AMP writes the result, and there are no partial sums}}
func.func private @psums_without_inner() attributes {p = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0, psums = interleaved>}
