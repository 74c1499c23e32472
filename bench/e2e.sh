#!/usr/bin/env bash
# bench=e2e: each case is upstream linalg (a matmul, or the SigLIP MLP chain
# of examples/), compiled with --ipu-compile, packaged, simulated and checked
# by ipu-run. A chain's plans (and their partials and AMP rates) are joined
# with '+'. `in` is the input type, `partials` what the AMP accumulates in
# (f32 unless --partials allows f16), `macs` its MACs per cycle per tile.
# `cycles` is one image's device cycles (the simulated run); the host
# link's bytes and cycles, with the exchange's fan-out of copies, are their
# own fields. efficiencyOwnPeakPercent is against the peak of the
# program's own types (f8 twice f16's). weightReplicasMax is the most
# copies of a weight's blocks the plans keep (free here: bench/run siglip's
# headline rows store each weight once).
#   bench/run e2e                                  the standard cases
#   bench/run e2e --siglip                         only the SigLIP cases
#   bench/run e2e --shape MxKxN [--dtype f16|f32|f8E4M3FN|f8E5M2]
#                 [--out f32|f16] [--partials f32|f16|any]
#                 [--target ipu21|ipu21-N]
set -euo pipefail
bin=${BENCH_BIN:?run through bench/run}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes a func.func with one linalg.matmul of the given shape and types.
write_matmul() { # file m k n in out
  local file=$1 m=$2 k=$3 n=$4 in=$5 out=$6
  cat > "$file" <<MLIR
func.func @matmul(%a: tensor<${m}x${k}x${in}>, %b: tensor<${k}x${n}x${in}>) -> tensor<${m}x${n}x${out}> {
  %init = tensor.empty() : tensor<${m}x${n}x${out}>
  %c = linalg.matmul ins(%a, %b : tensor<${m}x${k}x${in}>, tensor<${k}x${n}x${in}>)
                     outs(%init : tensor<${m}x${n}x${out}>) -> tensor<${m}x${n}x${out}>
  return %c : tensor<${m}x${n}x${out}>
}
MLIR
}

now() { date +%s.%N; }
seconds() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f", e - s }'; }
# value KEY FILE: the last KEY=value in FILE, the batch line apart: `cycles`
# is the summary line's, one image's device cycles.
value() { grep -v '^batch ' "$2" | grep -Eo "(^| )$1=[^ ]+" | tail -n 1 | sed 's/.*=//'; }
# batch KEY FILE: KEY from the batch line (the host link's figures).
batch() { grep -m1 '^batch ' "$2" | grep -Eo "(^| )$1=[^ ]+" | sed 's/.*=//'; }

run_case() { # name m k n in out target [partials]
  local name=$1 m=$2 k=$3 n=$4 in=$5 out=$6 target=$7 partials=${8:-}
  write_matmul "$work/$name.mlir" "$m" "$k" "$n" "$in" "$out"
  run_file "$name" "$work/$name.mlir" "$target" "shape=${m}x${k}x${n} in=$in out=$out" "$partials"
}

