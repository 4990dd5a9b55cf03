#!/usr/bin/env bash
# Creates .venv with every workspace member and the dev tools, through uv (installed with pip if absent).
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never
# Where `pip install --user uv` put it last time: looked at before deciding that uv is missing, so that
# uv is installed once, not at every `make up`.
export PATH="$PATH:$HOME/.local/bin"
if ! command -v uv >/dev/null 2>&1; then
  echo "kronii: installing uv with pip"
  python3 -m pip install --quiet --user uv 2>/dev/null || python3 -m pip install --quiet uv
fi
py="$(command -v python3.11 || command -v python3.12 || command -v python3.13 || command -v python3)"
# KRONII_PY_EXTRAS=llamacpp (make test-slow) adds the in-process llama.cpp backend; building it takes minutes.
extras=()
for extra in ${KRONII_PY_EXTRAS:-}; do extras+=(--extra "$extra"); done
# --compile-bytecode: every command starts from compiled modules, also where PYTHONDONTWRITEBYTECODE is
# set (seen: `kronii keys status` 3.6 s without, 1.8 s with; it costs half a minute once, then nothing).
uv sync --quiet --python "$py" --all-packages --compile-bytecode "${extras[@]}"
