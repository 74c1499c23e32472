// An index read from the data (the input's element times 1e9): without
// a check, a read of any host address.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.constant 1.0e9 : f32
      %u = arith.mulf %v, %s : f32
      %i = arith.fptosi %u : f32 to i64
      %j = arith.index_cast %i : i64 to index
      %t = tensor.extract %table[%j] : tensor<4xf32>
      linalg.yield %t : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
