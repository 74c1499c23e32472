// A row reduction's result without its reduced dim ([..., R], as torch-mlir
// writes sum(dim=-1) and max(dim=-1)), returned directly or read by a later
// op. Its value is [..., R, 1] (a column); the reshape to [..., R] moves it
// into rows. An f16 or f8 column moves in f32 (each row's one element sits
// in a word of its own, and the exchange writes whole words) and is
// narrowed where it arrives. Each is checked op by op (--check) and
// against upstream MLIR's execution of the same module (--expect).
// RUN: rm -rf %t && split-file %s %t
// RUN: for case in sum:ipu21-4:'<f4':8,64 max-and-centred:ipu21-16:'<f4':16,32:'<f4':32,96 \
// RUN:             sum-rank3-f16:ipu21-16:'<f2':2,8,64 sum-plus-f16:ipu21-4:'<f2':8,64:'<f2':8 \
// RUN:             mean-keepdim-f16:ipu21-4:'<f2':8,64 flatten-f16:ipu21-16:'<f2':4,3; do \
// RUN:   name=${case%%%%:*}; rest=${case#*:}; target=${rest%%%%:*}; rest=${rest#*:}; \
// RUN:   mkdir -p %t/$name/in %t/$name/ref; arg=0; \
// RUN:   while [ -n "$rest" ]; do descr=${rest%%%%:*}; rest=${rest#*:}; shape=${rest%%%%:*}; \
// RUN:     [ "$shape" = "$rest" ] && rest= || rest=${rest#*:}; \
// RUN:     %python %S/../Run/Inputs/npy.py write %t/$name/in/arg$arg.npy "$descr" $shape pattern || exit 1; \
// RUN:     arg=$((arg + 1)); done; \
// RUN:   ipu-opt %t/$name.mlir --ipu-compile="target=$target" -o %t/$name.lowered.mlir 2> /dev/null && \
// RUN:   ipu-translate --ipu-to-package %t/$name.lowered.mlir -o %t/$name.ipuexe && \
// RUN:   ipu-mlir-run %t/$name.mlir --inputs %t/$name/in --outputs %t/$name/ref > /dev/null && \
// RUN:   ipu-run %t/$name.ipuexe --check --quiet > %t/$name.check && \
// RUN:   ipu-run %t/$name.ipuexe --inputs %t/$name/in --expect %t/$name/ref --quiet > %t/$name.expect || exit 1; \
// RUN: done
// RUN: FileCheck %s --check-prefix=SUM < %t/sum.check
// RUN: FileCheck %s --check-prefix=SUM-EXPECT < %t/sum.expect
// RUN: FileCheck %s --check-prefix=SUM-IR < %t/sum.lowered.mlir
// RUN: FileCheck %s --check-prefix=MAX < %t/max-and-centred.check
// RUN: FileCheck %s --check-prefix=MAX-EXPECT < %t/max-and-centred.expect
// RUN: FileCheck %s --check-prefix=RANK3 < %t/sum-rank3-f16.check
// RUN: FileCheck %s --check-prefix=RANK3-EXPECT < %t/sum-rank3-f16.expect
// RUN: FileCheck %s --check-prefix=RANK3-IR < %t/sum-rank3-f16.lowered.mlir
// RUN: FileCheck %s --check-prefix=PLUS < %t/sum-plus-f16.check
// RUN: FileCheck %s --check-prefix=PLUS-EXPECT < %t/sum-plus-f16.expect
// RUN: FileCheck %s --check-prefix=MEAN < %t/mean-keepdim-f16.check
// RUN: FileCheck %s --check-prefix=MEAN-EXPECT < %t/mean-keepdim-f16.expect
// RUN: FileCheck %s --check-prefix=MEAN-IR < %t/mean-keepdim-f16.lowered.mlir
// RUN: FileCheck %s --check-prefix=FLAT < %t/flatten-f16.check
// RUN: FileCheck %s --check-prefix=FLAT-EXPECT < %t/flatten-f16.expect

