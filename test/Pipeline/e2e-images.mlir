// A batch of two images ([B, C, H, W], as exporters write pixels) through a
// linear layer on rows that fold the images in, a position embedding the
// same for every image, and tanh. `images=auto` compiles one image and runs
// it once per image: the package says `images = 2`, ipu-run reads and
// writes the batch in the function's shapes, and the result matches
// upstream MLIR's execution of the batched module, as it does compiled
// with the batch together.
// RUN: rm -rf %t && mkdir -p %t/in %t/ref %t/out
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t/lowered.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t/lowered.mlir
// RUN: ipu-translate --ipu-to-package %t/lowered.mlir -o %t/images.ipuexe
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 2,3,4,8 flat
// RUN: ipu-mlir-run %s --inputs %t/in --outputs %t/ref > /dev/null
// RUN: ipu-run %t/images.ipuexe --inputs %t/in --expect %t/ref --check --outputs %t/out --quiet | FileCheck %s --check-prefix=SIM
// RUN: %python %S/../Run/Inputs/npy.py header %t/out/result0.npy | FileCheck %s --check-prefix=OUT
// Every image is checked on its own inputs: image 0's input corrupted
// fails (this passed, only the last image being checked).
// RUN: not ipu-run %t/images.ipuexe --inputs %t/in --check --corrupt-input 0:3 --quiet | FileCheck %s --check-prefix=IMAGE0
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 images=together" | ipu-translate --ipu-to-package -o %t/together.ipuexe
// RUN: ipu-run %t/together.ipuexe --inputs %t/in --expect %t/ref --quiet | FileCheck %s --check-prefix=TOGETHER
// RUN: ipu-run %t/together.ipuexe --compare %t/images.ipuexe --quiet | FileCheck %s --check-prefix=COMPARE

// REMARK: remark: runs the batch of 2 images one after another: images=2
// IR: ipu_tile.program @images attributes {{[{].*}}images = 2 : i64
// IR: ipu_tile.buffer @arg0 : tensor<12x8xf32
// The batch line: device cycles per image apart from the host link's (each
// image's input and result, each byte once), and no bare `cycles=`.
// SIM: batch images=2 runs=2 deviceCyclesPerRun=[[PER:[1-9][0-9]*]] deviceCyclesPerImage=[[PER]] imageLinkCyclesPerImage={{[1-9][0-9]*}} imageFanOutCyclesPerImage=0 cyclesPerImageWithLink={{[1-9][0-9]*}} deviceCycles={{[1-9][0-9]*}} imageLinkCycles={{[1-9][0-9]*}} imageLinkBytes=2304 imageFanOutCycles=0 imageFanOutBytes=0 {{.*}} imagesPerSecond={{[0-9.]+}} imagesPerSecondPcieBound={{[0-9.]+}} imagesPerSecondDeviceOnly={{[0-9.]+}} {{.*}} sequential=true
// SIM: expect result=0 {{.*}} shape=(2, 12, 16) {{.*}} mismatches=0
// SIM: expected={{.*}} numericalTest=PASS
// SIM: checkpoint=0 {{.*}} mismatches=0 {{.*}} image=0
// SIM: checkpoint=0 {{.*}} mismatches=0 {{.*}} image=1
// SIM: referencePrecision=f32 {{.*}} numericalTest=PASS {{.*}} imagesChecked=2 worstImage={{[01]}}
// IMAGE0: checkpoint=0 {{.*}} mismatches={{[1-9][0-9]*}} {{.*}} image=0
// IMAGE0: checkpoint=0 {{.*}} mismatches=0 {{.*}} image=1
// IMAGE0: referencePrecision=f32 {{.*}} numericalTest=FAIL {{.*}} imagesChecked=2 worstImage=0
// OUT: shape=(2, 12, 16)
// Computed together, one run holds both images.
// TOGETHER: batch images=2 runs=1 {{.*}} sequential=false
// TOGETHER: expected={{.*}} numericalTest=PASS
// A batch compares by its first image.
// COMPARE: compare package={{.*}}together.ipuexe other={{.*}}images.ipuexe cycles={{[1-9][0-9]*}} otherCycles={{[1-9][0-9]*}}

func.func @images(%x: tensor<2x3x4x8xf32>) -> tensor<2x12x16xf32> {
  %w = arith.constant dense<[[-0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0], [-0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125], [0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25], [0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375], [0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5], [0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5], [0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375], [-0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25, -0.25, 0.375, -0.125, 0.5, 0.0, -0.5, 0.125, -0.375, 0.25]]> : tensor<8x16xf32>
  %pe = arith.constant dense<[[[-0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25], [-0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125], [-0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0], [0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125], [0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25], [0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375], [0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375], [-0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25], [-0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125], [-0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0], [0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125], [0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25, 0.125, -0.375, 0.0, 0.375, -0.125, 0.25, -0.25]]]> : tensor<1x12x16xf32>
  %zero = arith.constant 0.0 : f32
  %rows = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<2x3x4x8xf32> into tensor<24x8xf32>
  %ce = tensor.empty() : tensor<24x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<24x16xf32>) -> tensor<24x16xf32>
  %mm = linalg.matmul ins(%rows, %w : tensor<24x8xf32>, tensor<8x16xf32>) outs(%c : tensor<24x16xf32>) -> tensor<24x16xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 12, 16] : tensor<24x16xf32> into tensor<2x12x16xf32>
  %e = tensor.empty() : tensor<2x12x16xf32>
  %pb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pe : tensor<1x12x16xf32>) outs(%e : tensor<2x12x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x12x16xf32>
  %e2 = tensor.empty() : tensor<2x12x16xf32>
  %s = linalg.add ins(%y, %pb : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%e2 : tensor<2x12x16xf32>) -> tensor<2x12x16xf32>
  %t = linalg.tanh ins(%s : tensor<2x12x16xf32>) outs(%e2 : tensor<2x12x16xf32>) -> tensor<2x12x16xf32>
  return %t : tensor<2x12x16xf32>
}
