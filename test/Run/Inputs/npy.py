#!/usr/bin/env python3
"""Writes and reads .npy files with the standard library only (no numpy),
for the lit tests of ipu-run --inputs and --outputs.

  npy.py write PATH DESCR SHAPE FILL [--version 2] [--fortran]
      SHAPE is "96,128" ("" for 0-d); DESCR '<f4', '<f2', '|u1' or '<f8';
      FILL is zeros, ones, pattern (small values exact in every float type:
      ((3 * row + 5 * col) % 7 - 3) / 8 over the last two dimensions),
      value=X (every element X, rounded to DESCR's type) or,
      for '|u1', f8bits (finite f8 bit patterns of both formats).
  npy.py header PATH
      Checks the file as numpy's reader does (magic, version, the header a
      Python dict literal, data length) and prints
      "header: version=1.0 descr='<f4' fortran_order=False shape=(96, 64)
      aligned=True data=24576".
  npy.py zeros PATH
      "zeros: all N" when every element is zero, else how many are not.
  npy.py matmul A B C
      C must be A @ B exactly (A and B from `pattern`, whose products and
      sums are exact in f32): "matmul: N elements match".
  npy.py product A B OUT
      Writes A @ B (2-D) to OUT as '<f4': what a framework would compute,
      exact for `pattern` inputs.
  npy.py set PATH INDEX VALUE
      Sets the element of flat INDEX to VALUE (a Python float: "inf",
      "-inf", "nan", "0.7"), keeping the header.
  npy.py patch-embedding X W B Y N,C,H,W F,KH,KW [TOLERANCE]
      Y must be PyTorch's Conv2d(stride=kernel)(X) with filters W [F, C, KH,
      KW] and bias B [F], flattened and transposed to [N, patches, F], within
      TOLERANCE (default 0: exact, as f32 is on `flat` inputs). The files
      hold the elements in C order; their shapes are not read (a package
      may take an argument regrouped): "patch-embedding: N elements match,
      largest error E".
"""

import ast
import struct
import sys

FORMATS = {"<f4": "f", "<f2": "e", "|u1": "B", "<f8": "d"}
MAGIC = b"\x93NUMPY"


def elements(shape):
    count = 1
    for dim in shape:
        count *= dim
    return count


