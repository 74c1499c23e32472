// RUN: ipu-opt %s -split-input-file -ipu-plan-gemm="finalists=2" -verify-diagnostics | FileCheck %s

// Finalists are reported best first, then the choice.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @choose
  // CHECK: ipu_gemm.matmul {{.*}}plan = #ipu_gemm.plan<rows = 8, cols = 2, inner = 1, orientation = "normal", weights = "standard", cycles = 2550>
  func.func @choose(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-remark @+3 {{finalist=0 rows=8 cols=2 inner=1 orientation=normal weights=standard estimatedCycles=2550 computeCycles=1450 exchangeCycles=800 syncCycles=300}}
    // expected-remark @+2 {{finalist=1 rows=8 cols=2 inner=1 orientation=normal weights=interleaved estimatedCycles=2550}}
    // expected-remark @+1 {{chose plan rows=8 cols=2 inner=1 orientation=normal weights=standard of 100 matching plans (100 fit memory, 100 in the space) on 'ipu21-16': estimated 2550 cycles}}
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

// A constraint selects the plan; the rest of the space is filtered out.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @constrained
  // CHECK: plan = #ipu_gemm.plan<rows = 2, cols = 8, inner = 1, orientation = "normal", weights = "interleaved"
  func.func @constrained(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-remark @+2 {{finalist=0 rows=2 cols=8 inner=1 orientation=normal weights=interleaved}}
    // expected-remark @+1 {{chose plan rows=2 cols=8 inner=1 orientation=normal weights=interleaved of 1 matching plans}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<rows = 2, cols = 8, weights = "interleaved">}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @infeasible(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{cannot plan 96x128x64 matmul on 'ipu21-16': no plan matches constraint 'rows=8 cols=4': rows x cols = 32 exceeds the 16 tiles of 'ipu21-16'}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<rows = 8, cols = 4>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @not_lowered(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{no plan matches constraint 'inner=2': only inner=1 is lowered today}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<inner = 2>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

// Too big for the chip in any plan: the smallest plan's bytes against the tile's.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21">} {
  func.func @too_big(%a: tensor<1024x8xf16>, %b: tensor<8x500000xf16>) -> tensor<1024x500000xf32> {
    // expected-error-re @+1 {{cannot plan 1024x8x500000 matmul on 'ipu21': no plan fits tile memory: the smallest ({{.*}}) needs {{[0-9]+}} standard and {{[0-9]+}} interleaved bytes per tile; a tile of 'ipu21' has 204800 standard and 425984 interleaved bytes}}
    %c = ipu_gemm.matmul %a, %b : tensor<1024x8xf16>, tensor<8x500000xf16> -> tensor<1024x500000xf32>
    return %c : tensor<1024x500000xf32>
  }
}

// -----

// expected-error @+1 {{no target: set the module attribute 'ipu_tile.target'}}
module {
  func.func @no_target(%a: tensor<8x8xf16>, %b: tensor<8x8xf16>) -> tensor<8x8xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}
