#!/usr/bin/env bash
# bench=plan-gemm: plans the SigLIP MLP GEMMs (or --deepbench, or --shape
# MxKxN --dtype T)
# with the planner library; see bench/plan-gemm-bench.cpp.
set -euo pipefail
exec "${BENCH_BIN:?run through bench/run}/plan-gemm-bench" "$@"
