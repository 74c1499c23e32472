// SigLIP So400m attention scores, as torch-mlir emits q @ k.transpose(-2, -1)
// for 16 heads, 729 tokens and head dim 72, f16 with f32 accumulation. q and
// k are arguments here (in the encoder block they come from projections).
func.func @scores(%q: tensor<16x729x72xf16>, %k: tensor<16x729x72xf16>) -> tensor<16x729x729xf16> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x72x729xf16>
  %kt = linalg.transpose ins(%k : tensor<16x729x72xf16>) outs(%et : tensor<16x72x729xf16>) permutation = [0, 2, 1]
  %e = tensor.empty() : tensor<16x729x729xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x729x729xf32>) -> tensor<16x729x729xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<16x729x72xf16>, tensor<16x72x729xf16>) outs(%f : tensor<16x729x729xf32>) -> tensor<16x729x729xf32>
  %e16 = tensor.empty() : tensor<16x729x729xf16>
  %s16 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<16x729x729xf32>) outs(%e16 : tensor<16x729x729xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<16x729x729xf16>
  return %s16 : tensor<16x729x729xf16>
}
