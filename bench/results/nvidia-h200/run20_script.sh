#!/usr/bin/env bash
# device run 20: a Jacobi round's pair on a warp (SweepPairContacts over lanes, striding; 4299400)
# against run 19's binary (85381ea): CUDA tests; the same bits with SMASH_CUDA_LANES=0 and 1;
# synccheck and racecheck on box_stack; rain_64k and rain_1k alternating.
set -u
r=/tmp/r20; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r20.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
for l in 1 0; do
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_$l --no-gltf --quiet > $r/bits/rain_$l.log 2>&1; echo "rain_1k 150 frames lanes=$l rc=$? $(md5sum < $r/bits/rain_$l/poses.csv) (runs 15-19: 1a09d1f9...)"
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack_$l --no-gltf --quiet > $r/bits/stack_$l.log 2>&1; echo "box_stack lanes=$l rc=$? $(md5sum < $r/bits/stack_$l/poses.csv) (runs 17-19: d5eab483...)"
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/pile_100.json --backend cuda --out $r/bits/pile_$l --no-gltf --quiet > $r/bits/pile_$l.log 2>&1; echo "pile_100 lanes=$l rc=$? $(md5sum < $r/bits/pile_$l/poses.csv) (runs 17-19: 51822cdd...)"
done
rm -f $r/bits/*/poses.csv
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in synccheck racecheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet > $r/san_${tool}_box_stack.txt 2>&1; echo "$tool box_stack rc=$? $(tail -1 $r/san_${tool}_box_stack.txt)"
done
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/ab_rain_64k_${v}_$i.json > $r/ab_rain_64k_${v}_$i.txt 2>&1
  echo "rain_64k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}_$i.txt)"
done; done
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}_$i.json > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
