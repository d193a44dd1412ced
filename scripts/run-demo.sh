#!/usr/bin/env bash
# `make run`: Weft's main job. Starts an embedded Weft (gatekeepers, shards,
# Kronos and the Pebble store in one process; data in ./weft-data/serve) with
# the demo graph, takes a short tour through the CLI, HTTP and Python, then
# keeps serving until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
HTTP=${WEFT_HTTP_ADDR:-127.0.0.1:7580}
GRPC=${WEFT_GRPC_ADDR:-127.0.0.1:7500}
DATA=${WEFT_DATA:-weft-data/serve}
./bin/weft serve --demo --data-dir "$DATA" --http-addr "$HTTP" --grpc-addr "$GRPC" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 200); do
  curl -sf "http://$HTTP/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
step() { echo; echo "\$ $*"; "$@"; }
echo "== a five-minute tour (docs/api.md has the whole API)"
step ./bin/weft tx --addr "$GRPC" 'get_vertex @alice'
step ./bin/weft tx --addr "$GRPC" 'create_vertex person/ada' 'set_vertex_prop person/ada name "Ada"' \
  'create_edge person/ada person/alice knows/alice' 'set_edge_prop person/ada knows/alice weight 0.9'
step ./bin/weft run --addr "$GRPC" reachability '{"src":"person/ada","dest":"city/paris"}'
step ./bin/weft run --addr "$GRPC" get_edges '{"node":"person/alice","limit":5}'
step curl -s "http://$HTTP/v1/status"
echo
if [ -x clients/python/.venv/bin/python ]; then
  echo; echo "\$ python: weft.Client"
  clients/python/.venv/bin/python - "$HTTP" <<'PY'
import sys
from weft import Client
c = Client("http://" + sys.argv[1])
for tx in c.transaction():
    with tx:
        v = tx.get_vertex("person/ada")
        tx.set_vertex_prop("person/ada", "visits", int(v.props.get("visits", 0)) + 1)
print("person/ada visits:", c.run("read_node_props", node="person/ada", keys=["visits"]))
PY
fi
echo
echo "Weft is serving: HTTP http://$HTTP (OpenAPI at /openapi.yaml, metrics at /metrics), gRPC $GRPC; data in $DATA."
echo "Ctrl-C stops it."
wait $pid
