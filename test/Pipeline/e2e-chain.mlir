// A two-layer chain (an MLP without its activation) on 16 tiles: the f32
// accumulator of the first matmul is narrowed to f16 by arith.truncf, which
// the import folds into the matmul; its result is rearranged into the
// second matmul's layout. Every matmul is checked on the operands the device
// used: the intermediate leaves as a checkpoint stream.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s
// RUN: not ipu-run %t.ipuexe --check --corrupt-input 2:1 | FileCheck %s --check-prefix=CORRUPT

// Each checkpoint compares its M x N elements: 64 x 128, then 64 x 96.
// CHECK: checkpoint=0 operation=matmul result=1 partials=f32 maximumAbsoluteError={{.*}} mismatches=0 elementsCompared=8192 worstElement=
// CHECK: checkpoint=1 operation=matmul result=0 partials=f32 maximumAbsoluteError={{.*}} mismatches=0 elementsCompared=6144 worstElement=
// CHECK: numericalTest=PASS elementsCompared=14336 worstCheckpoint={{[01]}} worstElement=
// Corrupting the second weights leaves the first matmul right; the worst
// element is in the second.
// CORRUPT: checkpoint=0 operation=matmul result=1 partials=f32 maximumAbsoluteError={{.*}} mismatches=0
// CORRUPT: checkpoint=1 operation=matmul result=0 partials=f32 maximumAbsoluteError={{.*}} mismatches={{[1-9][0-9]*}}
// CORRUPT: numericalTest=FAIL elementsCompared=14336 worstCheckpoint=1 worstElement=

func.func @mlp(%x: tensor<64x96xf16>, %w1: tensor<96x128xf16>, %w2: tensor<128x96xf16>) -> tensor<64x96xf32> {
  %e1 = tensor.empty() : tensor<64x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x96xf16>, tensor<96x128xf16>)
                     outs(%e1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h16 = arith.truncf %h : tensor<64x128xf32> to tensor<64x128xf16>
  %e2 = tensor.empty() : tensor<64x96xf32>
  %y = linalg.matmul ins(%h16, %w2 : tensor<64x128xf16>, tensor<128x96xf16>)
                     outs(%e2 : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %y : tensor<64x96xf32>
}
