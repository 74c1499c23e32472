"""Passes ipu-run's report through, then checks the planner's estimate.

Reads the report on stdin and writes it to stdout unchanged (for FileCheck),
then a line `planError=E` with E = (plannedCycles - cycles) / cycles, and
exits 1 when |E| exceeds the limit given as the first argument.
"""
import re
import sys

limit = float(sys.argv[1])
text = sys.stdin.read()
sys.stdout.write(text)
cycles = int(re.search(r"^workload=\S+ cycles=(\d+)", text, re.M).group(1))
planned = int(re.search(r"plannedCycles=(\d+)", text).group(1))
error = (planned - cycles) / cycles
print(f"planError={error:.4f}")
if abs(error) > limit:
    sys.stderr.write(f"plan error {error:.4f} is beyond +-{limit}\n")
    sys.exit(1)
