// A 1 TiB tensor, twice (the fill writes a second): refused before any allocation.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<262144x1048576xf32>
    %f = linalg.fill ins(%c : f32) outs(%e : tensor<262144x1048576xf32>) -> tensor<262144x1048576xf32>
    %s = tensor.extract_slice %f[0, 0] [1, 4] [1, 1] : tensor<262144x1048576xf32> to tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
