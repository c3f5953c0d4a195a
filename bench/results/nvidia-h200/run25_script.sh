#!/usr/bin/env bash
# device run 25 (prepared 2026-11-27, run 2026-11-28 with d86584a as new, run 24's c39cc59 as base): the first GPU run of math/same_trig.h (13a5590
# or later), the trigonometry of our own that should make CUDA compute the OpenMP backend's bits for
# spinning shape-matched bodies too (run 24: they parted at step 38). Here: scripts/gpu-offline.sh
# pack build/ci after building the head (.gpu/smash-gpu.tar.xz), run 24's binary or any earlier one
# as .gpu/before.tar.xz; carry .gpu. Runs: device math (now also the trigonometry's bits), the CUDA
# tests (the bitwise test), CUDA's poses.csv against OpenMP's (rain_1k's 150 frames should now
# match), the timings alternating, and rain_1k's 25 s with time enough to print its asleep count.
set -u
r=/tmp/r25; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/before.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r25.tgz -C $r .; }
timeout 20 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
grep -E "OpenMP backend's bits|FAILED|firstApart|with expansion" -A2 $r/cuda_tests.txt | head -40
T; save
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
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 30 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/ab_rain_1k_${v}_$i.json > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
T; save
for sc in resting free; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/ab_${sc}_$v.json > $r/ab_${sc}_$v.txt 2>&1
  echo "$sc $v"; grep -E "^cuda " $r/ab_${sc}_$v.txt
done; done
T; save
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 50 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/ab_rain_64k_$v.json > $r/ab_rain_64k_$v.txt 2>&1
  echo "rain_64k $v: $(grep -E '^smash-cuda ' $r/ab_rain_64k_$v.txt)"
done
T; save
# compute-sanitizer through the edge cones (d95452c: vertex-sampled boxes carry push cones, read in
# writeManifold): five 8-vertex boxes stacked, 60 frames, memcheck and racecheck; box_stack 3 frames initcheck.
python3 - <<'PY'
import json
j = json.load(open('scenes/box_stack.json'))
j['name'] = 'box_stack_vertices'; j['shapes']['box']['sampling'] = {'mode': 'vertices'}; j['frames'] = 60
j.pop('checks', None)
json.dump(j, open('scenes/_r25_box_vertices.json', 'w'))
PY
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/_r25_box_vertices.json --backend cuda --quiet --out $r/san_v_$tool > $r/san_${tool}_box_vertices.txt 2>&1; echo "$tool box_vertices 60 frames rc=$? $(tail -1 $r/san_${tool}_box_vertices.txt)"
done
timeout 60 $san --tool initcheck --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet --out $r/san_i > $r/san_initcheck_box_stack.txt 2>&1; echo "initcheck box_stack 3 frames rc=$? $(tail -1 $r/san_initcheck_box_stack.txt)"
bits box_vertices scenes/_r25_box_vertices.json
rm -rf $r/san_v_* $r/san_i
T; save
timeout 180 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 1500 --machine $slug --out $r/rain_1k_25s.json > $r/rain_1k_25s.txt 2>&1
echo "rain_1k 25 s new rc=$?: $(grep -E '^smash-cuda ' $r/rain_1k_25s.txt)"
T; save
