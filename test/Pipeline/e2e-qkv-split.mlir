// timm's q, k and v taken apart from a fused qkv projection (reshape,
// 5-D permute, unbind) on 16 tiles: each is a window of one permute of the
// projection, one exchange phase reading only its third; --check compares
// each with the host's window of the permuted view, exactly, and a
// scaled product of q and k^T.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" 2> /dev/null > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: ipu-translate --ipu-to-package %t.mlir -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check --quiet | FileCheck %s --check-prefix=SIM

// CHECK-COUNT-3: ipu_exchange.copy @arg0 to @{{.*}} view [1, 16, 3, 4, 16] permutation [2, 0, 3, 1, 4] offsets [{{[012]}}, 0, 0, 0, 0] sizes [1, 1, 4, 16, 16]

// SIM-DAG: operation=permute result={{[0-9]+}} exact maximumAbsoluteError=0 mismatches=0 elementsCompared=1024
// SIM-DAG: operation=matmul result=0 {{.*}} mismatches=0
// SIM: numericalTest=PASS

func.func @qkv_split(%qkv: tensor<1x16x192xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %v5 = tensor.expand_shape %qkv [[0], [1], [2, 3, 4]] output_shape [1, 16, 3, 4, 16] : tensor<1x16x192xf32> into tensor<1x16x3x4x16xf32>
  %e = tensor.empty() : tensor<3x1x4x16x16xf32>
  %p = linalg.transpose ins(%v5 : tensor<1x16x3x4x16xf32>) outs(%e : tensor<3x1x4x16x16xf32>) permutation = [2, 0, 3, 1, 4]
  %q = tensor.extract_slice %p[0, 0, 0, 0, 0] [1, 1, 4, 16, 16] [1, 1, 1, 1, 1] : tensor<3x1x4x16x16xf32> to tensor<1x4x16x16xf32>
  %k = tensor.extract_slice %p[1, 0, 0, 0, 0] [1, 1, 4, 16, 16] [1, 1, 1, 1, 1] : tensor<3x1x4x16x16xf32> to tensor<1x4x16x16xf32>
  %v = tensor.extract_slice %p[2, 0, 0, 0, 0] [1, 1, 4, 16, 16] [1, 1, 1, 1, 1] : tensor<3x1x4x16x16xf32> to tensor<1x4x16x16xf32>
  %ek = tensor.empty() : tensor<1x4x16x16xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x16x16xf32>) outs(%ek : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2]
  %qf = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
  %kf = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
  %ec = tensor.empty() : tensor<4x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%qf, %kf : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%f : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %r = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
  return %r, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>
}
