// Pass options constrain every matmul, on top of the op's own constraints.
// RUN: ipu-opt %s -ipu-plan-gemm="inner=2 reduction=staged weights=interleaved" | FileCheck %s
// RUN: not ipu-opt %s -ipu-plan-gemm="reduction=partial" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ipu-opt %s -ipu-plan-gemm="staging=maybe" 2>&1 | FileCheck %s --check-prefix=STAGING
// RUN: not ipu-opt %s -ipu-plan-gemm="gathered=yes" 2>&1 | FileCheck %s --check-prefix=GATHERED
// RUN: ipu-opt %s -ipu-plan-gemm="gathered=true" | FileCheck %s --check-prefix=GATHER
// Partials: f32 by default for an f32 accumulation; f16 when allowed and
// cheaper ("any": for @mm's f32 result f16 partials would need a conversion
// and save no pass, for @allowed's f16 result they are cheaper) or required
// ("f16"); the option overrides the op's field.
// RUN: ipu-opt %s -ipu-plan-gemm | FileCheck %s --check-prefix=DEFAULT
// RUN: ipu-opt %s -ipu-plan-gemm="partials=any" | FileCheck %s --check-prefix=DEFAULT
// RUN: ipu-opt %s -ipu-plan-gemm="partials=f16" | FileCheck %s --check-prefix=HALF
// RUN: not ipu-opt %s -ipu-plan-gemm="partials=bf16" 2>&1 | FileCheck %s --check-prefix=PARTIALS
// Partition options are range-checked, never truncated (2^32 + 1 would be 1).
// RUN: not ipu-opt %s -ipu-plan-gemm="rows=4294967297" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not ipu-opt %s -ipu-plan-gemm="inner=-2" 2>&1 | FileCheck %s --check-prefix=INNER

// CHECK: plan = #ipu_gemm.plan<rows = {{[0-9]+}}, cols = {{[0-9]+}}, inner = 2, orientation = {{normal|swapped}}, weights = interleaved, reduction = staged, staging = false
// DEFAULT-LABEL: @mm(
// DEFAULT: staging = {{true|false}}, cycles
// DEFAULT-LABEL: @allowed(
// DEFAULT: partials = "f16"
// HALF-LABEL: @mm(
// HALF: partials = "f16"
// HALF-LABEL: @allowed(
// HALF: partials = "f16"
// PARTIALS: error: pass option partials='bf16' is not f32, f16 or any
// BAD: error: pass option reduction='partial' is not complete or staged
// STAGING: error: pass option staging='maybe' is not true or false
// GATHERED: error: pass option gathered='yes' is not true or false
// GATHER-LABEL: @mm(
// GATHER: weights = interleaved, {{.*}}gathered = true>
// ROWS: error: pass option rows=4294967297 is out of range [1, 2^32) (0 leaves it free)
// INNER: error: pass option inner=-2 is out of range [1, 2^32) (0 leaves it free)

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
  func.func @allowed(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf16> {
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<partials = "any">}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf16>
    return %c : tensor<96x64xf16>
  }
}
