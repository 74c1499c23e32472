// SigLIP So400m MLP, first projection: 729 tokens x 1152 -> 4304, f16 inputs,
// f32 accumulation and result. Weights are inference weights, resident on
// the tiles; activations arrive split by rows.
func.func @siglip_mlp_fc1(%x: tensor<729x1152xf16>, %w1: tensor<1152x4304xf16>) -> tensor<729x4304xf32> {
  %init = tensor.empty() : tensor<729x4304xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<729x1152xf16>, tensor<1152x4304xf16>)
                     outs(%init : tensor<729x4304xf32>) -> tensor<729x4304xf32>
  return %h : tensor<729x4304xf32>
}
