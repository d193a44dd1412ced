"""One client of `weft bench twohop` through the Python client over HTTP.

Reads the sources of its queries (a JSON list of handles) on its first
stdin line, connects, prints "ready", waits for "go", runs the queries one
after another and prints one JSON line: its start and end (time.time()),
each query's latency in microseconds and the count it answered.
"""
import json
import sys
import time

from weft import Client


def main() -> None:
    url, count = sys.argv[1], sys.argv[2] == "count"
    handles = json.loads(sys.stdin.readline())
    base = {"node_props": [{}, {}, {}], "edge_props": [{}, {}]}
    if count:
        base["aggregate"] = "count"
    with Client(url) as c:
        c.healthy()  # the connection is open before the clock starts
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return
        lat, got = [], []
        start = time.time()
        for h in handles:
            t = time.perf_counter()
            r = c.run("traverse_props", src=h, **base)
            lat.append((time.perf_counter() - t) * 1e6)
            got.append(r["count"] if count else len(r["nodes"]))
        end = time.time()
    print(json.dumps({"start": start, "end": end, "lat_us": lat, "got": got}), flush=True)


if __name__ == "__main__":
    main()
