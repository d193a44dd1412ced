"""``KVClient.txn`` against real processes: one ``weft kronos`` and three
``weft kv serve --kronos`` on free loopback ports (nothing mocked).

Concurrent transfers between accounts (two ``add`` writes each) from several
threads, with audits reading every account in one transaction: every audit
sees the same total, and the final balances equal the initial ones plus the
committed transfers.
"""

from __future__ import annotations

import random
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from servers import free_ports
from test_kv_server import KVRing, _wait

from weft.kv import KVClient, KVConflictError, KVInvalidError

T = TypeVar("T")

ACCOUNTS = 6
INITIAL = 100


@pytest.fixture
def txn_ring(weft_bin: Path, tmp_path: Path) -> Iterator[KVRing]:
    ports = free_ports(4)
    kronos = f"127.0.0.1:{ports[0]}"
    addrs = [f"127.0.0.1:{p}" for p in ports[1:]]
    ring = KVRing(addrs, [], [])
    klog = tmp_path / "kronos.log"
    with open(klog, "wb") as out:
        kproc = subprocess.Popen([str(weft_bin), "kronos", "--id", "1", "--addr", kronos,
                                  "--data-dir", str(tmp_path / "kronos"), "--sync=false"],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait(kronos, kproc, klog)
        for i in range(3):
            log = tmp_path / f"kv{i}.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [str(weft_bin), "kv", "serve", "--id", str(i), "--peers", ",".join(addrs),
                     "--data-dir", str(tmp_path / f"kv{i}"), "--kronos", kronos],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            ring.procs.append(proc)
            ring.logs.append(log)
        for i in range(3):
            _wait(addrs[i], ring.procs[i], ring.logs[i])
        yield ring
    finally:
        for i in range(len(ring.procs)):
            ring.kill(i)
        kproc.kill()
        kproc.wait(timeout=10)


def _retry(f: Callable[[], T]) -> T:
    while True:
        try:
            return f()
        except KVConflictError:
            continue


def test_transfers_keep_the_total(txn_ring: KVRing) -> None:
    accounts = [f"acct-{i}" for i in range(ACCOUNTS)]
    with KVClient(txn_ring.addrs) as kv:
        _retry(lambda: kv.txn(writes=[(a, str(INITIAL)) for a in accounts]))
        net = [0] * ACCOUNTS
        lock = threading.Lock()
        failures: list[str] = []
        committed = [0]

        def transfer(seed: int) -> None:
            rng = random.Random(seed)
            for _ in range(25):
                a, b = rng.sample(range(ACCOUNTS), 2)
                amt = rng.randint(1, 9)
                try:
                    kv.txn(writes=[(accounts[a], str(-amt), True), (accounts[b], str(amt), True)])
                except KVConflictError:
                    continue
                with lock:
                    net[a] -= amt
                    net[b] += amt
                    committed[0] += 1

        def audit() -> None:
            for _ in range(25):
                reads = _retry(lambda: kv.txn(reads=accounts))
                total = sum(int(reads[a][0].value) for a in accounts)
                if total != ACCOUNTS * INITIAL:
                    failures.append(f"an audit saw {total}")

        threads = [threading.Thread(target=transfer, args=(s,)) for s in range(4)] + [threading.Thread(target=audit)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert committed[0] > 0
        final = _retry(lambda: kv.txn(reads=accounts))
        assert [int(final[a][0].value) for a in accounts] == [INITIAL + d for d in net]


def test_add_to_a_non_number_is_refused_before_anything_changes(txn_ring: KVRing) -> None:
    with KVClient(txn_ring.addrs) as kv, pytest.raises(KVInvalidError):
        kv.txn(writes=[("x", "not a number", True)])
