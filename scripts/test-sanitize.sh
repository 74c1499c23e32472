#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviourSanitizer in
# build-sanitize/ (the same build the fuzz targets use) and runs the
# GoogleTest and lit suites there; LeakSanitizer is on. Prints the closing
# "tests: N passed, M failed" line of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-sanitize
cd "$root"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
    -DIPU_SANITIZE=ON -DIPU_FUZZ=ON > /dev/null
fi
ninja -C "$build"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FUZZ_SECONDS=0 exec scripts/test.sh "$build"
