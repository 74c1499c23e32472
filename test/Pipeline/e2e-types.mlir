// Every input type the GEMM kernel takes, through the whole path on 4 tiles.
// RUN: split-file %s %t
// RUN: ipu-opt %t/f32.mlir --ipu-compile="target=ipu21-4" | ipu-translate --ipu-to-package -o %t/f32.ipuexe
// RUN: ipu-run %t/f32.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/f8.mlir --ipu-compile="target=ipu21-4" | ipu-translate --ipu-to-package -o %t/f8.ipuexe
// RUN: ipu-run %t/f8.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/f16acc.mlir --ipu-compile="target=ipu21-4" | ipu-translate --ipu-to-package -o %t/f16acc.ipuexe
// RUN: ipu-run %t/f16acc.ipuexe --check | FileCheck %s
// f32 inputs accumulating in f16 over K = 16384: the check's tolerance
// counts the 2048 f16 roundings (docs/Numerics.md).
// RUN: ipu-opt %t/f32f16.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/f32f16.ipuexe
// RUN: ipu-run %t/f32f16.ipuexe --check | FileCheck %s --check-prefixes=CHECK,HALF
// HALF: partials=f16
// CHECK: numericalTest=PASS

//--- f32.mlir
func.func @f32(%a: tensor<20x24xf32>, %b: tensor<24x12xf32>) -> tensor<20x12xf32> {
  %init = tensor.empty() : tensor<20x12xf32>
  %c = linalg.matmul ins(%a, %b : tensor<20x24xf32>, tensor<24x12xf32>)
                     outs(%init : tensor<20x12xf32>) -> tensor<20x12xf32>
  return %c : tensor<20x12xf32>
}
//--- f8.mlir
func.func @f8(%a: tensor<33x64xf8E4M3FN>, %b: tensor<64x40xf8E4M3FN>) -> tensor<33x40xf32> {
  %init = tensor.empty() : tensor<33x40xf32>
  %c = linalg.matmul ins(%a, %b : tensor<33x64xf8E4M3FN>, tensor<64x40xf8E4M3FN>)
                     outs(%init : tensor<33x40xf32>) -> tensor<33x40xf32>
  return %c : tensor<33x40xf32>
}
//--- f16acc.mlir
func.func @f16acc(%a: tensor<16x32xf16>, %b: tensor<32x16xf16>) -> tensor<16x16xf16> {
  %zero = arith.constant 0.0 : f16
  %init = tensor.empty() : tensor<16x16xf16>
  %fill = linalg.fill ins(%zero : f16) outs(%init : tensor<16x16xf16>) -> tensor<16x16xf16>
  %c = linalg.matmul ins(%a, %b : tensor<16x32xf16>, tensor<32x16xf16>)
                     outs(%fill : tensor<16x16xf16>) -> tensor<16x16xf16>
  return %c : tensor<16x16xf16>
}
//--- f32f16.mlir
func.func @f32f16(%a: tensor<8x16384xf32>, %b: tensor<16384x8xf32>) -> tensor<8x8xf16> {
  %init = tensor.empty() : tensor<8x8xf16>
  %c = linalg.matmul ins(%a, %b : tensor<8x16384xf32>, tensor<16384x8xf32>)
                     outs(%init : tensor<8x8xf16>) -> tensor<8x8xf16>
  return %c : tensor<8x8xf16>
}
