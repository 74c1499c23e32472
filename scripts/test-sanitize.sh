#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviourSanitizer in
# build-sanitize/ (the same build the fuzz targets use) and runs the
# GoogleTest and lit suites there; LeakSanitizer is on. Prints the closing
# "tests: N passed, M failed" line of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-sanitize
cd "$root"
. "$root/scripts/sanitize-build.sh"
configure_sanitize_build "$build"
ninja -C "$build"
FUZZ_SECONDS=0 exec scripts/test.sh "$build"
