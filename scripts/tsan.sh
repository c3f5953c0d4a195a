#!/usr/bin/env bash
# ThreadSanitizer over the functors the GPU runs, on the CPU: the OpenMP backend runs them one
# particle (pair, contact) per OpenMP iteration — the per-particle strategy, the CUDA default —
# and TSan, with LLVM's OpenMP runtime and its Archer tool (which tells TSan about OpenMP's own
# synchronisation), reports any two iterations that touch the same memory without order.
# Runs the parity tests (every stage against the reference), the body–body and pile tests, and
# the tunnelling tests (the swept kernels). Any report fails the run (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset tsan
cmake --build --preset tsan
archer=/usr/lib/llvm-14/lib/libarcher.so
[ -f "$archer" ] || { echo "tsan.sh: $archer not found (Debian package libomp-14-dev)"; exit 1; }
export OMP_TOOL_LIBRARIES="$archer"
export ARCHER_OPTIONS="verbose=1"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4"
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
cd build/tsan
# One process per tag group, so a report names the tests it came from.
for tags in "[parity]" "[bodies][pile],[bodies][stack]" "[tunnel]" "[determinism]"; do
  echo "== tsan: smash_tests \"$tags\""
  ./tests/smash_tests "$tags" --order decl
done
echo "tsan: 0 reports"
