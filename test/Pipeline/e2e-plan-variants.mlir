// Every lowered plan variant computes the right product: inner partitions
// reduced completely or staged, local weight staging, standard weights,
// swapped operands.
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="inner=2 reduction=complete rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.complete
// RUN: ipu-run %t.complete --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="inner=4 reduction=staged rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.staged
// RUN: ipu-run %t.staged --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="staging=true inner=2 rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.staging
// RUN: ipu-run %t.staging --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="weights=standard rows=5 cols=3 rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.uneven
// RUN: ipu-run %t.uneven --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s
// Swapped operands: the weights are streamed transposed and gemm_t holds A.
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="orientation=swapped inner=2 reduction=staged rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.swapped
// RUN: ipu-run %t.swapped --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s
// f16 partials (allowed by the option): the AMP accumulates in f16, the
// reduction sums the f16 partials in f32, and the check's tolerance follows
// the f16 roundings.
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="partials=f16 inner=2 reduction=staged rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.half
// RUN: ipu-run %t.half --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s --check-prefixes=CHECK,HALF
// RUN: ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="partials=f16 orientation=swapped rerank=1" --ipu-assign-layouts --ipu-lower-to-tile --ipu-place-storage --ipu-schedule-exchange | ipu-translate --ipu-to-package -o %t.half-swapped
// RUN: ipu-run %t.half-swapped --check | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s --check-prefixes=CHECK,HALF

// The planner times the chosen plan's phases as the compiler schedules
// them (rerank=1), on addresses laid out like its buffers: its estimate
// stays within 2% of the simulated cycles (plan-error.py).
// CHECK: cycles={{[1-9][0-9]*}}
// CHECK: plannedCycles={{[1-9][0-9]*}}
// HALF: partials=f16
// CHECK: numericalTest=PASS
// CHECK: planError=

func.func @mm(%a: tensor<90x128xf16>, %b: tensor<128x66xf16>) -> tensor<90x66xf32> {
  %init = tensor.empty() : tensor<90x66xf32>
  %c = linalg.matmul ins(%a, %b : tensor<90x128xf16>, tensor<128x66xf16>)
                     outs(%init : tensor<90x66xf32>) -> tensor<90x66xf32>
  return %c : tensor<90x66xf32>
}
