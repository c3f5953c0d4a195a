#!/usr/bin/env bash
# device run 16: the head after run 15 (sweepOneSided is the scan; one GPU thread scans one
# contact: the plain chain) against run 15's binary (609fd01), alternating: CUDA tests; bits;
# synccheck/racecheck on lab_bunny, memcheck on box_stack; resting bunnies; rain_1k.
set -u
r=/tmp/r16; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r16.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab --no-gltf --quiet > $r/bits/lab.log 2>&1; echo "lab_bunny rc=$? $(md5sum < $r/bits/lab/poses.csv) (runs 10-15: 59ccf551ffbdda413b28fc08459274f0)"
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_$v --no-gltf --quiet > $r/bits/rain_$v.log 2>&1; echo "rain_1k 150 frames $v rc=$? $(md5sum < $r/bits/rain_$v/poses.csv) (runs 13-14: 83fa5956..., run 15: 1a09d1f9...)"
  timeout 40 $X/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack_$v --no-gltf --quiet > $r/bits/stack_$v.log 2>&1; echo "box_stack $v rc=$? $(md5sum < $r/bits/stack_$v/poses.csv) (runs 13-14: 9bbc70c6..., run 15: d5eab483...)"
done
rm -f $r/bits/*/poses.csv
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in synccheck racecheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 3 --quiet > $r/san_${tool}_lab_bunny.txt 2>&1; echo "$tool lab_bunny rc=$? $(tail -1 $r/san_${tool}_lab_bunny.txt)"
done
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet > $r/san_memcheck_box_stack.txt 2>&1; echo "memcheck box_stack rc=$? $(tail -1 $r/san_memcheck_box_stack.txt)"
T; save
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 80 $X/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine $slug --out $r/ab_resting_${v}.json > $r/ab_resting_${v}.txt 2>&1
  echo "resting $v"; grep -E "^cuda " $r/ab_resting_${v}.txt
done; T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}_$i.json > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
