// RUN: ipu-opt %s --ipu-separate-images -split-input-file -verify-diagnostics | FileCheck %s

// A batch of 2 as exporters write a patch embedding and a linear layer: the
// images fold into the matmul's rows ([2 * 4, 8]) and come out again; a
// position embedding broadcast over the batch is the same for each image.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%{{.*}}: tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
// CHECK-SAME: ipu.images = 2 : i64
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x8xf32>) outs(%{{.*}} : tensor<1x4x8xf32>)
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x4x8xf32> into tensor<4x8xf32>
// CHECK: linalg.fill {{.*}} -> tensor<4x16xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) outs({{.*}} : tensor<4x16xf32>)
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pe = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// expected-remark @below {{runs the batch of 2 images one after another: images=2 batchedValues=10}}
func.func @linear(%x: tensor<2x4x8xf32>) -> tensor<2x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<8x16xf32>
  %p = arith.constant dense<0.25> : tensor<1x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8xf32>
  %pb = linalg.generic {indexing_maps = [#pe, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x8xf32>
  %e2 = tensor.empty() : tensor<2x4x8xf32>
  %y = linalg.add ins(%x, %pb : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e2 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %rows = tensor.collapse_shape %y [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %ce = tensor.empty() : tensor<8x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<8x16xf32>) -> tensor<8x16xf32>
  %mm = linalg.matmul ins(%rows, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// A mean over the batch mixes images: left as it is.
// CHECK-LABEL: func.func @mean
// CHECK-SAME: (%{{.*}}: tensor<2x4xf32>) -> tensor<4xf32>
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: 'linalg.generic'}}
func.func @mean(%x: tensor<2x4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%c : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %t = arith.addf %a, %out : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A transpose that moves the images off the leading dim of the result.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: result 0 does not hold the images one after another along its leading dim}}
func.func @transposed(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) permutation = [1, 0]
  return %t : tensor<4x2xf32>
}

// -----

// A collapse that puts another dim outside the images interleaves them.
// CHECK-LABEL: func.func @interleaved
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: 'tensor.collapse_shape'}}
func.func @interleaved(%x: tensor<2x4xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) permutation = [1, 0]
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  return %f : tensor<8xf32>
}

// -----

// A weight with a row per image is read image by image: not the same for
// every image.
// CHECK-LABEL: func.func @per_image_weight
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: 'linalg.add'}}
func.func @per_image_weight(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.add ins(%x, %w : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// One tensor.empty shared by an op of the batch and one of a weight.
// CHECK-LABEL: func.func @shared_empty
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: 'linalg.exp'}}
func.func @shared_empty(%x: tensor<2x4xf32>, %w: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.exp ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %v = linalg.exp ins(%c : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.add ins(%y, %w : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// Arguments of different leading dims are no batch.
// CHECK-LABEL: func.func @two_lengths
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch together: its arguments' leading dims differ}}
func.func @two_lengths(%a: tensor<2x4xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  return %a : tensor<2x4xf32>
}

// -----

// A body that reads its position along the images (an iota over the rows
// of every image) depends on more than the image's own values.
// CHECK-LABEL: func.func @positions
// CHECK-NOT: ipu.images
// expected-remark @below {{keeps the batch of 2 images together: 'linalg.generic'}}
func.func @positions(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %s = arith.addf %a, %f : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A weight broadcast over the images and computed on (the pooling head's
// query) holds the same block for every image: it shrinks with them.
// CHECK-LABEL: func.func @query
// CHECK-SAME: (%{{.*}}: tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
// CHECK: linalg.exp ins(%{{.*}} : tensor<3x4xf32>)
// expected-remark @below {{runs the batch of 2 images one after another: images=2}}
func.func @query(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %probe = arith.constant dense<[[0.5, 0.25, -0.5, 1.0]]> : tensor<1x4xf32>
  %e = tensor.empty() : tensor<6x4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%probe : tensor<1x4xf32>) outs(%e : tensor<6x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<6x4xf32>
  %e2 = tensor.empty() : tensor<6x4xf32>
  %qe = linalg.exp ins(%q : tensor<6x4xf32>) outs(%e2 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %q3 = tensor.expand_shape %qe [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %e3 = tensor.empty() : tensor<2x3x4xf32>
  %y = linalg.add ins(%x, %q3 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%e3 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A splat of the batch's shape (SDPA's zeros for wholly masked rows) holds
// the same block for every image: it shrinks to one image's share.
// CHECK-LABEL: func.func @splat
// CHECK: arith.constant dense<0.000000e+00> : tensor<1x4x4xf32>
// CHECK: linalg.max ins(%{{.*}}, %{{.*}} : tensor<1x4x4xf32>, tensor<1x4x4xf32>)
// expected-remark @below {{runs the batch of 2 images one after another: images=2}}
func.func @splat(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %zeros = arith.constant dense<0.0> : tensor<2x4x4xf32>
  %e = tensor.empty() : tensor<2x4x4xf32>
  %y = linalg.max ins(%x, %zeros : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}