// The vector is one row, its columns in blocks of 4 (whole words of any
// element type): the 8 sums, two on each of 4 tiles, move to 2 tiles.
// SUM-IR: ipu_tile.buffer @permute0.out : tensor<1x8xf32, #ipu_tile.layout<grid = [1, 2], {{.*}}col_splits = [0, 4, 8]>>
// SUM-IR: ipu_exchange.copy @ew0.out to @permute0.out view [8, 1] permutation [0, 1]
// SUM-IR: ipu_exchange.stream_out @permute0.out to 0 {declared_shape = array<i64: 8>}
// SUM: checkpoint=0 operation=elementwise result=1 {{.*}} mismatches=0 elementsCompared=8
// SUM: checkpoint=1 operation=permute result=0 {{.*}} mismatches=0 elementsCompared=8
// SUM: numericalTest=PASS
// SUM-EXPECT: expect result=0 {{.*}} type=f32 shape=(8,) {{.*}} mismatches=0 elementsCompared=8
// SUM-EXPECT: numericalTest=PASS

// MAX: checkpoint=2 operation=permute result=0 {{.*}} mismatches=0 elementsCompared=16
// MAX: checkpoint=3 operation=elementwise result=1 {{.*}} mismatches=0 elementsCompared=1536
// MAX: numericalTest=PASS
// MAX-EXPECT: expect result=0 {{.*}} type=f32 shape=(16,) {{.*}} mismatches=0 elementsCompared=16
// MAX-EXPECT: expect result=1 {{.*}} shape=(16, 96) {{.*}} mismatches=0 elementsCompared=1536
// MAX-EXPECT: numericalTest=PASS

// The f32 accumulation moves, and one kernel narrows it where it arrives.
// RANK3-IR: ipu_tile.buffer @permute0.out : tensor<2x8xf32,
// RANK3-IR: ipu_tile.buffer @ew1.out : tensor<2x8xf16,
// RANK3-IR: ipu_exchange.copy @ew0.out to @permute0.out view [2, 8, 1] permutation [0, 1, 2]
// RANK3-IR: ipu_tile.compute_set @ew1 kernel "ew1.kernel" operands [@permute0.out, @ew1.out]
// RANK3-IR: ipu_exchange.stream_out @ew1.out to 0
// RANK3: checkpoint=1 operation=permute {{.*}} mismatches=0 elementsCompared=16
// RANK3: checkpoint=2 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=16
// RANK3: numericalTest=PASS
// RANK3-EXPECT: expect result=0 {{.*}} type=f16 shape=(2, 8) {{.*}} mismatches=0 elementsCompared=16
// RANK3-EXPECT: numericalTest=PASS

// PLUS: checkpoint=2 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=8
// PLUS: numericalTest=PASS
// PLUS-EXPECT: expect result=0 {{.*}} type=f16 shape=(8,) {{.*}} mismatches=0 elementsCompared=8
// PLUS-EXPECT: numericalTest=PASS

// An f16 column computed after the reduction is widened exactly (in the
// kernel that computes it) to move.
// MEAN-IR: ipu_tile.kernel @ew1.kernel
// MEAN-IR: arith.mulf {{.*}} : f16
// MEAN-IR-NEXT: arith.extf {{.*}} : f16 to f32
// MEAN-IR: ipu_exchange.copy @ew1.out to @permute0.out view [8, 1] permutation [0, 1]
// MEAN-IR: ipu_tile.compute_set @ew2 kernel "ew2.kernel" operands [@permute0.out, @ew2.out]
// MEAN: checkpoint=3 operation=elementwise result=0 {{.*}} mismatches=0 elementsCompared=8
// MEAN: numericalTest=PASS
// MEAN-EXPECT: expect result=0 {{.*}} type=f16 shape=(8,) {{.*}} mismatches=0 elementsCompared=8
// MEAN-EXPECT: numericalTest=PASS

// Any f16 rows that are not whole words regrouped move alike: [4, 3]
// flattened ('cannot permute ... a run of 3 f16 elements' before).
// FLAT: checkpoint=1 operation=permute {{.*}} mismatches=0 elementsCompared=12
// FLAT: numericalTest=PASS
// FLAT-EXPECT: expect result=0 {{.*}} type=f16 shape=(12,) {{.*}} mismatches=0 elementsCompared=12
// FLAT-EXPECT: numericalTest=PASS

