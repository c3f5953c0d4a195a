#!/usr/bin/env bash
# device run 24: the CUDA build without FMA contraction (nvcc --fmad=false, the new default) against
# the same head contracting (run 22's binary, 1112e18, in .gpu/before.tar.xz). The CUDA tests with
# the new bitwise test (CUDA against OpenMP: free bodies under both methods, lab_bunny, box_stack,
# pile_100 in both layouts); CUDA's poses.csv against OpenMP's from the same binary on rain_1k
# (150 frames), pile_100, box_stack, lab_bunny, bunny_grid; the cost of no contraction: rain_1k
# and the resting and free bunnies alternating, rain_64k once each; rain_1k's 25 s on the new build.
set -u
r=/tmp/r24; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r24.tgz -C $r .; }
timeout 20 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
grep -E "OpenMP backend's bits|FAILED|firstApart|with expansion" -A2 $r/cuda_tests.txt | head -40
T; save
bits() {  # name scene-args...
  local name=$1; shift
  for be in cuda omp; do
    timeout 60 $N/smash run "$@" --backend $be --out $r/bits/${name}_$be --no-gltf --quiet > $r/bits/${name}_$be.log 2>&1
    echo "$name $be rc=$? $(md5sum < $r/bits/${name}_$be/poses.csv | cut -c1-8) $(python3 -c "import json;j=json.load(open('$r/bits/${name}_$be/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'])" 2>&1)"
    rm -f $r/bits/${name}_$be/poses.csv
  done
}
bits rain_1k_150 scenes/rain_1k.json --frames 150
bits pile_100 scenes/pile_100.json
bits box_stack scenes/box_stack.json
bits lab_bunny scenes/lab_bunny.json
bits bunny_grid scenes/bunny_grid.json
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}_$i.json > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
for sc in resting free; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/ab_${sc}_$v.json > $r/ab_${sc}_$v.txt 2>&1
  echo "$sc $v"; grep -E "^cuda " $r/ab_${sc}_$v.txt
done; done
T; save
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 50 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/ab_rain_64k_$v.json > $r/ab_rain_64k_$v.txt 2>&1
  echo "rain_64k $v: $(grep -E '^smash-cuda ' $r/ab_rain_64k_$v.txt)"
done
T; save
timeout 60 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 1500 --machine $slug --out $r/rain_1k_25s.json > $r/rain_1k_25s.txt 2>&1
echo "rain_1k 25 s new rc=$?: $(grep -E '^smash-cuda ' $r/rain_1k_25s.txt)"
T; save
