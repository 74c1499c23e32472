"""Rewrites the kernel bodies of a decoded package (Cap'n Proto text) with
one kernel, recomputing each symbol (the FNV-1a hash of the body, as
bodyHash does) so that only the change under test is wrong.

  kernel_bodies.py DECODED slots VALUE       > TEXT
      kernel 0's op 0 (unary) holds VALUE in its unused operand slots.
  kernel_bodies.py DECODED chain KIND COUNT  > TEXT
      kernel 0 becomes COUNT chained ops of KIND (a body op kind's number,
      unary or binary) on its input, f32 to f32.
  kernel_bodies.py DECODED copies COUNT      > TEXT
      COUNT more kernels, each kernel 0's body under a name of its own,
      which no compute set runs.
"""
import re
import struct
import sys

KINDS = {"constant": 0, "addf": 1, "mulf": 3, "negf": 5, "exp": 11, "log": 12,
         "tanh": 13, "erf": 14, "sqrt": 15, "powf": 18}
BINARY = {1, 2, 3, 4, 6, 7, 8, 9, 18}

text = open(sys.argv[1]).read()
start = text.index("  kernels = [\n")
end = text.index("  kernelAbiVersion = ")
block = text[start:end]
assert block.count("( name = ") == 1, "expected a package of one kernel"


def field(name):
    match = re.search(r"\b%s = (\[[^\]]*\]|[^,\n)]+)" % name, block)
    assert match, "no field " + name
    value = match.group(1).strip()
    if value.startswith("["):
        return [float(v) if "." in v or "e" in v else int(v)
                for v in value[1:-1].split(",") if v.strip()]
    return float(value) if "." in value else int(value)


body = {name: field(name) for name in
        ["inputTypes", "inputBroadcasts", "resultType", "result", "opKinds",
         "opTypes", "opPredicates", "opOperands", "opConstants", "reduction",
         "init"]}


def symbol(b):
    out = bytearray()
    put = lambda value, size: out.extend(int(value).to_bytes(size, "little"))
    put(len(b["inputTypes"]), 4)
    for t, broadcast in zip(b["inputTypes"], b["inputBroadcasts"]):
        put(t, 1)
        put(broadcast, 1)
    put(len(b["opKinds"]), 4)
    for k, kind in enumerate(b["opKinds"]):
        put(kind, 1)
        put(b["opTypes"][k], 1)
        put(b["opPredicates"][k], 1)
        for o in range(3):
            put(b["opOperands"][3 * k + o], 4)
        constant = struct.unpack("<Q", struct.pack("<d", b["opConstants"][k]))[0]
        put(constant if kind == 0 else 0, 8)
    put(b["result"], 4)
    put(b["resultType"], 1)
    if b["reduction"] != 0:
        put(b["reduction"], 1)
        put(struct.unpack("<Q", struct.pack("<d", b["init"]))[0], 8)
    h = 0xcbf29ce484222325
    for byte in out:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "ipu_ew_%016x" % h


def kernel_text(name, b):
    lists = lambda v: "[" + ", ".join(str(x) for x in v) + "]"
    return ('( name = "%s",\n      symbol = "%s",\n      inputTypes = %s,\n'
            "      inputBroadcasts = %s,\n      resultType = %d,\n      result = %d,\n"
            "      opKinds = %s,\n      opTypes = %s,\n      opPredicates = %s,\n"
            "      opOperands = %s,\n      opConstants = %s,\n      reduction = %d,\n"
            "      init = %s )" % (name, symbol(b), lists(b["inputTypes"]),
                                   lists(b["inputBroadcasts"]), b["resultType"],
                                   b["result"], lists(b["opKinds"]), lists(b["opTypes"]),
                                   lists(b["opPredicates"]), lists(b["opOperands"]),
                                   lists(b["opConstants"]), b["reduction"], b["init"]))


name = re.search(r'name = "([^"]*)"', block).group(1)
kernels = []
mode = sys.argv[2]
if mode == "slots":
    value = int(sys.argv[3])
    body["opOperands"][1] = body["opOperands"][2] = value
    kernels = [kernel_text(name, body)]
elif mode == "chain":
    kind, count = KINDS.get(sys.argv[3], None), int(sys.argv[4])
    kind = int(sys.argv[3]) if kind is None else kind
    assert body["inputTypes"] == [0] and body["resultType"] == 0, "not an f32 kernel"
    operands = []
    for i in range(count):
        previous = 1 + i - 1 if i else 0
        operands += [previous, 0 if kind in BINARY else 0, 0]
    body.update(opKinds=[kind] * count, opTypes=[0] * count, opPredicates=[0] * count,
                opOperands=operands, opConstants=[0] * count, result=count)
    kernels = [kernel_text(name, body)]
elif mode == "copies":
    kernels = [kernel_text(name, body)] + [
        kernel_text("unused%d.kernel" % i, body) for i in range(int(sys.argv[3]))]
else:
    sys.exit("unknown mode " + mode)
sys.stdout.write(text[:start] + "  kernels = [\n    " + ",\n    ".join(kernels) +
                 " ],\n" + text[end:])
