// Elementwise arith and math ops on whole tensors (`%y = math.exp %x :
// tensor<8x16xf32>`, as hand-written IR and some StableHLO-to-linalg paths
// write them) become linalg generics by upstream's elementwise-to-linalg
// conversion at the start of the import, then fuse and lower as every
// other elementwise op ('cannot lower 'arith.addf' to tiles: it implements
// no TileLowerableOpInterface' before). Each is checked op by op (--check)
// and against upstream MLIR's execution of the same module (--expect).
// RUN: rm -rf %t && split-file %s %t
// RUN: for case in chain:'<f4':8,16:'<f4':8,16 relu:'<f4':8,16 \
// RUN:             matmul-epilogue:'<f4':16,32:'<f4':32,64:'<f4':16,64 \
// RUN:             f64-round-trip:'<f4':8,16 images:'<f4':2,4,8,8:'<f4':2,4,8,8; do \
// RUN:   name=${case%%%%:*}; rest=${case#*:}; \
// RUN:   mkdir -p %t/$name/in %t/$name/ref; arg=0; \
// RUN:   while [ -n "$rest" ]; do descr=${rest%%%%:*}; rest=${rest#*:}; shape=${rest%%%%:*}; \
// RUN:     [ "$shape" = "$rest" ] && rest= || rest=${rest#*:}; \
// RUN:     %python %S/../Run/Inputs/npy.py write %t/$name/in/arg$arg.npy "$descr" $shape pattern || exit 1; \
// RUN:     arg=$((arg + 1)); done; \
// RUN:   ipu-opt %t/$name.mlir --ipu-compile="target=ipu21-16" -o %t/$name.lowered.mlir 2> /dev/null && \
// RUN:   ipu-translate --ipu-to-package %t/$name.lowered.mlir -o %t/$name.ipuexe && \
// RUN:   ipu-mlir-run %t/$name.mlir --inputs %t/$name/in --outputs %t/$name/ref > /dev/null && \
// RUN:   ipu-run %t/$name.ipuexe --check --quiet > %t/$name.check && \
// RUN:   ipu-run %t/$name.ipuexe --inputs %t/$name/in --expect %t/$name/ref --quiet > %t/$name.expect || exit 1; \
// RUN: done
// RUN: FileCheck %s --check-prefix=CHAIN-IR < %t/chain.lowered.mlir
// RUN: FileCheck %s --check-prefix=CHAIN < %t/chain.check
// RUN: FileCheck %s --check-prefix=CHAIN-EXPECT < %t/chain.expect
// RUN: FileCheck %s --check-prefix=RELU-IR < %t/relu.lowered.mlir
// RUN: FileCheck %s --check-prefix=RELU < %t/relu.check
// RUN: FileCheck %s --check-prefix=RELU-EXPECT < %t/relu.expect
// RUN: FileCheck %s --check-prefix=MATMUL < %t/matmul-epilogue.check
// RUN: FileCheck %s --check-prefix=MATMUL-EXPECT < %t/matmul-epilogue.expect
// RUN: FileCheck %s --check-prefix=F64 < %t/f64-round-trip.check
// RUN: FileCheck %s --check-prefix=F64-EXPECT < %t/f64-round-trip.expect
// RUN: FileCheck %s --check-prefix=IMAGES < %t/images.check
// RUN: FileCheck %s --check-prefix=IMAGES-EXPECT < %t/images.expect

// addf, mulf, exp and the truncf to f16: one fused kernel.
// CHAIN-IR: ipu_tile.kernel @ew0.kernel
// CHAIN-IR: arith.addf {{.*}} : f32
// CHAIN-IR-NEXT: arith.mulf {{.*}} : f32
// CHAIN-IR-NEXT: math.exp {{.*}} : f32
// CHAIN-IR-NEXT: arith.truncf {{.*}} : f32 to f16
// CHAIN-IR-NOT: ipu_tile.kernel
// CHAIN: checkpoint=0 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=128
// CHAIN: numericalTest=PASS
// CHAIN-EXPECT: expect result=0 {{.*}} type=f16 shape=(8, 16) {{.*}} mismatches=0 elementsCompared=128
// CHAIN-EXPECT: numericalTest=PASS

// The comparison's i1 tensor stays a scalar inside the one kernel.
// RELU-IR: arith.cmpf ogt, {{.*}} : f32
// RELU-IR-NEXT: arith.select {{.*}} : f32
// RELU: mismatches=0 elementsCompared=128
// RELU: numericalTest=PASS
// RELU-EXPECT: expect result=0 {{.*}} type=f32 shape=(8, 16) {{.*}} mismatches=0 elementsCompared=128
// RELU-EXPECT: numericalTest=PASS

// A matmul's bias, tanh and truncation written on the tensors.
// MATMUL: checkpoint=0 operation=matmul
// MATMUL: operation=elementwise {{.*}} mismatches=0 elementsCompared=1024
// MATMUL: numericalTest=PASS
// MATMUL-EXPECT: expect result=0 {{.*}} type=f16 shape=(16, 64) {{.*}} mismatches=0 elementsCompared=1024
// MATMUL-EXPECT: numericalTest=PASS

// F64: mismatches=0 elementsCompared=128
// F64: numericalTest=PASS
// F64-EXPECT: expect result=0 {{.*}} type=f32 shape=(8, 16) {{.*}} mismatches=0 elementsCompared=128
// F64-EXPECT: numericalTest=PASS

// IMAGES: numericalTest=PASS
// IMAGES-EXPECT: expect result=0 {{.*}} type=f16 shape=(2, 4, 8, 8) {{.*}} mismatches=0 elementsCompared=512
// IMAGES-EXPECT: numericalTest=PASS

//--- chain.mlir
func.func @chain(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xf16> {
  %s = arith.addf %x, %w : tensor<8x16xf32>
  %p = arith.mulf %s, %x : tensor<8x16xf32>
  %e = math.exp %p : tensor<8x16xf32>
  %y = arith.truncf %e : tensor<8x16xf32> to tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}

//--- relu.mlir
func.func @relu(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %z = arith.constant dense<0.0> : tensor<8x16xf32>
  %c = arith.cmpf ogt, %x, %z : tensor<8x16xf32>
  %y = arith.select %c, %x, %z : tensor<8x16xi1>, tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

//--- matmul-epilogue.mlir
func.func @matmul_epilogue(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<16x64xf32>) -> tensor<16x64xf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %s = arith.addf %m, %b : tensor<16x64xf32>
  %t = math.tanh %s : tensor<16x64xf32>
  %y = arith.truncf %t : tensor<16x64xf32> to tensor<16x64xf16>
  return %y : tensor<16x64xf16>
}

//--- f64-round-trip.mlir
// Computed in f32: the tiles have no f64.
func.func @f64_round_trip(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %d = arith.extf %x : tensor<8x16xf32> to tensor<8x16xf64>
  %e = math.exp %d : tensor<8x16xf64>
  %m = arith.mulf %e, %d : tensor<8x16xf64>
  %y = arith.truncf %m : tensor<8x16xf64> to tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

//--- images.mlir
// A rank-4 batch, compiled as a rank-4 elementwise generic is.
func.func @images(%x: tensor<2x4x8x8xf32>, %w: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf16> {
  %s = arith.addf %x, %w : tensor<2x4x8x8xf32>
  %e = math.exp %s : tensor<2x4x8x8xf32>
  %y = arith.truncf %e : tensor<2x4x8x8xf32> to tensor<2x4x8x8xf16>
  return %y : tensor<2x4x8x8xf16>
}
