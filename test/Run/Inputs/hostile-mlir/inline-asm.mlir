// Inline assembly (ud2): LLVM aborts on it, or the host runs it.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = llvm.inline_asm has_side_effects "ud2", "=r" : () -> i32
    return %x : tensor<4xf32>
  }
}
