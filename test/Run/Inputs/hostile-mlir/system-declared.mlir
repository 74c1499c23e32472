// The same through func: a declaration of the C library's system.
module {
  func.func private @system(i64) -> i32
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant 0 : i64
    %r = func.call @system(%c) : (i64) -> i32
    return %x : tensor<4xf32>
  }
}
