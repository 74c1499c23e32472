// The first end-to-end path: plain upstream IR, compiled for the 16-tile
// target, packaged, simulated and checked against the OpenBLAS reference.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t.mlir
// RUN: ipu-translate --ipu-to-package %t.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s
// The check can fail: flip the high byte of A's first element on the device
// only; the reference still sees the original data.
// RUN: not ipu-run %t.ipuexe --check --corrupt-input 0:1 | FileCheck %s --check-prefix=CORRUPT

// CHECK: target=ipu21-16 tiles=16
// CHECK: workload=mm cycles=[[CYCLES:[1-9][0-9]*]] computeCycles={{[1-9][0-9]*}} exchangeCycles=0 syncCycles=0
// CHECK-SAME: activeTiles=16 executionTiles=16
// CHECK: plannedCycles=[[CYCLES]]
// Every element of the 96x64 result is compared, the worst named by its
// position with both values.
// CHECK: checkpoint=0 operation=matmul result=0 partials=f32 maximumAbsoluteError={{[^ ]+}} mismatches=0 elementsCompared=6144 worstElement=[{{[0-9]+}},{{[0-9]+}}] worstDevice={{[^ ]+}} worstReference={{[^ ]+}} worstAllowed={{[^ ]+}}
// CHECK: referencePrecision=f32 maximumAbsoluteError={{.*}} mismatches=0 numericalTest=PASS elementsCompared=6144 worstCheckpoint=0 worstElement=[{{[0-9]+}},{{[0-9]+}}]

// Flipping the high byte of A[0][0] spoils row 0 of C, where the worst
// element is.
// CORRUPT: mismatches={{[1-9][0-9]*}} numericalTest=FAIL elementsCompared=6144 worstCheckpoint=0 worstElement=[0,{{[0-9]+}}]

func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<96x64xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%fill : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %c : tensor<96x64xf32>
}

// Deterministic: the same package bytes with and without threads (both
// translated from stdin, so that their ops carry the same locations).
// RUN: ipu-translate --ipu-to-package < %t.mlir -o %t.threaded.ipuexe
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -mlir-disable-threading | ipu-translate --ipu-to-package -o %t.serial.ipuexe
// RUN: cmp %t.threaded.ipuexe %t.serial.ipuexe
