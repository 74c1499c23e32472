#!/usr/bin/env bash
# bench=exchange: exchange schedules against their lower bounds, on synthetic
# phases of 1472 tiles and on the phases the compiler produces.
#   bench/run exchange                    synthetic cases, then compiler phases
#   bench/run exchange --case NAME        one synthetic case
#   bench/run exchange --phase FILE       a phase in text form (PhaseText.h)
# Compiler phases: every *.phase file in $BENCH_PHASE_DIR, every phase of
# the SigLIP MLP examples compiled for ipu21 (named example/phase), and
# every phase of the headline SigLIP workloads (scripts/siglip-workload.py:
# the MLP and attention with partials=any, the MLP also with f8 weights;
# named siglip-PART-WEIGHTS-pany/phase).
set -euo pipefail
bin=${BENCH_BIN:?run through bench/run}
root=${BENCH_ROOT:?run through bench/run}

case "${1:-}" in
  --phase)
    [ $# -eq 2 ] || { echo "bench/run exchange: --phase takes one FILE" >&2; exit 1; }
    exec "$bin/exchange-bench" --phase "$2" ;;
  --case)
    [ $# -eq 2 ] || { echo "bench/run exchange: --case takes one NAME" >&2; exit 1; }
    exec "$bin/exchange-bench" --case "$2" ;;
  "") ;;
  *) echo "bench/run exchange: unknown option '$1'" >&2; exit 1 ;;
esac

status=0
"$bin/exchange-bench" || status=1

# bench_dir PREFIX DIR: every *.phase file in DIR, named PREFIX + its base name.
bench_dir() {
  local prefix=$1 dir=$2 file
  for file in "$dir"/*.phase; do
    [ -e "$file" ] || continue
    "$bin/exchange-bench" --phase "$file" \
      --name "$prefix$(basename "$file" .phase)" || status=1
  done
}

if [ -n "${BENCH_PHASE_DIR:-}" ]; then
  if [ -d "$BENCH_PHASE_DIR" ]; then
    bench_dir "" "$BENCH_PHASE_DIR"
  else
    echo "bench/run exchange: BENCH_PHASE_DIR '$BENCH_PHASE_DIR' is not a directory" >&2
    status=1
  fi
fi

# Every phase the compiler produces for the SigLIP MLP examples on ipu21,
# dumped by --ipu-compile's dump-phases option with the addresses placement
# chose, so each is scheduled as the compiler scheduled it.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for example in siglip-mlp-fc1 siglip-mlp-fc2 siglip-mlp; do
  dir="$work/$example"
  mkdir -p "$dir"
  if ! "$bin/ipu-opt" "$root/examples/$example.mlir" \
       --ipu-compile="target=ipu21 dump-phases=$dir" -o /dev/null \
       2> "$work/$example.log"; then
    echo "bench=exchange case=$example status=compile-error error=\"$(grep -m1 error: "$work/$example.log" | sed 's/.*error: //')\""
    status=1
    continue
  fi
  bench_dir "$example/" "$dir"
done

for spec in "mlp f16" "mlp f8E4M3FN" "attention f16"; do
  read -r part weights <<< "$spec"
  name="siglip-$part-$weights-pany"
  dir="$work/$name"
  mkdir -p "$dir"
  if ! python3 "$root/scripts/siglip-workload.py" --part "$part" --weights "$weights" \
         -o "$work/$name.mlir" 2> "$work/$name.log" ||
     ! "$bin/ipu-opt" "$work/$name.mlir" \
         --ipu-compile="target=ipu21 partials=any dump-phases=$dir" -o /dev/null \
         2>> "$work/$name.log"; then
    echo "bench=exchange case=$name status=compile-error error=\"$(grep -m1 error "$work/$name.log" | sed 's/.*error: //')\""
    status=1
    continue
  fi
  bench_dir "$name/" "$dir"
done
exit $status
