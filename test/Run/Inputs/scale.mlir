// A kernel that multiplies by 3.0 (test/Run/foreign-code.test).
func.func @scale(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %k = arith.constant 3.000000e+00 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
