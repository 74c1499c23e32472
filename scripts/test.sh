#!/usr/bin/env bash
# Runs every GoogleTest suite (through ctest), every lit test and a slice of
# each fuzz target (FUZZ_SECONDS, default 30; 0 skips it), then prints one
# closing line counting all: "tests: N passed, M failed".
set -uo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

ctest_log=$(mktemp)
lit_log=$(mktemp)
trap 'rm -f "$ctest_log" "$lit_log"' EXIT

echo "== GoogleTest (ctest)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" 2>&1 | tee "$ctest_log"
ctest_status=${PIPESTATUS[0]}

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$lit_log"
lit_status=${PIPESTATUS[0]}

# ctest: "100% tests passed, 0 tests failed out of 123", or (CMake 4)
# "100% tests passed out of 123" and "97% tests passed, 4 tests failed out
# of 123".
ctest_total=$(grep -Eo 'tests (passed|failed) out of [0-9]+' "$ctest_log" | tail -1 | grep -Eo '[0-9]+$' || echo 0)
ctest_failed=$(grep -Eo '[0-9]+ tests failed out of' "$ctest_log" | grep -Eo '^[0-9]+' || echo 0)
# lit: "  Passed: 12" / "  Failed: 1" (absent when zero)
lit_passed=$(grep -Eo '^ *Passed *: *[0-9]+' "$lit_log" | grep -Eo '[0-9]+$' || echo 0)
lit_failed=$(grep -Eo '^ *Failed *: *[0-9]+' "$lit_log" | grep -Eo '[0-9]+$' || echo 0)

# A slice of each libFuzzer target (ASan + UBSan build in build-sanitize/):
# FUZZ_SECONDS per target, 0 to skip.
fuzz_seconds=${FUZZ_SECONDS:-30}
fuzz_passed=0 fuzz_failed=0
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzz (${fuzz_seconds} s per target)"
  fuzz_log=$(mktemp)
  scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$fuzz_log"
  fuzz_passed=$(grep -Eo '^fuzz: [0-9]+ passed' "$fuzz_log" | grep -Eo '[0-9]+' || echo 0)
  fuzz_failed=$(grep -Eo '^fuzz: [0-9]+ passed, [0-9]+ failed' "$fuzz_log" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+' || echo 1)
  rm -f "$fuzz_log"
fi

passed=$(( ctest_total - ctest_failed + lit_passed + fuzz_passed ))
failed=$(( ctest_failed + lit_failed + fuzz_failed ))
if [ "$ctest_status" -ne 0 ] && [ "$ctest_failed" -eq 0 ]; then failed=$(( failed + 1 )); fi
if [ "$lit_status" -ne 0 ] && [ "$lit_failed" -eq 0 ]; then failed=$(( failed + 1 )); fi
if [ "$passed" -eq 0 ]; then
  echo "test: no test ran" >&2
  failed=$(( failed + 1 ))
fi
echo "gtest: $(( ctest_total - ctest_failed )) passed, $ctest_failed failed; lit: $lit_passed passed, $lit_failed failed; fuzz: $fuzz_passed passed, $fuzz_failed failed"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
