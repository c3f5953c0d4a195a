#!/usr/bin/env bash
# device run 8 (HEAD b43eb49): CUDA tests + sanitizers at HEAD; is a CUDA pile repeatable to the bit
# and independent of the launch shape; CUDA piles against OMP piles over nine jitter seeds.
set -u
r=/tmp/r8; mkdir -p $r/seeds $r/bits
d=/tmp/new; mkdir -p $d; tar xJf .gpu/smash-gpu.tar.xz -C $d
export LD_LIBRARY_PATH=$d/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
b=$d/bin
{ date -u; cat $d/BUILT_FROM; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s)
$b/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
$b/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
echo "t=$(( $(date +%s)-t0 ))"
san=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do for sc in pile_100 lab_bunny; do
  timeout 60 $san --tool $tool --error-exitcode 9 $b/smash run scenes/$sc.json --backend cuda --frames 3 --quiet > $r/san_${tool}_$sc.txt 2>&1
  echo "$tool $sc rc=$? $(tail -1 $r/san_${tool}_$sc.txt)"
done; done
echo "t=$(( $(date +%s)-t0 ))"
# bits: the same pile twice, and with 256-thread blocks (SMASH_CUDA_SPREAD=0)
for v in a b spread0; do
  env $( [ $v = spread0 ] && echo SMASH_CUDA_SPREAD=0 ) timeout 60 $b/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/$v --no-gltf --quiet > $r/bits/$v.log 2>&1
  echo "bits $v rc=$? $(md5sum < $r/bits/$v/poses.csv)"
done
gzip $r/bits/*/poses.csv
echo "t=$(( $(date +%s)-t0 ))"
for s in 3 11 12 13 14 15 16 17 18; do
  f=scenes/rain_1k.json
  if [ $s != 3 ]; then f=/tmp/rain_1k_s$s.json
    sed -e "77s/\"seed\": 3/\"seed\": $s/" -e "101s/\"seed\": 4/\"seed\": $((s+50))/" scenes/rain_1k.json > $f; fi
  for be in cuda omp; do
    timeout 60 $b/smash_bench_pile --scene $f --backends $be --frames 150 > $r/seeds/s${s}_$be.txt 2>&1
    echo "seed $s $(grep ^smash-$be $r/seeds/s${s}_$be.txt)"
  done
  echo "t=$(( $(date +%s)-t0 ))"
done
$b/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --gpu-model h200 > $r/resting.txt 2>&1
grep -E "^cuda " $r/resting.txt
echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/r8.tgz -C $r .
