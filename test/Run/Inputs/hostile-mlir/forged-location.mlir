// An op whose location is a forged report line (a newline, then a PASS)
// and a terminal escape: printed escaped, on the error's own line.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = func.call @main(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("x.mlir\0Aexpected=ref mismatches=0 numericalTest=PASS\1B[2J":1:2)
    return %r : tensor<4xf32>
  }
}
