#!/usr/bin/env bash
# device: rain_1k with other jitter seeds, before and after (is the pile's penetration a seed's luck?)
set -u
o=$OUT/seeds; mkdir -p $o
for v in old new; do d=/tmp/$v; mkdir -p $d; f=.gpu/smash-gpu.tar.xz; [ $v = old ] && f=.gpu/old.tar.xz; tar xJf $f -C $d; done
export SMASH_SOURCE_DIR=$PWD
for s in 11 12 13 14; do
  sed -e "77s/\"seed\": 3/\"seed\": $s/" -e "101s/\"seed\": 4/\"seed\": $((s+50))/" scenes/rain_1k.json > scenes/rain_1k_s$s.json
  for v in old new; do
    LD_LIBRARY_PATH=/tmp/$v/lib timeout 40 /tmp/$v/bin/smash_bench_pile --scene scenes/rain_1k_s$s.json --backends cuda --frames 150 > $o/rain_1k_s${s}_$v.txt 2>&1
    echo "seed $s $v $(grep ^smash-cuda $o/rain_1k_s${s}_$v.txt)"
  done
done
