// Exporter form: jax-dense-bias-gelu-f32
// JAX: flax nn.Dense(32) (kernel [16, 32], bias [32]) then jax.nn.gelu
// (approximate=True, flax's default) on x: [1, 8, 16] f32, jitted, lowered to
// StableHLO and run through stablehlo-legalize-to-linalg (default options).
// StableHLO as reconstructed (ops in order):
//   dot_general %x, %k, contracting_dims = [2] x [0]  (flax Dense; no transpose)
//   reshape %b -> 1x1x32; broadcast_in_dim dims=[0,1,2] -> 1x8x32; add
//   gelu: mul(mul(x,x),x); mul(bcast(0.044715), x3); add(x, .);
//         mul(bcast(sqrt(2/pi)), .); tanh; add(bcast(1.0), .); mul(bcast(0.5), .);
//         mul(x, cdf)
// Sources: jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5
//   jax/_src/nn/functions.py:438-470 (gelu), jax/_src/lax/lax.py:4923-4938
//   (integer_pow y=3 -> multiply(multiply(x,x),x)), lax.py:4444-4462 and
//   jax/_src/interpreters/mlir.py:2877-2936 (scalars -> broadcast_in_dim dims=[]),
//   lax.py:6234-6262 (dot_general keeps the operand dtype as result type)
// and openxla/stablehlo@3c9301c116f97fbaf696959a0ede32712aec587b
//   stablehlo/conversions/linalg/transforms/StablehloToLinalgDotProduct.cpp:196-310
//   (rank-3 dot_general is not 'simple' -> generic, maps (d0,d1,d3),(d3,d2)->(d0,d1,d2);
//    matches tests/dot-product.mlir @not_simple_dot_general)
//   StablehloLegalizeToLinalg.cpp:503-535 (broadcast_in_dim -> generic; size-1
//    expansion -> constant 0 in the map, scalar -> ()), 1091-1220 (reshape ->
//    tensor.expand_shape), 1467-1491 (constant -> arith.constant)
//   StablehloToLinalgPointwise.cpp:220-262 (pointwise -> generic, identity maps)
// Status: DERIVED, not captured (no jax/stablehlo-opt binary was run). The
// StableHLO JAX emits was reconstructed from the JAX lowering rules, then each
// op was converted by hand with the stablehlo-legalize-to-linalg pattern it
// hits. This is the raw pass output (no --canonicalize afterwards): one linalg
// op per StableHLO op, a fresh tensor.empty per op, scalar constants
// materialised with an explicit broadcast.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> ()>
module {
  func.func @jax_dense_bias_gelu_f32(%arg0: tensor<1x8x16xf32>, %arg1: tensor<16x32xf32>, %arg2: tensor<32xf32>) -> tensor<1x8x32xf32> {
    %0 = tensor.empty() : tensor<1x8x32xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x8x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      %34 = arith.addf %out, %33 : f32
      linalg.yield %34 : f32
    } -> tensor<1x8x32xf32>
    %expanded = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [1, 1, 32] : tensor<32xf32> into tensor<1x1x32xf32>
    %3 = tensor.empty() : tensor<1x8x32xf32>
    %4 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x1x32xf32>) outs(%3 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x32xf32>
    %5 = tensor.empty() : tensor<1x8x32xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %4 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%5 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.addf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %7 = tensor.empty() : tensor<1x8x32xf32>
    %8 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%7 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %9 = tensor.empty() : tensor<1x8x32xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %6 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%9 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %cst_0 = arith.constant dense<4.471500e-02> : tensor<f32>
    %11 = tensor.empty() : tensor<1x8x32xf32>
    %12 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_0 : tensor<f32>) outs(%11 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x32xf32>
    %13 = tensor.empty() : tensor<1x8x32xf32>
    %14 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %10 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%13 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %15 = tensor.empty() : tensor<1x8x32xf32>
    %16 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %14 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%15 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.addf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %cst_1 = arith.constant dense<0.797884583> : tensor<f32>
    %17 = tensor.empty() : tensor<1x8x32xf32>
    %18 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%17 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x32xf32>
    %19 = tensor.empty() : tensor<1x8x32xf32>
    %20 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %16 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%19 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %21 = tensor.empty() : tensor<1x8x32xf32>
    %22 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<1x8x32xf32>) outs(%21 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = math.tanh %in : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %23 = tensor.empty() : tensor<1x8x32xf32>
    %24 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_2 : tensor<f32>) outs(%23 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x32xf32>
    %25 = tensor.empty() : tensor<1x8x32xf32>
    %26 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24, %22 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%25 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.addf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %cst_3 = arith.constant dense<5.000000e-01> : tensor<f32>
    %27 = tensor.empty() : tensor<1x8x32xf32>
    %28 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_3 : tensor<f32>) outs(%27 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x32xf32>
    %29 = tensor.empty() : tensor<1x8x32xf32>
    %30 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%28, %26 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%29 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    %31 = tensor.empty() : tensor<1x8x32xf32>
    %32 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %30 : tensor<1x8x32xf32>, tensor<1x8x32xf32>) outs(%31 : tensor<1x8x32xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %33 = arith.mulf %in, %in_4 : f32
      linalg.yield %33 : f32
    } -> tensor<1x8x32xf32>
    return %32 : tensor<1x8x32xf32>
  }
}

