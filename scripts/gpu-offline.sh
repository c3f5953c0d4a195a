#!/usr/bin/env bash
# GPU verification where nothing can be installed: a machine with an NVIDIA GPU and its driver but
# no network and none of Debian's libraries (a lent GPU box). The binaries are built on the
# development machine and carried (scripts/gpu-check.sh runs the same two steps on one machine
# that can install and build):
#
#   scripts/gpu-offline.sh pack [BUILD]    here, after `cmake --build build/ci`: BUILD's (default
#       build/ci) smash, smash_bench, smash_bench_pile and CUDA test binaries, stripped, with every
#       shared library they load except the C/C++ runtime and the driver, into .gpu/smash-gpu.tar.xz
#       (ignored by git; about 20 MB). Copy the repository with it to the GPU machine.
#   scripts/gpu-offline.sh run [OUT] [--quick]   there, in the repository root: unpacks, then
#       runs on the carried binaries the CUDA tests, the benchmarks (--quick: smaller) with
#       the time of every kernel measured (docs/profiling.md), and compute-sanitizer (memcheck,
#       racecheck, initcheck, synccheck) on a small pile and on the lab scene — writing each
#       step's output to OUT (default bench/results/<gpu-name>). Exits non-zero at the first
#       failing test or sanitizer error; a benchmark that fails is reported and the run goes on.
#
# The binaries must be built for the GPU's architecture (sm_90: H100, H200) on x86-64, with a
# glibc no newer than the GPU machine's (Debian 12's 2.36 runs on Ubuntu 24.04's 2.39).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
pack=.gpu/smash-gpu.tar.xz

if [ "$mode" = pack ]; then
  build=${2:-build/ci}
  bins="smash smash_bench smash_bench_pile tests/smash_cuda_tests tests/smash_device_math_tests"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/bin" "$stage/lib" .gpu
  for b in $bins; do
    [ -x "$build/$b" ] || { echo "gpu-offline: $build/$b is missing (build the CUDA build first)" >&2; exit 1; }
    # Host symbols stay (compute-sanitizer's backtraces name functions); debug sections go.
    strip --strip-debug -o "$stage/bin/$(basename "$b")" "$build/$b"
    if ldd "$build/$b" | grep -q "not found"; then
      echo "gpu-offline: $build/$b has libraries that are not found here:" >&2
      ldd "$build/$b" | grep "not found" >&2
      exit 1
    fi
  done
  # Every library the binaries load, but glibc's own (the GPU machine's is newer), the C++ runtime
  # and the driver (libcuda: the GPU machine's own).
  for b in $bins; do ldd "$build/$b"; done | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libmvec|libdl|librt|libresolv|libpthread|libstdc\+\+|libgcc_s|libcuda|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  { git describe --always --dirty 2>/dev/null || echo unknown; date -u +%Y-%m-%dT%H:%M:%SZ; } > "$stage/BUILT_FROM"
  tar cf - -C "$stage" bin lib BUILT_FROM | xz -6 -T0 > "$pack"
  echo "gpu-offline: wrote $pack ($(du -h "$pack" | cut -f1)); libraries: $(ls "$stage/lib" | tr '\n' ' ')"
  exit 0
fi

[ "$mode" = run ] || { echo "usage: scripts/gpu-offline.sh pack [BUILD] | run [OUT] [--quick]" >&2; exit 2; }
shift
out="" quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *) out=$arg ;;
  esac
done
[ -f "$pack" ] || { echo "gpu-offline: $pack is missing (scripts/gpu-offline.sh pack, on the build machine)" >&2; exit 1; }
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-offline: no NVIDIA GPU visible here (nvidia-smi -L failed); nothing to verify" >&2
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
out=${out:-bench/results/$slug}
mkdir -p "$out"
model=h200
case "$gpu" in
  *H100*) model=h100 ;;
  *H200*) ;;
  *) echo "gpu-offline: no model of $gpu; its measurements are printed beside the H200 model" ;;
