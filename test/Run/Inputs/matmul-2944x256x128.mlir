// A full-chip matmul step whose host cost per simulated cycle is high
// (test/Run/simulated-work.test).
func.func @mm(%x: tensor<2944x256xf16>, %w: tensor<256x128xf16>) -> tensor<2944x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2944x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2944x128xf32>) -> tensor<2944x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2944x256xf16>, tensor<256x128xf16>) outs(%f : tensor<2944x128xf32>) -> tensor<2944x128xf32>
  return %y : tensor<2944x128xf32>
}
