#!/usr/bin/env python3
"""Writes N layers as one scf.for over stacked weights, as an exporter that
keeps loops writes them: x[16, 64] -> h + tanh(h @ W[i] + B[i]) per layer.

  stacked-layers.py LAYERS (frozen | arguments)

`frozen` makes W [N, 64, 64] and B [N, 64] constants (the exporter froze
the parameters); `arguments` makes them function arguments. The values are
small multiples of 1/64, different in every layer.
"""
import sys


def values(shape):
    """Nested lists of `shape` ([layers, rows, cols] or [layers, cols]),
    distinct per position and layer."""
    def element(index):
        layer, r, c = (index[0], index[1], index[2]) if len(index) == 3 else (index[0], 7, index[1])
        return "%.6f" % (((3 * r + 5 * c + 11 * layer) % 9 - 4) / 64)

    def fill(prefix, dims):
        if not dims:
            return element(prefix)
        return "[" + ", ".join(fill(prefix + [i], dims[1:]) for i in range(dims[0])) + "]"
    return fill([], shape)


def main():
    layers, mode = int(sys.argv[1]), sys.argv[2]
    w_type = "tensor<%dx64x64xf32>" % layers
    b_type = "tensor<%dx64xf32>" % layers
    args = "%x: tensor<16x64xf32>"
    constants = ""
    if mode == "frozen":
        constants = ("  %%W = arith.constant dense<%s> : %s\n" % (values([layers, 64, 64]), w_type) +
                     "  %%B = arith.constant dense<%s> : %s\n" % (values([layers, 64]), b_type))
    else:
        args += ", %%W: %s, %%B: %s" % (w_type, b_type)
    print("""func.func @stacked(%s) -> tensor<16x64xf32> {
%s  %%zero = arith.constant 0.0 : f32
  %%c0 = arith.constant 0 : index
  %%c1 = arith.constant 1 : index
  %%cN = arith.constant %d : index
  %%empty = tensor.empty() : tensor<16x64xf32>
  %%filled = linalg.fill ins(%%zero : f32) outs(%%empty : tensor<16x64xf32>) -> tensor<16x64xf32>
  %%y = scf.for %%i = %%c0 to %%cN step %%c1 iter_args(%%h = %%x) -> (tensor<16x64xf32>) {
    %%w = tensor.extract_slice %%W[%%i, 0, 0] [1, 64, 64] [1, 1, 1] : %s to tensor<64x64xf32>
    %%b = tensor.extract_slice %%B[%%i, 0] [1, 64] [1, 1] : %s to tensor<64xf32>
    %%m = linalg.matmul ins(%%h, %%w : tensor<16x64xf32>, tensor<64x64xf32>)
        outs(%%filled : tensor<16x64xf32>) -> tensor<16x64xf32>
    %%a = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>,
                                           affine_map<(r, c) -> (c)>, affine_map<(r, c) -> (r, c)>],
                          iterator_types = ["parallel", "parallel"]}
        ins(%%h, %%m, %%b : tensor<16x64xf32>, tensor<16x64xf32>, tensor<64xf32>)
        outs(%%empty : tensor<16x64xf32>) {
    ^bb0(%%hv: f32, %%mv: f32, %%bv: f32, %%out: f32):
      %%s = arith.addf %%mv, %%bv : f32
      %%t = math.tanh %%s : f32
      %%r = arith.addf %%hv, %%t : f32
      linalg.yield %%r : f32
    } -> tensor<16x64xf32>
    scf.yield %%a : tensor<16x64xf32>
  }
  return %%y : tensor<16x64xf32>
}""" % (args, constants, layers, w_type, b_type))


if __name__ == "__main__":
    main()
