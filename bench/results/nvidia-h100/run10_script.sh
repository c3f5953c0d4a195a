#!/usr/bin/env bash
# device run 10 (H100; HEAD 5fd538b against 1aa9981, the commit before the warm-started lone
# collider solve): CUDA tests, sanitizers on the lone-body path (lab_bunny: one body, KeepContacts
# every step) and a pile; repeatability; piles unchanged to the bit; resting/free A/B; full sizes.
set -u
r=/tmp/r10; mkdir -p $r/bits
for v in new base; do mkdir -p /tmp/$v; done
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/base.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
{ date -u; echo "new: $(cat /tmp/new/BUILT_FROM | head -1)  base: $(cat /tmp/base/BUILT_FROM | head -1)"; nvidia-smi; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
timeout 60 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck initcheck synccheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 3 --quiet > $r/san_${tool}_lab_bunny.txt 2>&1
  echo "$tool lab_bunny rc=$? $(tail -1 $r/san_${tool}_lab_bunny.txt)"
done
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run scenes/pile_100.json --backend cuda --frames 3 --quiet > $r/san_memcheck_pile_100.txt 2>&1
echo "memcheck pile_100 rc=$? $(tail -1 $r/san_memcheck_pile_100.txt)"
T
# repeatability of the lone path (lab_bunny twice, new); piles the same bits before and after
for v in new1 new2; do timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab_$v --no-gltf --quiet > $r/bits/lab_$v.log 2>&1; echo "lab $v rc=$? $(md5sum < $r/bits/lab_$v/poses.csv)"; done
for v in new base; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_$v --no-gltf --quiet > $r/bits/rain_$v.log 2>&1; echo "rain_1k $v rc=$? $(md5sum < $r/bits/rain_$v/poses.csv)"; done
gzip $r/bits/*/poses.csv
T
# A/B resting and free, alternating
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine nvidia-h100 > $r/ab_resting_${v}_$i.txt 2>&1
  echo "resting $v $i"; grep -E "^cuda " $r/ab_resting_${v}_$i.txt
done; done
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench --backends cuda --bodies 1024,4096 --scene free --seconds 0.5 --machine nvidia-h100 > $r/ab_free_$v.txt 2>&1
  echo "free $v"; grep -E "^cuda " $r/ab_free_$v.txt
  timeout 60 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine nvidia-h100 > $r/ab_rain_1k_$v.txt 2>&1
  echo "rain_1k $v $(grep ^smash-cuda $r/ab_rain_1k_$v.txt)"
done
T
tar czf $OUT/r10.tgz -C $r .
# full sizes with the H100 model beside (new only)
for scene in free resting; do
  timeout 90 $N/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $scene --seconds 0.5 --gpu-model h100 --machine nvidia-h100 --out $r/many_bodies_$scene.json > $r/many_bodies_$scene.txt 2>&1
  echo "$scene rc=$?"; grep -E "^cuda " $r/many_bodies_$scene.txt
done
T
timeout 60 $N/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine nvidia-h100 --out $r/pile_rain_64k.json > $r/pile_rain_64k.txt 2>&1
echo "rain_64k rc=$? $(grep ^smash-cuda $r/pile_rain_64k.txt)"
T
tar czf $OUT/r10.tgz -C $r .
