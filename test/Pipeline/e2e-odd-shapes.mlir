// Odd shapes through the whole path: single elements, rows narrower than a
// 32-bit word, f8 and f16 results, inner dimensions of 1 and of thousands.
// RUN: split-file %s %t
// RUN: ipu-opt %t/tiny.mlir --ipu-compile="target=ipu21-4" | ipu-translate --ipu-to-package -o %t/tiny.ipuexe
// RUN: ipu-run %t/tiny.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/narrow.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/narrow.ipuexe
// RUN: ipu-run %t/narrow.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/f8.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/f8.ipuexe
// RUN: ipu-run %t/f8.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/deep.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/deep.ipuexe
// RUN: ipu-run %t/deep.ipuexe --check | FileCheck %s
// CHECK: numericalTest=PASS

//--- tiny.mlir
func.func @tiny(%a: tensor<1x1xf16>, %b: tensor<1x1xf16>) -> tensor<1x1xf32> {
  %init = tensor.empty() : tensor<1x1xf32>
  %c = linalg.matmul ins(%a, %b : tensor<1x1xf16>, tensor<1x1xf16>)
                     outs(%init : tensor<1x1xf32>) -> tensor<1x1xf32>
  return %c : tensor<1x1xf32>
}
//--- narrow.mlir
func.func @narrow(%a: tensor<33x17xf16>, %b: tensor<17x9xf16>) -> tensor<33x9xf16> {
  %init = tensor.empty() : tensor<33x9xf16>
  %c = linalg.matmul ins(%a, %b : tensor<33x17xf16>, tensor<17x9xf16>)
                     outs(%init : tensor<33x9xf16>) -> tensor<33x9xf16>
  return %c : tensor<33x9xf16>
}
//--- f8.mlir
func.func @f8(%a: tensor<9x7xf8E5M2>, %b: tensor<7x33xf8E5M2>) -> tensor<9x33xf16> {
  %init = tensor.empty() : tensor<9x33xf16>
  %c = linalg.matmul ins(%a, %b : tensor<9x7xf8E5M2>, tensor<7x33xf8E5M2>)
                     outs(%init : tensor<9x33xf16>) -> tensor<9x33xf16>
  return %c : tensor<9x33xf16>
}
//--- deep.mlir
func.func @deep(%a: tensor<3x4304xf16>, %b: tensor<4304x5xf16>) -> tensor<3x5xf32> {
  %init = tensor.empty() : tensor<3x5xf32>
  %c = linalg.matmul ins(%a, %b : tensor<3x4304xf16>, tensor<4304x5xf16>)
                     outs(%init : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %c : tensor<3x5xf32>
}
