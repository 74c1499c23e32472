// Kernel parameters derived from the operands' blocks are the ones the
// lowering used to write out: the package from the derived form and the
// package with every parameter written by hand are the same bytes. The
// parameters (copy: bytes; gemm: m, k, n, inType, accType, outType,
// weightClass; reduce: m, n, count, inType, outType) are those of a 2 x 2
// inner split with staged weights on 4 tiles.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-4" -o %t.mlir
// Both read from stdin, so that their ops carry the same locations.
// RUN: ipu-translate --ipu-to-package < %t.mlir -o %t.derived
// The compute sets run on the tiles of a buffer (`tiles of @...`), and the
// parameters follow them in that buffer's tile order.
// RUN: sed -e 's/tiles of @mm0.rhs.staged$/tiles of @mm0.rhs.staged params [128, 128, 128, 128]/' \
// RUN:     -e 's/tiles of @mm0.rhs.staged {acc_type = f32}/tiles of @mm0.rhs.staged params [4, 8, 8, 1, 0, 0, 1, 0, 4, 8, 8, 1, 0, 0, 1, 0, 4, 8, 8, 1, 0, 0, 1, 0, 4, 8, 8, 1, 0, 0, 1, 0]/' \
// RUN:     -e 's/tiles of @mm0.out$/tiles of @mm0.out params [4, 8, 2, 0, 0, 4, 8, 2, 0, 0]/' %t.mlir > %t.explicit.mlir
// RUN: FileCheck %s --input-file=%t.explicit.mlir
// RUN: ipu-translate --ipu-to-package < %t.explicit.mlir -o %t.explicit
// RUN: cmp %t.derived %t.explicit
// A parameter that disagrees with the blocks is refused.
// RUN: sed -e 's/params \[128, 128, 128, 128\]/params [128, 128, 128, 64]/' %t.explicit.mlir | not ipu-opt 2>&1 | FileCheck %s --check-prefix=WRONG

// CHECK-COUNT-3: params [
// WRONG: error: 'ipu_tile.compute_set' op vertex on tile 3: operand 'src' is 64 bytes by its parameters, but buffer @arg1 holds the 128 bytes of its 8x8 f16 block (1, 0) there

func.func @mm(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %c = linalg.matmul {ipu_gemm.plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 2, orientation = normal, weights = standard, reduction = complete, staging = true, cycles = 0>}
      ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
