#!/usr/bin/env bash
# device run 18: forEachLanes' warps striding (at most 32 warps an SM) against run 17's binary
# (every element its own warp): CUDA tests, bits, rain_64k and rain_1k alternating, resting.
set -u
r=/tmp/r18; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r18.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
timeout 40 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain --no-gltf --quiet > $r/bits/rain.log 2>&1; echo "rain_1k 150 frames rc=$? $(md5sum < $r/bits/rain/poses.csv) (runs 15-17: 1a09d1f9...)"
timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab --no-gltf --quiet > $r/bits/lab.log 2>&1; echo "lab_bunny rc=$? $(md5sum < $r/bits/lab/poses.csv) (runs 10-16: 59ccf551...)"
rm -f $r/bits/*/poses.csv
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/ab_rain_64k_${v}_$i.json > $r/ab_rain_64k_${v}_$i.txt 2>&1
  echo "rain_64k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}_$i.txt)"
done; done
T; save
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}.json > $r/ab_rain_1k_${v}.txt 2>&1
  echo "rain_1k $v: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}.txt)"
  timeout 80 $X/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine $slug --out $r/ab_resting_${v}.json > $r/ab_resting_${v}.txt 2>&1
  echo "resting $v"; grep -E "^cuda " $r/ab_resting_${v}.txt
done
T; save
