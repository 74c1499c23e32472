// The planner charges the row reductions that run on a matmul's result
// (here softmax's max and sum) to each plan: on its output blocks, plus the
// gather of the partials and the second reduction when the plan splits the
// rows over column blocks. Tall results keep their rows whole; a result of
// 4 rows splits them over the 16 tiles, the reduction's gather costing less
// than 12 idle tiles.
// RUN: split-file %s %t
// RUN: ipu-opt %t/tall.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-plan-gemm 2>&1 >/dev/null | FileCheck %s --check-prefix=TALL
// RUN: ipu-opt %t/wide.mlir --ipu-set-target=target=ipu21-16 --ipu-import-linalg --ipu-plan-gemm 2>&1 >/dev/null | FileCheck %s --check-prefix=WIDE

// TALL: remark: finalist=0 rows=16 cols=1 inner=1 {{.*}} rowReductionCycles={{[1-9][0-9]*}}
// WIDE: remark: finalist=0 rows=1 cols=16 inner=1 {{.*}} rowReductionCycles={{[1-9][0-9]*}}

//--- tall.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @scores_softmax(%q: tensor<16x8xf32>, %k: tensor<8x60xf32>) -> tensor<16x60xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x60xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x60xf32>) -> tensor<16x60xf32>
  %s = linalg.matmul ins(%q, %k : tensor<16x8xf32>, tensor<8x60xf32>) outs(%f : tensor<16x60xf32>) -> tensor<16x60xf32>
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

//--- wide.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @wide_softmax(%q: tensor<4x64xf32>, %k: tensor<64x2048xf32>) -> tensor<4x2048xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x2048xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x64xf32>, tensor<64x2048xf32>) outs(%f : tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x2048xf32>) outs(%mi : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x2048xf32>, tensor<4xf32>) outs(%e : tensor<4x2048xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x2048xf32>
  %si = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x2048xf32>) outs(%si : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x2048xf32>, tensor<4xf32>) outs(%e : tensor<4x2048xf32>) {
  ^bb0(%in: f32, %s2: f32, %out: f32):
    %d = arith.divf %in, %s2 : f32
    linalg.yield %d : f32
  } -> tensor<4x2048xf32>
  return %div : tensor<4x2048xf32>
}
