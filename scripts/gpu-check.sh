#!/usr/bin/env bash
# One command for anyone with an NVIDIA GPU (docs/profiling.md, "Verifying on a GPU"):
#   1. builds smash with CUDA (warnings as errors) and checks the kernels' ptxas budget;
#   2. runs the CUDA tests (the backend-parity suite against the CPU reference, repeatability,
#      host reads per step, the device math);
#   3. runs compute-sanitizer memcheck, racecheck, initcheck and synccheck on a small pile and
#      on the lab scene;
#   4. runs the benchmarks (free and resting bunnies, the rain_1k and rain_64k piles) with the GPU
#      model printed beside the measured stage times;
# and writes everything to bench/results/<gpu-name>/ — commit that folder. Exits non-zero at the
# first failing step.
#
#   scripts/gpu-check.sh [--quick]      (--quick: smaller benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU visible here (nvidia-smi -L failed); nothing to verify" >&2
  exit 2
fi
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
export PATH="$PATH:/usr/local/cuda/bin"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
out="bench/results/$slug"
mkdir -p "$out"
model=h200
case "$gpu" in
  *H100*) model=h100 ;;
  *H200*) model=h200 ;;
  *) echo "gpu-check: no model of $gpu; its measurements are printed beside the H200 model" ;;
esac
echo "gpu-check: $gpu -> $out (GPU model: $model)"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  git rev-parse HEAD 2>/dev/null || true
  nvidia-smi
  nvcc --version
} > "$out/device.txt"

step() { echo; echo "== $*"; }

step "build (CUDA on, warnings are errors)"
cmake --preset ci -DSMASH_CUDA=ON
cmake --build --preset ci
python3 scripts/gpu_budget.py --build build/ci | tee "$out/gpu_budget.txt"

step "CUDA tests"
ctest --test-dir build/ci -R "cuda_world_parity|device_math" --no-tests=error --output-on-failure 2>&1 | tee "$out/cuda_tests.txt"
if grep -q "Not Run\|Skipped" "$out/cuda_tests.txt"; then
  echo "gpu-check: the CUDA tests were skipped although nvidia-smi sees a GPU" >&2
  exit 1
fi

step "compute-sanitizer"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > "$out/compute_sanitizer.txt"
for tool in memcheck racecheck initcheck synccheck; do
  for scene in scenes/pile_100.json scenes/lab_bunny.json; do
    echo "-- $tool $scene" | tee -a "$out/compute_sanitizer.txt"
    # 3 frames are too few for the scenes' rest checks: their verdict (exit 1) is not the point
    # here; a sanitizer error exits 9, anything else but 0 and 1 is a failure too.
    rc=0
    "$sanitizer" --tool "$tool" --error-exitcode 9 \
      build/ci/smash run "$scene" --backend cuda --frames 3 --quiet >> "$out/compute_sanitizer.txt" 2>&1 || rc=$?
    tail -3 "$out/compute_sanitizer.txt"
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
      echo "gpu-check: compute-sanitizer $tool on $scene failed (exit $rc), see $out/compute_sanitizer.txt" >&2
      exit 1
    fi
  done
done

step "benchmarks (measured) with the GPU model beside them"
bodies="1,64,1024,4096"
[ "$quick" = 1 ] && bodies="1,1024"
for scene in free resting; do
  build/ci/smash_bench --backends omp,cuda --bodies "$bodies" --scene "$scene" --gpu-model "$model" \
    --machine "$slug" --out "$out/many_bodies_$scene.json" | tee "$out/many_bodies_$scene.txt"
done
build/ci/smash_bench_pile --scene scenes/rain_1k.json --backends omp,cuda --gpu-model "$model" \
  --machine "$slug" --out "$out/pile_rain_1k.json" | tee "$out/pile_rain_1k.txt"
frames=120
[ "$quick" = 1 ] && frames=10
build/ci/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames "$frames" --gpu-model "$model" \
  --machine "$slug" --out "$out/pile_rain_64k.json" | tee "$out/pile_rain_64k.txt"

echo
echo "gpu-check: done. Measured vs modelled per stage are in $out/*.txt (docs/profiling.md explains"
echo "how to read them). Commit $out."
