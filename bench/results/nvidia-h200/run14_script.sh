#!/usr/bin/env bash
# device run 14: e920488 (a Gauss-Seidel colour's launch over min(pair slots, bodies) threads)
# against ff15ba2 (run 13's head): CUDA tests; the same bits as run 13 (rain_1k 150 frames,
# box_stack); racecheck on box_stack; rain_64k (10 frames) and rain_1k (150) alternating.
set -u
r=/tmp/r14; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r14.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
timeout 40 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain --no-gltf --quiet > $r/bits/rain.log 2>&1; echo "rain_1k 150 frames rc=$? $(md5sum < $r/bits/rain/poses.csv) (run 13: 83fa59567661f9b55bf3edae0c04d250)"
timeout 40 $N/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack --no-gltf --quiet > $r/bits/stack.log 2>&1; echo "box_stack rc=$? $(md5sum < $r/bits/stack/poses.csv) (run 13: 9bbc70c630afaf6612cbd097bdff3f2d)"
rm -f $r/bits/*/poses.csv
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 40 $san --tool racecheck --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet > $r/san_racecheck_box_stack.txt 2>&1; echo "racecheck box_stack rc=$? $(tail -1 $r/san_racecheck_box_stack.txt)"
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug > $r/ab_rain_64k_${v}_$i.txt 2>&1
  echo "rain_64k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}_$i.txt)"
done; T; save; done
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
