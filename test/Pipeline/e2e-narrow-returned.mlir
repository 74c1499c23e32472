// A narrow (f16) result split into column blocks: when it is only
// returned, the balanced split (host streams have no word grain), with a
// bias epilogue in its layout; when an exchange moves it to another
// matmul, blocks of whole 32-bit words (grain = 2), where the balanced
// split would cut words.
// RUN: split-file %s %t
// RUN: ipu-opt %t/returned.mlir --ipu-compile="target=ipu21-16" 2>&1 -o %t/returned.lowered.mlir | FileCheck %s --check-prefix=PLAN
// RUN: ipu-translate --ipu-to-package %t/returned.lowered.mlir -o %t/returned.ipuexe
// RUN: ipu-run %t/returned.ipuexe --check --quiet | FileCheck %s --check-prefix=SIM
// RUN: ipu-opt %t/exchanged.mlir --ipu-compile="target=ipu21-16" 2>&1 -o %t/exchanged.lowered.mlir | FileCheck %s --check-prefix=EXCHANGED
// RUN: FileCheck %s --check-prefix=EXCHANGED-IR --input-file=%t/exchanged.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t/exchanged.lowered.mlir -o %t/exchanged.ipuexe
// RUN: ipu-run %t/exchanged.ipuexe --check --quiet | FileCheck %s --check-prefix=EXCHANGED-RAN

// 34 columns over 4 blocks of 9, 9, 8, 8 f16 (18 bytes: off words).
// PLAN: remark: chose plan rows=4 cols=4
// PLAN-NOT: grain
// SIM: checkpoint=1 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=272
// SIM: numericalTest=PASS
// Exchanged: 17 words over 4 blocks of 5, 4, 4, 4 (10, 8, 8, 8 f16).
// EXCHANGED: remark: chose plan rows=4 cols=4 inner=1 {{.*}} grain=2
// EXCHANGED-IR: ipu_tile.buffer @mm0.out : tensor<8x34xf16, {{.*}}col_splits = [0, 10, 18, 26, 34]
// EXCHANGED-RAN: checkpoint=1 operation=elementwise {{.*}} mismatches=0
// EXCHANGED-RAN: numericalTest=PASS

//--- returned.mlir
func.func @returned(%x: tensor<8x16xf16>, %w: tensor<16x34xf16>, %b: tensor<34xf16>) -> tensor<8x34xf16> {
  %e = tensor.empty() : tensor<8x34xf16>
  %m = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, cols = 4, inner = 1>}
       ins(%x, %w : tensor<8x16xf16>, tensor<16x34xf16>) outs(%e : tensor<8x34xf16>) -> tensor<8x34xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       ins(%m, %b : tensor<8x34xf16>, tensor<34xf16>) outs(%e : tensor<8x34xf16>) {
  ^bb0(%in: f16, %bias: f16, %out: f16):
    %s = arith.addf %in, %bias : f16
    linalg.yield %s : f16
  } -> tensor<8x34xf16>
  return %y : tensor<8x34xf16>
}

//--- exchanged.mlir
func.func @exchanged(%x: tensor<8x16xf16>, %w: tensor<16x34xf16>, %w2: tensor<34x8xf16>) -> tensor<8x8xf16> {
  %e = tensor.empty() : tensor<8x34xf16>
  %m = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, cols = 4, inner = 1, partials = "f16">}
       ins(%x, %w : tensor<8x16xf16>, tensor<16x34xf16>) outs(%e : tensor<8x34xf16>) -> tensor<8x34xf16>
  %t = linalg.exp ins(%m : tensor<8x34xf16>) outs(%e : tensor<8x34xf16>) -> tensor<8x34xf16>
  %e2 = tensor.empty() : tensor<8x8xf16>
  %y = linalg.matmul ins(%t, %w2 : tensor<8x34xf16>, tensor<34x8xf16>) outs(%e2 : tensor<8x8xf16>) -> tensor<8x8xf16>
  return %y : tensor<8x8xf16>
}
