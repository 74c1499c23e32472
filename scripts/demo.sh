#!/usr/bin/env bash
# The main job: compile the SigLIP MLP (both projections, without the GELU
# that is not compiled yet) for ipu21, package it, simulate it with a
# numerical check of every matmul against OpenBLAS, and print the seed-style
# report with compile seconds per pass. Then each GEMM alone, and all of
# them by precision (f16 or f8 inputs, f32 or f16 partials). The attention
# scores of the 16 heads run as one batched matmul.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/$build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export IPU_LOG=${IPU_LOG:-warn}

status=0
for example in siglip-mlp siglip-mlp-fc1 siglip-mlp-fc2 siglip-attention-scores; do
  echo "== $example (ipu21, 1472 tiles)"
  start=$(date +%s.%N)
  "$bin/ipu-opt" "$root/examples/$example.mlir" --ipu-compile="target=ipu21" \
    -mlir-timing -mlir-timing-display=list -o "$work/$example.mlir" \
    2> "$work/$example.compile.log" || { cat "$work/$example.compile.log"; exit 1; }
  "$bin/ipu-translate" --ipu-to-package "$work/$example.mlir" -o "$work/$example.ipuexe"
  end=$(date +%s.%N)
  grep -E "remark: (chose plan|scheduled|placed)" "$work/$example.compile.log" | sed 's/^.*remark: /  /'
  # Per-pass wall time from -mlir-timing, as key=value.
  awk '/IPU(ImportLinalg|PlanGemm|AssignLayouts|LowerToTile|ScheduleExchange|PlaceStorage)$/ {
         name = $NF; sub(/^IPU/, "", name);
         line = line sprintf("%s%sSeconds=%s", sep, tolower(substr(name, 1, 1)) substr(name, 2), $1); sep = " " }
       END { print line }' "$work/$example.compile.log"
  awk -v s="$start" -v e="$end" 'BEGIN { printf "compileSeconds=%.3f\n", e - s }'
  "$bin/ipu-run" "$work/$example.ipuexe" --check --quiet || status=$?
done

# The same GEMMs by precision: f16 with f32 partials (the default above), f16
# with f16 partials (allowed with partials=f16), f8 with f32 and f16 partials.
echo "== by precision: in, partials, MACs/cycle; cycles and where they go"
BENCH_BIN="$bin" BENCH_ROOT="$root" "$root/bench/e2e.sh" --siglip |
  tr ' ' '\n' | awk -F= '
    $1 == "bench" { if (line != "") print line; line = "" }
    $1 ~ /^(case|in|partials|macs|cycles|plannedCycles|computeCycles|exchangeCycles|syncCycles|efficiencyPercent|horizonOverBound|maximumAbsoluteError|numericalTest)$/ {
      line = line (line == "" ? "  " : " ") $0 }
    END { if (line != "") print line }'
exit $status
