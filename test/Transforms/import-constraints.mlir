// Constraints written on linalg.matmul, as the README shows, reach the
// planner: the plan has the rows, inner partitions and reduction asked for.
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm | FileCheck %s
// CHECK: plan = #ipu_gemm.plan<rows = 4, cols = {{[0-9]+}}, inner = 2, orientation = {{normal|swapped}}, weights = {{standard|interleaved}}, reduction = staged
func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
  %init = tensor.empty() : tensor<96x64xf32>
  %c = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, inner = 2, reduction = staged>}
                     ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %c : tensor<96x64xf32>
}
