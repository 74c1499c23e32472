// RUN: ipu-opt %s -ipu-import-linalg | FileCheck %s --check-prefix=IMPORTED
// RUN: ipu-opt %s -ipu-import-linalg -ipu-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// A bias add, tanh, and a value read twice. The import leaves one op per
// linalg op (the bias's broadcast already folded into its reader as a row
// input); fusion makes the chain one op, but a value with two uses
// stays where it is, computed once.

// IMPORTED-LABEL: func.func @chain
// IMPORTED:       %[[ADD:.*]] = ipu_tile.elementwise %arg0, %arg1 : tensor<16x64xf32>, tensor<64xf32>
// IMPORTED:       %[[TANH:.*]] = ipu_tile.elementwise %[[ADD]] : tensor<16x64xf32>
// IMPORTED:       math.tanh
// IMPORTED:       ipu_tile.elementwise %[[TANH]], %[[TANH]]
// IMPORTED-NOT:   ipu_tile.elementwise

// FUSED-LABEL: func.func @chain
// FUSED:       %[[T:.*]] = ipu_tile.elementwise %arg0, %arg1 : tensor<16x64xf32>, tensor<64xf32>
// FUSED-NEXT:  ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f32):
// FUSED-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// FUSED-NEXT:    %[[H:.*]] = math.tanh %[[S]] : f32
// FUSED-NEXT:    ipu_tile.yield %[[H]] : f32
// FUSED:       ipu_tile.elementwise %[[T]], %[[T]]
// FUSED-NOT:   ipu_tile.elementwise
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @chain(%x: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %e0 = tensor.empty() : tensor<16x64xf32>
  %add = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<16x64xf32>, tensor<64xf32>) outs(%e0 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16x64xf32>
  %tanh = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %sq = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%tanh, %tanh : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  return %sq : tensor<16x64xf32>
}
