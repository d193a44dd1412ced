"""weft.cluster: a client that finds a cluster's gatekeepers through the coordinator.

Two kinds of test:

* Against small fake HTTP servers in this process (a coordinator's
  ``/status.json`` and gatekeepers answering a few API calls): which replica's
  configuration is taken, round robin, failover of reads and of commits that
  were never sent, and a commit whose answer is lost raising UnknownOutcome.
* Against a real cluster started by ``weft cluster up`` (2 gatekeepers and a
  backup, 2 shards, 1 Kronos, 1 coordinator, PostgreSQL started by the
  launcher), stopped by ``weft cluster down`` whatever the outcome:
  transactions and programs through the coordinator, and a kill -9 of the
  gatekeeper holding slot 0 while reads and read-modify-write transactions
  run. These skip only where PostgreSQL is not installed and cannot be (the
  launcher reports pgserver's "PostgreSQL is not installed"), as the Go tests
  that start clusters do (pgtest.Shared).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from servers import LOG_TAIL, free_ports

from weft.client import (
    Aborted,
    Client,
    Transaction,
    Unavailable,
    UnknownOutcome,
    WeftError,
)
from weft.cluster import ClusterClient, GatekeeperInfo, parse_status

# ---------------------------------------------------------------------------
# Fakes


def status_json(*, leader: bool, applied: int, epoch: int, gatekeepers: list[tuple[int, int, str]],
                dead: tuple[int, ...] = ()) -> dict[str, Any]:
    """A coordinator's /status.json as protojson writes it (camelCase,
    64-bit integers as strings); gatekeepers are (slot, member, http address)."""
    return {
        "nodeId": "1", "isLeader": leader, "appliedIndex": str(applied),
        "config": {"epoch": str(epoch), "activeEpoch": str(epoch), "gatekeepers": [
            {"slot": s, "member": str(m), "address": "", "apiAddress": "127.0.0.1:1"} for s, m, _ in gatekeepers]},
        "members": [{"id": str(m), "role": "GATEKEEPER", "httpAddress": a, "slot": s, "live": m not in dead}
                    for s, m, a in gatekeepers],
    }


@dataclass
class FakeServer:
    """A threaded HTTP server whose answers come from ``handle(method, path, body)``:
    (status, JSON body), or None to close the connection without answering."""

    handle: Callable[[str, str, bytes], tuple[int, Any] | None]
    calls: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    #: Close each connection after answering, without saying so (as a
    #: server that dies between requests, or closes idle connections).
    close_after_answer: bool = False
    #: Released once for each connection closed that way.
    closed: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))

    def start(self) -> FakeServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.calls.append(f"{self.command} {self.path}")
                answer = fake.handle(self.command, self.path, body)
                if answer is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                code, obj = answer
                raw = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                if fake.close_after_answer:
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.connection.close()
                    fake.closed.release()

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    @property
    def addr(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def gatekeeper(name: str, *, commit: Callable[[], tuple[int, Any] | None] | None = None) -> FakeServer:
    """A fake gatekeeper: begin answers its name as the snapshot, commit as told."""
    def handle(method: str, path: str, body: bytes) -> tuple[int, Any] | None:
        if path == "/v1/begin":
            return 200, {"snapshot": name}
        if path == "/v1/commit":
            return commit() if commit is not None else (200, {"handles": [], "snapshot": name})
        return 404, {"error": {"code": "NOT_FOUND", "message": path}}
    return FakeServer(handle).start()


def coordinator(status: Callable[[], dict[str, Any]]) -> FakeServer:
    return FakeServer(lambda m, p, b: (200, status()) if p == "/status.json" else (404, {})).start()


@pytest.fixture
def fakes() -> Iterator[list[FakeServer]]:
    """Fake servers of the test's own, stopped at its end."""
    made: list[FakeServer] = []
    yield made
    for f in made:
        f.stop()


def closed_port() -> str:
    """An address nothing listens on (connections are refused)."""
    return f"127.0.0.1:{free_ports(1)[0]}"


# ---------------------------------------------------------------------------
# Against fakes


