// A loop written with branches: it never ends.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    cf.br ^loop
  ^loop:
    cf.br ^loop
  }
}
