#!/usr/bin/env bash
# Regenerates libs/api/src from proto/. Deterministic: CI regenerates and diffs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/libs/api/src"
cd "$root"
find "$out/kronii" -name '*_pb2*.py*' -delete 2>/dev/null || true
mapfile -t protos < <(cd proto && find kronii -name '*.proto' | LC_ALL=C sort)
python -m grpc_tools.protoc -I proto \
  --python_out="$out" --grpc_python_out="$out" --mypy_out="$out" --mypy_grpc_out="$out" \
  "${protos[@]}"
echo "generated ${#protos[@]} proto file(s) into libs/api/src"
