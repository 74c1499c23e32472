// max-weight-replicas=1 stores every weight once, as a stack of layers
// keeps them: each matmul's plan has one row block, or stores its weight in
// a home and gathers it before the GEMM. By default the planner replicates
// each weight over its plan's row blocks, loaded before the run at no
// cycles of the run; ipu-run's weight line says how many copies and what
// loading them costs. Biases stay beside the blocks that read them
// (rowWeightReplicasMax). The MLP with f16 and with f8 weights (expanded
// where they stay) and attention, whose activation B (K^T, V) the bound
// leaves alone, on 16 tiles; each PASSes its check.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part mlp --tokens 32 --dim 64 --hidden 128 -o %t/mlp.mlir
// RUN: ipu-opt %t/mlp.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/mlp.ipuexe
// RUN: ipu-run %t/mlp.ipuexe --check --quiet | FileCheck %s --check-prefix=REPLICATED
// RUN: ipu-opt %t/mlp.mlir --ipu-compile="target=ipu21-16 max-weight-replicas=1" -o %t/mlp-once.ir 2> /dev/null
// RUN: FileCheck %s --check-prefix=MLP < %t/mlp-once.ir
// RUN: ipu-translate --ipu-to-package %t/mlp-once.ir -o %t/mlp-once.ipuexe
// RUN: ipu-run %t/mlp-once.ipuexe --check --quiet | FileCheck %s --check-prefix=ONCE
//
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part mlp --tokens 32 --dim 64 --hidden 128 --weights f8E4M3FN -o %t/mlp8.mlir
// RUN: ipu-opt %t/mlp8.mlir --ipu-compile="target=ipu21-16 partials=any max-weight-replicas=1" -o %t/mlp8-once.ir 2> /dev/null
// RUN: FileCheck %s --check-prefix=MLP8 < %t/mlp8-once.ir
// RUN: ipu-translate --ipu-to-package %t/mlp8-once.ir -o %t/mlp8-once.ipuexe
// RUN: ipu-run %t/mlp8-once.ipuexe --check --quiet | FileCheck %s --check-prefix=ONCE
//
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part attention --tokens 32 --dim 64 --heads 2 -o %t/attention.mlir
// RUN: ipu-opt %t/attention.mlir --ipu-compile="target=ipu21-16 max-weight-replicas=1" -o %t/attention-once.ir 2> /dev/null
// RUN: FileCheck %s --check-prefix=ATTENTION < %t/attention-once.ir
// RUN: ipu-translate --ipu-to-package %t/attention-once.ir -o %t/attention-once.ipuexe
// RUN: ipu-run %t/attention-once.ipuexe --check --quiet | FileCheck %s --check-prefix=ONCE
//
// A plan given on the op that replicates its weight is refused under the
// bound, naming it.
// RUN: not ipu-opt %s --ipu-plan-gemm="max-weight-replicas=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GIVEN

// Replicated: every copy lands over the exchange from the one the link
// brought, so the tiles hold more bytes than cross the link.
// REPLICATED: weightReplicasMax={{[2-9]|[1-9][0-9]+}} rowWeightReplicasMax={{[0-9]+}} weightBytesResident=[[RESIDENT:[0-9]+]] weightLoadLinkBytes=33152 weightLoadLinkCycles={{[1-9][0-9]*}} weightLoadFanOutBytes={{[1-9][0-9]*}} weightLoadFanOutCycles={{[1-9][0-9]*}} weightLoadCycles={{[1-9][0-9]*}}
// REPLICATED: numericalTest=PASS

// Every matrix weight's resident buffer (fc1 [64, 128], fc2 [128, 64],
// either orientation; the q, k, v and o projections) holds one copy.
// MLP: ipu_tile.buffer @arg1 : tensor<{{64x128|128x64}}xf16, #ipu_tile.layout<{{[^>]*}}replicas = 1,
// MLP: ipu_tile.buffer @arg3 : tensor<{{64x128|128x64}}xf16, #ipu_tile.layout<{{[^>]*}}replicas = 1,
// MLP8: ipu_tile.buffer @arg1 : tensor<{{64x128|128x64}}xf8E4M3FN, #ipu_tile.layout<{{[^>]*}}replicas = 1,
// MLP8: ipu_tile.buffer @arg3 : tensor<{{64x128|128x64}}xf8E4M3FN, #ipu_tile.layout<{{[^>]*}}replicas = 1,
// ATTENTION-COUNT-4: ipu_tile.buffer @arg{{[1357]}} : tensor<64x64xf16, #ipu_tile.layout<{{[^>]*}}replicas = 1,

// ONCE: weightReplicasMax=1 rowWeightReplicasMax={{[0-9]+}} weightBytesResident={{[1-9][0-9]*}} weightLoadLinkBytes={{[1-9][0-9]*}}
// ONCE: numericalTest=PASS

// GIVEN: error: {{.*}}it does not match constraint 'max-weight-replicas=1'

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @given(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 4, cols = 4, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 0>}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    return %c : tensor<96x64xf32>
  }
}
