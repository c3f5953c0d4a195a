#!/usr/bin/env bash
# Builds everything with warnings as errors (the CUDA parts too when nvcc is present) and runs
# every test. Tests that need a GPU report "skipped" on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
# The Python module (docs/python.md) is built and tested with the rest: its environment first.
scripts/python-env.sh build/venv
cmake --preset ci -DSMASH_PYTHON=ON -DPython_EXECUTABLE="$PWD/build/venv/bin/python"
cmake --build --preset ci
# The CUDA kernels' register/stack/spill budget (kernels/gpu_budget.txt), from ptxas: no GPU needed.
if grep -q "kernels/backend_cuda.cu" build/ci/compile_commands.json 2>/dev/null; then
  python3 scripts/gpu_budget.py --build build/ci
fi
ctest --preset ci
