#!/usr/bin/env bash
# bench=kernels: cycle estimates of the tile kernels (gemm, reduce, copy)
# against poplibs' AMP formula and the measured AMP line; see
# bench/kernels-bench.cpp. Without options: the calibration table and a
# few multi-pass, reduce, copy and elementwise cases, and docs/Calibration.md
# written again from the same estimators (kernels-bench --doc).
#   bench/run kernels --kernel gemm --shape MxKxN [--in f16] [--partials f32]
#                     [--out T] [--held interleaved|standard]
#                     [--streamed standard|interleaved]
#   bench/run kernels --kernel reduce --shape MxN --count C [--in f32] [--out T]
#   bench/run kernels --kernel copy --bytes B
set -euo pipefail
bin="${BENCH_BIN:?run through bench/run}/kernels-bench"
if [ $# -eq 0 ]; then
  "$bin"
  "$bin" --doc "${BENCH_ROOT:?run through bench/run}/docs/Calibration.md"
  echo "bench=kernels wrote=docs/Calibration.md"
else
  exec "$bin" "$@"
fi
