// Partial sums in interleaved memory (psums = interleaved): the plan given
// on the op keeps the AMP's partials and the reduction's gathered partials
// there, the result in standard memory; the product is the same, and the
// package checks op by op. Both reductions, and gathered weights.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | FileCheck %s --check-prefix=IR
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s
// IR-DAG: ipu_tile.buffer @mm0.psums : {{.*}} in interleaved
// IR-DAG: ipu_tile.buffer @mm0.gathered : {{.*}} in interleaved
// IR-DAG: ipu_tile.buffer @mm0.out : {{.*}} in standard
// IR-DAG: ipu_tile.buffer @mm1.psums : {{.*}} in interleaved
// IR-DAG: ipu_tile.buffer @mm1.gathered : {{.*}} in interleaved
// IR-DAG: ipu_tile.buffer @mm2.psums : {{.*}} in interleaved
// CHECK: checkpoint=0 operation=matmul result=0 {{.*}}mismatches=0
// CHECK: checkpoint=1 operation=matmul result=1 {{.*}}mismatches=0
// CHECK: checkpoint=2 operation=matmul result=2 {{.*}}mismatches=0
// CHECK: numericalTest=PASS
func.func @psums(%a: tensor<96x256xf16>, %b: tensor<256x64xf16>, %w: tensor<256x64xf16>)
    -> (tensor<96x64xf32>, tensor<96x64xf32>, tensor<96x64xf32>) {
  %c0 = ipu_gemm.matmul %a, %b {acc_type = f32, plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 4, orientation = normal, weights = interleaved, reduction = staged, staging = false, cycles = 0, psums = interleaved>}
      : tensor<96x256xf16>, tensor<256x64xf16> -> tensor<96x64xf32>
  %c1 = ipu_gemm.matmul %a, %b {acc_type = f32, plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 4, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0, psums = interleaved>}
      : tensor<96x256xf16>, tensor<256x64xf16> -> tensor<96x64xf32>
  %c2 = ipu_gemm.matmul %a, %w {acc_type = f32, plan = #ipu_gemm.plan<rows = 4, cols = 2, inner = 2, orientation = normal, weights = interleaved, reduction = staged, staging = false, cycles = 0, gathered = true, psums = interleaved>}
      : tensor<96x256xf16>, tensor<256x64xf16> -> tensor<96x64xf32>
  return %c0, %c1, %c2 : tensor<96x64xf32>, tensor<96x64xf32>, tensor<96x64xf32>
}
