"""weft.client against real servers speaking the HTTP API.

Each test runs twice:

* ``fake``: the Go front end (internal/api) over apitest.Fake, an in-memory
  engine that keeps only the latest versions (the ``fakeserve`` test binary,
  built with ``go build``, or ``$WEFT_FAKESERVE_BIN``). This checks the client
  against the real HTTP handler today.
* ``serve``: ``weft serve --in-memory --demo`` (``$WEFT_BIN`` or built, as
  for the Kronos tests), the real engine.

Every server listens on free loopback ports and is stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest
from servers import BUILD_TIMEOUT, LOG_TAIL, REPO_ROOT, Server, start

from weft.client import (
    Aborted,
    Alias,
    AlreadyExists,
    Client,
    Edge,
    InvalidArgument,
    NotFound,
    Placement,
    ProgramInfo,
    Transaction,
    UnknownProgram,
    Vertex,
)

@pytest.fixture(scope="session")
def fakeserve_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fakeserve test binary: ``$WEFT_FAKESERVE_BIN``, or built."""
    env = os.environ.get("WEFT_FAKESERVE_BIN")
    if env:
        return Path(env)
    go = shutil.which("go")
    if go is None:
        pytest.skip("go not found on PATH to build fakeserve (set WEFT_FAKESERVE_BIN)")
    out = tmp_path_factory.mktemp("fakeserve") / "fakeserve"
    build = subprocess.run([go, "build", "-o", str(out), "./internal/api/apitest/fakeserve"], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    if build.returncode != 0:
        pytest.fail(f"go build fakeserve failed:\n{build.stderr[-LOG_TAIL:]}", pytrace=False)
    return out


@pytest.fixture(scope="module", params=["fake", "serve"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the demo graph, shared by the module's tests."""
    root = tmp_path_factory.mktemp(f"api-{request.param}")
    if request.param == "fake":
        s = start("fake", request.getfixturevalue("fakeserve_bin"), ["--demo"], root)
    else:
        # Four shards whatever the machine's default: units move between them.
        s = start("serve", request.getfixturevalue("weft_bin"),
                  ["serve", "--in-memory", "--demo", "--shards", "4", "--gatekeepers", "2"], root)
    yield s
    code = s.stop()
    assert code == 0, f"{s.kind} stopped with {code}:\n{s.log_tail()}"


@pytest.fixture
def client(server: Server) -> Iterator[Client]:
    with Client(server.url, timeout=10.0) as c:
        yield c


@pytest.fixture
def ns() -> str:
    """A prefix that keeps each test's handles apart on a shared server."""
    return f"t{uuid.uuid4().hex[:8]}/"


def test_demo_graph_is_loaded(client: Client) -> None:
    alice = client.get_vertex(Alias("alice@example.com"))
    assert alice.exists and alice.handle == "person/alice"
    assert alice.props["kind"] == "person" and alice.props["name"] == "Alice"
    assert isinstance(alice.props["joined"], datetime) and isinstance(alice.props["interests"], list)
    assert sorted(alice.aliases) == ["alice", "alice@example.com"]
    types = {e.props["type"] for e in alice.edges}
    assert {"lives_in", "works_at"} <= types
    for e in alice.edges:
        if e.props["type"] == "knows":
            assert isinstance(e.props["weight"], float) and 0 < e.props["weight"] <= 1
    city = next(e for e in alice.edges if e.props["type"] == "lives_in").dst
    assert client.get_vertex(city).props["kind"] == "city"
    # Status counts may trail the commits a little (shards apply asynchronously).
    deadline = time.monotonic() + 10
    while client.status()["vertices"] < 51 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.status()["vertices"] >= 51


def test_get_vertices(client: Client, ns: str) -> None:
    vs = client.get_vertices(["person/bob", Alias("alice"), "person/nobody"], edges=False)
    assert [(v.handle, v.exists) for v in vs] == [("person/bob", True), ("person/alice", True), ("person/nobody", False)]
    assert vs[1].props["name"] == "Alice" and all(v.edges == [] for v in vs)
    assert len({v.snapshot for v in vs}) == 1  # one snapshot for all
    for v, one in zip(vs, [client.get_vertex(r, snapshot=vs[0].snapshot, edges=False)
                           for r in ["person/bob", Alias("alice"), "person/nobody"]]):
        assert (v.handle, v.exists, v.props) == (one.handle, one.exists, one.props)
    # In a transaction the reads are recorded: a write in between aborts it.
    with client.transaction() as setup:
        setup.create_vertex(ns + "a")
        setup.create_vertex(ns + "b")
    tx = client.begin()
    assert [v.exists for v in tx.get_vertices([ns + "a", ns + "b"])] == [True, True]
    with client.transaction() as other:
        other.set_vertex_prop(ns + "b", "n", 1)
    tx.set_vertex_prop(ns + "a", "n", 2)
    with pytest.raises(Aborted):
        tx.commit()
    assert "n" not in client.get_vertex(ns + "a").props
    with pytest.raises(InvalidArgument, match="at most 1000"):
        client.get_vertices([f"{ns}v{i}" for i in range(1001)])
    with pytest.raises(InvalidArgument, match="none asked for"):
        client.get_vertices([])


def test_transaction_round_trip(client: Client, ns: str) -> None:
    when = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)
    with client.transaction() as tx:
        tx.create_vertex(ns + "a")
        tx.create_vertex(ns + "b")
        tx.create_vertex()
        tx.add_alias(ns + "a", ns + "alice")
        tx.set_vertex_prop(Alias(ns + "alice"), "name", "Alice")
        tx.set_vertex_prop(ns + "a", "age", 42)
        tx.set_vertex_prop(ns + "a", "score", 3.0)
        tx.set_vertex_prop(ns + "a", "ok", True)
        tx.set_vertex_prop(ns + "a", "when", when)
        tx.set_vertex_prop(ns + "a", "tags", ["x", 1, 2.5, [False]])
        tx.create_edge(ns + "a", Alias(ns + "alice"), "self")
        tx.create_edge(Alias(ns + "alice"), ns + "b", "knows")
        tx.set_edge_prop(ns + "a", "knows", "weight", 0.5)
    assert tx.result is not None
    handles = tx.result.handles
    assert handles[:2] == [ns + "a", ns + "b"] and handles[2] and handles[3:] == ["self", "knows"]

    a = client.get_vertex(Alias(ns + "alice"), snapshot=tx.result.snapshot)
    assert a.handle == ns + "a" and a.aliases == [ns + "alice"]
    assert a.props == {"name": "Alice", "age": 42, "score": 3.0, "ok": True, "when": when,
                       "tags": ["x", 1, 2.5, [False]]}
    assert isinstance(a.props["score"], float)
    assert sorted((e.handle, e.dst) for e in a.edges) == [("knows", ns + "b"), ("self", ns + "a")]
    e = client.get_edge(ns + "a", "knows")
    assert isinstance(e, Edge) and e.exists and e.props == {"weight": 0.5}
    assert client.get_vertex(handles[2]).exists

    with client.transaction() as tx:
        tx.delete_edge_prop(ns + "a", "knows", "weight")
        tx.delete_vertex_prop(ns + "a", "tags")
        tx.remove_alias(ns + "a", ns + "alice")
        tx.delete_edge(ns + "a", "self")
        tx.delete_vertex(ns + "b")
    a = client.get_vertex(ns + "a")
    assert "tags" not in a.props and a.aliases == [] and a.edges == []
    assert not client.get_vertex(ns + "b").exists
    assert not client.get_vertex(Alias(ns + "alice")).exists
    assert not client.get_edge(ns + "a", "knows").exists


def test_errors_change_nothing(client: Client, ns: str) -> None:
    with client.transaction() as tx:
        tx.create_vertex(ns + "a")
    with pytest.raises(AlreadyExists):
        with client.transaction() as tx:
            tx.create_vertex(ns + "new")
            tx.create_vertex(ns + "a")
    with pytest.raises(NotFound):
        with client.transaction() as tx:
            tx.create_vertex(ns + "new")
            tx.create_edge(ns + "a", ns + "nowhere")
    with pytest.raises(InvalidArgument, match="not used by create_vertex"):
        client.commit([{"op": "create_vertex", "vertex": ns + "new", "key": "k"}])
    with pytest.raises(InvalidArgument, match="unknown field"):
        client.commit([{"op": "create_vertex", "vertex": ns + "new", "colour": "red"}])
    with pytest.raises(UnknownProgram):
        client.run("no-such-program")
    assert not client.get_vertex(ns + "new").exists
    assert client.get_vertex(ns + "a").edges == []


def test_stale_read_aborts(client: Client, ns: str) -> None:
    with client.transaction() as tx:
        tx.create_vertex(ns + "a")
    t1 = client.begin()
    assert t1.get_vertex(ns + "a").exists
    with client.transaction() as t2:
        t2.set_vertex_prop(ns + "a", "x", 1)
    t1.set_vertex_prop(ns + "a", "x", 2)
    t1.create_vertex(ns + "b")
    with pytest.raises(Aborted) as info:
        t1.commit()
    assert info.value.retryable
    assert client.get_vertex(ns + "a").props == {"x": 1}
    assert not client.get_vertex(ns + "b").exists


def test_absence_is_validated(client: Client, ns: str) -> None:
    t1 = client.begin()
    assert not t1.get_vertex(ns + "a").exists
    with client.transaction() as t2:
        t2.create_vertex(ns + "a")
    t1.create_vertex(ns + "b")
    with pytest.raises(Aborted):
        t1.commit()


def test_alias_reads_are_validated(client: Client, ns: str) -> None:
    with client.transaction() as tx:
        tx.create_vertex(ns + "a")
    t1 = client.begin()
    v = t1.get_vertex(Alias(ns + "boss"))
    assert not v.exists and [(r.vertex, r.alias) for r in v.reads] == [(ns + "boss", True)]
    with client.transaction() as t2:
        t2.add_alias(ns + "a", ns + "boss")
    t1.create_vertex(ns + "b")
    with pytest.raises(Aborted):
        t1.commit()
    assert not client.get_vertex(ns + "b").exists


def test_concurrent_increments_lose_nothing(server: Server, ns: str) -> None:
    with Client(server.url) as c:
        with c.transaction() as tx:
            tx.create_vertex(ns + "counter")
            tx.set_vertex_prop(ns + "counter", "n", 0)
    workers, each = 4, 10
    errors: list[BaseException] = []

    def increment(tx: Transaction) -> None:
        v = tx.get_vertex(ns + "counter", edges=False, aliases=False)
        n = v.props["n"]
        assert isinstance(n, int)
        tx.set_vertex_prop(ns + "counter", "n", n + 1)

    def work() -> None:
        try:
            with Client(server.url, retries=100, backoff=0.001, backoff_max=0.05) as c:
                for _ in range(each):
                    c.run_transaction(increment)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    with Client(server.url) as c:
        assert c.get_vertex(ns + "counter").props["n"] == workers * each


def test_snapshot_reads_are_repeatable(server: Server, client: Client, ns: str) -> None:
    if server.kind == "fake":
        pytest.skip("the fake engine keeps only the latest version")
    with client.transaction() as tx:
        tx.create_vertex(ns + "a")
        tx.set_vertex_prop(ns + "a", "v", 1)
    old = tx.result
    assert old is not None
    with client.transaction() as tx:
        tx.set_vertex_prop(ns + "a", "v", 2)
    assert client.get_vertex(ns + "a", snapshot=old.snapshot).props["v"] == 1
    assert client.get_vertex(ns + "a").props["v"] == 2
    reader = client.begin()
    with client.transaction() as tx:
        tx.set_vertex_prop(ns + "a", "v", 3)
    assert reader.get_vertex(ns + "a").props["v"] == 2


def test_programs_run_status(server: Server, client: Client) -> None:
    programs = client.programs()
    assert programs and all(isinstance(p, ProgramInfo) and p.name for p in programs)
    snap = client.begin().snapshot
    if server.kind == "fake":
        assert client.run("echo", start="person/alice", depth=2) == {"start": "person/alice", "depth": 2}
        assert client.run_at(snap, "count")["vertices"] >= 51
    else:  # a built-in node program (internal/nodeprog)
        node = client.run_at(snap, "get_node", node="person/alice")
        assert node["handle"] == "person/alice" and node["props"]["name"] == "Alice"
    status = client.status()
    for key in ("gatekeepers", "shards", "vertices", "edges", "commits", "aborts"):
        assert key in status
    assert client.healthy()


def test_placement_and_move(server: Server, client: Client) -> None:
    if server.kind == "fake":  # the fake engine does not move units
        with pytest.raises(InvalidArgument):
            client.placement()
        return
    p = client.placement()
    assert isinstance(p, Placement) and p.shards == client.status()["shards"] and p.shards >= 2
    assert sum(p.slots) == 256 * p.base and len(p.slots) == p.shards
    moved = {m.unit for m in p.moved}
    slot = next(k for k in range(256 * p.base) if f"s:{k}" not in moved)
    home, to = slot % p.base, (slot % p.base + 1) % p.shards
    mv = client.move_unit(f"s:{slot}", to)
    assert (mv.unit, mv.from_shard, mv.to_shard) == (f"s:{slot}", home, to)
    after = client.placement()
    got = {m.unit: m for m in after.moved}[f"s:{slot}"]
    assert got.shard == to and got.from_shard == home and set(got.held) == {home, to}
    assert after.slots[to] == p.slots[to] + 1 and after.slots[home] == p.slots[home] - 1
    assert client.move_unit(f"s:{slot}", to).to_shard == to  # where it is: nothing to do
    with pytest.raises(InvalidArgument):
        client.move_unit(f"s:{slot}", home)  # the shard it left still holds its copy
    with pytest.raises(InvalidArgument):
        client.move_unit("s:-1", 0)
    with pytest.raises(InvalidArgument):
        client.move_unit(f"s:{slot}", p.shards)
    assert client.get_vertex("person/alice").props["name"] == "Alice"


def test_metrics_and_openapi(server: Server, client: Client) -> None:
    client.status()
    with urllib.request.urlopen(server.url + "/metrics", timeout=5) as resp:
        metrics = resp.read().decode()
    assert 'weft_requests_total{api="http",code="OK",op="status"}' in metrics
    with urllib.request.urlopen(server.url + "/openapi.yaml", timeout=5) as resp:
        assert resp.read().startswith(b"openapi: 3.1")


def test_read_results_are_plain_dataclasses(client: Client) -> None:
    v = client.get_vertex("person/bob")
    assert isinstance(v, Vertex) and isinstance(v.props, dict) and isinstance(v.edges, list)
    assert all(isinstance(e, Edge) for e in v.edges)


# -- weft serve only: durability across a graceful restart


def test_serve_restart_keeps_data(weft_bin: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = ["serve", "--data-dir", str(data), "--demo"]
    s = start("serve", weft_bin, args, tmp_path)
    try:
        with Client(s.url) as c:
            with c.transaction() as tx:
                tx.create_vertex("kept")
                tx.set_vertex_prop("kept", "v", 7)
    finally:
        code = s.stop()
    assert code == 0, f"weft serve exited {code} on SIGTERM:\n{s.log_tail()}"
    assert "loaded=true" in s.log_tail()
    s = start("serve", weft_bin, args, tmp_path)
    try:
        with Client(s.url) as c:
            assert c.get_vertex("kept").props == {"v": 7}
            assert c.get_vertex(Alias("alice")).exists
    finally:
        assert s.stop() == 0
    assert "loaded=false already_present=true" in s.log_tail()  # --demo did not load twice
