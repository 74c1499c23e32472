// A slice written at an offset read from the data (the
// input's first element times 1e9): without a check, a
// write to any host address.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %v = tensor.extract %x[%c0] : tensor<4xf32>
    %s = arith.constant 1.0e9 : f32
    %u = arith.mulf %v, %s : f32
    %i = arith.fptosi %u : f32 to i64
    %o = arith.index_cast %i : i64 to index
    %big = arith.constant dense<0.0> : tensor<64xf32>
    %w = tensor.insert_slice %x into %big[%o] [4] [1] : tensor<4xf32> into tensor<64xf32>
    %r = tensor.extract_slice %w[0] [4] [1] : tensor<64xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
