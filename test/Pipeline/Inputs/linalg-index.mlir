// A generic whose body reads its position (torch-mlir writes linalg.index
// for argmax and gathers): refused by name and location
// (test/Pipeline/bad-input.test).
func.func @position(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %m = arith.addf %in, %f : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
