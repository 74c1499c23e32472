// A batch of two sequences, [B, S, D] as an nn.TransformerEncoder export
// (batch_first) writes it, through a linear layer on rows that fold the
// batch in, then tanh. At rank 3 the leading dim may be a batch, the heads
// of a batched matmul or a sequence-first encoder's tokens, so
// `images=auto` computes it together and counts one image (a count of 2
// could as well be 16 heads or 729 tokens, an images/s many times too
// high), unless the exporter marked the batch dimension (below).
// images=sequence says it is a batch: it runs one image after
// another, two runs of one image each, and images/s counts both.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 2,4,8 flat
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t/together.ipuexe
// RUN: ipu-run %t/together.ipuexe --inputs %t/in --check --quiet | FileCheck %s --check-prefix=TOGETHER
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 images=sequence" | ipu-translate --ipu-to-package -o %t/sequence.ipuexe
// RUN: ipu-run %t/sequence.ipuexe --inputs %t/in --check --quiet | FileCheck %s --check-prefix=SEQUENCE
// The exporter marks the batch's dimension (ipu_tile.batch_dim, as
// python -m ipu_export writes it): computed together, the batch counts its
// two images, and the stream carries the mark into the package.
// RUN: sed 's/%%x: tensor<2x4x8xf32>)/%%x: tensor<2x4x8xf32> {ipu_tile.batch_dim = 0 : i64})/' %s > %t/marked.mlir
// RUN: ipu-opt %t/marked.mlir --ipu-compile="target=ipu21-16" > %t/marked.lowered.mlir
// RUN: FileCheck %s --input-file=%t/marked.lowered.mlir --check-prefix=MARKED-IR
// RUN: ipu-translate --ipu-to-package %t/marked.lowered.mlir -o %t/marked.ipuexe
// RUN: ipu-run %t/marked.ipuexe --inputs %t/in --check --quiet | FileCheck %s --check-prefix=MARKED

// TOGETHER: batch images=1 runs=1 deviceCyclesPerRun=[[PER:[1-9][0-9]*]] deviceCyclesPerImage=[[PER]] {{.*}} imageLinkBytes=384 {{.*}} sequential=false imagesCountedBy=unmarked
// TOGETHER: numericalTest=PASS
// SEQUENCE: batch images=2 runs=2 deviceCyclesPerRun=[[PER:[1-9][0-9]*]] deviceCyclesPerImage=[[PER]] {{.*}} imageLinkBytes=384 {{.*}} sequential=true
// SEQUENCE: numericalTest=PASS
// MARKED-IR: ipu_exchange.stream_in @arg0 from 0 {batch_dim = 0 : i64
// MARKED: batch images=2 runs=1 {{.*}} sequential=false imagesCountedBy=batchDim
// MARKED: numericalTest=PASS

func.func @encoder(%x: tensor<2x4x8xf32>) -> tensor<2x4x4xf32> {
  %w = arith.constant dense<[[-0.375, 0.25, -0.25, 0.375], [-0.5, 0.125, -0.375, 0.25], [0.5, 0.0, -0.5, 0.125], [0.375, -0.125, 0.5, 0.0], [0.25, -0.25, 0.375, -0.125], [0.125, -0.375, 0.25, -0.25], [0.0, -0.5, 0.125, -0.375], [-0.125, 0.5, 0.0, -0.5]]> : tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %ce = tensor.empty() : tensor<8x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm = linalg.matmul ins(%rows, %w : tensor<8x8xf32>, tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %e = tensor.empty() : tensor<2x4x4xf32>
  %t = linalg.tanh ins(%y : tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %t : tensor<2x4x4xf32>
}
