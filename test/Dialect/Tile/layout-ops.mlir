// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s

#rows = #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>
#blocks = #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>
// CHECK-LABEL: func.func @layouts
// CHECK-NEXT: %[[A:.*]] = ipu_tile.from_host %arg0 : tensor<8x16xf16> -> tensor<8x16xf16, #{{.*}}>
// CHECK-NEXT: %[[B:.*]] = ipu_tile.from_host %arg1 in interleaved {resident, transpose} : tensor<16x8xf16> -> tensor<8x16xf16, #{{.*}}>
// CHECK-NEXT: ipu_tile.relayout %[[A]] in interleaved : tensor<8x16xf16, #{{.*}}> -> tensor<8x16xf16, #{{.*}}>
func.func @layouts(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> (tensor<8x16xf16, #blocks>, tensor<8x16xf16, #rows>) {
  %0 = ipu_tile.from_host %a : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
  %1 = ipu_tile.from_host %b in interleaved {resident, transpose} : tensor<16x8xf16> -> tensor<8x16xf16, #rows>
  %2 = ipu_tile.relayout %0 in interleaved : tensor<8x16xf16, #rows> -> tensor<8x16xf16, #blocks>
  return %2, %1 : tensor<8x16xf16, #blocks>, tensor<8x16xf16, #rows>
}
