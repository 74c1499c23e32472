// A program's data in a file beside its IR (--ipu-compile="data-file=...",
// --ipu-export-data): the frozen weight and every schedule's run table leave
// the IR for #ipu_tile.data blocks, and the package built from the short IR
// is byte for byte the package built from the full one. The data file is
// checked before it is used: missing, another compile's, damaged or
// truncated, it is refused with the reason; so are blocks the file does not
// hold and blocks without a file.
//
// RUN: rm -rf %t && mkdir -p %t/inline %t/data %t/in %t/ref
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" -o %t/inline/lowered.mlir 2> /dev/null
// RUN: ipu-opt %t/inline/lowered.mlir --ipu-export-data="file=%t/data/lowered.data minimum-bytes=0" -o %t/data/lowered.mlir
// RUN: FileCheck %s --input-file=%t/data/lowered.mlir
// RUN: cd %t/inline && ipu-translate --ipu-to-package lowered.mlir -o %t/inline.ipuexe
// RUN: cd %t/data && ipu-translate --ipu-to-package lowered.mlir -o %t/data.ipuexe
// RUN: cmp %t/inline.ipuexe %t/data.ipuexe
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg0.npy '<f4' 16,64 pattern
// RUN: %python %S/../Run/Inputs/npy.py write %t/in/arg1.npy '<f4' 64,64 pattern
// RUN: ipu-mlir-run %s --inputs %t/in --outputs %t/ref > /dev/null
// RUN: ipu-run %t/data.ipuexe --inputs %t/in --expect %t/ref --check --quiet | FileCheck %s --check-prefix=SIM
//
// The short IR reads back as it printed.
// RUN: ipu-opt %t/data/lowered.mlir | diff - %t/data/lowered.mlir
//
// The file is found as the IR names it (from here) or beside the IR (a
// copy of both elsewhere); with neither, both places are named.
// RUN: mkdir -p %t/moved && cp %t/data/lowered.mlir %t/data/lowered.data %t/moved/
// RUN: mv %t/data/lowered.data %t/kept.data
// RUN: cd %t/moved && ipu-translate --ipu-to-package lowered.mlir -o %t/moved.ipuexe
// RUN: cmp %t/inline.ipuexe %t/moved.ipuexe
// RUN: rm %t/moved/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/moved/lowered.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: cp %t/kept.data %t/data/lowered.data
//
// Another compile's file (the same size, one byte changed), a truncated one.
// RUN: %python -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[100] ^= 1; open(sys.argv[2], 'wb').write(b)" %t/kept.data %t/data/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/data/lowered.mlir 2>&1 | FileCheck %s --check-prefix=CHANGED
// RUN: head -c 64 %t/kept.data > %t/data/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/data/lowered.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
//
// What is not a regular file is refused before it is opened: a FIFO once
// blocked ipu-translate forever, a directory was reported as 2^63 - 1
// bytes. A 64 GB sparse file is refused on its size, unread.
// RUN: rm %t/data/lowered.data && mkfifo %t/data/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/data/lowered.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: rm %t/data/lowered.data && mkdir %t/data/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/data/lowered.mlir 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// RUN: rmdir %t/data/lowered.data && truncate -s 64G %t/data/lowered.data
// RUN: not ipu-translate --ipu-to-package %t/data/lowered.mlir 2>&1 | FileCheck %s --check-prefix=SPARSE
// RUN: rm %t/data/lowered.data
// RUN: cp %t/kept.data %t/data/lowered.data
//
// A run table forged with a matching checksum is still checked as the
// schedule's verifier checks one in the IR.
// RUN: %python %S/Inputs/forge-runs.py %t/data/lowered.mlir %t/forged.mlir %t/forged.data 4 7
// RUN: not ipu-translate --ipu-to-package %t/forged.mlir 2>&1 | FileCheck %s --check-prefix=FORGED-PAIRED
// RUN: %python %S/Inputs/forge-runs.py %t/data/lowered.mlir %t/forged.mlir %t/forged.data 0 100000
// RUN: not ipu-translate --ipu-to-package %t/forged.mlir 2>&1 | FileCheck %s --check-prefix=FORGED-TRANSFER
//
// A block past the file's end, a block at an odd offset, and blocks whose
// module names no file.
// RUN: sed -E 's/(#ipu_tile.data<tensor<64x4xf32> at )[0-9]+/\199968/' %t/data/lowered.mlir > %t/past-end.mlir
// RUN: not ipu-opt %t/past-end.mlir 2>&1 | FileCheck %s --check-prefix=PAST-END
// RUN: sed -E 's/(#ipu_tile.data<tensor<64x4xf32> at )[0-9]+/\165/' %t/data/lowered.mlir > %t/odd.mlir
// RUN: not ipu-opt %t/odd.mlir 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: sed -E 's/ipu_tile.data_file = #ipu_tile.data_file<[^>]*>, //' %t/data/lowered.mlir > %t/no-file.mlir
// RUN: not ipu-translate --ipu-to-package %t/no-file.mlir 2>&1 | FileCheck %s --check-prefix=NO-FILE
//
// A file the compiler cannot write, and a module that already has one.
// RUN: not ipu-opt %t/inline/lowered.mlir --ipu-export-data="file=%t/none/x.data" 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not ipu-opt %t/data/lowered.mlir --ipu-export-data="file=%t/again.data" 2>&1 | FileCheck %s --check-prefix=AGAIN

