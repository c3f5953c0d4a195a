#!/usr/bin/env bash
# The whole test suite on the CPU backends under AddressSanitizer + UndefinedBehaviorSanitizer,
# with floating-point traps (invalid, divide-by-zero, overflow) enabled while tests run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset asan
cmake --build --preset asan
ctest --preset asan
