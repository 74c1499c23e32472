// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT: linalg
// CHECK-NOT: arith.constant
// CHECK: %[[C:.*]] = ipu_gemm.matmul %arg0, %arg1 {acc_type = f32} : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
// CHECK: return %[[C]]
func.func @zero_fill(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<96x64xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%fill : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %c : tensor<96x64xf32>
}

// -----

// An f16 result accumulates in f16, as linalg.matmul's semantics say.
// CHECK-LABEL: func.func @empty_f16
// CHECK: ipu_gemm.matmul %arg0, %arg1 {acc_type = f16} : tensor<8x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<8x16xf16>
func.func @empty_f16(%a: tensor<8x32xf8E4M3FN>, %b: tensor<32x16xf8E4M3FN>) -> tensor<8x16xf16> {
  %init = tensor.empty() : tensor<8x16xf16>
  %c = linalg.matmul ins(%a, %b : tensor<8x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>)
                     outs(%init : tensor<8x16xf16>) -> tensor<8x16xf16>
  return %c : tensor<8x16xf16>
}

// -----

func.func @accumulates(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{contraction accumulates into non-zero data; only a zero fill or tensor.empty accumulator is supported}}
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>)
                     outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @nonzero_fill(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %one = arith.constant 1.0 : f32
  %init = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%one : f32) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{contraction accumulates into non-zero data}}
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>)
                     outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// Named elementwise ops import like generics (test/Transforms/import-elementwise.mlir).
// CHECK-LABEL: func.func @elementwise
// CHECK: ipu_tile.elementwise %arg0, %arg1
// CHECK: arith.addf
func.func @elementwise(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  %c = linalg.add ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @concat(%a: tensor<8x8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{unsupported op 'tensor.concat': the IPU compiler imports contractions (linalg.matmul, batch_matmul, contract, multiply-add generics), patch-embedding convolutions, elementwise generics and maps, and the transposes, broadcasts, fills, reshapes, unit-stride slices and truncations that fold into them}}
  %c = tensor.concat dim(1) %a, %a : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

// -----

// Transposing indexing maps, as LLVM 22 prints linalg.matmul_transpose_a.
// CHECK-LABEL: func.func @transposed
// CHECK: ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, transpose_lhs} : tensor<16x8xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
func.func @transposed(%a: tensor<16x8xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
                     ins(%a, %b : tensor<16x8xf16>, tensor<16x8xf16>)
                     outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @buffers(%a: memref<8x16xf16>, %b: memref<16x8xf16>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{contraction must work on tensors, not buffers}}
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x8xf16>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// A narrowing of the f32 result folds into the matmul: f32 accumulation,
// f16 stored.
// CHECK-LABEL: func.func @narrowed
// CHECK: %[[C:.*]] = ipu_gemm.matmul %arg0, %arg1 {acc_type = f32} : tensor<8x32xf16>, tensor<32x16xf16> -> tensor<8x16xf16>
// CHECK-NOT: arith.truncf
// CHECK: return %[[C]]
func.func @narrowed(%a: tensor<8x32xf16>, %b: tensor<32x16xf16>) -> tensor<8x16xf16> {
  %init = tensor.empty() : tensor<8x16xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x32xf16>, tensor<32x16xf16>)
                     outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  %n = arith.truncf %c : tensor<8x16xf32> to tensor<8x16xf16>
  return %n : tensor<8x16xf16>
}

// -----

// Constraints and a plan written on linalg.matmul carry over to the
// imported op; the planner honours them.
// CHECK-LABEL: func.func @constrained
// CHECK: ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, constraints = #ipu_gemm.constraints<rows = 4, inner = 2, reduction = staged>}
// CHECK: ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}
func.func @constrained(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> (tensor<96x64xf32>, tensor<96x64xf32>) {
  %init = tensor.empty() : tensor<96x64xf32>
  %c = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, inner = 2, reduction = staged>}
                     ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  %d = linalg.matmul {ipu_gemm.plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}
                     ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %c, %d : tensor<96x64xf32>, tensor<96x64xf32>
}

// -----

func.func @bad_constraints(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{attribute 'ipu_gemm.constraints' must be a #ipu_gemm.constraints, got "rows=4"}}
  %c = linalg.matmul {ipu_gemm.constraints = "rows=4"} ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>)
                     outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @misnamed(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{attribute 'constraints' holds #ipu_gemm.constraints<rows = 4>, which the import honours only as 'ipu_gemm.constraints' or 'ipu_gemm.plan'}}
  %c = linalg.matmul {constraints = #ipu_gemm.constraints<rows = 4>} ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>)
                     outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @dropped
func.func @dropped(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  // expected-warning @+1 {{attribute 'tag' is dropped by the import to ipu_gemm.matmul}}
  %c = linalg.matmul {tag = "fc1"} ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>)
                     outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
