#!/usr/bin/env bash
# device run 29 (prepared 2026-11-29, not yet run: no GPU was lent that session): the chunk and
# per-body segment kernels on lanes (issue 10) — IntegrateChunkSums, ChunkContactCounts,
# SweptChunkContactCounts, ChunkContactsScatter, ChunkDeepest a warp a chunk; BodyMatchSums,
# PushOutApply, KeepContacts a warp a body (math/lanes.h sumRowsInOrder, firstLargestOf,
# compactInOrder). What it must show: the device math (with the new lanes test: a warp's result
# equals the lanes in order, to the bit), the CUDA suite, CUDA's poses.csv equal to OpenMP's for
# the shipped scenes (every CUDA step runs the changed kernels), racecheck on a pile and a resting
# scene (sumRowsInOrder stages rows in shared memory), memcheck, and the timings side by side in
# one lease: SMASH_CUDA_LANES=0 runs every lanes functor one thread an element, as before this
# change (and SolveColliderContacts, ShockVelocities, SweepPairColor as before their warps), so
# its per-kernel lines are the old form's. Pack with scripts/gpu-offline.sh pack build/ci; carry
# .gpu; about 4-5 minutes of command.
set -u
r=/tmp/r29; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r29.tgz -C $r .; }
timeout 30 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -2 $r/device_math.txt | tr '\n' ' ')"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
grep -E "FAILED|firstApart" -A2 $r/cuda_tests.txt | head -30
T; save
bits() {  # name scene-args...
  local name=$1; shift
  for be in cuda omp; do
    timeout 60 $N/smash run "$@" --backend $be --out $r/bits/${name}_$be --no-gltf --quiet > $r/bits/${name}_$be.log 2>&1
    echo "$name $be rc=$? $(md5sum < $r/bits/${name}_$be/poses.csv | cut -c1-8) $(python3 -c "import json;j=json.load(open('$r/bits/${name}_$be/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'])" 2>&1)"
    rm -f $r/bits/${name}_$be/poses.csv
  done
}
bits lab_bunny_sm scenes/lab_bunny.json
bits lab_bunny_impulse scenes/lab_bunny.json --method impulse
bits pile_100 scenes/pile_100.json
bits bowl scenes/bowl.json
bits box_stack scenes/box_stack.json
bits ramp scenes/ramp.json
bits rain_1k_150 scenes/rain_1k.json --frames 150
T; save
for lanes in 1 0; do
  export SMASH_CUDA_LANES=$lanes
  timeout 40 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/rain_1k_lanes$lanes.json > $r/rain_1k_lanes$lanes.txt 2>&1
  echo "lanes=$lanes rain_1k: $(grep -E '^smash-cuda ' $r/rain_1k_lanes$lanes.txt)"
  for sc in resting free; do
    timeout 40 $N/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/${sc}_lanes$lanes.json > $r/${sc}_lanes$lanes.txt 2>&1
    echo "lanes=$lanes $sc rc=$?"; grep -E "^cuda " $r/${sc}_lanes$lanes.txt
  done
  T; save
done
unset SMASH_CUDA_LANES
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 $san --tool racecheck --error-exitcode 9 $N/smash run scenes/pile_100.json --backend cuda --frames 3 --quiet --out $r/san_a > $r/san_racecheck_pile_100.txt 2>&1; echo "racecheck pile_100 rc=$? $(tail -1 $r/san_racecheck_pile_100.txt)"
timeout 60 $san --tool racecheck --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 3 --quiet --out $r/san_b > $r/san_racecheck_lab_bunny.txt 2>&1; echo "racecheck lab_bunny rc=$? $(tail -1 $r/san_racecheck_lab_bunny.txt)"
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 30 --quiet --out $r/san_c > $r/san_memcheck_lab_bunny.txt 2>&1; echo "memcheck lab_bunny 30 frames rc=$? $(tail -1 $r/san_memcheck_lab_bunny.txt)"
rm -rf $r/san_?
T; save
