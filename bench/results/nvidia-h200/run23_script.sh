#!/usr/bin/env bash
# device run 23 (head 1112e18's binary, as run 22, and the same built with nvcc -fmad=false):
# run 22 found pile_100 on CUDA ending with 1 of 96 bodies asleep (0.35 J, particles at 0.094 m/s)
# where OpenMP and the reference put all 96 to sleep by 2 s, and rain_1k's 25 s with none asleep
# (OpenMP: 1,000). Which part of the CUDA path keeps the pile awake: pile_100's kinetic energy every
# 10 frames on CUDA by default, without the graph, without spread blocks, without warp lanes, with
# the per-body layout, without FMA contraction (both layouts), for 15 s, and on OpenMP on this
# machine with the same binary.
set -u
r=/tmp/r23; mkdir -p $r /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin F=.gpu/smash-nofma
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r23.tgz -C $r .; }
pile() {  # name binary backend frames [env...]
  local name=$1 bin=$2 backend=$3 frames=$4; shift 4
  env "$@" timeout 60 $bin run scenes/pile_100.json --backend $backend --frames $frames --every 10 --progress never --out $r/$name --no-gltf --no-csv > $r/$name.txt 2>&1
  echo "$name rc=$? $(python3 -c "import json;j=json.load(open('$r/$name/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'],'ms/step',round(j['timing']['ms_per_step'],3))" 2>&1)"
  awk '$1 ~ /^[0-9]+$/ && $1 % 20 == 0 && NF >= 7 {printf "%s:%s ", $1, $(NF-2)} END {print ""}' $r/$name.txt
}
pile cuda $N/smash cuda 240 X=1
pile cuda_nograph $N/smash cuda 240 SMASH_CUDA_GRAPH=0
pile cuda_nospread $N/smash cuda 240 SMASH_CUDA_SPREAD=0
pile cuda_nolanes $N/smash cuda 240 SMASH_CUDA_LANES=0
pile cuda_perbody $N/smash cuda 240 SMASH_STEP_STRATEGY=per-body
T; save
pile cuda_nofma $F cuda 240 X=1
pile cuda_nofma_perbody $F cuda 240 SMASH_STEP_STRATEGY=per-body
pile omp16 $N/smash omp 240 X=1
pile omp16_perparticle $N/smash omp 240 SMASH_STEP_STRATEGY=per-particle
T; save
pile cuda_15s $N/smash cuda 900 X=1
pile cuda_nofma_15s $F cuda 900 X=1
T; save
# Four other jitter seeds (run23_scenes/; OpenMP on the VM: all 96 asleep by 3.3 s in each of 11-16)
for s in 11 12 13 14; do
  env timeout 60 $N/smash run bench/results/nvidia-h200/run23_scenes/pile_100_seed$s.json --backend cuda --progress never --out $r/seed$s --no-gltf --no-csv > $r/seed$s.txt 2>&1
  echo "seed $s cuda: $(python3 -c "import json;j=json.load(open('$r/seed$s/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'])" 2>&1)"
done
T; save
# Poses of every frame (CUDA and OpenMP here): which bodies keep moving, and from when the two part
timeout 60 $N/smash run scenes/pile_100.json --backend cuda --progress never --out $r/poses_cuda --no-gltf > /dev/null 2>&1
timeout 60 $N/smash run scenes/pile_100.json --backend omp --progress never --out $r/poses_omp --no-gltf > /dev/null 2>&1
ls -la $r/poses_cuda $r/poses_omp | grep csv
T; save
