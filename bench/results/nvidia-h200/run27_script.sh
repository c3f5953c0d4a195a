#!/usr/bin/env bash
# device run 27 (2026-11-28): the head dee7c4c on the GPU — first GPU run of the held rotation
# energy (58ef7ab, BodyData::heldEnergy) and of the sums' gate with the rounding allowance
# (b0e8976). Device math, the CUDA suite (bitwise against OpenMP), CUDA's poses.csv against
# OpenMP's for the shipped scenes, a free spinning rod (both methods: the held energy), the
# 1e5 m sphere collider (the gate), timings (no base binary this lease: compare with run 25's
# figures, another lease), compute-sanitizer on the lab bunny (memcheck) and pile_100 (racecheck).
# Pack with scripts/gpu-offline.sh pack build/ci; carry .gpu.
set -u
r=/tmp/r27; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r27.tgz -C $r .; }
timeout 20 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
grep -E "FAILED|firstApart" -A2 $r/cuda_tests.txt | head -30
T; save
E=experiments/hostile-2026-11-28
python3 - <<'PY'
import json
E = 'experiments/hostile-2026-11-28/'
for m in ('impulse', 'shape_matching'):
    j = json.load(open(E + 'rod_energy_gain.json'))
    j['name'] = 'rod_free_' + m; j['colliders'] = []; j['gravity'] = [0, 0, 0]; j['frames'] = 300
    j['solver']['method'] = m; j['dt'] = 1 / 60
    json.dump(j, open(E + '_r27_rod_free_%s.json' % m, 'w'))
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
bits rod_free_impulse $E/_r27_rod_free_impulse.json
bits rod_free_sm $E/_r27_rod_free_shape_matching.json
bits huge_sphere $E/huge_sphere_layouts.json
T; save
for i in 1 2; do
  timeout 30 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/rain_1k_$i.json > $r/rain_1k_$i.txt 2>&1
  echo "rain_1k $i: $(grep -E '^smash-cuda ' $r/rain_1k_$i.txt)"
done
for sc in resting free; do
  timeout 40 $N/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/$sc.json > $r/$sc.txt 2>&1
  echo "$sc rc=$?"; grep -E "^cuda " $r/$sc.txt
done
timeout 50 $N/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/rain_64k.json > $r/rain_64k.txt 2>&1
echo "rain_64k: $(grep -E '^smash-cuda ' $r/rain_64k.txt)"
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 $san --tool memcheck --error-exitcode 9 $N/smash run scenes/lab_bunny.json --backend cuda --frames 30 --quiet --out $r/san_a > $r/san_memcheck_lab_bunny.txt 2>&1; echo "memcheck lab_bunny 30 frames rc=$? $(tail -1 $r/san_memcheck_lab_bunny.txt)"
timeout 60 $san --tool racecheck --error-exitcode 9 $N/smash run scenes/pile_100.json --backend cuda --frames 3 --quiet --out $r/san_b > $r/san_racecheck_pile_100.txt 2>&1; echo "racecheck pile_100 3 frames rc=$? $(tail -1 $r/san_racecheck_pile_100.txt)"
timeout 40 $san --tool initcheck --error-exitcode 9 $N/smash run $E/_r27_rod_free_impulse.json --backend cuda --frames 10 --quiet --out $r/san_c > $r/san_initcheck_rod.txt 2>&1; echo "initcheck rod 10 frames rc=$? $(tail -1 $r/san_initcheck_rod.txt)"
rm -rf $r/san_?
T; save
