"""Writes two tampered copies of a decoded package (Cap'n Proto text).

usage: tamper_reserved.py DECODED CLAIM_OUT LOW_OUT

CLAIM_OUT states memoryReservedStandardBytes=8, less than the program's
code and state take; LOW_OUT moves the first compute set's first operand
64 bytes down, into the area kept for them. Fails if either edit finds
nothing to change.
"""
import re
import sys

text = open(sys.argv[1]).read()
claim, count = re.subn(r'(key = "memoryReservedStandardBytes",\s*value = ")\d+(")',
                       r'\g<1>8\2', text)
assert count == 1, "no memoryReservedStandardBytes metadata"
open(sys.argv[2], "w").write(claim)
match = re.search(r"operandAddress = \[(\d+),", text)
assert match, "no compute set operand"
low = text.replace(match.group(0), "operandAddress = [%d," % (int(match.group(1)) - 64), 1)
open(sys.argv[3], "w").write(low)
