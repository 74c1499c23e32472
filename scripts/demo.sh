#!/usr/bin/env bash
# The main job: compile the whole SigLIP MLP (fc1, bias, GELU tanh, fc2,
# bias) as torch-mlir exports it (scripts/siglip-workload.py) for ipu21,
# package it with its generated kernels, simulate it with a numerical check
# of every op (matmuls against OpenBLAS, elementwise ops against the host
# evaluation of their body), and print the seed-style report with compile
# seconds per pass. First in f16 (f32 partials); then the user's f8
# configuration: f8 weights, activations cast to f8 before each GEMM, f16
# partials. Then each GEMM alone, and the GEMMs by precision. The attention
# scores of the 16 heads run as one batched matmul.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/$build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export IPU_LOG=${IPU_LOG:-warn}

status=0
# name: a workload of scripts/siglip-workload.py (with its options) or an
# example of examples/, and the compile options.
mlp_f16=$(python3 "$root/scripts/siglip-workload.py" --name)
mlp_f8=$(python3 "$root/scripts/siglip-workload.py" --weights f8E4M3FN --name)
python3 "$root/scripts/siglip-workload.py" -o "$work/$mlp_f16.src.mlir"
python3 "$root/scripts/siglip-workload.py" --weights f8E4M3FN -o "$work/$mlp_f8.src.mlir"
for example in siglip-mlp-fc1 siglip-mlp-fc2 siglip-attention-scores; do
  cp "$root/examples/$example.mlir" "$work/$example.src.mlir"
done
for job in "$mlp_f16:" "$mlp_f8: partials=any" siglip-mlp-fc1: siglip-mlp-fc2: \
           siglip-attention-scores:; do
  example=${job%%:*} options=${job#*:}
  echo "== $example (ipu21, 1472 tiles${options:+,$options})"
  start=$(date +%s.%N)
  "$bin/ipu-opt" "$work/$example.src.mlir" --ipu-compile="target=ipu21$options" \
    -mlir-timing -mlir-timing-display=list -o "$work/$example.mlir" \
    2> "$work/$example.compile.log" || { cat "$work/$example.compile.log"; exit 1; }
  IPU_LOG=info "$bin/ipu-translate" --ipu-to-package "$work/$example.mlir" \
    -o "$work/$example.ipuexe" 2> "$work/$example.package.log"
  end=$(date +%s.%N)
  grep -E "remark: (chose plan|scheduled|placed)" "$work/$example.compile.log" | sed 's/^.*remark: /  /'
  # Per-pass wall time from -mlir-timing, as key=value.
  awk '/IPU(ImportLinalg|PlanGemm|AssignLayouts|LowerToTile|ScheduleExchange|PlaceStorage)$/ {
         name = $NF; sub(/^IPU/, "", name);
         line = line sprintf("%s%sSeconds=%s", sep, tolower(substr(name, 1, 1)) substr(name, 2), $1); sep = " " }
       END { print line }' "$work/$example.compile.log"
  awk -v s="$start" -v e="$end" 'BEGIN { printf "compileSeconds=%.3f\n", e - s }'
  # ipu-run compiles the package's kernel bodies itself (or takes them from
  # its cache): its log line says which, and how long it took.
  IPU_LOG=info "$bin/ipu-run" "$work/$example.ipuexe" --check 2> "$work/$example.run.log" || status=$?
  grep -o 'compiled kernels .*' "$work/$example.run.log" | sed 's/^/  /' || true
done

# The same GEMMs by precision: f16 with f32 partials (the default above), f16
# with f16 partials (allowed with partials=f16), f8 with f32 and f16 partials.
echo "== by precision: in, partials, MACs/cycle; simulated device cycles per image and where they go;"
echo "   weights as the planner likes them (weightReplicasMax copies; bench/run siglip stores them once)"
BENCH_BIN="$bin" BENCH_ROOT="$root" "$root/bench/e2e.sh" --siglip |
  tr ' ' '\n' | awk -F= '
    $1 == "bench" { if (line != "") print line; line = "" }
    $1 ~ /^(case|in|partials|macs|cycles|plannedCycles|weightReplicasMax|computeCycles|exchangeCycles|syncCycles|efficiencyOwnPeakPercent|horizonOverBound|maximumAbsoluteError|numericalTest)$/ {
      line = line (line == "" ? "  " : " ") $0 }
    END { if (line != "") print line }'
exit $status
