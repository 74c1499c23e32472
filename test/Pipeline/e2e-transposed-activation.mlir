// A matmul reading an activation transposed (A^T computed on the device,
// as a backward pass or x^T y has it): A^T is gathered so that each tile
// holds the transpose of its A block, a transpose compute set turns it into
// A there, and the GEMM runs as usual. Compiled for 16 tiles, simulated and
// checked, in f32 and in f16.
// RUN: split-file %s %t
// RUN: ipu-opt %t/f32.mlir --ipu-compile="target=ipu21-16" -o %t/f32.out.mlir
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/f32.out.mlir
// RUN: ipu-translate --ipu-to-package %t/f32.out.mlir -o %t/f32.ipuexe
// RUN: ipu-run %t/f32.ipuexe --check | FileCheck %s
// RUN: ipu-opt %t/f16.mlir --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/f16.ipuexe
// RUN: ipu-run %t/f16.ipuexe --check | FileCheck %s

// IR: ipu_exchange.phase @mm1.gather
// IR-NEXT: ipu_exchange.copy @mm0.out to @mm1.lhs
// IR: ipu_tile.compute_set @mm1.transpose kernel "transpose" operands [@mm1.lhs, @mm1.lhs.transposed]
// IR-NEXT: ipu_tile.compute_set @mm1.partials kernel "gemm" operands [@mm1.lhs.transposed,
// CHECK: checkpoint=1 operation=matmul result=0 partials=f32 maximumAbsoluteError={{.*}} mismatches=0 elementsCompared=192
// CHECK: numericalTest=PASS elementsCompared=960

//--- f32.mlir
func.func @at(%x: tensor<32x16xf32>, %v: tensor<16x24xf32>, %w: tensor<32x8xf32>) -> tensor<24x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  %p = linalg.matmul ins(%x, %v : tensor<32x16xf32>, tensor<16x24xf32>) outs(%f : tensor<32x24xf32>) -> tensor<32x24xf32>
  %e2 = tensor.empty() : tensor<24x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<24x8xf32>) -> tensor<24x8xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%p, %w : tensor<32x24xf32>, tensor<32x8xf32>) outs(%f2 : tensor<24x8xf32>) -> tensor<24x8xf32>
  return %c : tensor<24x8xf32>
}

//--- f16.mlir
func.func @at(%x: tensor<32x16xf16>, %v: tensor<16x24xf16>, %w: tensor<32x8xf16>) -> tensor<24x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  %p = linalg.matmul ins(%x, %v : tensor<32x16xf16>, tensor<16x24xf16>) outs(%f : tensor<32x24xf32>) -> tensor<32x24xf32>
  %p16 = arith.truncf %p : tensor<32x24xf32> to tensor<32x24xf16>
  %e2 = tensor.empty() : tensor<24x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<24x8xf32>) -> tensor<24x8xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%p16, %w : tensor<32x24xf16>, tensor<32x8xf16>) outs(%f2 : tensor<24x8xf32>) -> tensor<24x8xf32>
  return %c : tensor<24x8xf32>
}
