#!/usr/bin/env bash
# The main job: install what is needed, build smash, and run the default scene (the course lab:
# a bunny thrown at a wall, physics.md §8) on the fastest backend here, writing out/lab/ —
# animation.glb (opens in Blender or any glTF viewer), poses.csv, summary.json, and rendered
# pictures (preview.png, frames/, animation.mp4). Extra arguments go to `smash run`, e.g.
#   scripts/run-lab.sh --method impulse
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -f .cudacxx.env ] && source .cudacxx.env
cmake --preset default >/dev/null
cmake --build --preset default --target smash
./build/default/smash run scenes/lab_bunny.json --backend auto --every 60 --out out/lab --render --render-every 2 "$@"
