// 7 divided by the input truncated to i32 (every element is 0): SIGFPE on x86.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %i = arith.fptosi %v : f32 to i32
      %one = arith.constant 7 : i32
      %q = arith.divsi %one, %i : i32
      %f = arith.sitofp %q : i32 to f32
      linalg.yield %f : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
