#!/usr/bin/env bash
# Installs what smash needs on Debian 12 (bookworm). Only missing packages are installed, so a
# second run is quick. Uses sudo when not run as root.
set -euo pipefail

packages=(
  cmake make g++ ccache pkg-config
  python3              # scripts: the GPU kernel budget check (gpu_budget.py), scene generators
  python3-venv python3-dev  # the Python module: its virtual environment (scripts/python-env.sh) and headers
  libglm-dev           # vector math, host and device
  nlohmann-json3-dev   # scene files
  libcli11-dev         # command line
  catch2               # tests (Catch2 v2.13)
  libeigen3-dev        # tests only: the independent SVD oracle for rotation extraction
  libopenvdb-dev libboost-iostreams-dev zlib1g-dev  # mesh SDF baking (OpenVDB and what its CMake module asks for)
  libtinygltf-dev      # animation.glb output (and the tests read it back with it)
  libembree-dev libstb-dev  # CPU ray-traced preview pictures, PNG writing
  ffmpeg               # animation.mp4 from the rendered frames (optional at run time)
  clang libclang-rt-14-dev  # fuzzing (libFuzzer) and its sanitizer runtimes
  libomp-14-dev        # ThreadSanitizer over the OpenMP backend: LLVM's OpenMP runtime and its Archer tool
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit is optional: when nvcc exists but is not on PATH, point CMake at it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "export CUDACXX=/usr/local/cuda/bin/nvcc" > "$(dirname "$0")/../.cudacxx.env"
else
  rm -f "$(dirname "$0")/../.cudacxx.env"
fi
