// scf.for of constant bounds, 2^62 iterations: refused by its work.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cN = arith.constant 4611686018427387904 : index
    %zero = arith.constant 0.0 : f32
    %s = scf.for %i = %c0 to %cN step %c1 iter_args(%a = %zero) -> (f32) {
      %b = arith.addf %a, %a : f32
      scf.yield %b : f32
    }
    %r = tensor.insert %s into %x[%c0] : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
