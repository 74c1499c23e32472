// RUN: ipu-opt %s -split-input-file -ipu-import-linalg -verify-diagnostics | FileCheck %s

// What torch-mlir's frozen export adds, in the forms it writes them.

// Frozen weights: a dense_resource constant (and a non-splat dense one)
// becomes an argument after the function's own, carrying its value; a
// splat stays a constant (a kernel takes it as a scalar).
// CHECK-LABEL: func.func @weights
// CHECK-SAME:    (%arg0: tensor<4x8xf32>, %arg1: tensor<8x4xf32> {ipu_tile.constant = dense_resource<w> : tensor<8x4xf32>}, %arg2: tensor<1x4xf32> {ipu_tile.constant = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>})
// CHECK:         ipu_gemm.matmul %arg0, %arg1
// CHECK:         ipu_tile.elementwise %{{.*}}, %arg2
// expected-remark @below {{takes 2 frozen weights as arguments that carry their values, streamed from the host at load}}
func.func @weights(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %w = arith.constant dense_resource<w> : tensor<8x4xf32>
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<4x4xf32>, tensor<1x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// The position embedding: a gather of a constant arange (with cf.assert
// checks of each index) reads the table in order: it is the table, whose
// reshape to [1, S, D] moves nothing; the asserts go with the gather.
// CHECK-LABEL: func.func @position_embedding
// CHECK-NOT:     cf.assert
// CHECK-NOT:     tensor.extract
// CHECK:         %[[TABLE:.*]] = ipu_tile.permute %arg1 view [4, 8] permutation [0, 1] : tensor<4x8xf32> -> tensor<1x4x8xf32>
// CHECK:         ipu_tile.elementwise %arg0, %[[TABLE]]
// expected-remark @below {{takes 1 frozen weight as an argument}}
func.func @position_embedding(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %ids = arith.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %table = arith.constant dense_resource<table> : tensor<4x8xf32>
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<1x4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c4 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %table[%i, %j] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %g : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      table: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Indices that are not an arange are refused, naming the first that is not.
func.func @shuffled(%table: tensor<4x8xf32>) -> tensor<1x4x8xf32> {
  %ids = arith.constant dense<[[1, 0, 2, 3]]> : tensor<1x4xi64>
  %e = tensor.empty() : tensor<1x4x8xf32>
  // expected-error @+1 {{a gather (tensor.extract at indices read from a tensor) is imported only as the read of a constant arange, which is the table itself: index 0 is 1, not 0: the indices are not an arange}}
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%i, %j] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}

// -----

// Indices known only when the model runs (an embedding lookup of tokens).
func.func @token_embedding(%ids: tensor<1x4xi64>, %table: tensor<16x8xf32>) -> tensor<1x4x8xf32> {
  %e = tensor.empty() : tensor<1x4x8xf32>
  // expected-error @+1 {{its indices are not a constant}}
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%i, %j] : tensor<16x8xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}

// -----

// An assertion on a value known only at run time is refused by name; one
// that fails on constants says so.
func.func @runtime_assert(%n: i64, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : i64
  %ok = arith.cmpi sge, %n, %c0 : i64
  // expected-error @+1 {{cf.assert on a value known only when the model runs ('n must not be negative'): the IPU compiler folds assertions on constants and the index checks of a gather of a constant arange; export the model without run-time checks}}
  cf.assert %ok, "n must not be negative"
  return %x : tensor<4x8xf32>
}

// -----

func.func @failing_assert(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %false = arith.constant false
  // expected-error @+1 {{the model's assertion 'never' fails on its constants}}
  cf.assert %false, "never"
  return %x : tensor<4x8xf32>
}

// -----

