"""Checks an ipu-run --trace file against the run's report.

usage: check_trace.py TRACE REPORT

The trace must parse as JSON, state its units, have one track per tile
group plus the program track, and its program-track slices must sum to the
report's cycles= with each slice starting where the previous ended; no tile
group may be busy longer than its step, and the busiest group as long. Prints one summary line.
"""
import json
import re
import sys

trace = json.load(open(sys.argv[1]))
report = open(sys.argv[2]).read()
cycles = int(re.search(r"\bcycles=(\d+)", report).group(1))

meta = trace["otherData"]
assert "cycles" in meta["units"] and "microseconds" in meta["units"], meta
rate = meta["cyclesPerMicrosecond"]
assert abs(rate - meta["clockHz"] / 1e6) < 1e-6, meta

events = trace["traceEvents"]
names = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
assert len(names) == meta["tileGroups"] + 1, len(names)

steps = sorted((e for e in events if e["ph"] == "X" and e["tid"] == 0),
               key=lambda e: e["args"]["step"])
start = 0
for e in steps:
    assert e["args"]["startCycle"] == start, e
    assert abs(e["ts"] * rate - start) < 1e-3 * max(1, start), e
    assert abs(e["dur"] * rate - e["args"]["cycles"]) < 1e-3 * max(1, e["args"]["cycles"]), e
    start += e["args"]["cycles"]
assert start == cycles == meta["cycles"], (start, cycles, meta["cycles"])

by_step = {e["args"]["step"]: e["args"]["cycles"] for e in steps}
groups = [e for e in events if e["ph"] == "X" and e["tid"] != 0]
busiest = {}
for e in groups:
    assert e["args"]["cycles"] <= by_step[e["args"]["step"]], e
    step = e["args"]["step"]
    busiest[step] = max(busiest.get(step, 0), e["args"]["cycles"])
# A step lasts as long as its busiest tile group.
for step, step_cycles in by_step.items():
    if step_cycles:
        assert busiest.get(step) == step_cycles, (step, busiest.get(step), step_cycles)
kinds = sorted({e["cat"] for e in steps})
print("trace: steps=%d cycles=%d tileSlices=%d kinds=%s" %
      (len(steps), start, len(groups), ",".join(kinds)))
