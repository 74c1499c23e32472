// Softmax and layer norm as exporters write them (examples/exporters/),
// and a softmax whose rows a matmul's plan spreads over 4 tiles each,
// compiled for 16 tiles, packaged with their generated kernels, simulated
// and checked element by element (every reduction is a checkpoint).
// RUN: split-file %s %t
// RUN: for form in softmax-torch-f32 softmax-torch-f16 softmax-stablehlo layernorm-torch-f32 layernorm-stablehlo; do \
// RUN:   ipu-opt %ipu_src_root/examples/exporters/$form.mlir --ipu-compile="target=ipu21-16" 2> /dev/null \
// RUN:     | ipu-translate --ipu-to-package -o %t/$form.ipuexe && \
// RUN:   ipu-run %t/$form.ipuexe --check --quiet | FileCheck %s --check-prefix=PASS || exit 1; \
// RUN: done
// The encoder block's MLP half, x + mlp(layer_norm(x)), as the workload
// generator writes it (torch-mlir's forms), at 16 tokens.
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part ln-mlp --tokens 16 --dim 32 --hidden 64 -o %t/ln_mlp.mlir
// RUN: ipu-opt %t/ln_mlp.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/ln_mlp.ipuexe
// RUN: ipu-run %t/ln_mlp.ipuexe --check | FileCheck %s --check-prefix=LN-MLP
// RUN: ipu-opt %t/split_rows.mlir --ipu-compile="target=ipu21-16" 2> /dev/null > %t/split_rows.ir
// RUN: FileCheck %s --check-prefix=SPLIT-IR < %t/split_rows.ir
// RUN: ipu-translate --ipu-to-package %t/split_rows.ir -o %t/split_rows.ipuexe
// RUN: ipu-run %t/split_rows.ipuexe --check | FileCheck %s --check-prefix=SPLIT

// PASS: numericalTest=PASS

// LN-MLP: workload=siglip_ln_mlp_f16_b1_t16_d32_h64_n1
// LN-MLP: checkpoint=0 operation=elementwise {{.*}} mismatches=0 elementsCompared=16
// LN-MLP: numericalTest=PASS

// Each tile reduces its quarter of a row, one phase gives the 4 tiles of a
// row block all 4 partials, transposed (a row of 4 per source, one
// transfer each: 16, not one per value: 64), and a column reduction
// combines them; the statistic is then on every tile that needs it, so the
// ops reading it exchange nothing.
// SPLIT-IR: ipu_tile.kernel @ew0.kernel broadcasts ["full"] reduce max init 0xFFF0000000000000
// SPLIT-IR: ipu_tile.buffer @ew0.partials : tensor<16x4xf32, #ipu_tile.layout<grid = [4, 4]
// SPLIT-IR: ipu_tile.buffer @ew0.gathered : tensor<4x16xf32, #ipu_tile.layout<grid = [1, 4], {{.*}}replicas = 4
// SPLIT-IR: ipu_tile.compute_set @ew0 kernel "ew0.kernel" operands [@mm0.out, @ew0.partials]
// SPLIT-IR-NEXT: ipu_exchange.sync
// SPLIT-IR-NEXT: ipu_exchange.phase @ew0.partials.gather attributes {schedule = #ipu_exchange.schedule<strategy = timed, transfers = 16, bound = {{[0-9]+}}, horizon = {{[0-9]+}},
// SPLIT-IR-NEXT: ipu_exchange.copy @ew0.partials to @ew0.gathered view [1, 16, 4, 1] permutation [0, 2, 1, 3]
// SPLIT-IR: ipu_tile.compute_set @ew0.combine kernel "reduce_columns_max" operands [@ew0.gathered, @ew0.out]
// SPLIT-IR-NOT: ipu_exchange.phase
// SPLIT-IR: ipu_tile.compute_set @ew1 kernel "ew1.kernel" operands [@mm0.out, @ew0.out, @ew1.out]
// SPLIT-IR: ipu_exchange.phase @ew2.partials.gather
// SPLIT-IR: ipu_tile.compute_set @ew2.combine
// SPLIT-IR-NOT: ipu_exchange.phase
// SPLIT-IR: ipu_tile.compute_set @ew3 kernel "ew3.kernel" operands [@ew1.out, @ew2.out, @ew3.out]

