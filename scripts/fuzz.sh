#!/usr/bin/env bash
# Builds the libFuzzer targets (clang) and runs each for SECONDS (default 30) from the seed
# corpus: fuzz/corpus_obj for the OBJ reader, scenes/*.json for the scene loader. Any crash,
# leak or sanitizer report fails the run; the crashing input is left in build/fuzz/artifacts.
#   scripts/fuzz.sh [SECONDS]       e.g. scripts/fuzz.sh 600 for a long local run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
scripts/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
work=build/fuzz/run
rm -rf "$work" && mkdir -p "$work/obj" "$work/scene" build/fuzz/artifacts
cp fuzz/corpus_obj/* "$work/obj/"
cp scenes/*.json "$work/scene/"
for target in obj scene; do
  log="$work/$target.log"
  echo "fuzzing $target for ${seconds}s"
  if ! build/fuzz/fuzz/smash_fuzz_$target "$work/$target" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix=build/fuzz/artifacts/ > "$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: smash_fuzz_$target found a problem; the input is in build/fuzz/artifacts/"
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$log"
done
