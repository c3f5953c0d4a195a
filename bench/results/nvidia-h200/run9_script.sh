#!/usr/bin/env bash
# device run 9 (binaries of b43eb49): Nsight Compute of ShockVelocities (rain_1k, frame 150, levels 0-2)
set -u
d=/tmp/new; mkdir -p $d; tar xJf .gpu/smash-gpu.tar.xz -C $d
export LD_LIBRARY_PATH=$d/lib SMASH_SOURCE_DIR=$PWD
ncu=/usr/local/cuda/bin/ncu
timeout 420 $ncu --kernel-name-base demangled --kernel-name regex:ShockVelocities --launch-skip 4800 --launch-count 3 \
  --set full -o /tmp/shock $d/bin/smash run scenes/rain_1k.json --backend cuda --frames 152 --quiet --no-gltf --no-csv > $OUT/ncu_log.txt 2>&1
echo "ncu rc=$?"; tail -3 $OUT/ncu_log.txt
$ncu --import /tmp/shock.ncu-rep --page details > $OUT/shock_details.txt 2>&1
$ncu --import /tmp/shock.ncu-rep --page source --csv --print-source sass --launch-count 1 2>/dev/null | gzip > $OUT/shock_sass_level0.csv.gz
grep -E "Duration|Registers Per|Block Size|Grid Size|Achieved Occupancy|Issued Ipc|L1/TEX Hit|Warp Cycles Per Issued" $OUT/shock_details.txt | head -40
ls -la $OUT
