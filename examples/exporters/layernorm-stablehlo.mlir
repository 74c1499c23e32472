// Exporter form: layernorm-stablehlo
// JAX: flax.linen.LayerNorm(epsilon=1e-6) (flax default; reduction/feature axis -1,
// use_fast_variance=True) on x: [1, 8, 24] f32, scale/bias [24], jitted, lowered to
// StableHLO, chlo-legalize-to-stablehlo (JAX emits chlo.square for lax.square),
// then stablehlo-legalize-to-linalg (default options).
// StableHLO as reconstructed (ops in order):
//   sq = multiply(x, x)              (chlo.square; ChloDecompositionPatternsMath.td:913-915)
//   mu  = divide(reduce(x, 0) add dims=[2], broadcast(24.0))
//   mu2 = divide(reduce(sq, 0) add dims=[2], broadcast(24.0))
//   var = maximum(broadcast(0.0), subtract(mu2, multiply(mu, mu)))   (E[x^2]-E[x]^2)
//   mean/var: broadcast_in_dim dims=[0,1] -> 1x8x1; y = x - broadcast(mean -> 1x8x24)
//   r = rsqrt(add(var, broadcast(9.99999997E-7 : f32)))   (1x8x1)
//   mul = multiply(broadcast(r) (d0,d1,0), broadcast(reshape(scale, 1x1x24)) (d0,0,d2))
//   y = y * mul; y = y + broadcast(reshape(bias, 1x1x24))
// Sources: google/flax@18f8f311c275d57f46d95e41b15aa97b454754c0
//   flax/linen/normalization.py:52-57 (_abs_sq = lax.square), 60-152 (_compute_stats:
//   promote to >= f32 (no-op), mean via x.mean, fast variance 138-142), 154-226
//   (_normalize: expand_dims, x - mean, rsqrt(var + eps), mul *= scale, y *= mul,
//   y += bias), 424-520 (LayerNorm, epsilon 1e-6)
//   jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5 jax/_src/numpy/reductions.py:
//   875-891 (_count: constant N), 894-924 (_mean = lax.div(sum, N));
//   jax/_src/lax/lax.py:4826-4832 (square -> chlo.square for floats), 8752-8778
// and openxla/stablehlo@3c9301c116f97fbaf696959a0ede32712aec587b (patterns as in
//   softmax-stablehlo.mlir; reshape -> tensor.expand_shape, StablehloLegalizeToLinalg.cpp:1091-1220;
//   rsqrt -> math.rsqrt, MapStablehloToScalarOp.h:127-129)
// Status: DERIVED, not captured (no jax/stablehlo-opt binary was run). The
// StableHLO JAX emits was reconstructed from the JAX lowering rules, then each
// op was converted by hand with the stablehlo-legalize-to-linalg pattern it
// hits. This is the raw pass output (no --canonicalize afterwards): one linalg
// op per StableHLO op, a fresh tensor.empty per op, scalar constants
// materialised with an explicit broadcast; the tensor<f32> init constants of the
// reduces are left dead (the converter folds tensor.extract of them to a scalar).
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map5 = affine_map<(d0, d1, d2) -> ()>
#map6 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
module {
  func.func @layernorm(%arg0: tensor<1x8x24xf32>, %arg1: tensor<24xf32>, %arg2: tensor<24xf32>) -> tensor<1x8x24xf32> {
    %0 = tensor.empty() : tensor<1x8x24xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<1x8x24xf32>, tensor<1x8x24xf32>) outs(%0 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.mulf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x24xf32>
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %2 = tensor.empty() : tensor<1x8xf32>
    %3 = linalg.fill ins(%cst_0 : f32) outs(%2 : tensor<1x8xf32>) -> tensor<1x8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x8x24xf32>) outs(%3 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %50 = arith.addf %out, %in : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %cst_1 = arith.constant dense<2.400000e+01> : tensor<f32>
    %5 = tensor.empty() : tensor<1x8xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%5 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8xf32>
    %7 = tensor.empty() : tensor<1x8xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%4, %6 : tensor<1x8xf32>, tensor<1x8xf32>) outs(%7 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.divf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %9 = tensor.empty() : tensor<1x8xf32>
    %10 = linalg.fill ins(%cst_3 : f32) outs(%9 : tensor<1x8xf32>) -> tensor<1x8xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<1x8x24xf32>) outs(%10 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %50 = arith.addf %out, %in : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %cst_4 = arith.constant dense<2.400000e+01> : tensor<f32>
    %12 = tensor.empty() : tensor<1x8xf32>
    %13 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_4 : tensor<f32>) outs(%12 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8xf32>
    %14 = tensor.empty() : tensor<1x8xf32>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%11, %13 : tensor<1x8xf32>, tensor<1x8xf32>) outs(%14 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.divf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %16 = tensor.empty() : tensor<1x8xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8, %8 : tensor<1x8xf32>, tensor<1x8xf32>) outs(%16 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.mulf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %18 = tensor.empty() : tensor<1x8xf32>
    %19 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%15, %17 : tensor<1x8xf32>, tensor<1x8xf32>) outs(%18 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.subf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %cst_5 = arith.constant dense<0.000000e+00> : tensor<f32>
    %20 = tensor.empty() : tensor<1x8xf32>
    %21 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_5 : tensor<f32>) outs(%20 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8xf32>
    %22 = tensor.empty() : tensor<1x8xf32>
    %23 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%21, %19 : tensor<1x8xf32>, tensor<1x8xf32>) outs(%22 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.maximumf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8xf32>
    %24 = tensor.empty() : tensor<1x8x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<1x8xf32>) outs(%24 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1xf32>
    %26 = tensor.empty() : tensor<1x8x1xf32>
    %27 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<1x8xf32>) outs(%26 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1xf32>
    %28 = tensor.empty() : tensor<1x8x24xf32>
    %29 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<1x8x1xf32>) outs(%28 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x24xf32>
    %30 = tensor.empty() : tensor<1x8x24xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %29 : tensor<1x8x24xf32>, tensor<1x8x24xf32>) outs(%30 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.subf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x24xf32>
    %cst_6 = arith.constant dense<9.99999997E-7> : tensor<f32>
    %32 = tensor.empty() : tensor<1x8x1xf32>
    %33 = linalg.generic {indexing_maps = [#map5, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_6 : tensor<f32>) outs(%32 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1xf32>
    %34 = tensor.empty() : tensor<1x8x1xf32>
    %35 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%27, %33 : tensor<1x8x1xf32>, tensor<1x8x1xf32>) outs(%34 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.addf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x1xf32>
    %36 = tensor.empty() : tensor<1x8x1xf32>
    %37 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%35 : tensor<1x8x1xf32>) outs(%36 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %50 = math.rsqrt %in : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x1xf32>
    %expanded = tensor.expand_shape %arg1 [[0, 1, 2]] output_shape [1, 1, 24] : tensor<24xf32> into tensor<1x1x24xf32>
    %38 = tensor.empty() : tensor<1x8x24xf32>
    %39 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%37 : tensor<1x8x1xf32>) outs(%38 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x24xf32>
    %40 = tensor.empty() : tensor<1x8x24xf32>
    %41 = linalg.generic {indexing_maps = [#map6, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x1x24xf32>) outs(%40 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x24xf32>
    %42 = tensor.empty() : tensor<1x8x24xf32>
    %43 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39, %41 : tensor<1x8x24xf32>, tensor<1x8x24xf32>) outs(%42 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.mulf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x24xf32>
    %44 = tensor.empty() : tensor<1x8x24xf32>
    %45 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %43 : tensor<1x8x24xf32>, tensor<1x8x24xf32>) outs(%44 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.mulf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x24xf32>
    %expanded_7 = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [1, 1, 24] : tensor<24xf32> into tensor<1x1x24xf32>
    %46 = tensor.empty() : tensor<1x8x24xf32>
    %47 = linalg.generic {indexing_maps = [#map6, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_7 : tensor<1x1x24xf32>) outs(%46 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x24xf32>
    %48 = tensor.empty() : tensor<1x8x24xf32>
    %49 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45, %47 : tensor<1x8x24xf32>, tensor<1x8x24xf32>) outs(%48 : tensor<1x8x24xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %50 = arith.addf %in, %in_8 : f32
      linalg.yield %50 : f32
    } -> tensor<1x8x24xf32>
    return %49 : tensor<1x8x24xf32>
  }
}

