// RUN: ipu-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: ipu-opt %s | ipu-opt | FileCheck %s

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @plain
  // CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
  func.func @plain(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }

  // CHECK-LABEL: func.func @planned
  // CHECK: ipu_gemm.matmul {{.*}} {acc_type = f16, constraints = #ipu_gemm.constraints<rows = 4, weights = standard>, plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, partials = "f16", cycles = 2911>}
  func.func @planned(%a: tensor<96x128xf8E4M3FN>, %b: tensor<128x64xf8E4M3FN>) -> tensor<96x64xf16> {
    %c = ipu_gemm.matmul %a, %b {acc_type = f16,
        constraints = #ipu_gemm.constraints<rows = 4, weights = standard>,
        plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, partials = "f16", cycles = 2911>}
        : tensor<96x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<96x64xf16>
    return %c : tensor<96x64xf16>
  }

  // Gathered weights print their flag; resident ones (the default) do not.
  // CHECK-LABEL: func.func @gathered
  // CHECK: constraints = #ipu_gemm.constraints<gathered = true>, plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10, gathered = true>
  func.func @gathered(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b {
        plan = #ipu_gemm.plan<gathered = true, rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>,
        constraints = #ipu_gemm.constraints<gathered = true>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }

  // Gathered homes in standard memory print their class; interleaved (the
  // default) does not.
  // CHECK-LABEL: func.func @homes
  // CHECK: constraints = #ipu_gemm.constraints<gathered = true, homes = standard>, plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10, gathered = true, homes = standard>
  func.func @homes(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b {
        plan = #ipu_gemm.plan<homes = standard, gathered = true, rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>,
        constraints = #ipu_gemm.constraints<homes = standard, gathered = true>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }

  // Partial sums in interleaved memory print their class; standard (the
  // default) does not.
  // CHECK-LABEL: func.func @psums
  // CHECK: plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 4, orientation = normal, weights = interleaved, reduction = staged, staging = false, cycles = 10, psums = interleaved>
  func.func @psums(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b {
        plan = #ipu_gemm.plan<psums = interleaved, rows = 4, cols = 1, inner = 4, orientation = normal, weights = interleaved, reduction = staged, staging = false, cycles = 10>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }

  // A serial split prints its chunk count; its constraint too.
  // CHECK-LABEL: func.func @serial
  // CHECK: constraints = #ipu_gemm.constraints<serial = 4>, plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10, serial = 4>
  func.func @serial(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b {
        plan = #ipu_gemm.plan<serial = 4, rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>,
        constraints = #ipu_gemm.constraints<serial = 4>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }

  // CHECK-LABEL: func.func @e5m2
  // CHECK: ipu_gemm.matmul {{.*}} : tensor<8x32xf8E5M2>, tensor<32x16xf8E5M2> -> tensor<8x16xf32>
  func.func @e5m2(%a: tensor<8x32xf8E5M2>, %b: tensor<32x16xf8E5M2>) -> tensor<8x16xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<8x32xf8E5M2>, tensor<32x16xf8E5M2> -> tensor<8x16xf32>
    return %c : tensor<8x16xf32>
  }

  // CHECK-LABEL: func.func @batched_transposed
  // CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {transpose_rhs} : tensor<2x4x8x16xf16>, tensor<2x4x8x16xf16> -> tensor<2x4x8x8xf32>
  func.func @batched_transposed(%q: tensor<2x4x8x16xf16>, %k: tensor<2x4x8x16xf16>) -> tensor<2x4x8x8xf32> {
    %s = ipu_gemm.matmul %q, %k {transpose_rhs} : tensor<2x4x8x16xf16>, tensor<2x4x8x16xf16> -> tensor<2x4x8x8xf32>
    return %s : tensor<2x4x8x8xf32>
  }

  // Leading dims of A fold into M when B is 2-D; A may be given transposed
  // when B is batched.
  // CHECK-LABEL: func.func @folded_and_transposed_lhs
  // CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} : tensor<4x8x16xf16>, tensor<16x32xf16> -> tensor<4x8x32xf16>
  // CHECK: ipu_gemm.matmul %{{.*}}, %{{.*}} {transpose_lhs} : tensor<4x16x8xf16>, tensor<4x16x32xf16> -> tensor<4x8x32xf32>
  func.func @folded_and_transposed_lhs(%x: tensor<4x8x16xf16>, %w: tensor<16x32xf16>, %at: tensor<4x16x8xf16>, %b: tensor<4x16x32xf16>) -> (tensor<4x8x32xf16>, tensor<4x8x32xf32>) {
    %y = ipu_gemm.matmul %x, %w : tensor<4x8x16xf16>, tensor<16x32xf16> -> tensor<4x8x32xf16>
    %z = ipu_gemm.matmul %at, %b {transpose_lhs} : tensor<4x16x8xf16>, tensor<4x16x32xf16> -> tensor<4x8x32xf32>
    return %y, %z : tensor<4x8x32xf16>, tensor<4x8x32xf32>
  }
}
