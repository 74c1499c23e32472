// One value read by two matmuls that want it in different layouts, from
// linalg on 16 tiles: the first consumer takes %h where its producer left
// it, the second through the one relayout in the IR. Compiled, simulated
// and checked.
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm --ipu-assign-layouts | FileCheck %s --check-prefix=LAYOUTS
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s

// LAYOUTS-COUNT-1: ipu_tile.relayout
// LAYOUTS-NOT: ipu_tile.relayout
// Every element of %h (64 x 32, a checkpoint), %y1 and %y2 is compared.
// CHECK: numericalTest=PASS elementsCompared=7168 worstCheckpoint=

func.func @two_layouts(%x: tensor<64x32xf32>, %w1: tensor<32x32xf32>, %w2: tensor<32x16xf32>, %w3: tensor<32x64xf32>) -> (tensor<64x16xf32>, tensor<64x64xf32>) {
  %e1 = tensor.empty() : tensor<64x32xf32>
  %h = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 16, cols = 1, inner = 1>}
      ins(%x, %w1 : tensor<64x32xf32>, tensor<32x32xf32>) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x16xf32>
  %y1 = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 16, cols = 1, inner = 1>}
      ins(%h, %w2 : tensor<64x32xf32>, tensor<32x16xf32>) outs(%e2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  %e3 = tensor.empty() : tensor<64x64xf32>
  %y2 = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, cols = 4, inner = 1>}
      ins(%h, %w3 : tensor<64x32xf32>, tensor<32x64xf32>) outs(%e3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y1, %y2 : tensor<64x16xf32>, tensor<64x64xf32>
}