//--- sum.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#row1 = affine_map<(d0, d1) -> (d0)>
func.func @sum(%a: tensor<8x64xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %si = linalg.fill ins(%z : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row1], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x64xf32>) outs(%si : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

//--- max-and-centred.mlir
// A row max of a matmul's result, returned and read by a later op.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row1 = affine_map<(d0, d1) -> (d0)>
func.func @max_and_centred(%x: tensor<16x32xf32>, %w: tensor<32x96xf32>) -> (tensor<16xf32>, tensor<16x96xf32>) {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x96xf32>) -> tensor<16x96xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x96xf32>) outs(%f : tensor<16x96xf32>) -> tensor<16x96xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row1], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<16x96xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %d = linalg.generic {indexing_maps = [#id, #row1, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %mx : tensor<16x96xf32>, tensor<16xf32>) outs(%e : tensor<16x96xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x96xf32>
  return %mx, %d : tensor<16xf32>, tensor<16x96xf32>
}

//--- sum-rank3-f16.mlir
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @sum_rank3(%a: tensor<2x8x64xf16>) -> tensor<2x8xf16> {
  %z = arith.constant 0.0 : f16
  %e1 = tensor.empty() : tensor<2x8xf16>
  %si = linalg.fill ins(%z : f16) outs(%e1 : tensor<2x8xf16>) -> tensor<2x8xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a : tensor<2x8x64xf16>) outs(%si : tensor<2x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %m = arith.addf %out, %in : f16
    linalg.yield %m : f16
  } -> tensor<2x8xf16>
  return %sum : tensor<2x8xf16>
}

//--- sum-plus-f16.mlir
// The f16 sums read by a later op as a vector, with a vector argument.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row1 = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
func.func @sum_plus(%a: tensor<8x64xf16>, %b: tensor<8xf16>) -> tensor<8xf16> {
  %z = arith.constant 0.0 : f16
  %e1 = tensor.empty() : tensor<8xf16>
  %si = linalg.fill ins(%z : f16) outs(%e1 : tensor<8xf16>) -> tensor<8xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row1], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x64xf16>) outs(%si : tensor<8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %m = arith.addf %out, %in : f16
    linalg.yield %m : f16
  } -> tensor<8xf16>
  %r = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%sum, %b : tensor<8xf16>, tensor<8xf16>) outs(%e1 : tensor<8xf16>) {
  ^bb0(%x: f16, %y: f16, %out: f16):
    %m = arith.addf %x, %y : f16
    linalg.yield %m : f16
  } -> tensor<8xf16>
  return %r : tensor<8xf16>
}

//--- mean-keepdim-f16.mlir
// torch-mlir's mean(dim=-1, keepdim=True) in f16, then flattened.
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
func.func @mean_keepdim(%a: tensor<8x64xf16>) -> tensor<8xf16> {
  %z = arith.constant 0.0 : f16
  %c = arith.constant 0.015625 : f16
  %e1 = tensor.empty() : tensor<8x1xf16>
  %si = linalg.fill ins(%z : f16) outs(%e1 : tensor<8x1xf16>) -> tensor<8x1xf16>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x64xf16>) outs(%si : tensor<8x1xf16>) {
  ^bb0(%in: f16, %out: f16):
    %m = arith.addf %out, %in : f16
    linalg.yield %m : f16
  } -> tensor<8x1xf16>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<8x1xf16>) outs(%e1 : tensor<8x1xf16>) {
  ^bb0(%in: f16, %out: f16):
    %m = arith.mulf %in, %c : f16
    linalg.yield %m : f16
  } -> tensor<8x1xf16>
  %r = tensor.collapse_shape %mean [[0, 1]] : tensor<8x1xf16> into tensor<8xf16>
  return %r : tensor<8xf16>
}

//--- flatten-f16.mlir
func.func @flatten(%a: tensor<4x3xf16>) -> tensor<12xf16> {
  %e = tensor.empty() : tensor<4x3xf16>
  %t = linalg.tanh ins(%a : tensor<4x3xf16>) outs(%e : tensor<4x3xf16>) -> tensor<4x3xf16>
  %r = tensor.collapse_shape %t [[0, 1]] : tensor<4x3xf16> into tensor<12xf16>
  return %r : tensor<12xf16>
}
