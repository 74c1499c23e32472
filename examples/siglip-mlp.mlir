// The two GEMMs of the SigLIP So400m MLP alone: 729 tokens, 1152 -> 4304 ->
// 1152. Both projections take f16 and accumulate in f32; the hidden
// activation is narrowed to f16 between them, as the next GEMM reads it.
// The whole MLP (biases, GELU) is scripts/siglip-workload.py's.
func.func @siglip_mlp(%x: tensor<729x1152xf16>, %w1: tensor<1152x4304xf16>,
                      %w2: tensor<4304x1152xf16>) -> tensor<729x1152xf32> {
  %e1 = tensor.empty() : tensor<729x4304xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<729x1152xf16>, tensor<1152x4304xf16>)
                     outs(%e1 : tensor<729x4304xf32>) -> tensor<729x4304xf32>
  %h16 = arith.truncf %h : tensor<729x4304xf32> to tensor<729x4304xf16>
  %e2 = tensor.empty() : tensor<729x1152xf32>
  %y = linalg.matmul ins(%h16, %w2 : tensor<729x4304xf16>, tensor<4304x1152xf16>)
                     outs(%e2 : tensor<729x1152xf32>) -> tensor<729x1152xf32>
  return %y : tensor<729x1152xf32>
}
