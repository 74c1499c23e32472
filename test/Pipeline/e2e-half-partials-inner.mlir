// f16 partials with an inner split: each of the 5 blocks of K (2 terms or
// 1) is accumulated from zero and rounded to f16 on its own tile, then the
// reduction adds them. The check's rounding term follows those blocks (the
// reference op's inner count), not passes over the whole of K: partials of
// opposite sign each carry an f16 rounding that the whole sum, near zero,
// would not explain. (Found by plan-property.test.)
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s
// CHECK: checkpoint=0 operation=matmul result=0 partials=f16 maximumAbsoluteError={{.*}} mismatches=0
// CHECK: numericalTest=PASS
func.func @case(%a: tensor<44x9xf16>, %b: tensor<9x60xf16>) -> tensor<44x60xf32> {
  %c = ipu_gemm.matmul %a, %b {acc_type = f32, constraints = #ipu_gemm.constraints<rows = 3, cols = 1, inner = 5, orientation = normal, weights = standard, reduction = staged, staging = false, partials = "f16">}
      : tensor<44x9xf16>, tensor<9x60xf16> -> tensor<44x60xf32>
  return %c : tensor<44x60xf32>
}
