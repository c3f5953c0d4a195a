#!/usr/bin/env bash
# device run 22 (head 1112e18; kernels as at e619c7c): the first GPU run of the CUDA rest skip
# (622ba85: NoteAwake, System::startRead/finishedRead, restStep) and of the swept-contact probe
# (361e429, 04b7619). CUDA tests; the bits of rain_1k (150 frames), box_stack, pile_100 and
# lab_bunny against runs 15-21, and box_stack/pile_100 again with the rest flag read 2 frame ends
# late (SMASH_REST_READ_DELAY=2: the same bits if a late answer holds); rain_1k's 25 s (1500
# frames) pile, whose last second run 13 stepped at 1.547 ms with all 1000 bodies asleep;
# compute-sanitizer on box_stack for 3 frames (all four tools) and for 150 frames, through its
# rest (memcheck, synccheck); rain_64k and rain_1k twice; the free and resting bunnies on CUDA.
set -u
r=/tmp/r22; mkdir -p $r/bits /tmp/new
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new
export LD_LIBRARY_PATH=/tmp/new/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
t0=$(date +%s); T() { echo "t=$(( $(date +%s)-t0 ))"; }
save() { tar czf $OUT/r22.tgz -C $r .; }
timeout 30 $N/smash_device_math_tests > $r/device_math.txt 2>&1; echo "device math rc=$? $(tail -1 $r/device_math.txt)"
timeout 150 $N/smash_cuda_tests -d yes > $r/cuda_tests.txt 2>&1; echo "cuda tests rc=$? $(grep -v '^[0-9.]* s: ' $r/cuda_tests.txt | tail -2 | tr '\n' ' ')"
T; save
bits() {  # name scene [extra args / env]
  local name=$1 scene=$2; shift 2
  local s=$(date +%s.%N)
  env "$@" timeout 60 $N/smash run $scene --backend cuda --out $r/bits/$name --no-gltf --quiet > $r/bits/$name.log 2>&1
  local rc=$? e=$(date +%s.%N)
  echo "$name rc=$rc $(md5sum < $r/bits/$name/poses.csv | cut -c1-8) wall $(awk "BEGIN{printf \"%.2f\", $e - $s}") s"
  rm -f $r/bits/$name/poses.csv
}
bits rain_1k_150 "scenes/rain_1k.json --frames 150" X=1; echo "   (runs 15-21: 1a09d1f9)"
bits box_stack scenes/box_stack.json X=1; echo "   (runs 17-20: d5eab483)"
bits pile_100 scenes/pile_100.json X=1; echo "   (runs 17-20: 51822cdd)"
bits lab_bunny scenes/lab_bunny.json X=1; echo "   (runs 10-19: 59ccf551)"
bits box_stack_delay2 scenes/box_stack.json SMASH_REST_READ_DELAY=2
bits pile_100_delay2 scenes/pile_100.json SMASH_REST_READ_DELAY=2
T; save
timeout 90 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 1500 --machine $slug --out $r/rain_1k_25s.json > $r/rain_1k_25s.txt 2>&1
echo "rain_1k 25 s rc=$?: $(grep -E '^smash-cuda ' $r/rain_1k_25s.txt)  (run 13: 5.97 ms/step, last s 1.547, 1000 asleep)"
T; save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck synccheck racecheck initcheck; do
  timeout 60 $san --tool $tool --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 3 --quiet > $r/san_${tool}_box_stack.txt 2>&1; echo "$tool box_stack 3 frames rc=$? $(tail -1 $r/san_${tool}_box_stack.txt)"
done
for tool in memcheck synccheck; do
  timeout 100 $san --tool $tool --error-exitcode 9 $N/smash run scenes/box_stack.json --backend cuda --frames 150 --quiet > $r/san_${tool}_box_stack_150.txt 2>&1; echo "$tool box_stack 150 frames rc=$? $(tail -1 $r/san_${tool}_box_stack_150.txt)"
done
T; save
for i in 1 2; do
  timeout 50 $N/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug --out $r/rain_64k_$i.json > $r/rain_64k_$i.txt 2>&1
  echo "rain_64k $i: $(grep -E '^smash-cuda ' $r/rain_64k_$i.txt)"
  timeout 30 $N/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug --out $r/rain_1k_$i.json > $r/rain_1k_$i.txt 2>&1
  echo "rain_1k $i: $(grep -E '^smash-cuda ' $r/rain_1k_$i.txt)"
done
T; save
for sc in resting free; do
  timeout 60 $N/smash_bench --backends cuda --bodies 1,1024,4096,16384 --scene $sc --seconds 0.5 --machine $slug --out $r/$sc.json > $r/$sc.txt 2>&1
  echo "$sc"; grep -E "^cuda " $r/$sc.txt
done
T; save
