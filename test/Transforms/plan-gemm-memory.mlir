// A stack of matmuls whose weights, replicated as each one's fastest plan
// wants, do not all fit: the planner plans again with each weight capped at
// its share of tile memory and says so; a stack too deep for any share
// fails with a note saying how much of it fits, in program order.
// RUN: split-file %s %t
// RUN: ipu-opt %t/eight.mlir -ipu-plan-gemm 2>&1 >/dev/null | FileCheck %s --check-prefix=EIGHT
// RUN: not ipu-opt %t/sixteen.mlir -ipu-plan-gemm 2>&1 >/dev/null | FileCheck %s --check-prefix=SIXTEEN

// EIGHT-COUNT-8: remark: chose plan {{.*}}; its weights capped at {{[0-9]+}} bytes per tile (its share of tile memory: the program's weights, replicated as the fastest plans want, do not fit)
// EIGHT-NOT: error

// SIXTEEN: error: cannot plan 64x512x512 matmul on 'ipu21-16': no plan fits tile memory
// SIXTEEN: note: the function's first {{[0-9]+}} of 16 matmuls fit before this one; its resident weights are 8388608 bytes, 524288 per tile unreplicated

//--- eight.mlir
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @stack(%x: tensor<64x512xf16>, %w0: tensor<512x512xf16>, %w1: tensor<512x512xf16>, %w2: tensor<512x512xf16>, %w3: tensor<512x512xf16>, %w4: tensor<512x512xf16>, %w5: tensor<512x512xf16>, %w6: tensor<512x512xf16>, %w7: tensor<512x512xf16>) -> tensor<64x512xf16> {
    %h0 = ipu_gemm.matmul %x, %w0 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h1 = ipu_gemm.matmul %h0, %w1 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h2 = ipu_gemm.matmul %h1, %w2 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h3 = ipu_gemm.matmul %h2, %w3 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h4 = ipu_gemm.matmul %h3, %w4 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h5 = ipu_gemm.matmul %h4, %w5 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h6 = ipu_gemm.matmul %h5, %w6 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h7 = ipu_gemm.matmul %h6, %w7 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    return %h7 : tensor<64x512xf16>
  }
}

//--- sixteen.mlir
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {
  func.func @stack(%x: tensor<64x512xf16>, %w0: tensor<512x512xf16>, %w1: tensor<512x512xf16>, %w2: tensor<512x512xf16>, %w3: tensor<512x512xf16>, %w4: tensor<512x512xf16>, %w5: tensor<512x512xf16>, %w6: tensor<512x512xf16>, %w7: tensor<512x512xf16>, %w8: tensor<512x512xf16>, %w9: tensor<512x512xf16>, %w10: tensor<512x512xf16>, %w11: tensor<512x512xf16>, %w12: tensor<512x512xf16>, %w13: tensor<512x512xf16>, %w14: tensor<512x512xf16>, %w15: tensor<512x512xf16>) -> tensor<64x512xf16> {
    %h0 = ipu_gemm.matmul %x, %w0 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h1 = ipu_gemm.matmul %h0, %w1 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h2 = ipu_gemm.matmul %h1, %w2 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h3 = ipu_gemm.matmul %h2, %w3 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h4 = ipu_gemm.matmul %h3, %w4 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h5 = ipu_gemm.matmul %h4, %w5 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h6 = ipu_gemm.matmul %h5, %w6 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h7 = ipu_gemm.matmul %h6, %w7 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h8 = ipu_gemm.matmul %h7, %w8 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h9 = ipu_gemm.matmul %h8, %w9 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h10 = ipu_gemm.matmul %h9, %w10 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h11 = ipu_gemm.matmul %h10, %w11 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h12 = ipu_gemm.matmul %h11, %w12 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h13 = ipu_gemm.matmul %h12, %w13 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h14 = ipu_gemm.matmul %h13, %w14 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    %h15 = ipu_gemm.matmul %h14, %w15 : tensor<64x512xf16>, tensor<512x512xf16> -> tensor<64x512xf16>
    return %h15 : tensor<64x512xf16>
  }
}
