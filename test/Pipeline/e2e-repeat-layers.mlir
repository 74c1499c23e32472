// Three identical layers (a linear with its bias, tanh, a residual add),
// each with weights of its own, between a first linear and a last one:
// compiled with repeat-layers=true as one body run three times, each layer's
// weights streamed into their block of one buffer per weight slot and read
// by the body's compute sets one block per iteration. Checked op by op
// (the last layer, on the device's own operands) and, whole, against
// upstream MLIR's execution of this module.
//
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 repeat-layers=true" 2> %t.remarks > %t.lowered.mlir
// RUN: FileCheck %s --check-prefix=REMARK --input-file=%t.remarks
// RUN: FileCheck %s --input-file=%t.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t.lowered.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=CHECKED
// RUN: rm -rf %t.in %t.ref && mkdir -p %t.in %t.ref
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg0.npy '<f4' 16,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg1.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg2.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg3.npy '<f4' 64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg4.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg5.npy '<f4' 64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg6.npy '<f4' 64,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg7.npy '<f4' 64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t.in/arg8.npy '<f4' 64,64 pattern
// RUN: ipu-mlir-run %s --inputs %t.in --outputs %t.ref > /dev/null
// RUN: ipu-run %t.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM
//
// The same layers with their matmul cut into 2 serial chunks: the chunks'
// loop nests in the layers' loop.
// RUN: sed -E 's/([%]m[012] = linalg.matmul) ins/\1 {ipu_gemm.constraints = #ipu_gemm.constraints<serial = 2>} ins/' %s > %t.nested.mlir
// RUN: ipu-opt %t.nested.mlir --ipu-compile="target=ipu21-16 repeat-layers=true" 2> /dev/null > %t.nested.lowered.mlir
// RUN: FileCheck %s --check-prefix=NESTED --input-file=%t.nested.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t.nested.lowered.mlir -o %t.nested.ipuexe
// RUN: ipu-run %t.nested.ipuexe --check | FileCheck %s --check-prefix=NESTED-RAN
// RUN: ipu-run %t.nested.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM
//
// The layers' weights streamed from the host as each layer starts
// (stream-weights=true): the same results as the resident layers on
// seeded random inputs, which differ layer by layer.
//
// The layers' weights gathered, every layer's homes in standard memory
// (only the gather reads them; the gathered block the AMP reads is
// interleaved).
// RUN: sed -E 's/([%]m[012] = linalg.matmul) ins/\1 {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 2, gathered = true, homes = standard>} ins/' %s > %t.homes.mlir
// RUN: ipu-opt %t.homes.mlir --ipu-compile="target=ipu21-16 repeat-layers=true" 2> /dev/null > %t.homes.lowered.mlir
// RUN: FileCheck %s --check-prefix=HOMES --input-file=%t.homes.lowered.mlir
// RUN: ipu-translate --ipu-to-package %t.homes.lowered.mlir -o %t.homes.ipuexe
// RUN: ipu-run %t.homes.ipuexe --inputs %t.in --expect %t.ref --quiet | FileCheck %s --check-prefix=UPSTREAM
//
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 stream-weights=true" 2> /dev/null > %t.streamed.mlir
// RUN: FileCheck %s --check-prefix=STREAMED --input-file=%t.streamed.mlir
// RUN: ipu-translate --ipu-to-package %t.streamed.mlir -o %t.streamed.ipuexe
// RUN: rm -rf %t.resident.out && ipu-run %t.ipuexe --seed 7 --outputs %t.resident.out --quiet > /dev/null
// RUN: ipu-run %t.streamed.ipuexe --seed 7 --expect %t.resident.out --check | FileCheck %s --check-prefix=STREAMED-RAN

// REMARK: remark: repeats one layer: layers=3 opsPerLayer=4 firstOp=1 endOp=13 weightsPerLayer=2

