"""The ``weft.kv`` client against real ``weft kv serve`` processes.

Each test gets a ring of three servers (N = 3) on free loopback ports, each
with its own Pebble directory, started from ``$WEFT_BIN`` (or a fresh build;
see conftest.py) and killed at teardown. Nothing here is mocked: quorums,
siblings, the ring placement and the rollback fence are the servers'.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from servers import free_ports

from weft.kv import (
    KVClient,
    KVInvalidError,
    KVPausedError,
    KVQuorumError,
    Ring,
    Version,
)

START_TIMEOUT = 20.0


@dataclass
class KVRing:
    addrs: list[str]
    procs: list[subprocess.Popen[bytes]]
    logs: list[Path]

    def kill(self, i: int) -> None:
        """SIGKILL server ``i`` (kill -9) and reap it."""
        if self.procs[i].poll() is None:
            self.procs[i].kill()
            self.procs[i].wait(timeout=10)

    def admin(self, i: int, path: str, body: dict[str, object]) -> dict[str, object]:
        req = urllib.request.Request(f"http://{self.addrs[i]}{path}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            out: dict[str, object] = json.loads(resp.read())
            return out

    def raw_get(self, i: int, key: str) -> list[dict[str, object]]:
        """One server's own share of ``key`` (no quorum)."""
        req = urllib.request.Request(f"http://{self.addrs[i]}/v1/kv/get", data=json.dumps({"key": key}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            sibs: list[dict[str, object]] = json.loads(resp.read())["siblings"]
            return sibs


def _wait(addr: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    host, port = addr.rsplit(":", 1)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"weft kv serve {addr} exited:\n{log.read_text(errors='replace')[-4000:]}", pytrace=False)
        try:
            with socket.create_connection((host, int(port)), timeout=0.25):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"weft kv serve {addr} not listening after {START_TIMEOUT}s", pytrace=False)
        time.sleep(0.05)


@pytest.fixture
def kv_ring(weft_bin: Path, tmp_path: Path) -> Iterator[KVRing]:
    yield from _ring(weft_bin, tmp_path, 3)


@pytest.fixture
def kv_ring_n2(weft_bin: Path, tmp_path: Path) -> Iterator[KVRing]:
    """Three servers, N = 2: each key lives on two of them."""
    yield from _ring(weft_bin, tmp_path, 2)


def _ring(weft_bin: Path, tmp_path: Path, n: int) -> Iterator[KVRing]:
    addrs = [f"127.0.0.1:{p}" for p in free_ports(3)]
    ring = KVRing(addrs, [], [])
    try:
        for i in range(3):
            log = tmp_path / f"kv{i}.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [str(weft_bin), "kv", "serve", "--id", str(i), "--peers", ",".join(addrs),
                     "--data-dir", str(tmp_path / f"kv{i}"), "--n", str(n), "--r", "2", "--w", "2"],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            ring.procs.append(proc)
            ring.logs.append(log)
        for i in range(3):
            _wait(addrs[i], ring.procs[i], ring.logs[i])
        yield ring
    finally:
        for i in range(len(ring.procs)):
            ring.kill(i)


def test_put_get_round_trip(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs[2:]) as kv:
        assert (kv.n, kv.r, kv.w) == (3, 2, 2)  # from the servers' metadata
        assert kv.get("missing").siblings == []
        missing = kv.get("missing")
        assert len(missing) == 0 and list(missing) == [] and missing  # true though empty
        assert repr(kv) == f"<weft.KVClient {','.join(kv.peers)} n=3 r=2 w=2>"
        v1 = kv.write("greeting", "hello")
        got = kv.get("greeting")
        assert got.values == [b"hello"] and got.context == [v1] and got.acks >= 2
        v2 = kv.put("greeting", b"hi", got.context, w=3)
        assert v1.compare(v2) == "before"
        assert kv.get("greeting", r=3).values == [b"hi"]
        assert [sib.value for sib in kv.get("greeting")] == [b"hi"] and kv.get("greeting")[0].value == b"hi"
    assert repr(kv).endswith(" closed>")
    kv.close()  # again: idempotent
    with pytest.raises(RuntimeError, match="closed"):
        kv.get("greeting")


