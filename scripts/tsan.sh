#!/usr/bin/env bash
# ThreadSanitizer over the functors the GPU runs, on the CPU: the OpenMP backend's per-particle
# layout runs them one particle (candidate pair, contact) per OpenMP iteration — the layout the
# CUDA backend runs — and TSan, with LLVM's OpenMP runtime and its Archer tool (which tells TSan
# about OpenMP's own synchronisation), reports any two iterations that touch the same memory
# without order. Runs the parity tests (every stage against the reference, independent bodies
# and body–body contacts), the 100-body pile and a sleeping stack woken by a slider (the island
# marks several threads store), on OpenMP per-particle only
# (SMASH_TEST_PER_PARTICLE_ONLY, SMASH_STEP_STRATEGY), the swept-contact unit tests, and the
# per-body layout's step split over threads for few bodies ("[split]": its own layouts). Any
# report fails the run (halt_on_error). On the 2-core VM (2026-12-07): 21 minutes with its build while
# it also ran the ten-pile soak, 4.5 minutes without the soak once built.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset tsan
cmake --build --preset tsan
archer=/usr/lib/llvm-14/lib/libarcher.so
[ -f "$archer" ] || { echo "tsan.sh: $archer not found (Debian package libomp-14-dev)"; exit 1; }
export OMP_TOOL_LIBRARIES="$archer"
# ignore_noninstrumented_modules: the OpenMP runtime itself is not instrumented (Archer asks for it).
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 ignore_noninstrumented_modules=1 second_deadlock_stack=1}"
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
export SMASH_TEST_PER_PARTICLE_ONLY=1 SMASH_STEP_STRATEGY=per-particle
# The canary first: a racy functor must be reported (exit 66), or the set-up is not trusted.
cccl=$(sed -n 's/^SMASH_CCCL_INCLUDE_DIR:PATH=//p' build/tsan/CMakeCache.txt)
clang++-14 -std=c++17 -O1 -g -fsanitize=thread -fopenmp -isystem "$cccl" \
  -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP tests/tsan/canary.cpp -o build/tsan/canary
if build/tsan/canary > build/tsan/canary.log 2>&1 || ! grep -q "data race" build/tsan/canary.log; then
  echo "tsan.sh: the canary's race was not reported; the ThreadSanitizer set-up is broken"
  cat build/tsan/canary.log
  exit 1
fi
echo "== tsan: the canary's race is reported"
cd build/tsan
# One process per group, so a report names the tests it came from.
# ("[bodies][pile]~[rest]": the 100-body pile; the pile soak of ten piles runs in test.sh.)
for tags in "[parity]" "[bodies][pile]~[rest]" "swept samples*" "sleeping: a stack falls asleep*" "[split]"; do
  echo "== tsan: smash_tests \"$tags\""
  ./tests/smash_tests "$tags" --order decl
done
echo "tsan: 0 reports"
