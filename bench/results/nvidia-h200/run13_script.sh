#!/usr/bin/env bash
# device run 13: HEAD (ff15ba2) against 967d3bc (run 12's head, before the Gauss–Seidel colour
# rounds, the 0.2 mm slop, the unloaded-contact return and the shifted pair keys).
# 1. correctness at HEAD: device math, the CUDA tests (parity with the reference, the Gauss–Seidel
#    colour launches included), repeatability of lab_bunny and of a pile (Gauss–Seidel rounds on),
#    compute-sanitizer memcheck + racecheck on box_stack (pairs touch from the first step: the
#    colour launches run) and pile_100;
# 2. speed side by side, alternating base/new twice: resting and free bunnies, rain_1k (the new
#    defaults, and HEAD with the old ones: 0 Gauss–Seidel rounds, 10 µm slop), rain_64k;
# 3. rain_1k for 25 s at HEAD on CUDA: does the pile fall asleep on the GPU as on the CPU.
# (scripts/gpu-offline.sh and the benchmarks are unchanged since run 11 ran the one-command check.)
set -u
r=/tmp/r13; mkdir -p $r/bits /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/base.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r13.tgz -C $r .; }
python3 - <<'EOF'
import json
s = json.load(open("scenes/rain_1k.json"))
s["solver"]["gauss_seidel_rounds"] = 0
s["solver"]["penetration_slop"] = 1e-5
json.dump(s, open("scenes/rain_1k_olddefaults.json", "w"))
EOF

timeout 60 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 200 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T
for v in 1 2; do
  timeout 60 $N/smash run scenes/lab_bunny.json --backend cuda --out $r/bits/lab_$v --no-gltf --quiet > $r/bits/lab_$v.log 2>&1; echo "lab $v rc=$? $(md5sum < $r/bits/lab_$v/poses.csv)"
  timeout 60 $N/smash run scenes/rain_1k.json --backend cuda --frames 150 --out $r/bits/rain_$v --no-gltf --quiet > $r/bits/rain_$v.log 2>&1; echo "rain_1k 150 frames $v rc=$? $(md5sum < $r/bits/rain_$v/poses.csv)"
  timeout 60 $N/smash run scenes/box_stack.json --backend cuda --out $r/bits/stack_$v --no-gltf --quiet > $r/bits/stack_$v.log 2>&1; echo "box_stack $v rc=$? $(md5sum < $r/bits/stack_$v/poses.csv) $(tail -2 $r/bits/stack_$v.log | tr '\n' ' ')"
done
rm -f $r/bits/*/poses.csv $r/bits/*/*.gltf $r/bits/*/*.bin
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do for sc in box_stack pile_100; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/$sc.json --backend cuda --frames 3 --quiet > $r/san_${tool}_$sc.txt 2>&1; echo "$tool $sc rc=$? $(tail -1 $r/san_${tool}_$sc.txt)"
done; done
T; save
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench --backends cuda --bodies 1,1024,4096 --scene resting --seconds 0.5 --machine $slug > $r/ab_resting_${v}_$i.txt 2>&1
  echo "resting $v $i"; grep -E "^cuda " $r/ab_resting_${v}_$i.txt
  timeout 60 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done
  timeout 60 $N/smash_bench_pile --scene scenes/rain_1k_olddefaults.json --backends cuda --frames 150 --machine $slug > $r/ab_rain_1k_olddefaults_new_$i.txt 2>&1
  echo "rain_1k old defaults new $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_olddefaults_new_$i.txt)"
done
T; save
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench --backends cuda --bodies 1024,16384 --scene free --seconds 0.5 --machine $slug > $r/ab_free_${v}.txt 2>&1
  echo "free $v"; grep -E "^cuda " $r/ab_free_${v}.txt
  timeout 90 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug > $r/ab_rain_64k_${v}.txt 2>&1
  echo "rain_64k $v: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}.txt)"
done
T; save
timeout 120 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 1500 --machine $slug --out $r/rain_1k_25s.json > $r/rain_1k_25s.txt 2>&1
echo "rain_1k 25 s rc=$?: $(grep -E '^smash-cuda ' $r/rain_1k_25s.txt)"
T; save
