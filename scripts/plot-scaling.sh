#!/usr/bin/env bash
# The scaling plot of README "Performance": smash_bench over 1 to 16,384 bunnies of 3,483
# particles, free and resting, on the OpenMP backend (and CUDA where a GPU is present), with the
# machine's bandwidth bound; the JSON and scaling.png go to bench/results/<machine>/. Installs
# matplotlib (bench/requirements-plot.txt) into build/venv-plot; a second run installs nothing.
# Usage:
#   scripts/plot-scaling.sh [MACHINE-NAME] [BODIES]
# SMASH_BUILD=DIR uses an existing build folder's smash_bench (default: the default preset's).
# About 5 minutes on the 2-core VM; 16,384 bunnies need about 9 GiB of memory.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
venv=build/venv-plot
scripts/python-env.sh "$venv" bench/requirements-plot.txt
build="${SMASH_BUILD:-build/default}"
if [ "$build" = build/default ]; then
  [ -f .cudacxx.env ] && source .cudacxx.env
  cmake --preset default >/dev/null
fi
cmake --build "$build" --target smash_bench
machine="${1:-$(hostname)}"
bodies="${2:-1,4,16,64,256,1024,4096,16384}"
out="bench/results/$machine"
mkdir -p "$out"
for scene in free resting; do
  "$build/smash_bench" --backends omp,cuda --bodies "$bodies" --scene "$scene" --seconds 2 \
    --machine "$machine" --out "$out/scaling_$scene.json" | tee "$out/scaling_$scene.txt"
done
"$venv/bin/python" bench/plot_scaling.py "$out/scaling_free.json" "$out/scaling_resting.json" -o "$out/scaling.png"