// CHECK: module attributes {ipu_tile.data_file = #ipu_tile.data_file<"{{.*}}lowered.data", bytes = {{[0-9]+}}, checksum = {{[0-9]+}}>
// CHECK: ipu_exchange.stream_in @{{.*}} {constant = #ipu_tile.data<tensor<64x4xf32> at {{[0-9]+}}>, weight}
// CHECK: schedule = #ipu_exchange.schedule<strategy = timed, {{.*}} runs = #ipu_tile.data<tensor<{{[0-9]+}}xi32> at {{[0-9]+}}>>
// CHECK-NOT: dense<"0x

// SIM: expected={{.*}} mismatches=0 numericalTest=PASS
// SIM: referencePrecision=f32 {{.*}} numericalTest=PASS

// MISSING: error: cannot find the data file the module names: no file '{{.*}}data/lowered.data'; no file '{{.*}}moved/lowered.data'
// CHANGED: error: cannot read the data file: '{{.*}}lowered.data' has checksum {{[0-9]+}}; the IR expects {{[0-9]+}} (a data file from another compile, or a damaged one)
// TRUNCATED: error: cannot read the data file: '{{.*}}lowered.data' holds 64 bytes; the IR expects {{[0-9]+}}
// FIFO: error: cannot read the data file: '{{.*}}lowered.data' is a FIFO, not a data file (a regular file, as --ipu-export-data writes one)
// DIRECTORY: error: cannot read the data file: '{{.*}}lowered.data' is a directory, not a data file
// SPARSE: error: cannot read the data file: '{{.*}}lowered.data' holds 68719476736 bytes; the IR expects {{[0-9]+}}
// FORGED-PAIRED: error: schedule in the data file: run 0 has paired = 7; it is 0 or 1
// FORGED-TRANSFER: error: schedule in the data file: run 0 names transfer 100000, the phase has {{[0-9]+}}
// PAST-END: error: data block of 1024 bytes at offset 99968 lies outside the data file's {{[0-9]+}} bytes
// ODD: error: a data block starts at a multiple of 64 bytes after the file's magic, not at 65
// NO-FILE: error: reads #ipu_tile.data<tensor<64x4xf32> at 64>, but its module names no data file ('ipu_tile.data_file')
// UNWRITABLE: error: cannot write the data file '{{.*}}none/x.data': No such file or directory
// AGAIN: error: the module already keeps its data in a file ('ipu_tile.data_file')

func.func @net(%x: tensor<16x64xf32>, %w1: tensor<64x64xf32>) -> tensor<16x4xf32> {
  %w2 = arith.constant dense<[[-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250], [0.000, -0.250, 0.375, 0.125], [0.375, 0.125, -0.125, -0.375], [-0.125, -0.375, 0.250, 0.000], [0.250, 0.000, -0.250, 0.375], [-0.250, 0.375, 0.125, -0.125], [0.125, -0.125, -0.375, 0.250], [-0.375, 0.250, 0.000, -0.250]]> : tensor<64x4xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %y = linalg.matmul ins(%t, %w2 : tensor<16x64xf32>, tensor<64x4xf32>) outs(%f2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}
