#!/usr/bin/env bash
# device: A/B of two packs (old.tar.xz = before, smash-gpu.tar.xz = after), same run, same GPU
set -u
o=$OUT/ab; mkdir -p $o
for v in old new; do
  d=/tmp/$v; mkdir -p $d; f=.gpu/smash-gpu.tar.xz; [ $v = old ] && f=.gpu/old.tar.xz
  tar xJf $f -C $d
done
export SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/device.txt
echo "old: $(head -1 /tmp/old/BUILT_FROM)  new: $(head -1 /tmp/new/BUILT_FROM)" >> $o/device.txt
LD_LIBRARY_PATH=/tmp/new/lib timeout 120 /tmp/new/bin/smash_cuda_tests > $o/cuda_tests.txt 2>&1; echo "cuda tests rc=$?" | tee -a $o/device.txt
LD_LIBRARY_PATH=/tmp/new/lib timeout 60 /tmp/new/bin/smash_device_math_tests > $o/device_math.txt 2>&1; echo "device math rc=$?" | tee -a $o/device.txt
tail -2 $o/cuda_tests.txt
for rep in 1 2; do for v in old new; do
  b="--bodies 1,1024,4096"; [ $rep = 1 ] && b="--bodies 1,1024,4096,16384"
  LD_LIBRARY_PATH=/tmp/$v/lib timeout 90 /tmp/$v/bin/smash_bench --backends cuda $b --scene resting --seconds 0.5 > $o/resting_${v}_$rep.txt 2>&1
  LD_LIBRARY_PATH=/tmp/$v/lib timeout 60 /tmp/$v/bin/smash_bench --backends cuda --bodies 1024,4096 --scene free --seconds 0.5 > $o/free_${v}_$rep.txt 2>&1
  LD_LIBRARY_PATH=/tmp/$v/lib timeout 60 /tmp/$v/bin/smash_bench --backends cuda --bodies 1024 --scene resting --max-contacts-per-collider 8 --seconds 0.5 > $o/manifold8_${v}_$rep.txt 2>&1
  LD_LIBRARY_PATH=/tmp/$v/lib timeout 90 /tmp/$v/bin/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 100 > $o/rain_1k_${v}_$rep.txt 2>&1
  echo "== $v $rep"; grep -hE "^cuda |^smash-cuda" $o/*_${v}_$rep.txt
done; done
LD_LIBRARY_PATH=/tmp/new/lib timeout 90 /tmp/new/bin/smash_bench --backends cuda --bodies 1024 --scene resting --seconds 0.5 --gpu-model h200 > $o/resting_new_model.txt 2>&1
grep -A5 "MEASURED per kernel" $o/resting_new_model.txt | head -8
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck; do
  LD_LIBRARY_PATH=/tmp/new/lib timeout 40 $S --tool $t --error-exitcode 9 /tmp/new/bin/smash run scenes/pile_100.json --backend cuda --frames 3 --quiet > $o/sanitizer_$t.txt 2>&1; echo "$t rc=$? $(tail -1 $o/sanitizer_$t.txt)" | tee -a $o/device.txt
done
