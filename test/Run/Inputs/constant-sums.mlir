// A 4096-long row sum and a K = 4096 matmul of constants, where every f32
// rounding of the device's sums errs the same way (summation-bound.test):
// with a = 1 and w1 = 0.7, rows = a x w1 is 0.7 everywhere; the function
// returns each row's sum and rows x w2.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @constant_sums(%a: tensor<8x1xf32>, %w1: tensor<1x4096xf32>, %w2: tensor<4096x16xf32>) -> (tensor<8x1xf32>, tensor<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4096xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<8x4096xf32>) -> tensor<8x4096xf32>
  %rows = linalg.matmul ins(%a, %w1 : tensor<8x1xf32>, tensor<1x4096xf32>) outs(%f0 : tensor<8x4096xf32>) -> tensor<8x4096xf32>
  %e1 = tensor.empty() : tensor<8x1xf32>
  %si = linalg.fill ins(%z : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<8x4096xf32>) outs(%si : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<8x1xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %mm = linalg.matmul ins(%rows, %w2 : tensor<8x4096xf32>, tensor<4096x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %sum, %mm : tensor<8x1xf32>, tensor<8x16xf32>
}
