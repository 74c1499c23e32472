"""Wraps the first sync and exchange of a package's decoded Cap'n Proto
text in a loop of COUNT iterations, as a hostile package would ask the
simulator to spin.

  loop-package.py TEXT COUNT > TEXT2
"""
import re
import sys

text = open(sys.argv[1]).read()
count = int(sys.argv[2])
pair = re.search(r"\(kind = sync(, index = 0)?\),\s*\(kind = exchange(, index = 0)?\)", text)
if not pair:
    sys.exit("no sync followed by exchange 0 in the program")
text = text[:pair.start()] + "(kind = loop, index = 0), " + text[pair.start():]
body = text.rstrip()
assert body.endswith(")"), "not a decoded package"
assert "loops = " not in body, "the package already has loops"
text = body[:-1] + ', loops = [(name = "spin", count = %d, steps = 2)] )\n' % count
sys.stdout.write(text)
