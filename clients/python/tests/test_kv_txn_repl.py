"""Replication of transactional writes, against real processes (one ``weft
kronos``, three ``weft kv serve --kronos``, N = 3): after concurrent
transfers, once every server's outbox drained, each of the three replicas
read alone (``get_replica``) holds every account at the value the
transactions read.
"""

from __future__ import annotations

import random
import threading
import time

from test_kv_server import KVRing
from test_kv_txn import _retry, txn_ring  # noqa: F401  (the fixture)

from weft.kv import KVClient, KVConflictError

ACCOUNTS = 6
INITIAL = 100


def test_every_replica_holds_the_committed_transfers(txn_ring: KVRing) -> None:  # noqa: F811
    accounts = [f"acct-{i}" for i in range(ACCOUNTS)]
    with KVClient(txn_ring.addrs) as kv:
        _retry(lambda: kv.txn(writes=[(a, str(INITIAL)) for a in accounts]))
        net = [0] * ACCOUNTS
        lock = threading.Lock()

        def transfer(seed: int) -> None:
            rng = random.Random(seed)
            for _ in range(20):
                a, b = rng.sample(range(ACCOUNTS), 2)
                amt = rng.randint(1, 9)
                try:
                    kv.txn(writes=[(accounts[a], str(-amt), True), (accounts[b], str(amt), True)])
                except KVConflictError:
                    continue
                with lock:
                    net[a] -= amt
                    net[b] += amt

        threads = [threading.Thread(target=transfer, args=(s,)) for s in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        deadline = time.monotonic() + 30
        while sum(kv.stats(i)["outbox"]["len"] for i in range(3)) > 0:
            assert time.monotonic() < deadline, "the outboxes never drained"
            time.sleep(0.05)
        want = [str(INITIAL + d).encode() for d in net]
        for server in range(3):
            got = [[s.value for s in kv.get_replica(server, a)] for a in accounts]
            assert got == [[w] for w in want], f"server {server}"
