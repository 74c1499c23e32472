"""Checks the DOM headless Chromium rendered from an ipu-run --profile report.

usage: check_profile_dom.py DOM TRACE SCREENSHOT

The DOM must hold one class="tile" cell per tile of the trace's target and
one class="step" rect per non-stream program step of the trace, and the
screenshot must be a non-empty PNG. Prints one summary line.
"""
import json
import re
import sys

dom = open(sys.argv[1]).read()
trace = json.load(open(sys.argv[2]))
png = open(sys.argv[3], "rb").read()

process = next(e for e in trace["traceEvents"]
               if e["ph"] == "M" and e["name"] == "process_name")
tiles = int(re.search(r"\((\d+) tiles\)", process["args"]["name"]).group(1))
steps = [e for e in trace["traceEvents"]
         if e["ph"] == "X" and e["tid"] == 0 and not e["cat"].startswith("stream")]

tile_cells = len(re.findall(r'<rect class="tile"', dom))
step_rects = len(re.findall(r'<rect class="step"', dom))
assert tile_cells == tiles, (tile_cells, tiles)
assert step_rects == len(steps), (step_rects, len(steps))
assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000, len(png)
print("dom: tiles=%d steps=%d screenshot=png" % (tile_cells, step_rects))
