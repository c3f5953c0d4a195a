#!/usr/bin/env bash
# device run 28 (2026-11-28): bdc692f on the GPU — a body near a collider keeps its rotation's
# energy (keepRotationEnergy in every step; MatchBodies and ImpulseBodies changed). Device math,
# the CUDA suite (bitwise against OpenMP), CUDA's poses.csv against OpenMP's for the shipped scenes
# (lab_bunny both methods, pile_100, bowl, box_stack, rain_1k 150 frames) and the hostile rod near a
# plane (both methods: the changed path), the rod's energy per frame on CUDA, timings beside run
# 27's (another lease), memcheck on the rod. Pack with scripts/gpu-offline.sh pack build/ci; carry .gpu.
set -u
r=/tmp/r28; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r28.tgz -C $r .; }
timeout 20 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
grep -E "FAILED|firstApart" -A2 $r/cuda_tests.txt | head -30
T; save
E=experiments/hostile-2026-11-28
python3 -c "
import json
j = json.load(open('$E/rod_energy_gain.json')); j['solver']['method'] = 'shape_matching'
json.dump(j, open('$E/_r28_rod_sm.json', 'w'))"
bits() {  # name scene-args...
  local name=$1; shift
  for be in cuda omp; do
    timeout 60 $N/smash run "$@" --backend $be --out $r/bits/${name}_$be --no-gltf --quiet > $r/bits/${name}_$be.log 2>&1
    echo "$name $be rc=$? $(md5sum < $r/bits/${name}_$be/poses.csv | cut -c1-8) $(python3 -c "import json;j=json.load(open('$r/bits/${name}_$be/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'])" 2>&1)"
    rm -f $r/bits/${name}_$be/poses.csv
  done
}
bits lab_bunny_sm scenes/lab_bunny.json
bits lab_bunny_impulse scenes/lab_bunny.json --method impulse
bits pile_100 scenes/pile_100.json
bits bowl scenes/bowl.json
bits box_stack scenes/box_stack.json
bits rain_1k_150 scenes/rain_1k.json --frames 150
bits rod_impulse $E/rod_energy_gain.json
bits rod_sm $E/_r28_rod_sm.json
timeout 60 $N/smash run $E/rod_energy_gain.json --backend cuda --frames 60 --every 1 --no-csv --no-gltf > $r/rod_impulse_cuda_table.txt 2>&1
echo "rod (cuda, impulse) kinetic at frames 1-5, 20, 50: $(awk '$1 ~ /^[0-9]+$/ && ($1<=5 || $1==20 || $1==50) {printf "%s ", $(NF-1)}' $r/rod_impulse_cuda_table.txt)"
T; save
timeout 30 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/rain_1k.json > $r/rain_1k.txt 2>&1
echo "rain_1k: $(grep -E '^smash-cuda ' $r/rain_1k.txt)"
for sc in resting free; do
  timeout 40 $N/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/$sc.json > $r/$sc.txt 2>&1
  echo "$sc rc=$?"; grep -E "^cuda " $r/$sc.txt
done
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run $E/rod_energy_gain.json --backend cuda --frames 60 --quiet --out $r/san_a > $r/san_memcheck_rod.txt 2>&1; echo "memcheck rod 60 frames rc=$? $(tail -1 $r/san_memcheck_rod.txt)"
rm -rf $r/san_?
T; save
