#!/bin/sh
# ruff on the Python package (packages/epicsperf/python, settings in its pyproject.toml), at the
# version pinned in its requirements-dev.txt: installed once into a small venv of its own under
# $EPICSPERF_HOME, named by that file's hash, apart from the managed Python environment.
set -eu
home=${EPICSPERF_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/epicsperf}
cd "$(dirname "$0")/.."
dir=packages/epicsperf/python
venv="$home/dev-venv-$(sha256sum "$dir/requirements-dev.txt" | cut -c1-12)"
if [ ! -f "$venv/installed" ]; then
  echo "installing ruff from $dir/requirements-dev.txt into $venv" >&2
  rm -rf "$venv"
  mkdir -p "$home"
  "${EPICSPERF_BASE_PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$dir/requirements-dev.txt"
  touch "$venv/installed"
fi
exec "$venv/bin/ruff" check --no-cache "$dir"
