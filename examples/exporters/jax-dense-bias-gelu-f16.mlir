// Exporter form: jax-dense-bias-gelu-f16
// Same JAX program in f16 (params and input f16, no bf16). JAX does not widen:
// the dot_general result type is f16 (lax.py:6161-6262: accumulation_aval =
// aval_out), so the contraction generic accumulates in f16, and the GELU
// constants are f16 (sqrt(2/pi) via np.sqrt(..).astype(f16) -> 7.978520e-01).
// Sources: jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5, openxla/stablehlo@3c9301c116f97fbaf696959a0ede32712aec587b (as in the f32 file)
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
  func.func @jax_dense_bias_gelu_f16(%arg0: tensor<1x8x16xf16>, %arg1: tensor<16x32xf16>, %arg2: tensor<32xf16>) -> tensor<1x8x32xf16> {
    %0 = tensor.empty() : tensor<1x8x32xf16>
    %cst = arith.constant 0.000000e+00 : f16
    %1 = linalg.fill ins(%cst : f16) outs(%0 : tensor<1x8x32xf16>) -> tensor<1x8x32xf16>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x8x16xf16>, tensor<16x32xf16>) outs(%1 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      %34 = arith.addf %out, %33 : f16
      linalg.yield %34 : f16
    } -> tensor<1x8x32xf16>
    %expanded = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [1, 1, 32] : tensor<32xf16> into tensor<1x1x32xf16>
    %3 = tensor.empty() : tensor<1x8x32xf16>
    %4 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x1x32xf16>) outs(%3 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x8x32xf16>
    %5 = tensor.empty() : tensor<1x8x32xf16>
    %6 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %4 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%5 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.addf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %7 = tensor.empty() : tensor<1x8x32xf16>
    %8 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%7 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %9 = tensor.empty() : tensor<1x8x32xf16>
    %10 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %6 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%9 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %cst_0 = arith.constant dense<4.470830e-02> : tensor<f16>
    %11 = tensor.empty() : tensor<1x8x32xf16>
    %12 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_0 : tensor<f16>) outs(%11 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x8x32xf16>
    %13 = tensor.empty() : tensor<1x8x32xf16>
    %14 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %10 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%13 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %15 = tensor.empty() : tensor<1x8x32xf16>
    %16 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %14 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%15 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.addf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %cst_1 = arith.constant dense<7.978520e-01> : tensor<f16>
    %17 = tensor.empty() : tensor<1x8x32xf16>
    %18 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<f16>) outs(%17 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x8x32xf16>
    %19 = tensor.empty() : tensor<1x8x32xf16>
    %20 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %16 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%19 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %21 = tensor.empty() : tensor<1x8x32xf16>
    %22 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<1x8x32xf16>) outs(%21 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %33 = math.tanh %in : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f16>
    %23 = tensor.empty() : tensor<1x8x32xf16>
    %24 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_2 : tensor<f16>) outs(%23 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x8x32xf16>
    %25 = tensor.empty() : tensor<1x8x32xf16>
    %26 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24, %22 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%25 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.addf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %cst_3 = arith.constant dense<5.000000e-01> : tensor<f16>
    %27 = tensor.empty() : tensor<1x8x32xf16>
    %28 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_3 : tensor<f16>) outs(%27 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<1x8x32xf16>
    %29 = tensor.empty() : tensor<1x8x32xf16>
    %30 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%28, %26 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%29 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    %31 = tensor.empty() : tensor<1x8x32xf16>
    %32 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %30 : tensor<1x8x32xf16>, tensor<1x8x32xf16>) outs(%31 : tensor<1x8x32xf16>) {
    ^bb0(%in: f16, %in_4: f16, %out: f16):
      %33 = arith.mulf %in, %in_4 : f16
      linalg.yield %33 : f16
    } -> tensor<1x8x32xf16>
    return %32 : tensor<1x8x32xf16>
  }
}

