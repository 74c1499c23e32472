// llvm.call @system: running this for a reference would run a shell
// command (@MARKER@ is replaced by a path the test checks never appears).
module {
  llvm.mlir.global internal constant @command("touch @MARKER@\00") {addr_space = 0 : i32}
  llvm.func @system(!llvm.ptr) -> i32
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = llvm.mlir.addressof @command : !llvm.ptr
    %r = llvm.call @system(%p) : (!llvm.ptr) -> i32
    return %x : tensor<4xf32>
  }
}
