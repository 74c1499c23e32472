// An indexing map with mod: small where every loop index is 0 or last
// (all the verifier checks), -1e8 in between: a read of any host address.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d) -> (((d + 1) mod 3) * 100000000 - 100000000)>, affine_map<(d) -> (d)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