def test_parse_status_lists_live_held_slots_by_slot() -> None:
    st = status_json(leader=True, applied=9, epoch=7,
                     gatekeepers=[(1, 5, "h:2"), (0, 4, "h:1"), (2, 6, "h:3")], dead=(6,))
    st["config"]["gatekeepers"].append({"slot": 3, "member": "0"})  # vacant
    leader, applied, cfg = parse_status(st)
    assert leader and applied == 9 and cfg.epoch == 7
    assert cfg.gatekeepers == (GatekeeperInfo(0, 4, "h:1"), GatekeeperInfo(1, 5, "h:2"))
    # The proto field names are accepted too.
    snake = {"is_leader": False, "applied_index": 3, "config": {"epoch": 2, "gatekeepers": [
        {"slot": 0, "member": 4}]}, "members": [{"id": 4, "http_address": "h:9", "live": True}]}
    assert parse_status(snake)[2].gatekeepers == (GatekeeperInfo(0, 4, "h:9"),)


def test_leader_configuration_wins_over_a_stale_follower(fakes: list[FakeServer]) -> None:
    gk_new, gk_old = gatekeeper("new"), gatekeeper("old")
    fakes += [gk_new, gk_old]
    # The follower is asked first and is further ahead in its log; the leader still wins.
    follower = coordinator(lambda: status_json(leader=False, applied=50, epoch=3,
                                               gatekeepers=[(0, 1, gk_old.addr)]))
    leader = coordinator(lambda: status_json(leader=True, applied=40, epoch=4,
                                             gatekeepers=[(0, 2, gk_new.addr)]))
    fakes += [follower, leader]
    with Client.from_coordinator([f"http://{follower.addr}", f"http://{leader.addr}"]) as c:
        assert c.epoch == 4 and [g.http_address for g in c.gatekeepers] == [gk_new.addr]
        assert c.begin().snapshot == "new"


def test_without_a_leader_the_most_advanced_replica_and_never_an_older_epoch(fakes: list[FakeServer]) -> None:
    gk_a, gk_b = gatekeeper("a"), gatekeeper("b")
    fakes += [gk_a, gk_b]
    lagging = coordinator(lambda: status_json(leader=False, applied=10, epoch=2, gatekeepers=[(0, 1, gk_a.addr)]))
    ahead = coordinator(lambda: status_json(leader=False, applied=20, epoch=5, gatekeepers=[(0, 2, gk_b.addr)]))
    fakes += [lagging, ahead]
    with ClusterClient([f"http://{lagging.addr}", f"http://{ahead.addr}"]) as c:
        assert c.epoch == 5 and c.begin().snapshot == "b"
        ahead.stop()  # only the lagging replica (epoch 2) answers now
        assert c.refresh()
        assert c.epoch == 5 and c.begin().snapshot == "b"


def test_calls_are_spread_round_robin(fakes: list[FakeServer]) -> None:
    gks = [gatekeeper(n) for n in ("g0", "g1", "g2")]
    fakes += gks
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1,
                                            gatekeepers=[(i, i + 1, g.addr) for i, g in enumerate(gks)]))
    fakes.append(coord)
    with Client.from_coordinator([f"http://{coord.addr}"]) as c:
        seen = [c.begin().snapshot for _ in range(9)]
        assert repr(c) == (f"<weft.ClusterClient coordinators=http://{coord.addr} epoch=1 "
                           f"gatekeepers={','.join(g.addr for g in gks)}>")
    c.close()  # again: idempotent
    assert sorted(seen) == sorted(["g0", "g1", "g2"] * 3)
    assert all(seen[i] != seen[i + 1] for i in range(8))


def test_reads_move_off_a_dead_gatekeeper_and_the_configuration_is_reread(fakes: list[FakeServer]) -> None:
    live = gatekeeper("live")
    fakes.append(live)
    dead = closed_port()
    listing = {"gks": [(0, 1, dead), (1, 2, live.addr)]}
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=len(coord.calls),
                                            gatekeepers=list(listing["gks"])))
    fakes.append(coord)
    with ClusterClient([f"http://{coord.addr}"], timeout=10.0) as c:
        reads_before = len(coord.calls)
        listing["gks"] = [(1, 2, live.addr)]  # the coordinator drops the dead one
        time.sleep(0.2)  # past the least gap between two reads (0.1 s), so a failure reads at once
        assert [c.begin().snapshot for _ in range(6)] == ["live"] * 6
        assert len(coord.calls) > reads_before  # a failure made it read the configuration again
        assert [g.http_address for g in c.gatekeepers] == [live.addr]


