#!/usr/bin/env python3
"""Event-creation latency of the Python client, as in the Kronos paper's Figure 9.

Sequential create_event calls, one at a time, against a running replica:

    python scripts/bench_create.py --addr 127.0.0.1:7400 --n 10000

Prints a JSON line with p50/p90/p99/p999/max in microseconds.
"""

from __future__ import annotations

import argparse
import json
import time

from weft.kronos import KronosClient


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--addr", default="127.0.0.1:7400")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--warmup", type=int, default=1000)
    args = ap.parse_args()
    with KronosClient(args.addr) as k:
        for _ in range(args.warmup):
            k.create_event()
        lat = []
        for _ in range(args.n):
            t = time.perf_counter_ns()
            k.create_event()
            lat.append((time.perf_counter_ns() - t) / 1000.0)
    lat.sort()

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))]

    print(json.dumps({"client": "python", "n": args.n, "p50_us": pct(0.5), "p90_us": pct(0.9),
                      "p99_us": pct(0.99), "p999_us": pct(0.999), "max_us": lat[-1]}))


if __name__ == "__main__":
    main()
