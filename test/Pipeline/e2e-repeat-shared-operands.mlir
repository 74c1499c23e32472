// Three identical layers that also read values every layer shares, as
// exporters write them: a weight V (x -> tanh((x W_i) V + b)) and a bias
// b, function arguments the repeated body reads from outside it. Each
// arrives once, before the layers' loop, where the body's ops want it (V
// resident, streamed transposed for the planner's orientation); only W_i
// has a block per layer. The last layer's output is returned as it is:
// the function's result is a copy of the last layer's value, checked
// exactly against it. Checked op by op and against upstream MLIR's
// execution of this module, resident and streamed.
//
// (Once the body's reads of b ended in "'ipu_tile.relayout' op source and
// result must have #ipu_tile.layout encodings", its reads of V in "needs
// B^T ... (the planner never picks this)", and the returned output in
// --check's "is the value of no reference op".)
//
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 repeat-layers=true" 2> %t.remarks > %t.lowered.mlir
// RUN: FileCheck %s --check-prefix=REMARK --input-file=%t.remarks
// RUN: FileCheck %s --input-file=%t.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t.lowered.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s --check-prefix=CHECKED
// RUN: rm -rf %t.in %t.ref && mkdir -p %t.in %t.ref
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg0.npy '<f4' 16,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg1.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg2.npy '<f4' 64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg3.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg4.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg5.npy '<f4' 64,64 pattern
// RUN: ipu-mlir-run %s --inputs %t.in --outputs %t.ref > /dev/null
// RUN: ipu-run %t.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 stream-weights=true" 2> /dev/null > %t.streamed.mlir
// RUN: ipu-translate --ipu-to-package %t.streamed.mlir -o %t.streamed.ipuexe
// RUN: ipu-run %t.streamed.ipuexe --inputs %t.in --expect %t.ref --check | FileCheck %s --check-prefix=STREAMED

// REMARK: remark: repeats one layer: layers=3 opsPerLayer=3 {{.*}} weightsPerLayer=1

// V and b arrive once, before the loop; each layer's W_i into its block.
// CHECK-DAG: ipu_exchange.stream_in @{{[a-z0-9.]+}} from 1 {transpose, weight}
// CHECK-DAG: ipu_exchange.stream_in @{{[a-z0-9.]+}} from 2
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w0 from 3 {chunk = 0 : i64
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w0 from 5 {chunk = 2 : i64
// CHECK:     ipu_tile.loop @repeat0.layers count 3 {
// CHECK-NOT:   stream_in
// CHECK:     }
// CHECK:     ipu_exchange.stream_out @repeat0.carried to 0

// CHECKED: loop=repeat0.layers iterations=3
// CHECKED: operation=permute result=0 exact {{.*}} mismatches=0 elementsCompared=1024
// CHECKED: numericalTest=PASS
// UPSTREAM: expect result=0 {{.*}} shape=(16, 64) {{.*}} mismatches=0
// UPSTREAM: numericalTest=PASS
// STREAMED: loop=repeat0.layers iterations=3
// STREAMED: expected={{.*}} mismatches=0 numericalTest=PASS
// STREAMED: referencePrecision=f32 {{.*}} mismatches=0 numericalTest=PASS

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @shared(%x: tensor<16x64xf32>, %v: tensor<64x64xf32>, %b: tensor<64xf32>,
                  %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>

  %m0 = linalg.matmul ins(%x, %w0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %p0 = linalg.matmul ins(%m0, %v : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %b : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>

  %m1 = linalg.matmul ins(%h0, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %p1 = linalg.matmul ins(%m1, %v : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%p1, %b : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>

  %m2 = linalg.matmul ins(%h1, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %p2 = linalg.matmul ins(%m2, %v : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%p2, %b : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>
  return %h2 : tensor<16x64xf32>
}
