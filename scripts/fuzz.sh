#!/usr/bin/env bash
# Builds the libFuzzer targets with ASan + UBSan (build-sanitize/) and runs
# each for a bounded time on a corpus seeded from real outputs: packages
# ipu-translate writes for the lit test programs, and the MLIR programs of
# test/ and examples/; kernel bodies the kernel fuzzer builds from bytes.
# Inputs in fuzz/regressions/<target>/ (crashes found
# before) run first and must pass.
#   scripts/fuzz.sh [SECONDS]      seconds per target (default 60)
# Prints one line per target and a closing "N passed, M failed" line; exits
# non-zero when a target crashes, leaks, hangs or runs out of memory. A
# crashing input is kept in build-sanitize/fuzz-artifacts/.
set -uo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-sanitize}
cd "$root"

. "$root/scripts/sanitize-build.sh"
configure_sanitize_build "$build" || exit 1
ninja -C "$build" package-fuzzer compile-fuzzer kernel-fuzzer ipu-opt ipu-translate > /dev/null || {
  ninja -C "$build" package-fuzzer compile-fuzzer kernel-fuzzer ipu-opt ipu-translate | tail -20
  exit 1
}

# The compiler's progress log would only slow the search down.
export IPU_LOG=${IPU_LOG:-off}
# The package and kernel fuzzers compile kernel bodies: each new body once.
export IPU_KERNEL_CACHE=$build/fuzz-kernel-cache
corpus=$build/fuzz-corpus
artifacts=$build/fuzz-artifacts
mkdir -p "$corpus/package" "$corpus/compile" "$corpus/kernel" "$artifacts"

# Seeds: every single-file lit program and example, and its package.
for source in test/Pipeline/*.mlir test/Transforms/*.mlir test/Dialect/*/*.mlir examples/*.mlir; do
  name=$(basename "$source" .mlir)
  [ "$(wc -c < "$source")" -le 16384 ] && cp "$source" "$corpus/compile/$name.mlir"
  if "$build/bin/ipu-opt" "$source" --ipu-compile="target=ipu21-4" -o "$corpus/$name.lowered" 2> /dev/null &&
     "$build/bin/ipu-translate" --ipu-to-package "$corpus/$name.lowered" \
       -o "$corpus/package/$name.ipuexe" 2> /dev/null; then :; fi
  rm -f "$corpus/$name.lowered"
done

passed=0 failed=0
for target in package compile kernel; do
  fuzzer=$build/bin/$target-fuzzer
  log=$build/$target-fuzzer.log
  regressions=(fuzz/regressions/$target/*)
  status=0
  if [ -e "${regressions[0]}" ]; then
    "$fuzzer" "${regressions[@]}" > "$log.regressions" 2>&1 || status=$?
  fi
  if [ $status -eq 0 ]; then
    "$fuzzer" "$corpus/$target" -max_total_time="$seconds" -timeout=20 \
      -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" > "$log" 2>&1 || status=$?
  fi
  executions=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" 2>/dev/null | grep -Eo '[0-9]+$' || echo 0)
  if [ $status -eq 0 ]; then
    passed=$((passed + 1)); verdict=PASS
  else
    failed=$((failed + 1)); verdict=FAIL
    tail -30 "$log.regressions" "$log" 2> /dev/null
  fi
  echo "fuzz: target=$target-fuzzer seconds=$seconds executions=$executions regressions=$([ -e "${regressions[0]}" ] && echo ${#regressions[@]} || echo 0) result=$verdict"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
