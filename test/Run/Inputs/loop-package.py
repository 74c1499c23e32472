"""Wraps the first sync and exchange 0 (or, with KIND compute, the first
sync and compute set INDEX) of a package's decoded Cap'n Proto text in a
loop of COUNT iterations, as a hostile package would ask the simulator to
spin. A looped compute set's FLOPs are taken to be all the package's
(its one gemm step), so the stated `flops` is scaled by COUNT.

  loop-package.py TEXT COUNT [KIND [INDEX]] > TEXT2
"""
import re
import sys

text = open(sys.argv[1]).read()
count = int(sys.argv[2])
kind = sys.argv[3] if len(sys.argv) > 3 else "exchange"
index = int(sys.argv[4]) if len(sys.argv) > 4 else 0
if kind == "compute":
    text = re.sub(r"flops = (\d+)", lambda m: "flops = %d" % (int(m.group(1)) * count), text, 1)
step = r"\(kind = %s%s\)" % (kind, "(, index = 0)?" if index == 0 else ", index = %d" % index)
pair = re.search(r"\(kind = sync(, index = 0)?\),\s*" + step, text)
if not pair:
    sys.exit("no sync followed by %s %d in the program" % (kind, index))
text = text[:pair.start()] + "(kind = loop, index = 0), " + text[pair.start():]
body = text.rstrip()
assert body.endswith(")"), "not a decoded package"
assert "loops = " not in body, "the package already has loops"
text = body[:-1] + ', loops = [(name = "spin", count = %d, steps = 2)] )\n' % count
sys.stdout.write(text)
