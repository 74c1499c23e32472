// RUN: ipu-opt %s --ipu-fuse-sibling-matmuls --split-input-file 2>&1 | FileCheck %s

// Q, K and V of one value: one matmul by the weights side by side (rows
// in program order), one bias add on the whole with the biases side by
// side (their widening with them), and each head split a window of the
// heads of all three.
// CHECK: remark: computes 3 matmuls of one value by frozen weights as one, 4x2x6, the weights side by side
// CHECK-LABEL: func.func @qkv
// CHECK-SAME:    (%arg0: tensor<4x2xf32>, %[[W:.*]]: tensor<6x2xf32> {ipu_tile.constant = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01], [1.100000e+01, 1.200000e+01]]> : tensor<6x2xf32>},
// CHECK-SAME:    %[[B:.*]]: tensor<6xf16> {ipu_tile.constant = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<6xf16>})
// CHECK:         %[[MM:.*]] = ipu_gemm.matmul %arg0, %[[W]] {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<6x2xf32> -> tensor<4x6xf32>
// CHECK:         %[[WIDE:.*]] = ipu_tile.elementwise %[[B]] : tensor<6xf16> -> tensor<6xf32>
// CHECK:         %[[ADD:.*]] = ipu_tile.elementwise %[[MM]], %[[WIDE]] : tensor<4x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
// CHECK:         %[[Q:.*]] = ipu_tile.permute %[[ADD]] view [4, 6, 1] permutation [1, 0, 2] offsets [0, 0, 0] sizes [2, 4, 1] : tensor<4x6xf32> -> tensor<2x4x1xf32>
// CHECK:         %[[K:.*]] = ipu_tile.permute %[[ADD]] view [4, 6, 1] permutation [1, 0, 2] offsets [2, 0, 0] sizes [2, 4, 1] : tensor<4x6xf32> -> tensor<2x4x1xf32>
// CHECK:         %[[V:.*]] = ipu_tile.permute %[[ADD]] view [4, 6, 1] permutation [1, 0, 2] offsets [4, 0, 0] sizes [2, 4, 1] : tensor<4x6xf32> -> tensor<2x4x1xf32>
// CHECK:         return %[[Q]], %[[K]], %[[V]]
func.func @qkv(%x: tensor<4x2xf32>,
               %wq: tensor<2x2xf32> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>},
               %bq: tensor<2xf16> {ipu_tile.constant = dense<[1.0, 2.0]> : tensor<2xf16>},
               %wk: tensor<2x2xf32> {ipu_tile.constant = dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>},
               %bk: tensor<2xf16> {ipu_tile.constant = dense<[3.0, 4.0]> : tensor<2xf16>},
               %wv: tensor<2x2xf32> {ipu_tile.constant = dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>},
               %bv: tensor<2xf16> {ipu_tile.constant = dense<[5.0, 6.0]> : tensor<2xf16>})
    -> (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) {
  %q = ipu_gemm.matmul %x, %wq {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %bq32 = ipu_tile.elementwise %bq : tensor<2xf16> -> tensor<2xf32> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    ipu_tile.yield %e : f32
  }
  %qb = ipu_tile.elementwise %q, %bq32 : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ipu_tile.yield %s : f32
  }
  %qh = ipu_tile.permute %qb view [4, 2, 1] permutation [1, 0, 2] : tensor<4x2xf32> -> tensor<2x4x1xf32>
  %k = ipu_gemm.matmul %x, %wk {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %bk32 = ipu_tile.elementwise %bk : tensor<2xf16> -> tensor<2xf32> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    ipu_tile.yield %e : f32
  }
  %kb = ipu_tile.elementwise %k, %bk32 : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ipu_tile.yield %s : f32
  }
  %kh = ipu_tile.permute %kb view [4, 2, 1] permutation [1, 0, 2] : tensor<4x2xf32> -> tensor<2x4x1xf32>
  %v = ipu_gemm.matmul %x, %wv {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %bv32 = ipu_tile.elementwise %bv : tensor<2xf16> -> tensor<2xf32> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    ipu_tile.yield %e : f32
  }
  %vb = ipu_tile.elementwise %v, %bv32 : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ipu_tile.yield %s : f32
  }
  %vh = ipu_tile.permute %vb view [4, 2, 1] permutation [1, 0, 2] : tensor<4x2xf32> -> tensor<2x4x1xf32>
  return %qh, %kh, %vh : tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>
}

