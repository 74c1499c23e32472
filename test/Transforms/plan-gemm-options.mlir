// Pass options constrain every matmul, on top of the op's own constraints.
// RUN: ipu-opt %s -ipu-plan-gemm="inner=2 reduction=staged weights=interleaved" | FileCheck %s
// RUN: not ipu-opt %s -ipu-plan-gemm="reduction=partial" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ipu-opt %s -ipu-plan-gemm="staging=maybe" 2>&1 | FileCheck %s --check-prefix=STAGING

// CHECK: plan = #ipu_gemm.plan<rows = {{[0-9]+}}, cols = {{[0-9]+}}, inner = 2, orientation = "normal", weights = "interleaved", reduction = "staged", staging = false
// BAD: error: pass option reduction='partial' is not complete or staged
// STAGING: error: pass option staging='maybe' is not true or false

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}
