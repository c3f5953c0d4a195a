#!/usr/bin/env bash
# device run 21 (the head's binary, 85381ea's kernels): where a pile's graph-replayed step goes, by
# ablation, since nsys is not installed here: rain_1k with the graph off, with no Gauss-Seidel
# colour rounds (32 Jacobi rounds) and with no shock propagation; rain_64k the same and with the
# colours' striding limit at 8 and 32 warps an SM. The scene variants are in run21_scenes/.
set -u
r=/tmp/r21; mkdir -p $r /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin V=bench/results/nvidia-h200/run21_scenes
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r21.tgz -C $r .; }
pile() {  # name scene frames [env...]
  local name=$1 scene=$2 frames=$3; shift 3
  env "$@" timeout 60 $N/smash_bench_pile --scene $scene --backends cuda --frames $frames --machine $slug --out $r/$name.json > $r/$name.txt 2>&1
  echo "$name: $(grep -E '^smash-cuda ' $r/$name.txt)"
}
pile rain_1k_default_1 scenes/rain_1k.json 150 X=1
pile rain_1k_nograph scenes/rain_1k.json 150 SMASH_CUDA_GRAPH=0
pile rain_1k_jacobi_only $V/rain_1k_jacobi_only.json 150 X=1
pile rain_1k_no_shock $V/rain_1k_no_shock.json 150 X=1
pile rain_1k_default_2 scenes/rain_1k.json 150 X=1
T; save
pile rain_64k_default_1 scenes/rain_64k.json 10 X=1
pile rain_64k_striding8 scenes/rain_64k.json 10 SMASH_CUDA_STRIDING_WARPS=8
pile rain_64k_striding32 scenes/rain_64k.json 10 SMASH_CUDA_STRIDING_WARPS=32
pile rain_64k_jacobi_only $V/rain_64k_jacobi_only.json 10 X=1
pile rain_64k_no_shock $V/rain_64k_no_shock.json 10 X=1
pile rain_64k_default_2 scenes/rain_64k.json 10 X=1
T; save
