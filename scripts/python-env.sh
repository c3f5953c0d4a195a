#!/usr/bin/env bash
# Makes (or refreshes) a virtual environment from a requirements file:
#   scripts/python-env.sh [DIR] [REQUIREMENTS]
# by default build/venv with python/requirements-dev.txt, the Python module's build and test
# environment; the benchmark scripts make theirs with it too (bench-pile.sh, plot-scaling.sh).
# Debian refuses pip installs into its system Python, so everything Python comes from PyPI into
# such an environment. A second run with the same requirements is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/venv}"
req="${2:-python/requirements-dev.txt}"
stamp="$dir/.smash-requirements"
if [ ! -x "$dir/bin/python" ]; then
  python3 -m venv "$dir"
fi
if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
  exit 0
fi
"$dir/bin/python" -m pip install -q --upgrade pip
"$dir/bin/python" -m pip install -q -r "$req"
cp "$req" "$stamp"
