#!/usr/bin/env bash
# device run 19: a Gauss-Seidel colour's pair on a warp (SweepPairColor over lanes, 85381ea) against
# the head before it (10ffc8d): CUDA tests; the same bits with SMASH_CUDA_LANES=0 and 1; synccheck,
# racecheck, memcheck on box_stack (pairs from the first step); rain_1k and rain_64k alternating,
# rain_64k also without the striding limit; resting once; an Nsight Systems trace of rain_1k's
# graphs (in-graph kernel times) where nsys is installed.
set -u
r=/tmp/r19; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r19.tgz -C $r .; }
timeout 100 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
for l in 1 0; do
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_$l --no-gltf --quiet > $r/bits/rain_$l.log 2>&1; echo "rain_1k 150 frames lanes=$l rc=$? $(md5sum < $r/bits/rain_$l/poses.csv) (runs 15-17: 1a09d1f9...)"
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack_$l --no-gltf --quiet > $r/bits/stack_$l.log 2>&1; echo "box_stack lanes=$l rc=$? $(md5sum < $r/bits/stack_$l/poses.csv) (run 17: d5eab483...)"
  SMASH_CUDA_LANES=$l timeout 40 $N/smash run scenes/pile_100.json --backend cuda --out $r/bits/pile_$l --no-gltf --quiet > $r/bits/pile_$l.log 2>&1; echo "pile_100 lanes=$l rc=$? $(md5sum < $r/bits/pile_$l/poses.csv) (run 17: 51822cdd...)"
done
timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab --no-gltf --quiet > $r/bits/lab.log 2>&1; echo "lab_bunny rc=$? $(md5sum < $r/bits/lab/poses.csv) (runs 10-18: 59ccf551...)"
timeout 40 $B/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_base --no-gltf --quiet > $r/bits/rain_base.log 2>&1; echo "base rain_1k 150 frames rc=$? $(md5sum < $r/bits/rain_base/poses.csv)"
rm -f $r/bits/*/poses.csv
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in synccheck racecheck memcheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet > $r/san_${tool}_box_stack.txt 2>&1; echo "$tool box_stack rc=$? $(tail -1 $r/san_${tool}_box_stack.txt)"
done
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}_$i.json > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
for i in 1 2; do for v in base new new_nolimit; do X=$N; [ $v = base ] && X=$B; w=16; [ $v = new_nolimit ] && w=0
  SMASH_CUDA_STRIDING_WARPS=$w timeout 40 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/ab_rain_64k_${v}_$i.json > $r/ab_rain_64k_${v}_$i.txt 2>&1
  echo "rain_64k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}_$i.txt)"
done; done
T; save
timeout 60 $N/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine $slug --out $r/resting_new.json > $r/resting_new.txt 2>&1
echo "resting new"; grep -E "^cuda " $r/resting_new.txt
T; save
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-none}"
if [ -n "$nsys" ]; then
  timeout 120 $nsys profile --cuda-graph-trace=node --trace=cuda -o /tmp/rain_1k_nsys -f true $N/smash run scenes/rain_1k.json --backend cuda --frames 100 --out /tmp/nsys_out --no-gltf --no-csv --quiet > $r/nsys_log.txt 2>&1; echo "nsys rc=$?"
  timeout 60 $nsys stats --report cuda_gpu_kern_sum --format csv -o $r/rain_1k_kern /tmp/rain_1k_nsys.nsys-rep >> $r/nsys_log.txt 2>&1
  head -25 $r/rain_1k_kern*.csv | cut -c1-200
fi
T; save
