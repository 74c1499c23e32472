// An argument used as both operands of a matmul, and weights shared by two
// matmuls with different plans: every use gets the layout its plan
// assumed (A arrives split by rows, B in the plan's layout, transposed when
// swapped), so the product is right whatever the plans.
// RUN: split-file %s %t
// RUN: ipu-opt %t/self.mlir --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="orientation=swapped" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t/self.ipuexe
// RUN: ipu-run %t/self.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/shared.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/shared.ipuexe
// RUN: ipu-run %t/shared.ipuexe --check | FileCheck %s
// CHECK: numericalTest=PASS

//--- self.mlir
func.func @self(%a: tensor<24x24xf16>) -> tensor<24x24xf32> {
  %init = tensor.empty() : tensor<24x24xf32>
  %c = linalg.matmul ins(%a, %a : tensor<24x24xf16>, tensor<24x24xf16>)
                     outs(%init : tensor<24x24xf32>) -> tensor<24x24xf32>
  return %c : tensor<24x24xf32>
}
//--- shared.mlir
func.func @shared(%a: tensor<64x32xf16>, %x: tensor<2x32xf16>, %w: tensor<32x48xf16>) -> (tensor<64x48xf32>, tensor<2x48xf32>) {
  %e1 = tensor.empty() : tensor<64x48xf32>
  %c = linalg.matmul ins(%a, %w : tensor<64x32xf16>, tensor<32x48xf16>)
                     outs(%e1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %e2 = tensor.empty() : tensor<2x48xf32>
  %d = linalg.matmul ins(%x, %w : tensor<2x32xf16>, tensor<32x48xf16>)
                     outs(%e2 : tensor<2x48xf32>) -> tensor<2x48xf32>
  return %c, %d : tensor<64x48xf32>, tensor<2x48xf32>
}
