// Two nested loops of 1,000 iterations: unrolled, a million copies of the
// body. --ipu-unroll-layer-loops refuses it.
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %y = scf.for %i = %c0 to %c1000 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    %z = scf.for %j = %c0 to %c1000 step %c1 iter_args(%b = %a) -> (tensor<4xf32>) {
      %s = arith.addf %b, %b : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    scf.yield %z : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
