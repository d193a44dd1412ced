#!/usr/bin/env bash
# `make run`: start a Kronos replica (data in ./weft-data), run the Kronos
# paper's three applications against it, then keep serving until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${WEFT_KRONOS_ADDR:-127.0.0.1:7400}
DATA=${WEFT_DATA:-weft-data/kronos-1}
mkdir -p "$DATA"
./bin/weft kronos --id 1 --addr "$ADDR" --data-dir "$DATA" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/${ADDR%:*}/${ADDR#*:}") 2>/dev/null && break
  sleep 0.1
done
for app in timeline kvstore firealarm; do
  if [ -d "examples/$app" ]; then
    echo; echo "== examples/$app (against $ADDR)"
    go run "./examples/$app" --kronos "$ADDR"
  fi
done
echo
echo "Kronos is serving on $ADDR (data in $DATA). Try the Python client:"
echo "  make pydeps && clients/python/.venv/bin/python -c 'from weft.kronos import KronosClient; c=KronosClient(\"$ADDR\"); a=c.create_event(); b=c.create_event(); print(c.assign_order([(a, \"->\", b, \"must\")]), c.query_order([(b, a)]))'"
echo "Ctrl-C stops it."
wait $pid
