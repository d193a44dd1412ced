#!/usr/bin/env bash
# Regenerates src/weft/_proto/ from internal/wire/kronospb/kronos.proto.
#
# The generator is pinned: grpcio-tools 1.63.0 bundles protoc 26.1, whose
# Python gencode (protobuf 5.26.1) carries no runtime-version check and is
# supported by every protobuf runtime in the range pyproject.toml allows
# (>=5.26,<7: same major, and one major newer). grpcio-tools >= 1.66 emits
# gencode that refuses to load on protobuf 5.26, so do not bump it casually.
#
# Usage: scripts/gen_proto.sh            (uses .venv/bin/python if present)
#        PYTHON=/path/to/python scripts/gen_proto.sh
set -euo pipefail

GRPCIO_TOOLS_VERSION=1.63.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
proto_dir="$repo/internal/wire/kronospb"
out_dir="$here/src/weft/_proto"

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$here/.venv/bin/python" ]]; then python="$here/.venv/bin/python"; else python=python3; fi
fi

have="$("$python" -c 'import importlib.metadata as m; print(m.version("grpcio-tools"))' 2>/dev/null || true)"
if [[ "$have" != "$GRPCIO_TOOLS_VERSION" ]]; then
  echo "gen_proto: need grpcio-tools==$GRPCIO_TOOLS_VERSION in $python (have: ${have:-none})" >&2
  echo "gen_proto: run: $python -m pip install grpcio-tools==$GRPCIO_TOOLS_VERSION" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$python" -m grpc_tools.protoc -I"$proto_dir" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  "$proto_dir/kronos.proto"

# protoc writes a top-level import; inside the package it must be relative.
sed -i 's/^import kronos_pb2 as kronos__pb2$/from . import kronos_pb2 as kronos__pb2/' "$tmp/kronos_pb2_grpc.py"
grep -q '^from \. import kronos_pb2 as kronos__pb2$' "$tmp/kronos_pb2_grpc.py" || {
  echo "gen_proto: import rewrite did not apply; check the generated kronos_pb2_grpc.py" >&2
  exit 1
}

mkdir -p "$out_dir"
cp "$tmp/kronos_pb2.py" "$tmp/kronos_pb2.pyi" "$tmp/kronos_pb2_grpc.py" "$out_dir/"
echo "gen_proto: wrote $out_dir (grpcio-tools $GRPCIO_TOOLS_VERSION)"