esac
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
tar xJf "$pack" -C "$root"
export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SMASH_SOURCE_DIR=$PWD  # the tests' scenes and meshes
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
bin=$root/bin
for b in "$bin"/*; do
  missing=$(ldd "$b" | grep "not found" || true)
  [ -z "$missing" ] || { echo "gpu-offline: $(basename "$b"): libraries not found: $missing" >&2; exit 1; }
done
{ date -u +%Y-%m-%dT%H:%M:%SZ; echo "binaries built from: $(head -1 "$root/BUILT_FROM")"; nvidia-smi; } > "$out/device.txt"
echo "gpu-offline: $gpu -> $out (GPU model: $model)"
step() { echo; echo "== $*"; }

step "device math and CUDA tests"
"$bin/smash_device_math_tests" 2>&1 | tee "$out/device_math.txt"
"$bin/smash_cuda_tests" -d yes > "$out/cuda_tests.txt" 2>&1 || {
  rc=$?
  tail -40 "$out/cuda_tests.txt"
  [ "$rc" = 77 ] && echo "gpu-offline: the CUDA tests were skipped although nvidia-smi sees a GPU" >&2
  exit 1
}
grep -v "^[0-9.]* s: " "$out/cuda_tests.txt" | tail -3

step "benchmarks (measured, with the time of every kernel), the GPU model beside them"
bench() {  # name, command...: a failing benchmark is reported, the others still run
  local name=$1
  shift
  "$@" > "$out/$name.txt" 2>&1 || echo "gpu-offline: $name failed (exit $?), see $out/$name.txt"
  grep -E "^(cuda|omp|smash-cuda) |^MEASURED" "$out/$name.txt" || true
}
bodies=1,1024,4096,16384 frames64k=60
[ "$quick" = 1 ] && bodies=1,1024 frames64k=10
for scene in free resting; do
  bench "many_bodies_$scene" "$bin/smash_bench" --backends omp,cuda --bodies "$bodies" --scene "$scene" \
    --seconds 0.5 --gpu-model "$model" --machine "$slug" --out "$out/many_bodies_$scene.json"
done
bench many_bodies_resting_manifold8 "$bin/smash_bench" --backends cuda --bodies "$bodies" --scene resting \
  --max-contacts-per-collider 8 --seconds 0.5 --machine "$slug" --out "$out/many_bodies_resting_manifold8.json"
# The piles on CUDA alone: their GPU model reruns the whole pile on the OpenMP backend (minutes on
# 16 threads; the development machine prints it: docs/profiling.md).
bench pile_rain_1k "$bin/smash_bench_pile" --scene scenes/rain_1k.json --backends cuda \
  --machine "$slug" --out "$out/pile_rain_1k.json"
bench pile_rain_64k "$bin/smash_bench_pile" --scene scenes/rain_64k.json --backends cuda --frames "$frames64k" \
  --machine "$slug" --out "$out/pile_rain_64k.json"
step "compute-sanitizer"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "gpu-offline: compute-sanitizer not found; the sanitizer step is not run" >&2; exit 1; }
: > "$out/compute_sanitizer.txt"
for tool in memcheck racecheck initcheck synccheck; do
  for scene in scenes/pile_100.json scenes/lab_bunny.json; do
    echo "-- $tool $scene" | tee -a "$out/compute_sanitizer.txt"
    # As in gpu-check.sh: 3 frames fail the scenes' rest checks (exit 1), not the point here.
    # SANITIZER_SECONDS bounds each run (default 600); one that runs out is reported, not failed.
    rc=0
    timeout "${SANITIZER_SECONDS:-600}" "$sanitizer" --tool "$tool" --error-exitcode 9 \
      "$bin/smash" run "$scene" --backend cuda --frames 3 --quiet >> "$out/compute_sanitizer.txt" 2>&1 || rc=$?
    tail -1 "$out/compute_sanitizer.txt"
    if [ "$rc" = 124 ]; then
      echo "gpu-offline: compute-sanitizer $tool on $scene did not finish in ${SANITIZER_SECONDS:-600} s" | tee -a "$out/compute_sanitizer.txt"
    elif [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
      echo "gpu-offline: compute-sanitizer $tool on $scene failed (exit $rc)" >&2
      exit 1
    fi
  done
done

echo
echo "gpu-offline: done; results in $out (docs/profiling.md explains how to read them)."
