// A function attribute that the lowering would hand to LLVM.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {passthrough = ["noinline"]} {
    return %x : tensor<4xf32>
  }
}
