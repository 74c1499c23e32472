// scf.while whose condition is always true: it never ends.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %t = arith.constant true
    %r = scf.while (%a = %x) : (tensor<4xf32>) -> tensor<4xf32> {
      scf.condition(%t) %a : tensor<4xf32>
    } do {
    ^bb0(%b: tensor<4xf32>):
      scf.yield %b : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}