def fill_values(descr, shape, fill):
    rows = shape[-2] if len(shape) >= 2 else 1
    cols = shape[-1] if shape else 1
    values = []
    for e in range(elements(shape)):
        row, col = (e // cols) % rows, e % cols
        if fill == "zeros":
            values.append(0)
        elif fill == "ones":
            values.append(1)
        elif fill == "pattern":
            values.append(((3 * row + 5 * col) % 7 - 3) / 8)
        elif fill == "flat":
            # By flat index, so that every channel and filter differs;
            # multiples of 1/8, whose products and sums of hundreds are
            # exact in f32.
            values.append(((7 * e + 3) % 11 - 5) / 8)
        elif fill.startswith("value="):
            values.append(float(fill[len("value="):]))
        elif fill == "f8bits":
            # Sign, and magnitudes below 2 in both f8 formats: no NaN or inf.
            values.append((e * 37) % 0x40 | (0x80 if e % 3 == 0 else 0))
        else:
            sys.exit("unknown fill " + fill)
    return values


def write(path, descr, shape, fill, version, fortran, values=None):
    if values is None:
        values = fill_values(descr, shape, fill)
    shape_text = "(" + ", ".join(str(d) for d in shape)
    shape_text += ",)" if len(shape) == 1 else ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    preamble = 10 if version == 1 else 12
    total = preamble + len(header) + 1
    header += " " * (-total % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    data = struct.pack("<%d%s" % (len(values), FORMATS[descr]), *values)
    with open(path, "wb") as out:
        out.write(MAGIC + bytes([version, 0]) + length + header.encode("latin1"))
        out.write(data)


def read(path):
    with open(path, "rb") as f:
        image = f.read()
    if image[:6] != MAGIC:
        sys.exit(path + ": bad magic")
    major, minor = image[6], image[7]
    if major == 1:
        (length,) = struct.unpack("<H", image[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", image[8:12])
        start = 12
    header = ast.literal_eval(image[start:start + length].decode("latin1"))
    if sorted(header) != ["descr", "fortran_order", "shape"]:
        sys.exit(path + ": header keys " + str(sorted(header)))
    if not isinstance(header["shape"], tuple):
        sys.exit(path + ": shape is not a tuple")
    data = image[start + length:]
    count = elements(header["shape"])
    code = FORMATS[header["descr"]]
    if len(data) != count * struct.calcsize(code):
        sys.exit("%s: %d data bytes for shape %s" %
                 (path, len(data), header["shape"]))
    values = struct.unpack("<%d%s" % (count, code), data)
    return (major, minor), header, start + length, values


def main(argv):
    command = argv[1]
    if command == "write":
        path, descr, shape_text, fill = argv[2:6]
        shape = [int(d) for d in shape_text.split(",") if d]
        version = 2 if "--version" in argv and argv[argv.index("--version") + 1] == "2" else 1
        write(path, descr, shape, fill, version, "--fortran" in argv)
    elif command == "header":
        (major, minor), header, data_offset, values = read(argv[2])
        print("header: version=%d.%d descr=%r fortran_order=%s shape=%s "
              "aligned=%s data=%d" %
              (major, minor, header["descr"], header["fortran_order"],
               header["shape"], data_offset % 64 == 0,
               len(values) * struct.calcsize(FORMATS[header["descr"]])))
    elif command == "zeros":
        _, _, _, values = read(argv[2])
        nonzero = sum(1 for v in values if v != 0)
        if nonzero:
            print("zeros: %d of %d elements are not zero" % (nonzero, len(values)))
        else:
            print("zeros: all %d" % len(values))
    elif command == "matmul":
        _, a_header, _, a = read(argv[2])
        _, b_header, _, b = read(argv[3])
        _, c_header, _, c = read(argv[4])
        m, k = a_header["shape"]
        k2, n = b_header["shape"]
        if k != k2 or c_header["shape"] != (m, n):
            sys.exit("matmul: shapes %s x %s -> %s" %
                     (a_header["shape"], b_header["shape"], c_header["shape"]))
        wrong = 0
        for i in range(m):
            for j in range(n):
                expected = sum(a[i * k + p] * b[p * n + j] for p in range(k))
                if c[i * n + j] != expected:
                    wrong += 1
                    if wrong <= 3:
                        print("matmul: C[%d,%d] = %r, expected %r" %
                              (i, j, c[i * n + j], expected))
        if wrong:
            sys.exit("matmul: %d of %d elements differ" % (wrong, m * n))
        print("matmul: %d elements match" % (m * n))
    elif command == "product":
        _, a_header, _, a = read(argv[2])
        _, b_header, _, b = read(argv[3])
        m, k = a_header["shape"]
        _, n = b_header["shape"]
        values = [sum(a[i * k + p] * b[p * n + j] for p in range(k))
                  for i in range(m) for j in range(n)]
        write(argv[4], "<f4", [m, n], None, 1, False, values)
    elif command == "set":
        path, index, value = argv[2], int(argv[3]), float(argv[4])
        _, header, data_offset, values = read(path)
        code = FORMATS[header["descr"]]
        with open(path, "r+b") as f:
            f.seek(data_offset + index * struct.calcsize(code))
            f.write(struct.pack("<" + code, value))
    elif command == "patch-embedding":
        _, _, _, x = read(argv[2])
        _, _, _, w = read(argv[3])
        _, _, _, b = read(argv[4])
        _, _, _, y = read(argv[5])
        n, c, h, wd = [int(d) for d in argv[6].split(",")]
        f, kh, kw = [int(d) for d in argv[7].split(",")]
        tolerance = float(argv[8]) if len(argv) > 8 else 0.0
        ho, wo = h // kh, wd // kw
        if (len(x) != n * c * h * wd or len(w) != f * c * kh * kw or len(b) != f
                or len(y) != n * ho * wo * f):
            sys.exit("patch-embedding: %d, %d, %d -> %d elements" %
                     (len(x), len(w), len(b), len(y)))
        wrong, largest = 0, 0.0
        for image in range(n):
            for py in range(ho):
                for px in range(wo):
                    patch = py * wo + px
                    for filt in range(f):
                        expected = b[filt]
                        for ch in range(c):
                            for i in range(kh):
                                row = ((image * c + ch) * h + py * kh + i) * wd + px * kw
                                weights = ((filt * c + ch) * kh + i) * kw
                                for j in range(kw):
                                    expected += x[row + j] * w[weights + j]
                        got = y[(image * ho * wo + patch) * f + filt]
                        error = abs(got - expected)
                        largest = max(largest, error)
                        if not error <= tolerance:
                            wrong += 1
                            if wrong <= 3:
                                print("patch-embedding: Y[%d,%d,%d] = %r, expected %r" %
                                      (image, patch, filt, got, expected))
        if wrong:
            sys.exit("patch-embedding: %d of %d elements differ" % (wrong, len(y)))
        print("patch-embedding: %d elements match, largest error %g" % (len(y), largest))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
