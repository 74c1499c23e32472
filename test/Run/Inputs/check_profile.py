"""Checks an ipu-run --profile report against the run's report and trace.

usage: check_profile.py PROFILE_HTML REPORT TRACE

The embedded JSON (<script type="application/json" id="profile-data">)
must parse; its steps must be the trace's non-stream program steps, in
order, with the same cycles, summing to the report's cycles=; the SVG must
hold one class="step" rect per such step and one class="tile" rect per
tile, with the JSON's cycles in data-cycles; each memory heatmap's
busiest tile at the compiler's max-live bound. Per tile compute cycles: each
at most the run's computeCycles, and when one tile is the slowest of every
compute set (as at 16 tiles here), the busiest tile's equal computeCycles.
Prints one summary line.
"""
import json
import re
import sys

html = open(sys.argv[1]).read()
report = open(sys.argv[2]).read()
trace = json.load(open(sys.argv[3]))
cycles = int(re.search(r"\bcycles=(\d+)", report).group(1))
compute_cycles = int(re.search(r"\bcomputeCycles=(\d+)", report).group(1))

# Nothing loaded from elsewhere.
assert not re.search(r"<script[^>]*\bsrc=|<link\b|@import|https?://(?!www\.w3\.org/2000/svg)", html), \
    "the profile loads something"

match = re.search(r'<script type="application/json" id="profile-data">(.*?)</script>',
                  html, re.S)
assert match, "no profile-data element"
data = json.loads(match.group(1))
assert "cycles" in data["units"]["cycles"] and "clock" in data["units"]["microseconds"], data["units"]
assert data["cycles"] == cycles, (data["cycles"], cycles)
assert data["computeCycles"] == compute_cycles

steps = data["steps"]
assert sum(s["cycles"] for s in steps) == cycles, "step cycles do not sum to cycles="
expected = [e for e in sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] == 0),
                              key=lambda e: e["args"]["step"])
            if not e["cat"].startswith("stream")]
assert [(s["step"], s["kind"], s["cycles"]) for s in steps] == \
    [(e["args"]["step"], e["cat"], e["args"]["cycles"]) for e in expected], "steps differ from the trace"

rects = re.findall(r'<rect class="step"[^>]*data-cycles="(\d+)"', html)
assert [int(c) for c in rects] == [s["cycles"] for s in steps], "step rects differ from the JSON"
tiles = re.findall(r'<rect class="tile" data-tile="(\d+)" data-cycles="(\d+)"', html)
per_tile = data["tileComputeCycles"]
assert len(per_tile) == data["tiles"] == len(tiles), (len(per_tile), len(tiles))
assert [(int(t), int(c)) for t, c in tiles] == list(enumerate(per_tile)), "tile rects differ"

busiest = max(per_tile)
assert busiest == data["maxTileComputeCycles"]
assert all(c <= compute_cycles for c in per_tile)
compute = [s["cycles"] for s in steps if s["kind"] == "compute"]
assert sum(compute) == compute_cycles
slowest = {c["slowestTile"] for c in data["computeSets"]}
if len(slowest) == 1:
    assert busiest == compute_cycles == per_tile[slowest.pop()], (busiest, compute_cycles)
for c in data["computeSets"]:
    assert 0 < c["balance"] <= 1 and c["meanCycles"] <= c["cycles"], c
for p in data["phases"]:
    assert p["lowerBound"] <= p["horizon"] < p["cycles"], p
for name in ("standard", "interleaved"):
    assert data["memory"][name]["touchedBytes"] <= data["memory"][name]["regionBytes"]

# Memory at the peak step: the heatmap's busiest tile holds what the
# compiler reports as the class's max-live bound, and every cell is at
# most that; the cells are the sums of the buffers table's entries live
# at that step.
for name in ("standard", "interleaved"):
    cells = re.findall(r'<svg id="memory-%s".*?</svg>' % name, html, re.S)
    if not cells:
        continue
    values = [int(v) for v in re.findall(r'class="memtile" data-tile="\d+" data-bytes="(\d+)"', cells[0])]
    assert len(values) == data["tiles"], len(values)
    bound = re.search(r"<td>memoryBound%sBytes</td><td>(\d+)</td>" % name.capitalize(), html)
    assert bound and max(values) == int(bound.group(1)), (max(values), bound and bound.group(1))

print("profile: steps=%d cycles=%d tiles=%d busiestTile=%d computeCycles=%d computeSets=%d phases=%d" %
      (len(steps), sum(s["cycles"] for s in steps), len(per_tile), busiest,
       compute_cycles, len(data["computeSets"]), len(data["phases"])))