def test_a_commit_that_was_never_sent_moves_to_another_gatekeeper(fakes: list[FakeServer]) -> None:
    live = gatekeeper("live")
    fakes.append(live)
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1,
                                            gatekeepers=[(0, 1, closed_port()), (1, 2, live.addr)]))
    fakes.append(coord)
    with ClusterClient([f"http://{coord.addr}"], timeout=10.0) as c:
        for _ in range(4):  # round robin starts on either; the refused one sent nothing
            assert c.commit([{"op": "create_vertex", "vertex": "v"}]).snapshot == "live"
    assert live.calls.count("POST /v1/commit") == 4


@pytest.mark.parametrize("answer", [None, (503, {"error": {"code": "UNAVAILABLE", "message": "closing"}})],
                         ids=["connection-closed", "unavailable"])
def test_a_commit_whose_answer_is_lost_is_an_unknown_outcome(
        fakes: list[FakeServer], answer: tuple[int, Any] | None) -> None:
    gk = gatekeeper("g", commit=lambda: answer)
    fakes.append(gk)
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1, gatekeepers=[(0, 1, gk.addr)]))
    fakes.append(coord)
    with ClusterClient([f"http://{coord.addr}"], timeout=5.0) as c, pytest.raises(UnknownOutcome) as info:
        c.run_transaction(lambda tx: tx.create_vertex("v"))
    assert not info.value.retryable and info.value.code == "UNKNOWN_OUTCOME"
    assert isinstance(info.value.cause, WeftError)
    assert gk.calls.count("POST /v1/commit") == 1  # sent once, never again


def test_a_commit_is_not_sent_on_a_connection_the_server_closed(fakes: list[FakeServer]) -> None:
    gk = gatekeeper("g")
    gk.close_after_answer = True
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1, gatekeepers=[(0, 1, gk.addr)]))
    fakes += [gk, coord]
    with ClusterClient([f"http://{coord.addr}"], timeout=5.0) as c:
        for _ in range(3):
            tx = c.begin()  # kept alive by the client, closed by the server
            assert gk.closed.acquire(timeout=5)
            tx.create_vertex("v")
            assert tx.commit().snapshot == "g"  # on a fresh connection: no UnknownOutcome
            assert gk.closed.acquire(timeout=5)
    assert gk.calls.count("POST /v1/commit") == 3


def test_a_refused_commit_is_the_servers_answer(fakes: list[FakeServer]) -> None:
    gk = gatekeeper("g", commit=lambda: (409, {"error": {"code": "ABORTED", "message": "conflict",
                                                          "retryable": True}}))
    fakes.append(gk)
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1, gatekeepers=[(0, 1, gk.addr)]))
    fakes.append(coord)
    with ClusterClient([f"http://{coord.addr}"], timeout=5.0) as c, pytest.raises(Aborted):
        c.run_transaction(lambda tx: tx.create_vertex("v"), retries=2)
    assert gk.calls.count("POST /v1/commit") == 3


def test_no_coordinator_fails_within_the_timeout() -> None:
    with pytest.raises(Unavailable, match="no coordinator"):
        ClusterClient([f"http://{closed_port()}"], timeout=0.5)


def test_no_live_gatekeeper_fails_reads_after_the_timeout(fakes: list[FakeServer]) -> None:
    coord = coordinator(lambda: status_json(leader=True, applied=1, epoch=1, gatekeepers=[]))
    fakes.append(coord)
    with ClusterClient([f"http://{coord.addr}"], timeout=0.5) as c:
        assert c.gatekeepers == []
        with pytest.raises(Unavailable, match="no live gatekeeper"):
            c.begin()


# ---------------------------------------------------------------------------
# A real cluster

UP_TIMEOUT = 120.0  # seconds for `weft cluster up` (it waits for every process)
PROMOTE_TIMEOUT = 30.0  # seconds for the backup to be promoted and its epoch active
# pgserver.ErrUnavailable's text: no PostgreSQL binaries and no way to install them.
NO_POSTGRES = "PostgreSQL is not installed"


