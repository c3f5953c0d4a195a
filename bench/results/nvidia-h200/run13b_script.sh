#!/usr/bin/env bash
# device run 13b: run 13's pile benchmarks of the base (967d3bc), whose smash_bench_pile links
# Bullet (its libraries now carried), alternating with HEAD again on the same machine.
set -u
r=/tmp/r13b; mkdir -p $r /tmp/new /tmp/base
tar xJf .gpu/smash-gpu.tar.xz -C /tmp/new; tar xJf .gpu/base.tar.xz -C /tmp/base
export LD_LIBRARY_PATH=/tmp/new/lib:/tmp/base/lib SMASH_SOURCE_DIR=$PWD OMP_NUM_THREADS=16
N=/tmp/new/bin B=/tmp/base/bin
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
{ date -u; echo "new: $(head -1 /tmp/new/BUILT_FROM)  base: $(head -1 /tmp/base/BUILT_FROM)"; nvidia-smi -L; } > $r/device.txt
for i in 1 2; do for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 40 $X/smash_bench_pile --scene scenes/rain_1k.json --backends cuda --frames 150 --machine $slug > $r/ab_rain_1k_${v}_$i.txt 2>&1
  echo "rain_1k $v $i: $(grep -E '^smash-cuda ' $r/ab_rain_1k_${v}_$i.txt)"
done; done
for v in base new; do X=$N; [ $v = base ] && X=$B
  timeout 60 $X/smash_bench_pile --scene scenes/rain_64k.json --backends cuda --frames 10 --machine $slug > $r/ab_rain_64k_${v}.txt 2>&1
  echo "rain_64k $v: $(grep -E '^smash-cuda ' $r/ab_rain_64k_${v}.txt)"
done
tar czf $OUT/r13b.tgz -C $r .