// scaled_dot_product_attention without a mask guards rows that are all
// -inf: select(all(row == -inf), 0, softmax). The guard is dropped, with a
// remark, and the softmax kept: no i1 is left.
// CHECK-LABEL: func.func @masked_row_guard
// CHECK-NOT:     i1
// CHECK-NOT:     arith.select
// CHECK:         %[[SOFT:.*]] = ipu_tile.elementwise
// CHECK-NOT:     i1
// CHECK:         return %[[SOFT]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// expected-remark @below {{drops scaled_dot_product_attention's guard of wholly masked rows in 1 softmax: without a mask, a row of scores is all -inf only when every score overflows}}
func.func @masked_row_guard(%scores: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %true = arith.constant true
  %zeros = arith.constant dense<0.0> : tensor<1x2x4x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %soft = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %e1 = tensor.empty() : tensor<1x2x4x4xi1>
  %eq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<1x2x4x4xf32>) outs(%e1 : tensor<1x2x4x4xi1>) {
  ^bb0(%a: f32, %o: i1):
    %0 = arith.cmpf oeq, %a, %ninf : f32
    linalg.yield %0 : i1
  } -> tensor<1x2x4x4xi1>
  %e2 = tensor.empty() : tensor<1x2x4x1xi1>
  %t = linalg.fill ins(%true : i1) outs(%e2 : tensor<1x2x4x1xi1>) -> tensor<1x2x4x1xi1>
  %all = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%eq : tensor<1x2x4x4xi1>) outs(%t : tensor<1x2x4x1xi1>) {
  ^bb0(%a: i1, %o: i1):
    %0 = arith.andi %a, %o : i1
    linalg.yield %0 : i1
  } -> tensor<1x2x4x1xi1>
  %sel = linalg.generic {indexing_maps = [#row4, #id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%all, %zeros, %soft : tensor<1x2x4x1xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %z: f32, %s: f32, %o: f32):
    %0 = arith.select %c, %z, %s : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  return %sel : tensor<1x2x4x4xf32>
}

// -----

// nn.MultiheadAttention slices its packed in_proj weight: a static slice of
// a frozen weight is a frozen weight of its own, with its rows' values.
// CHECK-LABEL: func.func @weight_slices
// CHECK-SAME:    %arg1: tensor<1x2xf32> {ipu_tile.constant = dense<{{\[\[}}3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>}
// CHECK-SAME:    %arg2: tensor<2x2xf32> {ipu_tile.constant = dense<{{\[\[}}5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>}
// expected-remark @below {{takes 2 frozen weights}}
func.func @weight_slices(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<2x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %q = tensor.extract_slice %w[1, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<1x2xf32>
  %kv = tensor.extract_slice %w[2, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %q : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<1x2xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%kv : tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.mulf %a, %a : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32>
  return %y, %z : tensor<1x2xf32>, tensor<2x2xf32>
}

// -----

// torch-mlir's f16 linear on [1, S, D]: the activation flattened to
// [S, D], both operands upcast to f32 by extf generics, W^T by a
// transpose; the bias added in f32, the result narrowed and unflattened.
// The matmul takes the f16 operands (the AMP multiplies f16 and
// accumulates in f32 alike) and W as given, transposed; the flatten and
// unflatten are reshapes (identity permutes), which move nothing when the
// layouts agree.
// CHECK-LABEL: func.func @f16_linear
// CHECK:         %[[FLAT:.*]] = ipu_tile.permute %arg0 view [1, 16, 64] permutation [0, 1, 2] : tensor<1x16x64xf16> -> tensor<16x64xf16>
// CHECK:         ipu_gemm.matmul %[[FLAT]], %arg1 {acc_type = f32, transpose_rhs} : tensor<16x64xf16>, tensor<32x64xf16> -> tensor<16x32xf32>
// CHECK:         ipu_tile.permute %{{.*}} view [16, 32] permutation [0, 1] : tensor<16x32xf16> -> tensor<1x16x32xf16>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @f16_linear(%x: tensor<1x16x64xf16>, %w: tensor<32x64xf16>, %bias: tensor<32xf16>) -> tensor<1x16x32xf16> {
  %zero = arith.constant 0.0 : f32
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x16x64xf16> into tensor<16x64xf16>
  %et = tensor.empty() : tensor<64x32xf16>
  %wt = linalg.transpose ins(%w : tensor<32x64xf16>) outs(%et : tensor<64x32xf16>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<16x64xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%flat : tensor<16x64xf16>) outs(%ea : tensor<16x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<16x64xf32>
  %eb = tensor.empty() : tensor<64x32xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%wt : tensor<64x32xf16>) outs(%eb : tensor<64x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<64x32xf32>
  %ec = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%ec : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : tensor<16x32xf32>, tensor<32xf16>) outs(%ec : tensor<16x32xf32>) {
  ^bb0(%in: f32, %c: f16, %out: f32):
    %0 = arith.extf %c : f16 to f32
    %1 = arith.addf %in, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16x32xf32>
  %en = tensor.empty() : tensor<16x32xf16>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<16x32xf32>) outs(%en : tensor<16x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<16x32xf16>
  %r = tensor.expand_shape %n [[0, 1], [2]] output_shape [1, 16, 32] : tensor<16x32xf16> into tensor<1x16x32xf16>
  return %r : tensor<1x16x32xf16>
}

// -----

// scaled_dot_product_attention scales K^T after transposing it: the scale
// moves before the transpose, which the batched matmul then takes as B^T.
// CHECK-LABEL: func.func @scaled_key
// CHECK:         %[[SCALED:.*]] = ipu_tile.elementwise %arg1 : tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK:         ipu_gemm.matmul %arg0, %[[SCALED]] {acc_type = f32, transpose_rhs} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
#id4b = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @scaled_key(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32> {
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<1x2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x4x8xf32>) outs(%et : tensor<1x2x8x4xf32>) permutation = [0, 1, 3, 2]
  %s = linalg.generic {indexing_maps = [#id4b, #id4b], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kt : tensor<1x2x8x4xf32>) outs(%et : tensor<1x2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %half : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x4xf32>
  %qf = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %sf = tensor.collapse_shape %s [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %ec = tensor.empty() : tensor<2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%ec : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = linalg.batch_matmul ins(%qf, %sf : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %r = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// f16 scaled_dot_product_attention in torch-mlir's decomposition: Q and K
// widened to f32, each multiplied by the root of the scale (an f64
// constant narrowed in the body), K^T transposed, a batch_matmul in f32.
// The products of f16 values are exact in f32, so the matmul takes the f16
// operands and the two scalings follow the product, on its result.
// CHECK-LABEL: func.func @widened_scaled_scores
// CHECK:         %[[SCORES:.*]] = ipu_gemm.matmul %arg0, %arg1 {acc_type = f32, transpose_rhs} : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x4xf32>
// CHECK:         ipu_tile.elementwise %[[SCORES]] : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32> {
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK-NOT:     arith.extf
#id4c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// expected-remark @below {{computes the f64 intermediates of 1 ops in f32}}
func.func @widened_scaled_scores(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>) -> tensor<1x2x4x4xf32> {
  %root = arith.constant 0.59460355750136051 : f64
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %qw = linalg.generic {indexing_maps = [#id4c, #id4c], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x4x8xf16>) outs(%e : tensor<1x2x4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %kw = linalg.generic {indexing_maps = [#id4c, #id4c], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x4x8xf16>) outs(%e : tensor<1x2x4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %qs = linalg.generic {indexing_maps = [#id4c, #id4c], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qw : tensor<1x2x4x8xf32>) outs(%e : tensor<1x2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.truncf %root : f64 to f32
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %et = tensor.empty() : tensor<1x2x8x4xf32>
  %kt = linalg.transpose ins(%kw : tensor<1x2x4x8xf32>) outs(%et : tensor<1x2x8x4xf32>) permutation = [0, 1, 3, 2]
  %ks = linalg.generic {indexing_maps = [#id4c, #id4c], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kt : tensor<1x2x8x4xf32>) outs(%et : tensor<1x2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.truncf %root : f64 to f32
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x4xf32>
  %qf = tensor.collapse_shape %qs [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %kf = tensor.collapse_shape %ks [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %ec = tensor.empty() : tensor<2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%ec : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = linalg.batch_matmul ins(%qf, %kf : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %r = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// A batch of two images adding one position embedding ((d0, d1, d2) ->
// (0, d1, d2)), and the pooling head's probe copied out per image
// ((d0, d1, d2) -> (d1, d2)): each becomes a weight of the batch's shape,
// its values repeated per image, read whole.
// CHECK-LABEL: func.func @batch_broadcasts
// CHECK-SAME:    %arg1: tensor<2x2x2xf32> {ipu_tile.constant = dense<{{\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]], {{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]>
// CHECK-SAME:    %arg2: tensor<2x1x2xf32> {ipu_tile.constant = dense<{{\[\[\[}}5.000000e+00, 6.000000e+00]], {{\[\[}}5.000000e+00, 6.000000e+00]]]>
// CHECK:         ipu_tile.elementwise %arg0, %arg1
// CHECK:         return {{.*}}, %arg2
// expected-remark @below {{repeats 2 frozen weights along the dims an elementwise op broadcasts it over}}
// expected-remark @below {{takes 2 frozen weights as arguments}}
func.func @batch_broadcasts(%x: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x1x2xf32>) {
  %pe = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %probe = arith.constant dense<[[5.0, 6.0]]> : tensor<1x2xf32>
  %e = tensor.empty() : tensor<2x2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %pe : tensor<2x2x2xf32>, tensor<1x2x2xf32>) outs(%e : tensor<2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2x2xf32>
  %e2 = tensor.empty() : tensor<2x1x2xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%probe : tensor<1x2xf32>) outs(%e2 : tensor<2x1x2xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x1x2xf32>
  return %y, %q : tensor<2x2x2xf32>, tensor<2x1x2xf32>
}
