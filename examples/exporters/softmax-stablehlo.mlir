// Exporter form: softmax-stablehlo
// JAX: jax.nn.softmax(x, axis=-1) on x: [2, 4, 24] f32, jitted, lowered to
// StableHLO and run through stablehlo-legalize-to-linalg (default options).
// StableHLO as reconstructed (ops in order):
//   reduce(x, init -inf) maximum dims=[2] -> 2x4
//   maximum(broadcast_in_dim(-inf) dims=[], .)      (jnp.max 'initial=-inf', applied after)
//   broadcast_in_dim dims=[0,1] -> 2x4x1            (keepdims = lax.expand_dims)
//   broadcast_in_dim dims=[0,1,2] -> 2x4x24; subtract; exponential
//   reduce(., init 0) add dims=[2]; broadcast_in_dim -> 2x4x1 -> 2x4x24; divide
// Sources: jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5
//   jax/_src/nn/functions.py:580-628 (softmax -> _softmax, initial=-inf; not jitted)
//   jax/_src/numpy/reductions.py:100-167 (_reduction: lax.reduce then
//    'result = op(initial_arr, result)' 156-163, expand_dims for keepdims),
//   405-411 (_reduce_max, jit inline=True); jax/_src/lax/lax.py:8752-8778
//   (reduce -> stablehlo.reduce with identity init), 3320-3329 (max identity -inf),
//   3802-3815 (expand_dims = broadcast_in_dim), 4429-4462 + jax/_src/interpreters/
//   mlir.py:2908-2936 (implicit broadcasts: broadcast_in_dim, scalars dims=[])
// and openxla/stablehlo@3c9301c116f97fbaf696959a0ede32712aec587b
//   stablehlo/conversions/linalg/transforms/StablehloToLinalgReduce.cpp:129-236
//   (reduce -> linalg.generic: input map is the transpose putting reduced dims
//    last (identity here), output map drops them: (d0,d1,d2)->(d0,d1); init is a
//    linalg.fill of the folded tensor.extract; body op(out, in), i.e. the HLO
//    region's lhs is the accumulator), MapStablehloToScalarOp.h:605-620
//   (maximum -> arith.maximumf), StablehloLegalizeToLinalg.cpp:503-535
//   (broadcast_in_dim -> generic; 2x4->2x4x1 map (d0,d1,d2)->(d0,d1); size-1
//    expansion -> constant 0: (d0,d1,0)), 1467-1491 (constants),
//   StablehloToLinalgPointwise.cpp:221-262 (pointwise -> generic, identity maps)
// Unlike torch-mlir there is no keepdim-in-the-reduction: the reduction drops the
// dim and the size-1 dim comes back as a broadcast generic.
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
module {
  func.func @softmax(%arg0: tensor<2x4x24xf32>) -> tensor<2x4x24xf32> {
    %cst = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_0 = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<2x4xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4x24xf32>) outs(%1 : tensor<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.maximumf %out, %in : f32
      linalg.yield %24 : f32
    } -> tensor<2x4xf32>
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %3 = tensor.empty() : tensor<2x4xf32>
    %4 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%3 : tensor<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4xf32>
    %5 = tensor.empty() : tensor<2x4xf32>
    %6 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%4, %2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%5 : tensor<2x4xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.maximumf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x4xf32>
    %7 = tensor.empty() : tensor<2x4x1xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x4xf32>) outs(%7 : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x1xf32>
    %9 = tensor.empty() : tensor<2x4x24xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x4x1xf32>) outs(%9 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x24xf32>
    %11 = tensor.empty() : tensor<2x4x24xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %10 : tensor<2x4x24xf32>, tensor<2x4x24xf32>) outs(%11 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.subf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x4x24xf32>
    %13 = tensor.empty() : tensor<2x4x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x4x24xf32>) outs(%13 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = math.exp %in : f32
      linalg.yield %24 : f32
    } -> tensor<2x4x24xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<2x4xf32>
    %16 = linalg.fill ins(%cst_3 : f32) outs(%15 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%14 : tensor<2x4x24xf32>) outs(%16 : tensor<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.addf %out, %in : f32
      linalg.yield %24 : f32
    } -> tensor<2x4xf32>
    %18 = tensor.empty() : tensor<2x4x1xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<2x4xf32>) outs(%18 : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x1xf32>
    %20 = tensor.empty() : tensor<2x4x24xf32>
    %21 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19 : tensor<2x4x1xf32>) outs(%20 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x24xf32>
    %22 = tensor.empty() : tensor<2x4x24xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %21 : tensor<2x4x24xf32>, tensor<2x4x24xf32>) outs(%22 : tensor<2x4x24xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.divf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x4x24xf32>
    return %23 : tensor<2x4x24xf32>
  }
}

