#!/usr/bin/env bash
# device run 11 (H100; HEAD against 5fd538b, the head of run 10): CUDA tests and sanitizers at
# HEAD; the lone path and the pile the same bits as run 10 (the O(n) warm-start search, the CPU
# lanes and the host-only narrow-phase culling change no GPU result); resting A/B; then the
# official scripts/gpu-offline.sh run --quick.
set -u
r=/tmp/r11; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/base.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
timeout 60 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T
for v in 1 2; do timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab_$v --no-gltf --quiet > $r/bits/lab_$v.log 2>&1; echo "lab $v rc=$? $(md5sum < $r/bits/lab_$v/poses.csv) (run 10: 59ccf551ffbdda413b28fc08459274f0)"; done
timeout 60 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain --no-gltf --quiet > $r/bits/rain.log 2>&1; echo "rain_1k rc=$? $(md5sum < $r/bits/rain/poses.csv) (run 10: 7cf2a5feaebc2d28bb46f543aae36d13)"
gzip $r/bits/*/poses.csv
T
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine nvidia-h100 > $r/ab_resting_${v}_$i.txt 2>&1
  echo "resting $v $i"; grep -E "^cuda " $r/ab_resting_${v}_$i.txt
done; done
T
tar czf $OUT/r11.tgz -C $r .
SANITIZER_SECONDS=60 timeout 400 scripts/gpu-offline.sh run /tmp/off --quick > $r/offline_log.txt 2>&1; echo "gpu-offline rc=$?"
tail -30 $r/offline_log.txt
T
cp -r /tmp/off $r/offline
tar czf $OUT/r11.tgz -C $r .
