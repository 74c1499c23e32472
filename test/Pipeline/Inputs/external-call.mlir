// A call of an external function: no import or lowering takes it.
func.func private @helper(tensor<8x16xf32>) -> tensor<8x16xf32>
func.func @calls(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = func.call @helper(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
