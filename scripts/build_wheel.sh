#!/usr/bin/env bash
# Builds the one `kronii` wheel (every workspace member's part of the `kronii.*` namespace, generated gRPC
# code included) into dist/, or into the folder given as $1. Install it with `pipx install dist/kronii-*.whl`,
# `uv tool install dist/kronii-*.whl` or `pip install dist/kronii-*.whl`; its dependencies come from the
# package index.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/dist}"
export UV_PYTHON_DOWNLOADS=never
if ! command -v uv >/dev/null 2>&1; then
  echo "kronii: installing uv with pip"
  python3 -m pip install --quiet --user uv 2>/dev/null || python3 -m pip install --quiet uv
  export PATH="$HOME/.local/bin:$PATH"
fi
uv build --wheel --out-dir "$out" "$root"
