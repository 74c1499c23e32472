module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %i = %c0 to %c4 step %c0 iter_args(%a = %x) -> (tensor<4xf32>) {
      scf.yield %a : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}
