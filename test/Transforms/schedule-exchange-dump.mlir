// dump-dir writes each phase's transfers in the text form that
// `bench/run exchange --phase` reads: the tile count, then one transfer per
// line (source, words, destinations).
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: ipu-opt %s -ipu-place-storage -ipu-schedule-exchange="dump-dir=%t.dir" -o /dev/null
// RUN: FileCheck %s < %t.dir/gather.phase
// RUN: exchange-bench --phase %t.dir/gather.phase --name gather | FileCheck %s --check-prefix=BENCH
// RUN: not ipu-opt %s -ipu-place-storage -ipu-schedule-exchange="dump-dir=%t.dir/missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: tiles 4
// CHECK-NEXT: 0 16 0 1
// CHECK-NEXT: 1 16 0 1
// CHECK-NEXT: 2 16 2 3
// CHECK-NEXT: 3 16 2 3
// BENCH: bench=exchange case=gather tiles=4 transfers=4 words=64 bound=32 {{.*}}horizon=32 {{.*}}legal=true {{.*}}timedLocalCopyWords=64 {{.*}}timedLegal=true
// MISSING: error: cannot write phase to '{{.*}}missing/gather.phase'

module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-4">} {
  ipu_tile.program @p {
    ipu_tile.buffer @a : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
    ipu_tile.buffer @b : tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>> in standard
    ipu_exchange.phase @gather {
      ipu_exchange.copy @a to @b
    }
  }
}
