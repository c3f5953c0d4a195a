#!/usr/bin/env bash
# Builds everything with warnings as errors (the CUDA parts too when nvcc is present) and runs
# every test. Tests that need a GPU report "skipped" on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
