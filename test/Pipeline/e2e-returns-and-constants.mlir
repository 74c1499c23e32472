// Valid programs that once failed: a value returned twice, a returned value
// that later ops also read (directly and through a fused epilogue), and
// kernels whose result is a constant (once "undefined symbol: memset" at
// link). Each compiles for 16 tiles, runs and PASSes; every result is
// compared (a repeated result exactly against the first, as an identity
// permute).
// RUN: split-file %s %t
// RUN: ipu-opt %t/twice.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/twice.ipuexe
// RUN: ipu-run %t/twice.ipuexe --check --quiet | FileCheck %s --check-prefix=TWICE
// RUN: ipu-opt %t/later.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/later.ipuexe
// RUN: ipu-run %t/later.ipuexe --check --quiet | FileCheck %s --check-prefix=LATER
// RUN: ipu-opt %t/constants.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t/constants.ipuexe
// RUN: ipu-run %t/constants.ipuexe --check --quiet | FileCheck %s --check-prefix=CONSTANTS

// TWICE: checkpoint=0 operation=matmul result=2 {{.*}} mismatches=0
// TWICE: checkpoint=1 operation=permute result=0 exact maximumAbsoluteError=0 mismatches=0 elementsCompared=512
// TWICE: checkpoint=2 operation=permute result=1 exact maximumAbsoluteError=0 mismatches=0 elementsCompared=512
// TWICE: numericalTest=PASS elementsCompared=1536

// LATER: numericalTest=PASS elementsCompared=1536

// Every element is the constant (the largest error over all 1024 is 0).
// %zero and %captured import as the same op: computed once, returned as
// results 0 and 2, and result 0 is checked as an exact copy of result 2.
// CONSTANTS: checkpoint=0 operation=elementwise result=2 {{.*}} maximumAbsoluteError=0 mismatches=0 elementsCompared=1024 {{.*}} worstDevice=0 worstReference=0
// CONSTANTS: checkpoint=1 operation=elementwise result=1 {{.*}} maximumAbsoluteError=0 mismatches=0 elementsCompared=1024 {{.*}} worstDevice=1.5 worstReference=1.5
// CONSTANTS: checkpoint=2 operation=elementwise result=3 {{.*}} maximumAbsoluteError=0 mismatches=0 elementsCompared=1024 {{.*}} worstDevice=0 worstReference=0
// CONSTANTS: checkpoint=3 operation=elementwise result=4 {{.*}} maximumAbsoluteError=0 mismatches=0 elementsCompared=1024 {{.*}} worstDevice=-2 worstReference=-2
// CONSTANTS: checkpoint=4 operation=permute result=0 exact maximumAbsoluteError=0 mismatches=0 elementsCompared=1024
// CONSTANTS: numericalTest=PASS elementsCompared=5120

//--- twice.mlir
func.func @twice(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y, %y, %y : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

//--- later.mlir
// %y is returned, read by a later matmul and by a fused bias epilogue; %g
// is returned and read by a later matmul too.
func.func @later(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %v: tensor<32x16xf32>) -> (tensor<16x16xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %m = arith.addf %in, %bb : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %u = linalg.matmul ins(%y, %v : tensor<16x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %t = linalg.matmul ins(%g, %v : tensor<16x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %u, %y, %g, %t : tensor<16x16xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x16xf32>
}

//--- constants.mlir
// Every form of a constant result: 0.0 defined in the body, a non-zero
// constant, a constant captured from outside, select on cmpf false, and an
// f16 constant.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @constants(%x: tensor<16x64xf32>, %h: tensor<16x64xf16>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf16>) {
  %outside = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %eh = tensor.empty() : tensor<16x64xf16>
  %zero = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 0.000000e+00 : f32
    linalg.yield %c : f32
  } -> tensor<16x64xf32>
  %other = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.500000e+00 : f32
    linalg.yield %c : f32
  } -> tensor<16x64xf32>
  %captured = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %outside : f32
  } -> tensor<16x64xf32>
  %selected = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf false, %in, %in : f32
    %c = arith.constant 0.000000e+00 : f32
    %s = arith.select %p, %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %half = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<16x64xf16>) outs(%eh : tensor<16x64xf16>) {
  ^bb0(%in: f16, %out: f16):
    %c = arith.constant -2.000000e+00 : f16
    linalg.yield %c : f16
  } -> tensor<16x64xf16>
  return %zero, %other, %captured, %selected, %half : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf16>
}
