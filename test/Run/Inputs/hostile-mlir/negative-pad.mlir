// A negative pad: its lowering would write the source before the buffer.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %z = arith.constant 0.0 : f32
    %p = tensor.pad %x low[-2] high[2] {
    ^bb0(%i: index):
      tensor.yield %z : f32
    } : tensor<4xf32> to tensor<4xf32>
    return %p : tensor<4xf32>
  }
}
