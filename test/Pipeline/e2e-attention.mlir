// Attention as torch-mlir writes HF SiglipAttention (eager): q, k, v
// projections, the heads split off by expand_shape / transpose (K's
// [0, 2, 3, 1] as the split and B^T), q k^T scaled, softmax in f32, times
// v, the heads merged, the output projection. Compiled for 16 tiles,
// packaged, simulated and checked: every projection, permute, reduction
// and product is a checkpoint.
// RUN: ipu-opt %ipu_src_root/examples/exporters/attention-torch-f32.mlir --ipu-compile="target=ipu21-16" 2> /dev/null > %t.two-heads.ir
// RUN: FileCheck %s --check-prefix=IR < %t.two-heads.ir
// RUN: ipu-translate --ipu-to-package %t.two-heads.ir -o %t.two-heads.ipuexe
// RUN: ipu-run %t.two-heads.ipuexe --check | FileCheck %s --check-prefix=TWO
// One head, and two in f16, as the workload generator writes them.
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part attention --tokens 8 --dim 8 --heads 1 --dtype f32 -o %t.one.mlir
// RUN: ipu-opt %t.one.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.one.ipuexe
// RUN: ipu-run %t.one.ipuexe --check | FileCheck %s --check-prefix=ONE
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part attention --tokens 8 --dim 16 --heads 2 -o %t.f16.mlir
// RUN: ipu-opt %t.f16.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.f16.ipuexe
// RUN: ipu-run %t.f16.ipuexe --check | FileCheck %s --check-prefix=F16
// A small encoder block: layer norm, attention, residual, layer norm, MLP,
// residual (HF SiglipEncoderLayer), as the generator writes it.
// RUN: %python %ipu_src_root/scripts/siglip-workload.py --part block --tokens 8 --dim 16 --heads 2 --hidden 32 -o %t.block.mlir
// RUN: ipu-opt %t.block.mlir --ipu-compile="target=ipu21-16" 2> /dev/null | ipu-translate --ipu-to-package -o %t.block.ipuexe
// RUN: ipu-run %t.block.ipuexe --check | FileCheck %s --check-prefix=BLOCK
// BLOCK: workload=siglip_block_f16_b1_t8_d16_a2_h32_n1
// BLOCK: numericalTest=PASS

// The head split is one phase from the projection's layout into the
// batched arrival layout (each head on tiles of its own); K's swap is B^T.
// IR: ipu_tile.kernel @ew3.kernel broadcasts ["full"] reduce max
// IR: ipu_exchange.phase @permute0
// IR-NEXT: ipu_exchange.copy @ew0.out to @permute0.out view [1, 8, 2, 8] permutation [0, 2, 1, 3]
// IR: ipu_tile.compute_set @mm3.partials kernel "gemm_t" operands [{{@permute0.out|@mm3.lhs}}, @mm3.rhs, @mm3.out]
// IR: ipu_exchange.copy @mm4.out to @permute3.out view [1, 2, 8, 8] permutation [0, 2, 1, 3]

// TWO: workload=attention
// TWO: checkpoint=2 operation=permute result=3 exact maximumAbsoluteError=0 mismatches=0 elementsCompared=128
// TWO: operation=elementwise {{.*}} mismatches=0 elementsCompared=16
// TWO: checkpoint=15 operation=permute result=16 exact maximumAbsoluteError=0 mismatches=0 elementsCompared=128
// TWO: numericalTest=PASS

// ONE: workload=siglip_attention_f32_b1_t8_d8_a1_n1
// ONE: numericalTest=PASS
// F16: workload=siglip_attention_f16_b1_t8_d16_a2_n1
// F16: numericalTest=PASS
