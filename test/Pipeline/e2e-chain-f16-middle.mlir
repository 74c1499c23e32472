// A chain whose middle matmul accumulates in f16 (its outs are f16, as
// linalg writes it): the middle op's check counts its f16 roundings, and
// the next op reads the device's own f16 values. This failed the check
// before the tolerance followed the accumulation precision.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16" | ipu-translate --ipu-to-package -o %t.ipuexe
// RUN: ipu-run %t.ipuexe --check | FileCheck %s
// CHECK: checkpoint=0 operation=matmul result=1 partials=f32 {{.*}}mismatches=0
// CHECK: checkpoint=1 operation=matmul result=2 partials=f16 {{.*}}mismatches=0
// CHECK: checkpoint=2 operation=matmul result=0 partials=f32 {{.*}}mismatches=0
// CHECK: numericalTest=PASS
func.func @chain(%x: tensor<64x512xf16>, %w1: tensor<512x256xf16>,
                 %w2: tensor<256x128xf16>, %w3: tensor<128x64xf16>) -> tensor<64x64xf32> {
  %e1 = tensor.empty() : tensor<64x256xf32>
  %h1 = linalg.matmul ins(%x, %w1 : tensor<64x512xf16>, tensor<512x256xf16>)
                      outs(%e1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %h1h = arith.truncf %h1 : tensor<64x256xf32> to tensor<64x256xf16>
  %e2 = tensor.empty() : tensor<64x128xf16>
  %h2 = linalg.matmul ins(%h1h, %w2 : tensor<64x256xf16>, tensor<256x128xf16>)
                      outs(%e2 : tensor<64x128xf16>) -> tensor<64x128xf16>
  %e3 = tensor.empty() : tensor<64x64xf32>
  %y = linalg.matmul ins(%h2, %w3 : tensor<64x128xf16>, tensor<128x64xf16>)
                     outs(%e3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
