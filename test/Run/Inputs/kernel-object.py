"""Finds and alters the kernel object inside a package file, for tests.

  kernel-object.py offset PACKAGE HEX   offset of bytes HEX in the object
  kernel-object.py flip PACKAGE OUT     PACKAGE with one byte in the middle
                                        of the object flipped (its recorded
                                        hash left as it was)
  kernel-object.py rename PACKAGE OUT   PACKAGE with the first kernel's
                                        symbol in the kernel table zeroed
"""
import sys

def object_start(data):
    start = data.find(b"\x7fELF")
    if start < 0:
        sys.exit("no ELF object in the package")
    return start

def main():
    command, package = sys.argv[1], sys.argv[2]
    data = bytearray(open(package, "rb").read())
    start = object_start(data)
    if command == "offset":
        needle = bytes.fromhex(sys.argv[3])
        found = data.find(needle, start)
        if found < 0:
            sys.exit("bytes %s not in the object" % sys.argv[3])
        print(found - start)
    elif command == "flip":
        data[start + 200] ^= 0xFF
        open(sys.argv[3], "wb").write(data)
    elif command == "rename":
        at = data.find(b"ipu_ew_")
        if at < 0 or at > start:
            sys.exit("no kernel symbol before the object")
        data[at:at + 23] = b"ipu_ew_0000000000000000"
        open(sys.argv[3], "wb").write(data)
    else:
        sys.exit("unknown command " + command)

main()
