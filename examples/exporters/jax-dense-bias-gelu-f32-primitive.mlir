// Exporter form: jax-dense-bias-gelu-f32-primitive
// Same JAX program as jax-dense-bias-gelu-f32.mlir, converted with
// stablehlo-legalize-to-linalg="enable-primitive-ops=true": pointwise ops become
// linalg.map, broadcast_in_dim becomes linalg.broadcast (the 1x1x32 bias is first
// collapsed to 1x32, dimensions = [1]; scalars use dimensions = [0, 1, 2]); the
// dot_general is still a linalg.generic.
// Sources: openxla/stablehlo@3c9301c116f97fbaf696959a0ede32712aec587b
//   StablehloToLinalgPointwise.cpp:142-216 (PointwiseToLinalgMapConverter),
//   StablehloLegalizeToLinalg.cpp:471-490 (simple broadcast), 537-653
//   (collapseExpandingDims + linalg.broadcast); JAX side as in the f32 file,
//   jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5
// Status: DERIVED, not captured (no jax/stablehlo-opt binary was run). The
// StableHLO JAX emits was reconstructed from the JAX lowering rules, then each
// op was converted by hand with the stablehlo-legalize-to-linalg pattern it
// hits. This is the raw pass output (no --canonicalize afterwards): one linalg
// op per StableHLO op, a fresh tensor.empty per op, scalar constants
// materialised with an explicit broadcast.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  func.func @jax_dense_bias_gelu_f32_primitive(%arg0: tensor<1x8x16xf32>, %arg1: tensor<16x32xf32>, %arg2: tensor<32xf32>) -> tensor<1x8x32xf32> {
    %0 = tensor.empty() : tensor<1x8x32xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x8x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %18 = arith.mulf %in, %in_17 : f32
      %19 = arith.addf %out, %18 : f32
      linalg.yield %19 : f32
    } -> tensor<1x8x32xf32>
    %expanded = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [1, 1, 32] : tensor<32xf32> into tensor<1x1x32xf32>
    %collapsed = tensor.collapse_shape %expanded [[0], [1, 2]] : tensor<1x1x32xf32> into tensor<1x32xf32>
    %3 = tensor.empty() : tensor<1x8x32xf32>
    %broadcasted = linalg.broadcast ins(%collapsed : tensor<1x32xf32>) outs(%3 : tensor<1x8x32xf32>) dimensions = [1] 
    %4 = tensor.empty() : tensor<1x8x32xf32>
    %mapped = linalg.map { arith.addf } ins(%2, %broadcasted : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%4 : tensor<1x8x32xf32>)
    %5 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_0 = linalg.map { arith.mulf } ins(%mapped, %mapped : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%5 : tensor<1x8x32xf32>)
    %6 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_1 = linalg.map { arith.mulf } ins(%mapped_0, %mapped : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%6 : tensor<1x8x32xf32>)
    %cst_2 = arith.constant dense<4.471500e-02> : tensor<f32>
    %7 = tensor.empty() : tensor<1x8x32xf32>
    %broadcasted_3 = linalg.broadcast ins(%cst_2 : tensor<f32>) outs(%7 : tensor<1x8x32xf32>) dimensions = [0, 1, 2] 
    %8 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_4 = linalg.map { arith.mulf } ins(%broadcasted_3, %mapped_1 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%8 : tensor<1x8x32xf32>)
    %9 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_5 = linalg.map { arith.addf } ins(%mapped, %mapped_4 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%9 : tensor<1x8x32xf32>)
    %cst_6 = arith.constant dense<0.797884583> : tensor<f32>
    %10 = tensor.empty() : tensor<1x8x32xf32>
    %broadcasted_7 = linalg.broadcast ins(%cst_6 : tensor<f32>) outs(%10 : tensor<1x8x32xf32>) dimensions = [0, 1, 2] 
    %11 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_8 = linalg.map { arith.mulf } ins(%broadcasted_7, %mapped_5 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%11 : tensor<1x8x32xf32>)
    %12 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_9 = linalg.map { math.tanh } ins(%mapped_8 : tensor<1x8x32xf32>) outs(%12 : tensor<1x8x32xf32>)
    %cst_10 = arith.constant dense<1.000000e+00> : tensor<f32>
    %13 = tensor.empty() : tensor<1x8x32xf32>
    %broadcasted_11 = linalg.broadcast ins(%cst_10 : tensor<f32>) outs(%13 : tensor<1x8x32xf32>) dimensions = [0, 1, 2] 
    %14 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_12 = linalg.map { arith.addf } ins(%broadcasted_11, %mapped_9 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%14 : tensor<1x8x32xf32>)
    %cst_13 = arith.constant dense<5.000000e-01> : tensor<f32>
    %15 = tensor.empty() : tensor<1x8x32xf32>
    %broadcasted_14 = linalg.broadcast ins(%cst_13 : tensor<f32>) outs(%15 : tensor<1x8x32xf32>) dimensions = [0, 1, 2] 
    %16 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_15 = linalg.map { arith.mulf } ins(%broadcasted_14, %mapped_12 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%16 : tensor<1x8x32xf32>)
    %17 = tensor.empty() : tensor<1x8x32xf32>
    %mapped_16 = linalg.map { arith.mulf } ins(%mapped, %mapped_15 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%17 : tensor<1x8x32xf32>)
    return %mapped_16 : tensor<1x8x32xf32>
  }
}

