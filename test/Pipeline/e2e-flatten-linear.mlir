// torch-mlir's f16 linear layer on [1, S, D] (flatten, upcast, matmul,
// f32 bias, narrow, unflatten), through the whole pipeline on 16 tiles:
// the flatten and the unflatten are reshapes whose source's layout already
// holds the result, so they take their source's buffer and move nothing:
// no permute buffer, no permute phase. The check passes.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: ipu-translate --ipu-to-package %t.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=SIM
// --outputs writes the function's one result, in its declared shape, and
// none of the checkpoints --check reads.
// RUN: rm -rf %t.out && ipu-run %t.ipuexe --outputs %t.out --quiet > /dev/null
// RUN: ls %t.out | FileCheck %s --check-prefix=OUT
// RUN: %python %S/../Run/Inputs/npy.py header %t.out/result0.npy | FileCheck %s --check-prefix=HEADER
// OUT: result0.npy
// OUT-NOT: result
// HEADER: descr='<f2' fortran_order=False shape=(1, 16, 32)

// CHECK-NOT: @permute
// CHECK:     ipu_tile.compute_set @mm0.partials
// CHECK-NOT: @permute
// SIM: numericalTest=PASS

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