run_file() { # name source target description [partials option]
  local name=$1 src=$2 target=$3 description=$4 option=${5:-}
  local lowered="$work/$name.lowered.mlir"
  local package="$work/$name.ipuexe" log="$work/$name.log" report="$work/$name.report"
  local t0 t1 t2 t3
  t0=$(now)
  if ! "$bin/ipu-opt" "$src" --ipu-compile="target=$target${option:+ partials=$option}" -o "$lowered" 2> "$log"; then
    echo "bench=e2e case=$name target=$target status=compile-error error=\"$(grep -m1 error: "$log" | sed 's/.*error: //')\""
    return 0
  fi
  t1=$(now)
  "$bin/ipu-translate" --ipu-to-package "$lowered" -o "$package"
  t2=$(now)
  local status=PASS
  "$bin/ipu-run" "$package" --check --quiet > "$report" 2>&1 || status=FAIL
  t3=$(now)
  # The phase with the worst timed horizon over its lower bound (the
  # busiest tile's events plus route latency and receive tails).
  local worst
  # A program without exchange phases is trivially at its bound.
  worst=$({ grep -Eo 'lowerBound=[0-9]+ endpointEvents=[0-9]+ latency=[0-9]+ horizon=[0-9]+' "$log" || true; } |
    awk -F'[ =]' 'BEGIN { best = 1 } { n++; r = ($2 ? $8 / $2 : 1); if (r >= best) { best = r; b = $2; h = $8 } }
                  END { printf "exchangePhases=%d exchangeHorizon=%d exchangeBound=%d horizonOverBound=%.3f", n, h, b, best }')
  local plan
  plan=$(grep -Eo 'chose plan rows=[0-9]+ cols=[0-9]+ inner=[0-9]+ orientation=[a-z]+ weights=[a-z]+ reduction=[a-z]+ staging=[a-z]+' "$log" |
    sed 's/chose plan //; s/ /,/g' | paste -sd'+')
  # Serial chunks per matmul (1: none), in program order.
  local serial
  serial=$({ grep -Eo 'chose plan [^:]* of [0-9]+ matching' "$log" || true; } |
    awk '{ s = 1; if (match($0, /serial=[0-9]+/)) s = substr($0, RSTART + 7, RLENGTH - 7); print s }' | paste -sd'+')
  local partials macs
  partials=$({ grep -Eo 'chose plan .* partials=[a-z0-9]+' "$log" || true; } | sed 's/.*partials=//' | paste -sd'+')
  macs=$({ grep -Eo 'finalist=0 .* ampMacsPerCycle=[0-9]+' "$log" || true; } | sed 's/.*ampMacsPerCycle=//' | paste -sd'+')
  local cycles planned
  cycles=$(value cycles "$report")
  planned=$(value plannedCycles "$report")
  echo "bench=e2e case=$name target=$target $description" \
       "partials=$partials macs=$macs plan=$plan serialSplit=$serial" \
       "compileSeconds=$(seconds "$t0" "$t1") packageSeconds=$(seconds "$t1" "$t2")" \
       "simulateSeconds=$(seconds "$t2" "$t3")" \
       "cycles=$cycles plannedCycles=$planned weightReplicasMax=$(value weightReplicasMax "$report")" \
       "planError=$(awk -v c="$cycles" -v p="$planned" 'BEGIN { printf "%.4f", (c ? (p - c) / c : 0) }')" \
       "computeCycles=$(value computeCycles "$report") exchangeCycles=$(value exchangeCycles "$report")" \
       "syncCycles=$(value syncCycles "$report")" \
       "efficiencyOwnPeakPercent=$(value efficiencyOwnPeakPercent "$report") efficiencyAgainstF16PeakPercent=$(value efficiencyAgainstF16PeakPercent "$report") effectiveGemmTflops=$(value effectiveGemmTflops "$report")" \
       "imageLinkBytes=$(batch imageLinkBytes "$report") imageLinkCyclesPerImage=$(batch imageLinkCyclesPerImage "$report") imageFanOutCyclesPerImage=$(batch imageFanOutCyclesPerImage "$report")" \
       "$worst" \
       "memoryPeakStandardBytes=$(value memoryPeakStandardBytes "$report") memoryBoundStandardBytes=$(value memoryBoundStandardBytes "$report")" \
       "memoryPeakInterleavedBytes=$(value memoryPeakInterleavedBytes "$report") memoryBoundInterleavedBytes=$(value memoryBoundInterleavedBytes "$report")" \
       "maximumAbsoluteError=$(value maximumAbsoluteError "$report") numericalTest=$(value numericalTest "$report" || echo "$status")"
}

shape="" dtype=f16 out=f32 target=ipu21 partials="" siglip=false
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --partials) partials=$2; shift 2 ;;
    --siglip) siglip=true; shift ;;
    --target) target=$2; shift 2 ;;
    *) echo "bench/run e2e: unknown option '$1'" >&2; exit 1 ;;
  esac
done

if [ -n "$shape" ]; then
  IFS=x read -r m k n <<< "$shape"
  run_case "matmul-${shape}-${dtype}" "$m" "$k" "$n" "$dtype" "$out" "$target" "$partials"
  exit 0
fi

$siglip || run_case foundation-96x128x64-f16 96 128 64 f16 f32 ipu21-16
# The SigLIP MLP GEMMs and the MLP: f16 with f32 partials (the default),
# f16 with f16 partials (allowed), f8 with f32 and with f16 partials. Then
# the whole MLP (biases, GELU tanh) as torch-mlir exports it
# (scripts/siglip-workload.py): f16, and f8 weights with the activations
# cast to f8 before each GEMM.
for partials in "" f16; do
  suffix=${partials:+-p$partials}
  run_case siglip-mlp-fc1-f16$suffix 729 1152 4304 f16 f32 ipu21 "$partials"
  run_case siglip-mlp-fc2-f16$suffix 729 4304 1152 f16 f32 ipu21 "$partials"
  run_file siglip-mlp-f16$suffix "${BENCH_ROOT:?}/examples/siglip-mlp.mlir" ipu21 \
    "shape=729x1152x4304x1152 in=f16 out=f32" "$partials"
  run_case siglip-mlp-fc1-f8$suffix 729 1152 4304 f8E4M3FN f32 ipu21 "$partials"
  run_case siglip-mlp-fc2-f8$suffix 729 4304 1152 f8E4M3FN f32 ipu21 "$partials"
  for weights in f16 f8E4M3FN; do
    workload=$(python3 "$BENCH_ROOT/scripts/siglip-workload.py" --weights "$weights" --name)
    python3 "$BENCH_ROOT/scripts/siglip-workload.py" --weights "$weights" -o "$work/$workload.mlir"
    run_file "$workload$suffix" "$work/$workload.mlir" ipu21 \
      "shape=729x1152x4304x1152 in=$weights biases=true gelu=tanh" "$partials"
  done
done
