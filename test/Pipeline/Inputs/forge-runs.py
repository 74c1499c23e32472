#!/usr/bin/env python3
"""Forges a data file whose checksum still matches: sets one field of the
first run of the first run table a compiled IR keeps in its data file, and
writes the IR with the new checksum, as someone who knows the format would.

  forge-runs.py IR OUT_IR OUT_DATA FIELD VALUE

FIELD is 0..4 (transfer, first word, words, start, paired). The data file is
the one the IR names.
"""
import re
import struct
import sys


def checksum(data):
    """FNV-1a over little-endian 64-bit words (lib/Support/DataFile.cpp)."""
    state = 0xCBF29CE484222325
    for (word,) in struct.iter_unpack("<Q", data):
        state = ((state ^ word) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return state


def main():
    ir_path, out_ir, out_data, field, value = sys.argv[1:6]
    ir = open(ir_path).read()
    record = re.search(r'#ipu_tile.data_file<"([^"]*)", bytes = (\d+), checksum = (\d+)>', ir)
    runs = re.search(r"runs = #ipu_tile.data<tensor<\d+xi32> at (\d+)>", ir)
    data = bytearray(open(record.group(1), "rb").read())
    position = int(runs.group(1)) + 4 * int(field)
    data[position:position + 4] = struct.pack("<i", int(value))
    open(out_data, "wb").write(data)
    forged = ir.replace(record.group(0), '#ipu_tile.data_file<"%s", bytes = %s, checksum = %d>'
                        % (out_data, record.group(2), checksum(bytes(data))))
    open(out_ir, "w").write(forged)


if __name__ == "__main__":
    main()
