// RUN: ipu-opt %s -split-input-file -ipu-plan-gemm="finalists=2" -verify-diagnostics | FileCheck %s

// Finalists are reported best first, then the choice and how much of the
// space the lower bound pruned.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @choose
  // CHECK: ipu_gemm.matmul {{.*}}plan = #ipu_gemm.plan<rows = 16, cols = 1, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = false, cycles = 3846>
  // The swapped AMP holds 6 rows of A and streams B's 64 columns, 11 rows
  // for the busiest worker, over 8 k passes at f32 partials: vertex 141,
  // pass overheads 8 x 25 + 7 x 39, 8 blocks of A from standard memory
  // (8 x 32), worker set-up 8 x 108, streaming 8 x 6 x 11 x 4 = 3846. A
  // arrives split by rows over the 16 tiles, as this plan holds it: no
  // gather, and syncs cost nothing of their own.
  func.func @choose(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-remark @+3 {{finalist=0 rows=16 cols=1 inner=1 orientation=swapped weights=standard reduction=complete staging=false partials=f32 estimatedCycles=3846 computeCycles=3846 exchangeCycles=0 reductionCycles=0 syncCycles=0 peakStandardBytes=19548 peakInterleavedBytes=0 activeTiles=16}}
    // expected-remark @+2 {{finalist=1 rows=16 cols=1 inner=1 orientation=swapped weights=interleaved reduction=complete staging=false partials=f32 estimatedCycles=3846}}
    // expected-remark-re @+1 {{chose plan rows=16 cols=1 inner=1 orientation=swapped weights=standard reduction=complete staging=false partials=f32 of 706 matching plans (706 in the space, 613 pruned by the lower bound, 93 of the costed fit memory) on 'ipu21-16': estimated 3846 cycles}}
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

// A constraint selects the plan; the rest of the space is filtered out.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @constrained
  // CHECK: plan = #ipu_gemm.plan<rows = 2, cols = 4, inner = 2, orientation = normal, weights = standard, reduction = staged, staging = true
  func.func @constrained(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-remark @+2 {{finalist=0 rows=2 cols=4 inner=2 orientation=normal weights=standard reduction=staged staging=true partials=f32}}
    // expected-remark @+1 {{chose plan rows=2 cols=4 inner=2 orientation=normal weights=standard reduction=staged staging=true partials=f32 of 1 matching plans}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<rows = 2, cols = 4, inner = 2, reduction = staged, staging = true>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @infeasible(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{cannot plan 96x128x64 matmul on 'ipu21-16': no plan matches constraint 'rows=8 cols=4': rows x cols x inner = 32 exceeds the 16 tiles of 'ipu21-16'}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<rows = 8, cols = 4>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @misaligned(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{no plan matches constraint 'inner=3': inner=3 cuts f16 rows of A off 32-bit word boundaries}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<inner = 3>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

// Swapped operands need B stored transposed, which only weights can be.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @swapped(%a: tensor<96x128xf16>, %p: tensor<128x32xf16>, %q: tensor<32x64xf16>) -> tensor<96x64xf32> {
    // expected-remark-re @+3 {{finalist=0 {{.*}}}}
    // expected-remark-re @+2 {{finalist=1 {{.*}}}}
    // expected-remark-re @+1 {{chose plan {{.*}}}}
    %h = ipu_gemm.matmul %p, %q : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf16>
    // expected-error @+1 {{no plan matches constraint 'orientation=swapped': orientation=swapped needs B stored transposed: B must be a weight or an activation given transposed}}
    %y = ipu_gemm.matmul %a, %h {constraints = #ipu_gemm.constraints<orientation = swapped>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %y : tensor<96x64xf32>
  }
}

// -----

// Too big for the chip in any plan: the smallest plan's bytes against the tile's.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21">} {
  func.func @too_big(%a: tensor<1024x8xf16>, %b: tensor<8x500000xf16>) -> tensor<1024x500000xf32> {
    // expected-error-re @+2 {{cannot plan 1024x8x500000 matmul on 'ipu21': no plan fits tile memory: the smallest ({{.*}}) needs {{[0-9]+}} standard and {{[0-9]+}} interleaved bytes per tile; a tile of 'ipu21' has 162080 standard and 424880 interleaved bytes}}
    // expected-note @+1 {{the function's first 0 of 1 matmuls fit before this one; its resident weights are 8000000 bytes, 5435 per tile unreplicated}}
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

// -----

// A plan written by hand is kept, never replaced, and costed so that
// `cycles` is the model's estimate for it.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  // CHECK-LABEL: func.func @given
  // CHECK: plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = [[CYCLES:[1-9][0-9]*]]>
  func.func @given(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-remark-re @+1 {{kept the given plan rows=2 cols=2 inner=1 orientation=normal weights=interleaved reduction=complete staging=false partials=f32 on 'ipu21-16': estimated {{[1-9][0-9]*}} cycles}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

// A given plan the lowering cannot build is refused with the reason.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @given_misaligned(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{cannot keep the given plan #ipu_gemm.plan<rows = 2, cols = 1, inner = 3, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0> for the 96x128x64 matmul on 'ipu21-16': inner=3 cuts f16 rows of A off 32-bit word boundaries}}
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 3, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @given_unconstrained(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    // expected-error @+1 {{for the 96x128x64 matmul on 'ipu21-16': it does not match constraint 'rows=4'}}
    %c = ipu_gemm.matmul %a, %b {constraints = #ipu_gemm.constraints<rows = 4>, plan = #ipu_gemm.plan<rows = 2, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 0>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}
