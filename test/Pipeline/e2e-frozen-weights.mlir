// A frozen weight, as torch-mlir exports a module's parameters: a
// non-splat constant. The import takes it as an argument after the
// function's own, carrying its value (a remark says so); the package
// carries the bytes, and ipu-run streams them in: --inputs gives only x,
// and the results match x @ w computed outside (npy.py product of the
// same `pattern` values), exactly.
// RUN: rm -rf %t && mkdir -p %t/in %t/w %t/expected
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t/lowered.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t/lowered.mlir
// RUN: ipu-translate --ipu-to-package %t/lowered.mlir -o %t/frozen.ipuexe
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 16,8 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t/w/w.npy '<f4' 8,4 pattern
// RUN: %python %S/../Run/Inputs/npy.py product %t/in/arg0.npy %t/w/w.npy %t/expected/result0.npy
// RUN: ipu-run %t/frozen.ipuexe --inputs %t/in --expect %t/expected --check --quiet | FileCheck %s --check-prefix=SIM

// REMARK: remark: takes 1 frozen weight as an argument that carries its value, streamed from the host at load

// CHECK: ipu_exchange.stream_in @arg1 from 1 {constant = dense<{{\[\[}}-3.750000e-01, 2.500000e-01, 0.000000e+00, -2.500000e-01]

// SIM: expect result=0 {{.*}} maximumAbsoluteError=0 mismatches=0 elementsCompared=64
// SIM: expected={{.*}} numericalTest=PASS
// SIM: referencePrecision=f32 {{.*}} numericalTest=PASS

func.func @frozen(%x: tensor<16x8xf32>) -> tensor<16x4xf32> {
  %w = arith.constant dense<[[-0.375, 0.25, 0.0, -0.25], [0.0, -0.25, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.25, 0.0], [0.25, 0.0, -0.25, 0.375], [-0.25, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.25], [-0.375, 0.25, 0.0, -0.25]]> : tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x4xf32>) outs(%f : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}
