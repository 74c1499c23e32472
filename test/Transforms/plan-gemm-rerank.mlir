// Re-ranking: with rerank=N the planner lowers each matmul's best N
// finalists to their phases, schedules them and places their buffers, and
// the finalist with the fewest scheduled cycles whose buffers fit wins. The
// remarks give the analytical and the scheduled cycles side by side, as the
// user's stack logs its finalists ("analytical_cycles ... refined_cycles").
// The chosen plan's cycles (in the IR, printed after the remarks) are its
// scheduled ones.
// RUN: ipu-opt %s -ipu-plan-gemm="rerank=4" 2>&1 | FileCheck %s
// RUN: ipu-opt %s -ipu-plan-gemm 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAIN

// CHECK-COUNT-4: remark: finalist={{[0-3]}} {{.*}} analyticalCycles={{[0-9]+}} scheduledCycles={{[0-9]+}} scheduledFits=true
// CHECK: remark: chose plan {{.*}} on 'ipu21-16': estimated {{[0-9]+}} cycles, [[S:[0-9]+]] scheduled (the fewest of the 4 finalists lowered, scheduled and placed)
// PLAIN-NOT: scheduledCycles
// PLAIN: remark: chose plan {{.*}}: estimated {{[0-9]+}} cycles{{$}}
// CHECK: plan = #ipu_gemm.plan<{{.*}}cycles = [[S]]>

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}
