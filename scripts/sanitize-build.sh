# Sourced by scripts/fuzz.sh and scripts/test-sanitize.sh: configures the
# ASan + UBSan build (with the fuzz targets) in $1 unless it already is, and
# sets the sanitizers' run-time options.
configure_sanitize_build() {
  local build=$1
  [ -f "$build/build.ninja" ] && return 0
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
    -DIPU_SANITIZE=ON -DIPU_FUZZ=ON > /dev/null
}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
