#!/usr/bin/env bash
# `make run`: Weft's main job. Starts an embedded Weft (gatekeepers, shards,
# Kronos and the Pebble store in one process; data in ./weft-data/serve) with
# the demo graph, takes a short tour through the CLI, HTTP and Python, then
# keeps serving until Ctrl-C.
#
# Re-runnable: the demo graph is loaded once, on the first run (`serve --demo`
# loads it unless its marker vertex demo/meta exists), and kept in the data
# directory across runs; `make clean` (or rm -r weft-data/serve) starts afresh.
# The tour only reads demo data and makes writes that succeed however often
# they run (a property set to a fixed value, a counter incremented), all on
# person/alice: it creates nothing, so a second or tenth run answers the same
# way, and it leaves person/lovelace to the README's own tour, which creates it.
# A failed tour step is reported and the server keeps serving.
set -uo pipefail
cd "$(dirname "$0")/.."
HTTP=${WEFT_HTTP_ADDR:-127.0.0.1:7580}
GRPC=${WEFT_GRPC_ADDR:-127.0.0.1:7500}
DATA=${WEFT_DATA:-weft-data/serve}
./bin/weft serve --demo --data-dir "$DATA" --http-addr "$HTTP" --grpc-addr "$GRPC" &
pid=$!
stop() {
  trap - INT TERM
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  echo "Weft stopped (weft serve exited with status $rc)."
  exit "$rc"
}
trap stop INT TERM
for _ in $(seq 1 300); do
  curl -sf "http://$HTTP/healthz" >/dev/null 2>&1 && break
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    echo "weft serve exited (status $?) before answering on http://$HTTP: see its error above." >&2
    exit 1
  fi
  sleep 0.1
done
failed=0
step() {
  echo; echo "\$ $*"
  if ! "$@"; then
    failed=$((failed + 1))
    echo "(tour step failed: $*)" >&2
  fi
}
echo "== a five-minute tour (docs/api.md has the whole API)"
step ./bin/weft tx --addr "$GRPC" 'get_vertex @alice'
step ./bin/weft tx --addr "$GRPC" 'set_vertex_prop person/alice status "took the make run tour"'
step ./bin/weft run --addr "$GRPC" reachability '{"src":"person/alice","dest":"city/paris"}'
step ./bin/weft run --addr "$GRPC" get_edges '{"node":"person/alice","limit":5}'
step curl -sf "http://$HTTP/v1/status"
echo
if [ -x clients/python/.venv/bin/python ]; then
  echo; echo "\$ python: weft.Client"
  step clients/python/.venv/bin/python - "$HTTP" <<'PY'
import sys
from weft import Client
c = Client("http://" + sys.argv[1])
for tx in c.transaction():  # re-runs the body on a conflict
    with tx:
        v = tx.get_vertex("person/alice")
        tx.set_vertex_prop("person/alice", "visits", int(v.props.get("visits", 0)) + 1)
print("person/alice visits:", c.run("read_node_props", node="person/alice", keys=["visits"]))
PY
fi
echo
if [ "$failed" -gt 0 ]; then
  echo "The tour had $failed failed step(s), above; the server still runs."
fi
echo "Weft is serving: HTTP http://$HTTP (OpenAPI at /openapi.yaml, metrics at /metrics), gRPC $GRPC; data in $DATA."
echo "Ctrl-C stops it."
wait "$pid"
rc=$?
echo "weft serve exited with status $rc."
exit "$rc"
