#!/usr/bin/env bash
# device run 12 (H100): the session's last head — CUDA tests, memcheck on a pile, the same bits.
set -u
r=/tmp/r12; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
timeout 60 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run scenes/pile_100.json --backend cuda --frames 3 --quiet > $r/san_memcheck_pile_100.txt 2>&1; echo "memcheck pile_100 rc=$? $(tail -1 $r/san_memcheck_pile_100.txt)"
timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab --no-gltf --quiet > $r/bits/lab.log 2>&1; echo "lab rc=$? $(md5sum < $r/bits/lab/poses.csv) (runs 10, 11: 59ccf551ffbdda413b28fc08459274f0)"
timeout 60 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain --no-gltf --quiet > $r/bits/rain.log 2>&1; echo "rain_1k rc=$? $(md5sum < $r/bits/rain/poses.csv) (runs 10, 11: 7cf2a5feaebc2d28bb46f543aae36d13)"
rm -f $r/bits/*/poses.csv
tar czf $OUT/r12.tgz -C $r .
