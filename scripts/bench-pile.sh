#!/usr/bin/env bash
# The pile benchmark with its peers: installs Bullet (Debian's libbullet-dev) and MuJoCo (PyPI,
# bench/peers/requirements.txt, into build/venv-bench), builds smash_bench_pile and runs the
# 1,000-body rain on OpenMP (and CUDA when a GPU is present), in Bullet and in MuJoCo, side by
# side. Results go to bench/results/<machine>/. A second run installs nothing. Usage:
#   scripts/bench-pile.sh [MACHINE-NAME] [SCENE] [PEER-FRAMES]
# PEER-FRAMES runs the peers for fewer frames than smash (the scene's): by default 60 for the rain
# scenes, where MuJoCo's solver takes seconds per step once the pile forms (a full rain_1k run
# would take about an hour), and every frame otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if ! dpkg-query -W -f='${Status}' libbullet-dev 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libbullet-dev
fi
# MuJoCo's environment, refreshed only when the requirements change.
venv=build/venv-bench
scripts/python-env.sh "$venv" bench/peers/requirements.txt
[ -f .cudacxx.env ] && source .cudacxx.env
machine="${1:-$(hostname)}"
scene="${2:-scenes/rain_1k.json}"
case "$(basename "$scene")" in rain_*) peer_frames="${3:-60}" ;; *) peer_frames="${3:-}" ;; esac
peer_args=()
[ -n "$peer_frames" ] && peer_args=(--peer-frames "$peer_frames")
cmake --preset default >/dev/null
cmake --build --preset default --target smash_bench_pile
mkdir -p "bench/results/$machine"
name="pile_$(basename "$scene" .json)_vs_peers"
./build/default/smash_bench_pile --scene "$scene" --backends omp,cuda --peer bullet,mujoco \
  --python "$venv/bin/python" "${peer_args[@]}" --machine "$machine" \
  --out "bench/results/$machine/$name.json" | tee "bench/results/$machine/$name.txt"