// A sum from init 1 keeps the partials untransposed for a generated
// combiner that adds the init once; the planner's estimate and the check
// hold there too.
// RUN: ipu-opt %t/sum_from_one.mlir --ipu-compile="target=ipu21-16" 2> /dev/null > %t/sum_from_one.ir
// RUN: FileCheck %s --check-prefix=ONE-IR < %t/sum_from_one.ir
// RUN: ipu-translate --ipu-to-package %t/sum_from_one.ir -o %t/sum_from_one.ipuexe
// RUN: ipu-run %t/sum_from_one.ipuexe --check | FileCheck %s --check-prefix=ONE
// ONE-IR: ipu_tile.kernel @ew0.kernel broadcasts ["full"] reduce add init 0.000000e+00
// ONE-IR: ipu_tile.kernel @ew0.kernel1 broadcasts ["full"] reduce add init 1.000000e+00
// ONE-IR: ipu_tile.buffer @ew0.gathered : tensor<16x4xf32, #ipu_tile.layout<grid = [4, 1], {{.*}}replicas = 4
// ONE-IR: ipu_exchange.copy @ew0.partials to @ew0.gathered{{$}}
// ONE-IR: ipu_tile.compute_set @ew0.combine kernel "ew0.kernel1" operands [@ew0.gathered, @ew0.out]
// ONE: workload=row_sum_from_one cycles=[[CYCLES:[0-9]+]]
// ONE: plannedCycles=[[CYCLES]]
// ONE: checkpoint=1 operation=elementwise result=2 {{.*}}mismatches=0 elementsCompared=16
// ONE: numericalTest=PASS

// The planner's estimate is the simulated time, and the statistics are
// checked one value per row.
// SPLIT: workload=scores_softmax cycles=[[CYCLES:[0-9]+]]
// SPLIT: plannedCycles=[[CYCLES]]
// SPLIT: checkpoint=1 operation=elementwise result=2 kernel=ew0.kernel {{.*}}mismatches=0 elementsCompared=16
// SPLIT: checkpoint=3 operation=elementwise result=4 kernel=ew2.kernel {{.*}}mismatches=0 elementsCompared=16
// SPLIT: numericalTest=PASS

//--- split_rows.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @scores_softmax(%q: tensor<16x8xf32>, %k: tensor<8x60xf32>) -> tensor<16x60xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x60xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x60xf32>) -> tensor<16x60xf32>
  %s = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, cols = 4, inner = 1>} ins(%q, %k : tensor<16x8xf32>, tensor<8x60xf32>) outs(%f : tensor<16x60xf32>) -> tensor<16x60xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<16x60xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<16x60xf32>, tensor<16xf32>) outs(%e : tensor<16x60xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<16x60xf32>
  %si = linalg.fill ins(%z : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<16x60xf32>) outs(%si : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<16x60xf32>, tensor<16xf32>) outs(%e : tensor<16x60xf32>) {
  ^bb0(%in: f32, %s2: f32, %out: f32):
    %d = arith.divf %in, %s2 : f32
    linalg.yield %d : f32
  } -> tensor<16x60xf32>
  return %div : tensor<16x60xf32>
}

//--- sum_from_one.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum_from_one(%q: tensor<16x8xf32>, %k: tensor<8x60xf32>) -> tensor<16x60xf32> {
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x60xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x60xf32>) -> tensor<16x60xf32>
  %s = linalg.matmul {ipu_gemm.constraints = #ipu_gemm.constraints<rows = 4, cols = 4, inner = 1>} ins(%q, %k : tensor<16x8xf32>, tensor<8x60xf32>) outs(%f : tensor<16x60xf32>) -> tensor<16x60xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %si = linalg.fill ins(%one : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<16x60xf32>) outs(%si : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%s, %sum : tensor<16x60xf32>, tensor<16xf32>) outs(%e : tensor<16x60xf32>) {
  ^bb0(%in: f32, %s2: f32, %out: f32):
    %d = arith.divf %in, %s2 : f32
    linalg.yield %d : f32
  } -> tensor<16x60xf32>
  return %div : tensor<16x60xf32>
}
