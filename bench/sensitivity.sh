#!/usr/bin/env bash
# bench=sensitivity: the planned SigLIP MLP figures with each assumed cost
# constant of the TargetModel at 0.5x and 2x (--all: every constant); see
# bench/sensitivity-bench.cpp.
set -euo pipefail
exec "${BENCH_BIN:?run through bench/run}/sensitivity-bench" "$@"
