"""Puts a shared object into a package's decoded Cap'n Proto text the way an
attacker would: as the machine code formats 1 and 2 carried
(retiredKernelObject), with its hash and every generated kernel's symbol
pointing at it.

  inject-object.py TEXT OBJECT > TEXT2
"""
import re
import sys

text = open(sys.argv[1]).read()
code = open(sys.argv[2], "rb").read().hex()
body = text.rstrip()
assert body.endswith(")"), "not a decoded package"
text = body[:-1] + ', retiredKernelObject = 0x"%s", retiredKernelObjectHash = 1 )\n' % code
sys.stdout.write(text)
