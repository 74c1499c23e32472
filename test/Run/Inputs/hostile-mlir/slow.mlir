// Admitted (about 3.4e10 operations), but slower than a one-second
// --time-limit.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2048x2048xf32>
    %a = linalg.fill ins(%one : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %m = linalg.matmul ins(%a, %a : tensor<2048x2048xf32>, tensor<2048x2048xf32>)
        outs(%z : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %r = tensor.extract_slice %m[0, 0] [1, 4] [1, 1] : tensor<2048x2048xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
