#!/usr/bin/env python3
"""Property test of ipu-mlir-run's index checks: a slice whose offset and
stride are read from the data is run (extract_slice and insert_slice of a
64-element tensor) for random and boundary offsets and strides, and each
run must be refused exactly when some element falls outside [0, 64), and
otherwise hold the elements Python's own indexing gives.

  slice_bounds.py IPU_MLIR_RUN WORKDIR [SEED]
"""

import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import npy  # noqa: E402

DIM = 64
MODULE = """
func.func @main(%%p: tensor<2xf32>) -> (tensor<%(S)dxf32>, tensor<%(D)dxf32>) {
  %%c0 = arith.constant 0 : index
  %%c1 = arith.constant 1 : index
  %%of = tensor.extract %%p[%%c0] : tensor<2xf32>
  %%tf = tensor.extract %%p[%%c1] : tensor<2xf32>
  %%oi = arith.fptosi %%of : f32 to i64
  %%ti = arith.fptosi %%tf : f32 to i64
  %%o = arith.index_cast %%oi : i64 to index
  %%t = arith.index_cast %%ti : i64 to index
  %%src = arith.constant dense<[%(SOURCE)s]> : tensor<%(D)dxf32>
  %%s = tensor.extract_slice %%src[%%o] [%(S)d] [%%t] : tensor<%(D)dxf32> to tensor<%(S)dxf32>
  %%new = arith.constant dense<[%(NEW)s]> : tensor<%(S)dxf32>
  %%w = tensor.insert_slice %%new into %%src[%%o] [%(S)d] [%%t] : tensor<%(S)dxf32> into tensor<%(D)dxf32>
  return %%s, %%w : tensor<%(S)dxf32>, tensor<%(D)dxf32>
}
"""


def cases(rng):
    edges = [-2**62, -2**40, -65, -64, -1, 0, 1, 2, 15, 16, 21, 31, 32, 62, 63, 64,
             65, 2**31, 2**40, 2**62]
    for _ in range(14):
        yield rng.choice(edges), rng.choice(edges)
    for _ in range(14):
        yield rng.randint(-5, 70), rng.randint(-3, 20)


def main(argv):
    tool, work = argv[1], argv[2]
    seed = int(argv[3]) if len(argv) > 3 else 44
    rng = random.Random(seed)
    source = [float(i) for i in range(DIM)]
    runs = inside = refused = 0
    for size in (1, 2, 5):
        new = [100.0 + i for i in range(size)]
        path = os.path.join(work, "slice%d.mlir" % size)
        with open(path, "w") as out:
            out.write(MODULE % {"S": size, "D": DIM,
                                "SOURCE": ", ".join("%.1f" % v for v in source),
                                "NEW": ", ".join("%.1f" % v for v in new)})
        for offset, stride in cases(rng):
            runs += 1
            inputs, outputs = os.path.join(work, "in"), os.path.join(work, "out")
            os.makedirs(inputs, exist_ok=True)
            npy.write(os.path.join(inputs, "arg0.npy"), "<f4", [2], None, 1, False,
                      [float(offset), float(stride)])
            run = subprocess.run([tool, path, "--inputs", inputs, "--outputs", outputs],
                                 capture_output=True, text=True)
            where = "size=%d offset=%d stride=%d seed=%d" % (size, offset, stride, seed)
            positions = [offset + i * stride for i in range(size)]
            fits = all(0 <= p < DIM for p in positions) and (size == 1 or stride >= 0)
            if not fits:
                refused += 1
                if run.returncode != 1 or "is out of bounds" not in run.stdout or \
                        "a failed cf.assert" not in run.stderr:
                    sys.exit("not refused (rc %d): %s\n%s%s" %
                             (run.returncode, where, run.stdout, run.stderr))
                continue
            inside += 1
            if run.returncode != 0:
                sys.exit("refused in bounds (rc %d): %s\n%s%s" %
                         (run.returncode, where, run.stdout, run.stderr))
            extracted = npy.read(os.path.join(outputs, "result0.npy"))[3]
            if list(extracted) != [source[p] for p in positions]:
                sys.exit("extract_slice read %s: %s" % (list(extracted), where))
            written = list(npy.read(os.path.join(outputs, "result1.npy"))[3])
            expected = list(source)
            for p, v in zip(positions, new):
                expected[p] = v
            # A zero stride writes one place several times, in no set order.
            if (size == 1 or stride > 0) and written != expected:
                sys.exit("insert_slice wrote %s: %s" % (written, where))
    print("slice-bounds: %d runs, %d in bounds and as Python indexes, %d refused "
          "(seed %d)" % (runs, inside, refused, seed))


if __name__ == "__main__":
    main(sys.argv)
