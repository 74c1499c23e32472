// RUN: ipu-opt %s -split-input-file -ipu-assign-layouts -verify-diagnostics | FileCheck %s

// One value, two consumers wanting different layouts: %h stays where its
// producer left it for the first (the plan's A layout is C's) and takes
// exactly one relayout for the second. The activation arrives split by rows,
// which is the first plan's A layout; weights come from the host resident,
// each in its plan's B layout.
#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: func.func @two_layouts
  // CHECK-SAME: -> (tensor<8x8xf32, #[[ROWS:.*]]>, tensor<8x8xf32, #ipu_tile.layout<grid = [2, 2], base = 0, strides = [2, 1], replicas = 1, replica_stride = 0>>)
  // CHECK-NEXT: %[[X:.*]] = ipu_tile.from_host %arg0 : tensor<8x16xf32> -> tensor<8x16xf32, #[[ROWS]]>
  // CHECK-NEXT: %[[W1:.*]] = ipu_tile.from_host %arg1 {resident} : tensor<16x8xf32> -> tensor<16x8xf32, #ipu_tile.layout<grid = [1, 1], base = 0, strides = [0, 0], replicas = 4, replica_stride = 1>>
  // CHECK-NEXT: %[[W2:.*]] = ipu_tile.from_host %arg2 {resident}
  // CHECK-NEXT: %[[W3:.*]] = ipu_tile.from_host %arg3 {resident} : tensor<8x8xf32> -> tensor<8x8xf32, #ipu_tile.layout<grid = [1, 2], base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>>
  // CHECK-NEXT: %[[H:.*]] = ipu_gemm.matmul %[[X]], %[[W1]]
  // CHECK-SAME: -> tensor<8x8xf32, #[[ROWS]]>
  // CHECK-NEXT: %[[Y1:.*]] = ipu_gemm.matmul %[[H]], %[[W2]]
  // CHECK-NEXT: %[[HA:.*]] = ipu_tile.relayout %[[H]] : tensor<8x8xf32, #[[ROWS]]> -> tensor<8x8xf32, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>>
  // CHECK-NEXT: %[[Y2:.*]] = ipu_gemm.matmul %[[HA]], %[[W3]]
  // CHECK-NEXT: return %[[Y1]], %[[Y2]]
  // CHECK-NOT: ipu_tile.relayout
  func.func @two_layouts(%x: tensor<8x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x8xf32>, %w3: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %h = ipu_gemm.matmul %x, %w1 {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
    %y1 = ipu_gemm.matmul %h, %w2 {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %y2 = ipu_gemm.matmul %h, %w3 {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    return %y1, %y2 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// -----

// Consumers that want one layout share one relayout; an activation B is
// moved into its plan's weight class.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: func.func @shared_relayout
  // CHECK: %[[A:.*]] = ipu_tile.relayout %{{.*}} : tensor<8x16xf16, {{.*}}> -> tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>>
  // CHECK-NEXT: %[[C:.*]] = ipu_gemm.matmul %[[A]]
  // CHECK-NEXT: %[[D:.*]] = ipu_gemm.matmul %[[A]]
  // CHECK-NEXT: %[[CA:.*]] = ipu_tile.relayout %[[C]] :
  // CHECK-NEXT: %[[B:.*]] = ipu_tile.relayout %[[D]] in interleaved
  // CHECK-NEXT: ipu_gemm.matmul %[[CA]], %[[B]]
  func.func @shared_relayout(%a: tensor<8x16xf16>, %w: tensor<16x8xf16>) -> tensor<8x8xf32> {
    // expected-remark @+1 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=4 boundCycles=32 cycles=972}}
    %c = ipu_gemm.matmul %a, %w {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    %d = ipu_gemm.matmul %a, %w {plan = #ipu_gemm.plan<rows = 2, cols = 2, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    // expected-remark @+2 {{relayout of operand 0 of 'ipu_gemm.matmul' into standard: transfers=16 boundCycles=16 cycles=960}}
    // expected-remark @+1 {{relayout of operand 1 of 'ipu_gemm.matmul' into interleaved: transfers=16 boundCycles=64 cycles=1028}}
    %f = ipu_gemm.matmul %c, %d {plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = interleaved, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    return %f : tensor<8x8xf32>
  }
}

// -----

// A weight given as B^T (a PyTorch linear weight): a swapped plan stores
// B^T, which the host sends as it is; a normal plan stores B, which the host
// stream transposes, and the matmul then reads B as it is.
module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  // CHECK-LABEL: func.func @transposed_weight
  // CHECK: %[[BT:.*]] = ipu_tile.from_host %arg1 {resident} : tensor<8x16xf16> -> tensor<8x16xf16,
  // CHECK: %[[B:.*]] = ipu_tile.from_host %arg1 {resident, transpose} : tensor<8x16xf16> -> tensor<16x8xf16,
  // CHECK: ipu_gemm.matmul %{{.*}}, %[[BT]] {{{.*}}transpose_rhs}
  // CHECK: ipu_gemm.matmul %{{.*}}, %[[B]] {plan = {{[^}]*}}>} :
  func.func @transposed_weight(%a: tensor<8x16xf16>, %wt: tensor<8x16xf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %c = ipu_gemm.matmul %a, %wt {transpose_rhs, plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = swapped, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<8x16xf16> -> tensor<8x8xf32>
    %d = ipu_gemm.matmul %a, %wt {transpose_rhs, plan = #ipu_gemm.plan<rows = 4, cols = 1, inner = 1, orientation = normal, weights = standard, reduction = complete, staging = false, cycles = 10>}
        : tensor<8x16xf16>, tensor<8x16xf16> -> tensor<8x8xf32>
    return %c, %d : tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// -----

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  func.func @no_lowering(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{cannot lower 'math.exp' to tiles: the IPU compiler compiles linalg on tensors as torch-mlir}}
    %e = math.exp %a : tensor<8x8xf32>
    return %e : tensor<8x8xf32>
  }
}
