#!/usr/bin/env bash
# bench=kernels: cycle estimates of the tile kernels (gemm, reduce, copy)
# against poplibs' AMP formula and the measured AMP line; see
# bench/kernels-bench.cpp. Without options: the calibration table
# (docs/Calibration.md) and a few multi-pass, reduce and copy cases.
#   bench/run kernels --kernel gemm --shape MxKxN [--in f16] [--partials f32]
#                     [--out T] [--held interleaved|standard]
#                     [--streamed standard|interleaved]
#   bench/run kernels --kernel reduce --shape MxN --count C [--in f32] [--out T]
#   bench/run kernels --kernel copy --bytes B
set -euo pipefail
exec "${BENCH_BIN:?run through bench/run}/kernels-bench" "$@"
