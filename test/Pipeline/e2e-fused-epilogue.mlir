// A SigLIP-style MLP block in torch-mlir's form (linear, bias, GELU tanh,
// linear, bias) on 16 tiles: each bias and activation fuses into one kernel
// per tile that runs where its matmul left the result, with no exchange
// phase between them. With a phase costing its 600-cycle sync, the planner
// keeps fc2's A where fc1's epilogue left it: no phase at all.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | FileCheck %s
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=SIM
// RUN: ipu-run %t.ipuexe --check --quiet --checkpoints 16 | FileCheck %s --check-prefix=SAMPLED

// CHECK:      ipu_tile.kernel @ew0.kernel broadcasts ["full", "row"] {
// CHECK:        math.tanh
// CHECK:      ipu_tile.kernel @ew1.kernel broadcasts ["full", "row"] {
// CHECK-NOT:    math.tanh
// CHECK:      ipu_tile.compute_set @mm0.partials
// CHECK-NOT:  ipu_exchange.phase
// CHECK:      ipu_tile.compute_set @ew0 kernel "ew0.kernel" operands [@mm0.out, @arg2, @ew0.out]
// CHECK-NOT:  ipu_exchange.phase
// CHECK:      ipu_tile.compute_set @mm1.partials kernel "gemm_t" operands [@ew0.out,
// CHECK-NOT:  ipu_exchange.phase
// CHECK:      ipu_tile.compute_set @ew1 kernel "ew1.kernel" operands [@mm1.out, @arg4, @ew1.out]
// CHECK-NOT:  ipu_exchange.phase
// CHECK:      ipu_exchange.stream_out @ew1.out to 0

// Each finalist of a matmul with an epilogue pays for it on its output
// blocks; the estimate is the kernel's on the busiest block.
// PLAN: remark: finalist=0 {{.*}} epilogueCycles={{[1-9][0-9]*}}

// Every op is checked on the operands the device used.
// SIM: checkpoint=0 operation=matmul
// SIM: checkpoint=1 operation=elementwise result=2 {{.*}} mismatches=0 elementsCompared=1024
// SIM: checkpoint=2 operation=matmul
// SIM: checkpoint=3 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=512
// SIM: numericalTest=PASS

// With --checkpoints N the values later ops read are sampled (N evenly
// spaced elements, as the seed's diagnostic checkpoints); the result is
// still compared whole.
// SAMPLED: checkpoint=0 operation=matmul {{.*}} elementsCompared=16
// SAMPLED: checkpoint=1 operation=elementwise {{.*}} elementsCompared=16
// SAMPLED: checkpoint=2 operation=matmul {{.*}} elementsCompared=16
// SAMPLED: checkpoint=3 operation=elementwise {{.*}} elementsCompared=512
// SAMPLED: numericalTest=PASS elementsCompared=560 {{.*}} diagnosticCheckpoints=3 sampleLimit=16

module {
func.func @linear_gelu(%x: tensor<1x16x32xf16>, %w: tensor<64x32xf16>, %b: tensor<64xf16>, %w2: tensor<32x64xf16>, %b2: tensor<32xf16>) -> tensor<1x16x32xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f16
  %one = arith.constant 1.000000e+00 : f16
  %e0 = tensor.empty() : tensor<32x64xf16>
  %t = linalg.transpose ins(%w : tensor<64x32xf16>) outs(%e0 : tensor<32x64xf16>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<1x32x64xf16>
  %bt = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t : tensor<32x64xf16>) outs(%e1 : tensor<1x32x64xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<1x32x64xf16>
  %e2 = tensor.empty() : tensor<1x16x64xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %mm = linalg.batch_matmul ins(%x, %bt : tensor<1x16x32xf16>, tensor<1x32x64xf16>) outs(%z : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %e3 = tensor.empty() : tensor<1x16x64xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mm : tensor<1x16x64xf32>) outs(%e3 : tensor<1x16x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<1x16x64xf16>
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h, %b : tensor<1x16x64xf16>, tensor<64xf16>) outs(%e3 : tensor<1x16x64xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %s = arith.addf %in, %in_0 : f16
    linalg.yield %s : f16
  } -> tensor<1x16x64xf16>
  %act = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%biased : tensor<1x16x64xf16>) outs(%e3 : tensor<1x16x64xf16>) {
  ^bb0(%in: f16, %out: f16):
    %a = math.tanh %in : f16
    %c = arith.addf %a, %one : f16
    %d = arith.mulf %c, %half : f16
    %r = arith.mulf %d, %in : f16
    linalg.yield %r : f16
  } -> tensor<1x16x64xf16>
  %e4 = tensor.empty() : tensor<64x32xf16>
  %t2 = linalg.transpose ins(%w2 : tensor<32x64xf16>) outs(%e4 : tensor<64x32xf16>) permutation = [1, 0]
  %e5 = tensor.empty() : tensor<1x64x32xf16>
  %bt2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t2 : tensor<64x32xf16>) outs(%e5 : tensor<1x64x32xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<1x64x32xf16>
  %e6 = tensor.empty() : tensor<1x16x32xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e6 : tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %mm2 = linalg.batch_matmul ins(%act, %bt2 : tensor<1x16x64xf16>, tensor<1x64x32xf16>) outs(%z2 : tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %e7 = tensor.empty() : tensor<1x16x32xf16>
  %h2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mm2 : tensor<1x16x32xf32>) outs(%e7 : tensor<1x16x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<1x16x32xf16>
  %out = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h2, %b2 : tensor<1x16x32xf16>, tensor<32xf16>) outs(%e7 : tensor<1x16x32xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %s = arith.addf %in, %in_0 : f16
    linalg.yield %s : f16
  } -> tensor<1x16x32xf16>
  return %out : tensor<1x16x32xf16>
}
}
