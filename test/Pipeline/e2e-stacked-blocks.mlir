// Stacked encoder blocks at 16 tiles, as the workload generator writes them
// (torch-mlir's export form). Three blocks fit only with gathered weights:
// each weight is stored once, its blocks' rows split over the tiles that
// use them, and gathered into the plan's layout by the phase before each
// GEMM. Four blocks of the second size fitted with a serial split of the
// last block's MLP until issue 45; in the 586,960 bytes a tile the user's
// stack leaves (162,080 standard) they no longer do. A stack that does not
// fit says how many of its blocks do, after the planner has checked its memory
// model by placing a copy of the program.
//
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part block --blocks 3 --tokens 256 --dim 128 --hidden 1024 --heads 2 -o %t.three.mlir
// RUN: ipu-opt %t.three.mlir --ipu-set-target="target=ipu21-16" --ipu-import-linalg --ipu-fuse-elementwise --ipu-plan-gemm="partials=any validate-storage=true" --ipu-assign-layouts 2> /dev/null | FileCheck %s --check-prefix=LAYOUT
// RUN: ipu-opt %t.three.mlir --ipu-compile="target=ipu21-16 partials=any" 2> /dev/null | ipu-translate --ipu-to-package -o %t.three.ipuexe
// RUN: ipu-run %t.three.ipuexe --check | FileCheck %s --check-prefix=CHECKED
//
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part block --blocks 4 --tokens 128 --dim 248 --hidden 1024 --heads 4 -o %t.four.mlir
// RUN: ipu-opt %t.four.mlir --ipu-compile="target=ipu21-16 partials=any" 2> %t.four.err | ipu-translate --ipu-to-package -o %t.four.ipuexe
// RUN: FileCheck %s --check-prefix=FOUR < %t.four.err
// RUN: ipu-run %t.four.ipuexe --check | FileCheck %s --check-prefix=CHECKED
// Five blocks of width 224 and MLP 912: five rounds plan again before
// the sixth placement fits; with four rounds, the last plans would never
// be placed and the compile would fail. (Four blocks of width 256 and MLP
// 960 did this until layer norm's and softmax's widened values were
// recomputed by their readers; they now fit at once. MLP 896 did until
// the exchange code packed after the kernel code.)
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part block --blocks 5 --tokens 128 --dim 224 --hidden 912 --heads 4 -o %t.six.mlir
// RUN: env IPU_LOG=info ipu-opt %t.six.mlir --ipu-compile="target=ipu21-16 partials=any" 2> %t.six.err | ipu-translate --ipu-to-package -o %t.six.ipuexe
// RUN: FileCheck %s --check-prefix=SIX < %t.six.err
// RUN: ipu-run %t.six.ipuexe --check | FileCheck %s --check-prefix=CHECKED
// SIX: storage round 4: placed a copy of the program in {{.*}}: overflowed, planning again
// SIX: storage round 5: placed a copy of the program in {{.*}}: fits
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part block --blocks 5 --tokens 128 --dim 256 --hidden 1024 --heads 4 -o %t.five.mlir
// RUN: not ipu-opt %t.five.mlir --ipu-compile="target=ipu21-16 partials=any" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIVE

// Layer norm's scale and shift (streamed first) stay resident in
// interleaved memory, replicated over the tiles of its rows. The first
// block's q projection: its weight streams into its home (four
// row parts of 32 per column block, one on each of the block's replica
// tiles), and a relayout before the matmul gathers it into the plan's
// layout, replicated over the 4 row blocks, in interleaved memory.
// LAYOUT: ipu_tile.from_host %arg1 in interleaved {resident} : tensor<128xf16>
// LAYOUT: %[[HOME:.*]] = ipu_tile.from_host %arg3 in interleaved {resident, transpose} : tensor<128x128xf16> -> tensor<128x128xf16, #ipu_tile.layout<grid = [4, 4], {{.*}}row_splits = [0, 32, 64, 96, 128], tile_map = [0 to 16]>>
// LAYOUT: %[[GATHERED:.*]] = ipu_tile.relayout %[[HOME]] in interleaved : {{.*}} -> tensor<128x128xf16, #ipu_tile.layout<grid = [1, 4], base = 0, strides = [0, 1], replicas = 4, replica_stride = 4>>
// LAYOUT-NEXT: ipu_gemm.matmul %{{.*}}, %[[GATHERED]] {{{.*}}plan = #ipu_gemm.plan<rows = 4, cols = 4, {{.*}}gathered = true>}

// CHECKED: numericalTest=PASS

// Four blocks (width 248): placing the program first shows more code and
// vertex state below the buffers than the plans counted, by more than
// overflowed: every plan holds that back. Then it shows the first blocks'
// fc2 A blocks overflowing tile 0, which the planner's even spread misses;
// each such fc2 alone is planned again with fewer transient bytes, and the
// four blocks run and check. (Width 240, which this case used until
// layer norm's and softmax's widened values were recomputed by their
// readers, now fits at the first placement.)
// FOUR: remark: planned again: placing its storage overflowed standard memory: {{.*}} of code and vertex state {{.*}}; the plans counted {{[0-9]+}} of them: they now hold back {{[0-9]+}} standard and 0 interleaved bytes per tile
// FOUR: remark: planned again: placing its storage overflowed standard memory: {{.*}} 'mm7.lhs' is matmul 7's (128x1024x248); its plan now takes at most {{[0-9]+}} transient bytes per tile
// FOUR-NOT: error:

// Five blocks' weights alone do not fit the 16 tiles.
// FIVE: error: cannot plan {{[0-9x]+}} matmul on 'ipu21-16': no plan fits tile memory
// FIVE: note: the function repeats a sequence of 8 matmuls 5 times (a stack of blocks): the first {{[0-9]+}} repeats fit