@dataclass
class UpCluster:
    """A cluster started by `weft cluster up`."""

    dir: Path
    procs: dict[str, dict[str, Any]]  # cluster.json's procs by name

    @property
    def coord_urls(self) -> list[str]:
        return [f"http://{p['http_addr']}" for p in self.procs.values() if p["role"] == "coord"]

    def status(self) -> dict[str, Any]:
        """The leader's /status.json (read directly, not through the client)."""
        for url in self.coord_urls:
            with urllib.request.urlopen(url + "/status.json", timeout=5) as resp:
                st: dict[str, Any] = json.load(resp)
            if st.get("isLeader"):
                return st
        raise AssertionError("no coordinator replica says it is leader")

    def logs(self) -> str:
        out = []
        for p in self.procs.values():
            try:
                out.append(f"--- {p['name']} ---\n{Path(p['log']).read_text(errors='replace')[-LOG_TAIL:]}")
            except OSError as e:
                out.append(f"--- {p['name']}: {e}")
        return "\n".join(out)


@pytest.fixture
def cluster(weft_bin: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[UpCluster]:
    d = tmp_path / "c"

    def down() -> None:  # registered before up: a failed up leaves its processes in cluster.json
        subprocess.run([str(weft_bin), "cluster", "down", "--dir", str(d)], capture_output=True, timeout=60, check=False)

    request.addfinalizer(down)
    up = subprocess.run([str(weft_bin), "cluster", "up", "--dir", str(d), "--gatekeepers", "2", "--shards", "2",
                         "--kronos-replicas", "1", "--coord-replicas", "1", "--backup-gatekeepers", "1"],
                        capture_output=True, text=True, timeout=UP_TIMEOUT, check=False)
    if up.returncode != 0:
        if NO_POSTGRES in up.stdout + up.stderr:
            pytest.skip(f"no PostgreSQL: {(up.stdout + up.stderr)[-400:]}")
        pytest.fail(f"weft cluster up failed:\n{up.stdout[-LOG_TAIL:]}\n{up.stderr[-LOG_TAIL:]}", pytrace=False)
    state = json.loads((d / "cluster.json").read_text())
    c = UpCluster(d, {p["name"]: p for p in state["procs"]})
    yield c
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(c.logs())


def test_transactions_and_programs_through_the_coordinator(cluster: UpCluster) -> None:
    st = cluster.status()
    with Client.from_coordinator(cluster.coord_urls, timeout=20.0) as c:
        assert c.epoch == int(st["config"]["epoch"])
        # The slot holders (which process is the backup depends on the order they registered in).
        names = {int(m["id"]): m["name"] for m in st["members"]}
        want = [(e["slot"], cluster.procs[names[int(e["member"])]]["http_addr"]) for e in st["config"]["gatekeepers"]]
        assert [(g.slot, g.http_address) for g in c.gatekeepers] == sorted(want)
        assert [g.slot for g in c.gatekeepers] == [0, 1]

        for tx in c.transaction():
            with tx:
                for i in range(6):
                    tx.create_vertex(f"p/{i}")
                    tx.set_vertex_prop(f"p/{i}", "i", i)
                for i in range(5):
                    tx.create_edge(f"p/{i}", f"p/{i + 1}", f"next/{i}")

        def bump(tx: Transaction) -> int:
            v = tx.get_vertex("p/0")
            n = int(v.props["i"]) + 10  # type: ignore[arg-type]
            tx.set_vertex_prop("p/0", "i", n)
            return n

        assert [c.run_transaction(bump) for _ in range(4)] == [10, 20, 30, 40]
        for _ in range(4):  # round robin: every gatekeeper sees the latest commit
            assert c.get_vertex("p/0").props["i"] == 40
        assert "get_node" in {p.name for p in c.programs()}
        node = c.run("get_node", node="p/3")
        assert node["handle"] == "p/3" and node["props"]["i"] == 3
        # A multi-shard program: hop depths along the chain (the vertices are spread over both shards).
        assert c.run("bfs", src="p/0", max_depth=10)["depths"] == {f"p/{i}": i for i in range(6)}
        assert c.run("count_edges", node="p/2")["count"] == 1
        assert c.status()["gatekeepers"] >= 1 and c.healthy()


@dataclass
class Workload:
    """Read-modify-write increments of one counter vertex, and reads of it."""

    client: ClusterClient
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: list[str] = field(default_factory=list)
    acked_at: list[float] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    reads_at: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def writer(self, name: str) -> None:
        i = 0
        while not self.stop.is_set():
            mark = f"{name}-{i}"
            i += 1

            def incr(tx: Transaction, mark: str = mark) -> None:
                v = tx.get_vertex("counter")
                log = v.props.get("log")
                assert isinstance(log, list)
                tx.set_vertex_prop("counter", "log", [*log, mark])
                tx.set_vertex_prop("counter", "n", int(v.props["n"]) + 1)  # type: ignore[arg-type]

            try:
                self.client.run_transaction(incr, retries=100)
            except UnknownOutcome:
                with self.lock:
                    self.unknown.append(mark)
                continue
            except WeftError as e:
                with self.lock:
                    self.errors.append(f"{mark}: {e!r}")
                continue
            with self.lock:
                self.acked.append(mark)
                self.acked_at.append(time.monotonic())

    def reader(self) -> None:
        seen = 0  # reads that start after another ended see at least as much
        while not self.stop.is_set():
            try:
                if len(self.reads_at) % 2:
                    n = int(self.client.run("get_node", node="counter")["props"]["n"])
                else:
                    n = int(self.client.get_vertex("counter").props["n"])  # type: ignore[arg-type]
            except WeftError as e:
                with self.lock:
                    self.errors.append(f"read: {e!r}")
                continue
            with self.lock:
                if n < seen:
                    self.errors.append(f"read went back: {n} after {seen}")
                seen = max(seen, n)
                self.reads_at.append(time.monotonic())


def slot0_holder(st: dict[str, Any]) -> tuple[int, str]:
    """(member id, member name) holding gatekeeper slot 0."""
    member = next(int(e["member"]) for e in st["config"]["gatekeepers"] if e["slot"] == 0)
    name = next(m["name"] for m in st["members"] if int(m["id"]) == member)
    return member, name


def test_client_survives_the_kill_of_gatekeeper_slot_0(cluster: UpCluster) -> None:
    with Client.from_coordinator(cluster.coord_urls, timeout=20.0, attempt_timeout=5.0) as c:
        def create(tx: Transaction) -> None:
            tx.create_vertex("counter")
            tx.set_vertex_prop("counter", "n", 0)
            tx.set_vertex_prop("counter", "log", [])

        c.run_transaction(create)
        w = Workload(c)
        threads = [threading.Thread(target=w.writer, args=(f"w{k}",)) for k in range(2)]
        threads.append(threading.Thread(target=w.reader))
        for t in threads:
            t.start()
        try:
            deadline = time.monotonic() + 20
            while len(w.acked) < 10 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(w.acked) >= 10, f"no progress before the kill: {w.errors[:5]}"

            before = cluster.status()
            victim, victim_name = slot0_holder(before)
            victim_http = cluster.procs[victim_name]["http_addr"]
            os.kill(cluster.procs[victim_name]["pid"], signal.SIGKILL)
            killed_at = time.monotonic()

            deadline = killed_at + PROMOTE_TIMEOUT
            while True:
                st = cluster.status()
                cfg = st["config"]
                if slot0_holder(st)[0] != victim and cfg["epoch"] == cfg["activeEpoch"]:
                    break
                assert time.monotonic() < deadline, f"slot 0 not promoted within {PROMOTE_TIMEOUT}s: {cfg}"
                time.sleep(0.1)
            promoted_at, new_epoch = time.monotonic(), int(cfg["epoch"])

            # The client keeps working once the backup holds slot 0.
            deadline = promoted_at + 20
            while time.monotonic() < deadline:
                with w.lock:
                    after = sum(t > promoted_at for t in w.acked_at), sum(t > promoted_at for t in w.reads_at)
                if after[0] >= 20 and after[1] >= 20:
                    break
                time.sleep(0.05)
        finally:
            w.stop.set()
            for t in threads:
                t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert after[0] >= 20 and after[1] >= 20, f"progress after promotion {after}; errors {w.errors[:5]}"
        assert w.errors == [], w.errors[:10]

        assert c.epoch >= new_epoch
        assert victim_http not in {g.http_address for g in c.gatekeepers}
        assert len(c.gatekeepers) == 2

        final = c.get_vertex("counter").props
        log = final["log"]
        assert isinstance(log, list)
        assert final["n"] == len(log)
        assert len(set(log)) == len(log), "an increment was applied twice"
        assert set(w.acked) <= set(log), f"acknowledged but lost: {sorted(set(w.acked) - set(log))[:10]}"
        assert set(log) <= set(w.acked) | set(w.unknown), "an increment nobody attempted"
        print(f"acked {len(w.acked)} unknown {len(w.unknown)} reads {len(w.reads_at)} "
              f"(unknown applied: {len(set(w.unknown) & set(log))}); "
              f"promoted {promoted_at - killed_at:.2f}s after the kill")