// One buffer per weight slot with every layer's block; each layer's
// argument streams into its own block.
// CHECK-DAG: ipu_tile.buffer @repeat0.w0 : tensor<3x
// CHECK-DAG: ipu_tile.buffer @repeat0.w1 : tensor<3x
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w0 from 2 {chunk = 0 : i64
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w0 from 4 {chunk = 1 : i64
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w0 from 6 {chunk = 2 : i64
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w1 from 3 {chunk = 0 : i64
// CHECK-DAG: ipu_exchange.stream_in @repeat0.w1 from 7 {chunk = 2 : i64
// The body once, in one loop; its GEMM reads a block of the weights per
// iteration, and what it passes on goes back where every layer reads.
// CHECK:     ipu_tile.compute_set @repeat0.enter kernel "copy"
// CHECK:     ipu_tile.loop @repeat0.layers count 3 {
// CHECK-NEXT:  ipu_exchange.sync
// CHECK:       ipu_tile.compute_set @mm1.partials kernel "gemm{{.*}}" operands [{{.*}}@repeat0.w0{{.*}}] {{.*}}serial_operands = array<i32: 1>
// CHECK:       ipu_tile.compute_set @repeat0.layers.carry kernel "copy"
// CHECK-NEXT: }
// CHECK-NOT: ipu_tile.loop
// CHECK-NOT: @mm4

// The loop as run: three layers, each the same steps.
// CHECKED: loop=repeat0.layers iterations=3 loopRunCycles={{[1-9][0-9]*}} cyclesPerIteration={{[1-9][0-9]*}}
// CHECKED: numericalTest=PASS
// UPSTREAM: expect result=0 {{.*}} shape=(16, 64) {{.*}} mismatches=0
// UPSTREAM: numericalTest=PASS

// Nested: the layer's block of the weights is copied out once per layer
// (a compute set advances per iteration of its own loop only), and the
// chunks' GEMM reads that copy in every chunk.
// NESTED:     ipu_tile.loop @repeat0.layers count 3 {
// NESTED-NEXT:  ipu_exchange.sync
// NESTED-NEXT:  ipu_tile.compute_set @repeat0.w0.slice kernel "copy" operands [@repeat0.w0, @repeat0.w0.layer] {{.*}}{serial_operands = array<i32: 0>}
// NESTED:       ipu_tile.loop @mm1.serial count 2 {
// NESTED-NEXT:    ipu_exchange.sync
// NESTED-NEXT:    ipu_tile.compute_set @mm1.slice kernel "copy" {{.*}}{serial_operands = array<i32: 0>}
// NESTED:         ipu_tile.compute_set @mm1.partials kernel "gemm{{.*}}" operands [{{.*}}@repeat0.w0.layer{{.*}}]
// NESTED-NOT:     serial_operands
// NESTED:         ipu_tile.compute_set @mm1.update kernel "copy" {{.*}}{serial_operands = array<i32: 1>}
// NESTED-NEXT:  }
// NESTED:       ipu_tile.compute_set @repeat0.layers.carry kernel "copy"
// NESTED-NEXT: }
// NESTED-NOT: ipu_tile.loop
// Homes: every layer's home in standard memory, gathered each layer.
// HOMES: ipu_tile.buffer @repeat0.w0 : tensor<3x64x64xf32, {{.*}}>> in standard at
// HOMES: ipu_tile.loop @repeat0.layers count 3 {
// HOMES: ipu_tile.compute_set @mm1.partials kernel "gemm{{.*}}"
// HOMES-NOT: @repeat0.w0
// HOMES: }
// Streamed: one layer's block per slot, streamed at the top of each
// iteration; no compute set advances.
// STREAMED:     ipu_tile.buffer @repeat0.w0 : tensor<64x64xf32
// STREAMED:     ipu_tile.loop @repeat0.layers count 3 {
// STREAMED-NEXT:  ipu_exchange.sync
// STREAMED-NEXT:  ipu_exchange.stream_in @repeat0.w0 from 2 {layer_arguments = array<i32: 2, 4, 6>{{(, transpose)?}}}
// STREAMED-NEXT:  ipu_exchange.stream_in @repeat0.w1 from 3 {declared_shape = array<i64: 64>, layer_arguments = array<i32: 3, 5, 7>}
// STREAMED-NOT:   serial_operands
// STREAMED:     }
// The host link's cycles: 3 layers of a 64x64 f32 block and a bias that
// several of the plan's tiles hold. The link carries each byte once, 16,640
// bytes a layer; the exchange fans the copies out.
// STREAMED-RAN: hostCycles={{[1-9][0-9]*}} hostBytes=49920
// STREAMED-RAN: expected={{.*}} mismatches=0 numericalTest=PASS
// STREAMED-RAN: referencePrecision=f32 {{.*}} mismatches=0 numericalTest=PASS

// The inner loop ran twice per layer.
// NESTED-RAN: loop=repeat0.layers iterations=3 loopRunCycles={{[1-9][0-9]*}}
// NESTED-RAN: loop=mm1.serial iterations=6 loopRunCycles={{[1-9][0-9]*}}
// NESTED-RAN: numericalTest=PASS

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @layers(%x: tensor<16x64xf32>, %w_in: tensor<64x64xf32>,
                  %w0: tensor<64x64xf32>, %b0: tensor<64xf32>,
                  %w1: tensor<64x64xf32>, %b1: tensor<64xf32>,
                  %w2: tensor<64x64xf32>, %b2: tensor<64xf32>,
                  %w_out: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w_in : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>

  %m0 = linalg.matmul ins(%h, %w0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m0, %b0 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %t0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a0 : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.tanh %p : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %t0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>

  %m1 = linalg.matmul ins(%h0, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %b1 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a1 : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.tanh %p : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h0, %t1 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>

  %m2 = linalg.matmul ins(%h1, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %b2 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a2 : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.tanh %p : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h1, %t2 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>

  %y = linalg.matmul ins(%h2, %w_out : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
