#!/usr/bin/env bash
# device run 26 (2026-11-28): the head after 50a94cd (a pair contact's rebound of e = 0 is none;
# contact_solver.h, every backend) on the GPU: device math, the CUDA suite (bitwise against
# OpenMP), CUDA's poses.csv against OpenMP's for the shipped scenes (all e > 0: expected unchanged
# from run 25) and for a box sliding on a box body with e = 0 (the changed path). Pack with
# scripts/gpu-offline.sh pack build/ci; carry .gpu.
set -u
r=/tmp/r26; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r26.tgz -C $r .; }
timeout 20 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
python3 - <<'PY'
import json
for x in (-0.45, -0.3, -0.1):
    j = {"name": "slide_e0", "dt": 1/60, "frames": 90, "materials": {"default": {"restitution": 0.0, "friction": 0.2}},
         "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
         "shapes": {"base": {"mesh": "meshes/box.obj", "scale": [1.2, 0.1, 0.3], "particle_mass": 5, "sdf_resolution": 64,
                             "sampling": {"mode": "surface", "count": 3000, "seed": 1}},
                    "b": {"mesh": "meshes/box.obj", "scale": 0.2, "sampling": {"mode": "surface", "count": 600, "seed": 1}}},
         "bodies": [{"shape": "base", "position": [0, 0.05, 0]}, {"shape": "b", "position": [x, 0.2005, 0], "velocity": [1.2, 0, 0]}]}
    json.dump(j, open('scenes/_r26_slide_e0_%g.json' % x, 'w'))
PY
bits() {  # name scene-args...
  local name=$1; shift
  for be in cuda omp; do
    timeout 60 $N/smash run "$@" --backend $be --out $r/bits/${name}_$be --no-gltf --quiet > $r/bits/${name}_$be.log 2>&1
    echo "$name $be rc=$? $(md5sum < $r/bits/${name}_$be/poses.csv | cut -c1-8) $(python3 -c "import json;j=json.load(open('$r/bits/${name}_$be/summary.json'));print('asleep',j['counters']['sleeping_bodies'],'KE',j['final_kinetic_energy_J'])" 2>&1)"
    rm -f $r/bits/${name}_$be/poses.csv
  done
}
bits rain_1k_150 scenes/rain_1k.json --frames 150
bits pile_100 scenes/pile_100.json
bits box_stack scenes/box_stack.json
bits lab_bunny scenes/lab_bunny.json
bits bunny_grid scenes/bunny_grid.json
for x in -0.45 -0.3 -0.1; do bits slide_e0_$x scenes/_r26_slide_e0_$x.json; done
T; save
