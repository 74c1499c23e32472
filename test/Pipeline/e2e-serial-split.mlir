// A GEMM too big for the 16 tiles in any spatial plan, as torch-mlir's fx
// importer writes it: the planner cuts the rows of A and C into serial
// chunks, lowered as one ipu_tile.loop over the same buffers (a slice of A,
// its gather, the GEMM, the reduction and an update of C per iteration),
// packaged with the loop's count and simulated as a repeat; the check
// compares every element of C.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: ipu-translate --ipu-to-package %t.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s --check-prefix=CHECKED
// Without serial splits nothing fits, and the error says how small the
// smallest plan tried gets when even that is too big.
// RUN: not ipu-opt %s --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-plan-gemm="serial=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPATIAL
// RUN: sed -e 's/320x2048/4096x2048/g' -e 's/320x256/4096x256/g' %s | not ipu-opt --ipu-compile="target=ipu21-16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: sed -e 's/2048x256/2048x2048/g' -e 's/320x2048/256x2048/g' -e 's/320x256/256x2048/g' %s | not ipu-opt --ipu-compile="target=ipu21-16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// Deterministic: the same package bytes with and without threads.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -mlir-disable-threading 2>/dev/null | ipu-translate --ipu-to-package -o %t.serial.ipuexe
// RUN: ipu-translate --ipu-to-package < %t.mlir -o %t.threaded.ipuexe
// RUN: cmp %t.threaded.ipuexe %t.serial.ipuexe

// The finalists (serial counts competing) with their analytical and
// scheduled cycles side by side, then the choice.
// PLAN: remark: finalist=0 {{.*}} serial=[[S:[0-9]+]] estimatedCycles=[[EST:[0-9]+]] {{.*}}analyticalCycles=[[EST]] scheduledCycles={{[0-9]+}} scheduledFits=true
// PLAN: remark: chose plan {{.*}} serial=[[S]] of {{[0-9]+}} matching plans

// IR: ipu_tile.buffer @mm0.lhs.chunk : tensor<{{[0-9]+}}x2048xf16,
// IR: ipu_tile.buffer @mm0.out.home : tensor<[[S:[0-9]+]]x{{[0-9]+}}x256xf16, {{.*}}>> in standard
// A streams straight into its chunks: the host sees its 320x2048 matrix.
// IR: ipu_exchange.stream_in @arg0 from 0 {host_shape = array<i64: 320, 2048>}
// IR: ipu_tile.loop @mm0.serial count [[S]] {
// IR-NEXT: ipu_exchange.sync
// IR-NEXT: ipu_tile.compute_set @mm0.slice kernel "copy" operands [@arg0, @mm0.lhs.chunk] {{.*}}{serial_operands = array<i32: 0>}
// IR: ipu_exchange.phase @mm0.chunk.gather
// IR: ipu_tile.compute_set @mm0.partials
// IR: ipu_tile.compute_set @mm0.update kernel "copy" operands [@mm0.out, @mm0.out.home] {{.*}}{serial_operands = array<i32: 1>}
// IR-NEXT: }
// IR: ipu_exchange.stream_out @mm0.out.home to 0 {host_shape = array<i64: 320, 256>}

// The simulator runs the loop's body S times: its cycles are the planner's
// estimate (which times the chunk's phases as scheduled) within 2%.
// RUN: ipu-run %t.ipuexe | %python %S/Inputs/plan-error.py 0.02 | FileCheck %s --check-prefix=CYCLES
// CYCLES: package={{.*}} loops=1
// CYCLES: workload=mm cycles={{[1-9][0-9]*}} {{.*}}loopCycles={{[1-9][0-9]*}}
// CYCLES: plannedCycles={{[1-9][0-9]*}}
// CYCLES: planError=
// RUN: ipu-run %t.ipuexe --ops | FileCheck %s --check-prefix=OPS
// OPS: op={{.*}}e2e-serial-split.mlir{{.*}} steps={{[0-9]+}} cycles={{[1-9][0-9]*}}

// CHECKED: mismatches=0 numericalTest=PASS elementsCompared=81920

// SPATIAL: error: cannot plan 320x2048x256 matmul on 'ipu21-16': no plan fits tile memory: the smallest ({{.*}}) needs {{[0-9]+}} standard and {{[0-9]+}} interleaved bytes per tile
// A and C alone are more than the tiles' standard memory: no serial count
// is tried.
// TOOBIG: error: cannot plan 4096x2048x256 matmul on 'ipu21-16': no plan fits tile memory: the smallest ({{.*}}) needs {{[0-9]+}} standard and {{[0-9]+}} interleaved bytes per tile; {{.*}}; and no serial split can fit: A and C alone, held whole and spread evenly over the tiles, need 1179648 standard bytes per tile
// The weights do not fit however A is cut: the error names the smallest
// memory any plan tried reaches.
// WEIGHTS: error: cannot plan 256x2048x2048 matmul on 'ipu21-16': no plan fits tile memory: {{.*}}; and cut into serial chunks, the smallest plan tried ({{.*}} serial={{[0-9]+}}) still needs {{[0-9]+}} standard and {{[0-9]+}} interleaved bytes per tile

func.func @mm(%a: tensor<320x2048xf16>, %b: tensor<2048x256xf16>) -> tensor<320x256xf16> {
  %zero = arith.constant 0.0 : f16
  %init = tensor.empty() : tensor<320x256xf16>
  %fill = linalg.fill ins(%zero : f16) outs(%init : tensor<320x256xf16>) -> tensor<320x256xf16>
  %c = linalg.matmul ins(%a, %b : tensor<320x2048xf16>, tensor<2048x256xf16>)
                     outs(%fill : tensor<320x256xf16>) -> tensor<320x256xf16>
  return %c : tensor<320x256xf16>
}
