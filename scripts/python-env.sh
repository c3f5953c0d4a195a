#!/usr/bin/env bash
# Makes (or refreshes) the virtual environment the Python module is built and tested in:
#   scripts/python-env.sh [DIR]      (default build/venv)
# Debian refuses pip installs into its system Python, so everything Python comes from PyPI into
# this environment (python/requirements-dev.txt). A second run with the same requirements is a
# no-op.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/venv}"
req=python/requirements-dev.txt
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
