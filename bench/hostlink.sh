#!/usr/bin/env bash
# bench=hostlink: what streaming a tensor costs, the host link carrying each
# byte once and the exchange fanning the copies out as a timed phase; see
# bench/hostlink-bench.cpp.
#   bench/run hostlink                              synthetic weight layouts
#   bench/run hostlink --package FILE [--streams]   a package's streams
set -euo pipefail
exec "${BENCH_BIN:?run through bench/run}/hostlink-bench" "$@"
