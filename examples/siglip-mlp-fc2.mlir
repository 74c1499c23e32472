// SigLIP So400m MLP, second projection: 729 tokens x 4304 -> 1152, f16
// inputs, f32 accumulation and result.
func.func @siglip_mlp_fc2(%h: tensor<729x4304xf16>, %w2: tensor<4304x1152xf16>) -> tensor<729x1152xf32> {
  %init = tensor.empty() : tensor<729x1152xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<729x4304xf16>, tensor<4304x1152xf16>)
                     outs(%init : tensor<729x1152xf32>) -> tensor<729x1152xf32>
  return %y : tensor<729x1152xf32>
}
