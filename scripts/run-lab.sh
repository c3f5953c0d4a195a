#!/usr/bin/env bash
# The main job: install what is needed, build the smash runner, and run the default scene
# (the course lab: a bunny thrown at a wall, SPEC §8). Extra arguments go to `smash run`,
# e.g. scripts/run-lab.sh --method impulse
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
cmake --preset default >/dev/null
cmake --build --preset default --target smash
./build/default/smash run scenes/lab_bunny.json --every 20 "$@"
