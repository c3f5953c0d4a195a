#!/usr/bin/env bash
# One command for anyone with an NVIDIA GPU on a machine that can install and build
# (docs/profiling.md, "Verifying on a GPU"):
#   1. builds smash with CUDA (warnings as errors) and checks the kernels' ptxas budget;
#   2. packs the binaries and runs scripts/gpu-offline.sh's checks on them: the CUDA tests (the
#      backend-parity suite against the CPU reference, repeatability, host reads per step, the
#      device math), the benchmarks (free and resting bunnies, the rain_1k and rain_64k piles)
#      with the GPU model beside the measured stage times and every kernel's time, and
#      compute-sanitizer memcheck, racecheck, initcheck and synccheck on a small pile and the lab;
# and writes everything to bench/results/<gpu-name>/ — commit that folder. Exits non-zero at the
# first failing step.
#
#   scripts/gpu-check.sh [--quick]      (--quick: smaller benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
[ "${1:-}" = "--quick" ] && quick=(--quick)

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU visible here (nvidia-smi -L failed); nothing to verify" >&2
  exit 2
fi
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
export PATH="$PATH:/usr/local/cuda/bin"

echo "== build (CUDA on, warnings are errors)"
cmake --preset ci -DSMASH_CUDA=ON
cmake --build --preset ci
python3 scripts/gpu_budget.py --build build/ci

scripts/gpu-offline.sh pack build/ci
scripts/gpu-offline.sh run "${quick[@]}"
# The budget beside the results (gpu-offline.sh run chose the folder from the GPU's name).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
cp build/ci/gpu-budget.txt "bench/results/$slug/gpu_budget.txt"
echo "gpu-check: done. Commit bench/results/$slug."