// -----

// Left alone: weights of other input scales (one scale per f8 product), a
// weight that is an input rather than frozen, and a frozen weight read twice.
// CHECK-NOT: remark: computes
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-4: ipu_gemm.matmul
func.func @apart(%x: tensor<4x2xf8E4M3FN>, %y: tensor<4x2xf32>, %input: tensor<2x2xf32>,
                 %wa: tensor<2x2xf8E4M3FN> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf8E4M3FN>},
                 %wb: tensor<2x2xf8E4M3FN> {ipu_tile.constant = dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf8E4M3FN>},
                 %wc: tensor<2x2xf32> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>})
    -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) {
  %a = ipu_gemm.matmul %x, %wa {acc_type = f32, input_scale = -3 : i32, transpose_rhs} : tensor<4x2xf8E4M3FN>, tensor<2x2xf8E4M3FN> -> tensor<4x2xf32>
  %b = ipu_gemm.matmul %x, %wb {acc_type = f32, input_scale = -4 : i32, transpose_rhs} : tensor<4x2xf8E4M3FN>, tensor<2x2xf8E4M3FN> -> tensor<4x2xf32>
  %c = ipu_gemm.matmul %y, %input {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %d = ipu_gemm.matmul %y, %wc {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %e = ipu_tile.elementwise %wc : tensor<2x2xf32> -> tensor<2x2xf32> {
  ^bb0(%v: f32):
    ipu_tile.yield %v : f32
  }
  return %a, %b, %c, %e : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>
}

// -----

// One matmul, but the bias adds stay apart: each reads a per-row value of
// its own (a frozen column), which side by side would not be one column
// of the whole. Each reads its window of the one result.
// CHECK-LABEL: func.func @columns
// CHECK:         %[[MM:.*]] = ipu_gemm.matmul %arg0, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
// CHECK:         %[[A:.*]] = ipu_tile.permute %[[MM]] view [4, 4] permutation [0, 1] offsets [0, 0] sizes [4, 2]
// CHECK:         %[[B:.*]] = ipu_tile.permute %[[MM]] view [4, 4] permutation [0, 1] offsets [0, 2] sizes [4, 2]
// CHECK:         ipu_tile.elementwise %[[A]], %arg1
// CHECK:         ipu_tile.elementwise %[[B]], %arg2
func.func @columns(%x: tensor<4x2xf32>,
                   %ca: tensor<4x1xf32> {ipu_tile.constant = dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>},
                   %cb: tensor<4x1xf32> {ipu_tile.constant = dense<[[5.0], [6.0], [7.0], [8.0]]> : tensor<4x1xf32>},
                   %wa: tensor<2x2xf32> {ipu_tile.constant = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>},
                   %wb: tensor<2x2xf32> {ipu_tile.constant = dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>})
    -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %a = ipu_gemm.matmul %x, %wa {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %as = ipu_tile.elementwise %a, %ca : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<4x2xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.subf %u, %v : f32
    ipu_tile.yield %s : f32
  }
  %b = ipu_gemm.matmul %x, %wb {acc_type = f32, transpose_rhs} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %bs = ipu_tile.elementwise %b, %cb : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<4x2xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.subf %u, %v : f32
    ipu_tile.yield %s : f32
  }
  return %as, %bs : tensor<4x2xf32>, tensor<4x2xf32>
}