def test_concurrent_writers_leave_siblings_then_resolve(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs) as a, KVClient(kv_ring.addrs) as b:
        a.put("k", b"from-a")
        b.put("k", b"from-b")  # blind: neither saw the other
        got = a.get("k", r=3)
        assert sorted(got.values) == [b"from-a", b"from-b"]
        a.put("k", b"merged", got.context)
        assert b.get("k", r=3).values == [b"merged"]


def test_ring_placement_matches_the_servers(kv_ring_n2: KVRing) -> None:
    """The Python ring is the Go ring: with N = 2 of 3 servers, W = 2 writes
    land on exactly the two servers the Python ring names, for many keys."""
    with KVClient(kv_ring_n2.addrs, r=1, w=2) as kv:
        assert kv.n == 2
        ring = Ring(3, int(kv.meta["vnodes"]))
        for k in range(30):
            key = f"key{k}"
            kv.put(key, b"v", w=2)
            holders = {i for i in range(3) if kv_ring_n2.raw_get(i, key)}
            assert holders == set(ring.replicas(key, 2)), key


def test_quorum_per_request_and_kill_9(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs, round_timeout=0.2) as kv:
        kv.write("k", b"before", w=3)
        kv_ring.kill(0)
        kv_ring.kill(1)
        with pytest.raises(KVQuorumError):
            kv.put("k", b"needs-two", kv.get("k", r=1).context, w=2)
        assert kv.get("k", r=1).values in ([b"before"], [b"needs-two"], sorted([b"before", b"needs-two"]))
        with pytest.raises(KVQuorumError):
            kv.get("k", r=2)


def test_invalid_quorum_is_refused_before_sending(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs) as kv:
        with pytest.raises(KVInvalidError):
            kv.get("k", r=4)
        with pytest.raises(KVInvalidError):
            KVClient(kv_ring.addrs, w=5)


def test_paused_servers_refuse_with_retryable_error(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs, round_timeout=0.1) as kv:
        for i in range(3):
            kv_ring.admin(i, "/v1/kv/admin/pause", {"gen": 1})
        with pytest.raises(KVPausedError) as info:
            kv.put("k", b"v")
        assert info.value.retryable and isinstance(info.value, KVQuorumError)
        for i in range(3):
            kv_ring.admin(i, "/v1/kv/admin/resume", {"gen": 1})
        kv.put("k", b"v")
        assert kv.get("k").values == [b"v"]


def test_rollback_generation_reaches_the_client(kv_ring: KVRing) -> None:
    with KVClient(kv_ring.addrs) as kv:
        kv.write("kept", b"old", w=3)
        time.sleep(0.05)
        cut = time.time_ns()
        time.sleep(0.05)
        kv.write("dropped", b"new", w=3)
        for i in range(3):
            kv_ring.admin(i, "/v1/kv/admin/pause", {"gen": 1})
        for i in range(3):
            kv_ring.admin(i, "/v1/kv/admin/restore", {"gen": 1, "before": cut})
        for i in range(3):
            kv_ring.admin(i, "/v1/kv/admin/resume", {"gen": 1})
        assert kv.generation == 0
        assert kv.get("kept", r=3).values == [b"old"]
        assert kv.get("dropped", r=3).values == []
        assert kv.generation == 1


def test_version_descend_prunes_like_the_servers() -> None:
    ctx = [Version(tuple((a, a) for a in range(1, 70)))]
    v = Version.descend(ctx, actor=1000, counter=1, entries_max=64)
    assert len(v.entries) == 64 and v.get(1000) == 1
    assert v.get(1) == 0 and v.get(69) == 69  # the smallest counters went first
    assert ctx[0].compare(v) == "concurrent"  # pruning only loses order, never invents it
