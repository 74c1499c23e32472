// A linear indexing map of both signs, d0 - d1 + 3: 3 where both loop
// indices are 0 or both last (all the verifier checks), 6 at (3, 0), past
// the input's 4 elements.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 - d1 + 3)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<4x4xf32>
    return %r : tensor<4x4xf32>
  }
}
