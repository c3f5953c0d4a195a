#!/usr/bin/env bash
# device run 15: the lone body's collider solve on a warp (math/lanes.h, issue 10). One binary;
# SMASH_CUDA_LANES=0 runs the same solve on one thread a body (the form before the warps).
# CUDA tests; the same bits with and without the warps (lab_bunny, bunny_grid); memcheck,
# racecheck, synccheck on lab_bunny; resting bunnies alternating lanes 0/1 twice; rain_1k, box_stack
# bits and speed (their lone-body solve, PrepareBodiesWide, changed shape: compared with run 14).
set -u
r=/tmp/r15; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r15.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
for s in lab_bunny bunny_grid; do for l in 1 0; do
  SMASH_CUDA_LANES=$l timeout 60 $N/smash run scenes/$s.json --backend cuda --out $r/bits/${s}_$l --no-gltf --quiet > $r/bits/${s}_$l.log 2>&1
  echo "$s lanes=$l rc=$? $(md5sum < $r/bits/${s}_$l/poses.csv)"
done; done
echo "(lab_bunny on the H100 runs 10-12 and H200 run 13: 59ccf551ffbdda413b28fc08459274f0)"
timeout 40 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain --no-gltf --quiet > $r/bits/rain.log 2>&1; echo "rain_1k 150 frames rc=$? $(md5sum < $r/bits/rain/poses.csv) (runs 13-14: 83fa59567661f9b55bf3edae0c04d250)"
timeout 40 $N/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack --no-gltf --quiet > $r/bits/stack.log 2>&1; echo "box_stack rc=$? $(md5sum < $r/bits/stack/poses.csv) (runs 13-14: 9bbc70c630afaf6612cbd097bdff3f2d)"
rm -f $r/bits/*/poses.csv
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 3 --quiet > $r/san_${tool}_lab_bunny.txt 2>&1; echo "$tool lab_bunny rc=$? $(tail -1 $r/san_${tool}_lab_bunny.txt)"
done
T; save
for i in 1 2; do for l in 0 1; do
  SMASH_CUDA_LANES=$l timeout 80 $N/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine $slug --out $r/ab_resting_lanes${l}_$i.json > $r/ab_resting_lanes${l}_$i.txt 2>&1
  echo "resting lanes=$l $i"; grep -E "^cuda " $r/ab_resting_lanes${l}_$i.txt
done; T; save; done
for i in 1 2; do
  timeout 30 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug > $r/rain_1k_$i.txt 2>&1
  echo "rain_1k $i: $(grep -E '^smash-cuda ' $r/rain_1k_$i.txt)"
done
T; save
