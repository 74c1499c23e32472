// Three identical layers that end in a matmul (x -> tanh(x Wa + ba) Wb):
// the body's last step reads nothing of the layer's input, so it writes
// what the layer passes on straight into the layers' buffer (in place, as
// the user's stack carries it) and no copy ends the body. Checked op by op
// and against upstream MLIR's execution of this module.
//
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 repeat-layers=true" 2> /dev/null > %t.lowered.mlir
// RUN: FileCheck %s --input-file=%t.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t.lowered.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=CHECKED
// RUN: rm -rf %t.in %t.ref && mkdir -p %t.in %t.ref
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg0.npy '<f4' 16,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg1.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg2.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg3.npy '<f4' 64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg4.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg5.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg6.npy '<f4' 64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg7.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg8.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg9.npy '<f4' 64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg10.npy '<f4' 64,64 flat
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg11.npy '<f4' 64,64 flat
// RUN: ipu-mlir-run %s --inputs %t.in --outputs %t.ref > /dev/null
// RUN: ipu-run %t.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM

// The body passes on a value of another layout: the relayout that moves it
// back writes the layers' buffer itself.
// CHECK:     ipu_tile.compute_set @repeat0.enter kernel "copy"
// CHECK:     ipu_tile.loop @repeat0.layers count 3 {
// CHECK-NOT:   @repeat0.layers.carry
// CHECK:       ipu_exchange.copy @{{[a-z0-9.]+}} to @repeat0.carried
// CHECK-NOT:   @repeat0.layers.carry
// CHECK:     }
// CHECKED: loop=repeat0.layers iterations=3
// CHECKED: numericalTest=PASS
// UPSTREAM: expect result=0 {{.*}} shape=(16, 64) {{.*}} mismatches=0
// UPSTREAM: numericalTest=PASS

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @layers(%x: tensor<16x64xf32>, %w_in: tensor<64x64xf32>, %wa0: tensor<64x64xf32>, %ba0: tensor<64xf32>, %wb0: tensor<64x64xf32>, %wa1: tensor<64x64xf32>, %ba1: tensor<64xf32>, %wb1: tensor<64x64xf32>, %wa2: tensor<64x64xf32>, %ba2: tensor<64xf32>, %wb2: tensor<64x64xf32>, %w_out: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w_in : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m0 = linalg.matmul ins(%h, %wa0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %t0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m0, %ba0 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %h0 = linalg.matmul ins(%t0, %wb0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.matmul ins(%h0, %wa1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %ba1 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %h1 = linalg.matmul ins(%t1, %wb1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m2 = linalg.matmul ins(%h1, %wa2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %ba2 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %h2 = linalg.matmul ins(%t2, %wb2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%h2, %w_out : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
