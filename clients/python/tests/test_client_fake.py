"""weft.client request/response handling against a scripted local HTTP server.

The fake answers each request from a per-path script and records what the
client sent, so the wire format (docs/api.md), error mapping, retry loop and
connection handling are checked without a Weft server.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import weft
from weft.client import (
    Aborted,
    Alias,
    AlreadyExists,
    BadResponse,
    Client,
    CommitResult,
    InternalError,
    InvalidArgument,
    NotFound,
    Overloaded,
    ProgramInfo,
    Read,
    SnapshotTooOld,
    Timeout,
    TooLarge,
    Unavailable,
    UnknownProgram,
    WeftError,
    decode_value,
    encode_value,
)

# An answer: (status, JSON body or raw bytes).
Answer = tuple[int, Any]
Script = Callable[[dict[str, Any]], Answer]


class Fake:
    """A scripted HTTP server; ``script[(method, path)]`` answers requests."""

    def __init__(self, idle_close: float | None = None) -> None:
        self.script: dict[tuple[str, str], Script] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.connections = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = idle_close  # close a connection idle this long

            def setup(self) -> None:
                super().setup()
                fake.connections += 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                path = self.path
                fake.requests.append((self.command, path, body))
                fn = fake.script.get((self.command, path.split("?")[0]))
                status, out = (404, {"error": {"code": "NOT_FOUND", "message": "no route",
                                               "retryable": False}}) if fn is None else fn(body or {})
                data = out if isinstance(out, bytes) else json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def on(self, method: str, path: str, *answers: Answer | Script) -> None:
        """Answer (method, path) with answers in turn, the last one forever."""
        queue = list(answers)

        def fn(body: dict[str, Any]) -> Answer:
            a = queue.pop(0) if len(queue) > 1 else queue[0]
            return a(body) if callable(a) else a

        self.script[(method, path)] = fn

    def sent(self, path: str) -> list[Any]:
        return [b for (_, p, b) in self.requests if p.split("?")[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def err(status: int, code: str, message: str = "boom", retryable: bool = False) -> Answer:
    return status, {"error": {"code": code, "message": message, "retryable": retryable}}


def vertex_json(handle: str = "a", **over: Any) -> dict[str, Any]:
    v: dict[str, Any] = {"handle": handle, "exists": True, "props": {}, "aliases": [], "edges": [],
                         "edges_truncated": False,
                         "reads": [{"vertex": handle, "alias": False, "version": "AAAAAAAAAAE="}]}
    v.update(over)
    return v


@pytest.fixture
def fake() -> Iterator[Fake]:
    f = Fake()
    f.on("POST", "/v1/begin", (200, {"snapshot": "s1"}))
    yield f
    f.close()


@pytest.fixture
def client(fake: Fake) -> Iterator[Client]:
    with Client(fake.url, timeout=5.0, backoff=0.0001, backoff_max=0.001) as c:
        yield c


def test_transaction_sends_reads_and_buffered_ops(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/vertex", (200, {"snapshot": "s1", "vertex": vertex_json(
        "a", reads=[{"vertex": "a", "alias": False, "version": "AAAAAAAAAAE="},
                    {"vertex": "alice", "alias": True, "version": "AAAAAAAAAAI="}], props={"n": 1, "f": 2.0, "when": {"$datetime": "2024-01-02T03:04:05.5Z"}, "l": ["x", [True]]},
        aliases=["alice"],
        edges=[{"handle": "e", "src": "a", "dst": "b", "exists": True, "props": {"w": 0.5}}])}))
    fake.on("POST", "/v1/commit", (200, {"handles": ["c", "_e1"], "snapshot": "s2"}))
    when = datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=timezone.utc)
    with client.transaction() as tx:
        assert tx.snapshot == "s1"
        v = tx.get_vertex(Alias("alice"))
        tx.get_vertex(Alias("alice"))  # the same read is recorded once
        assert v.handle == "a" and v.exists and v.aliases == ["alice"] and v.snapshot == "s1"
        assert v.props == {"n": 1, "f": 2.0, "when": when, "l": ["x", [True]]}
        assert isinstance(v.props["f"], float) and isinstance(v.props["n"], int)
        assert v.edges[0].dst == "b" and v.edges[0].props == {"w": 0.5} and v.edges[0].reads == []
        tx.create_vertex("c")
        tx.create_vertex()
        tx.create_edge(Alias("alice"), "c")
        tx.create_edge("a", Alias("bob"), "knows")
        tx.set_vertex_prop("c", "when", when)
        tx.set_vertex_prop(Alias("alice"), "tags", ["x", 1, 2.5, (True,)])
        tx.set_edge_prop("a", "knows", "w", 1.0)
        tx.delete_edge_prop("a", "knows", "w")
        tx.delete_vertex_prop("c", "when")
        tx.add_alias("c", "cee")
        tx.remove_alias(Alias("cee"), "cee")
        tx.delete_edge("a", "knows")
        tx.delete_vertex("c")
    assert tx.result == CommitResult(["c", "_e1"], "s2")
    assert fake.sent("/v1/vertex")[0] == {"vertex": "alice", "vertex_alias": True, "snapshot": "s1"}
    [commit] = fake.sent("/v1/commit")
    assert commit["reads"] == [{"vertex": "a", "alias": False, "version": "AAAAAAAAAAE="},
                               {"vertex": "alice", "alias": True, "version": "AAAAAAAAAAI="}]
    assert commit["ops"] == [
        {"op": "create_vertex", "vertex": "c"},
        {"op": "create_vertex"},
        {"op": "create_edge", "vertex": "alice", "vertex_alias": True, "dst": "c"},
        {"op": "create_edge", "vertex": "a", "edge": "knows", "dst": "bob", "dst_alias": True},
        {"op": "set_vertex_prop", "vertex": "c", "key": "when",
         "value": {"$datetime": "2024-01-02T03:04:05.500000Z"}},
        {"op": "set_vertex_prop", "vertex": "alice", "vertex_alias": True, "key": "tags",
         "value": ["x", 1, 2.5, [True]]},
        {"op": "set_edge_prop", "vertex": "a", "edge": "knows", "key": "w", "value": 1.0},
        {"op": "delete_edge_prop", "vertex": "a", "edge": "knows", "key": "w"},
        {"op": "delete_vertex_prop", "vertex": "c", "key": "when"},
        {"op": "add_alias", "vertex": "c", "alias": "cee"},
        {"op": "remove_alias", "vertex": "cee", "vertex_alias": True, "alias": "cee"},
        {"op": "delete_edge", "vertex": "a", "edge": "knows"},
        {"op": "delete_vertex", "vertex": "c"},
    ]
    # Floats stay floats on the wire (1.0, not 1).
    assert b'"value": 1.0' in json.dumps(commit["ops"][6]).encode()


def test_read_only_transaction_sends_no_commit(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/vertex", (200, {"snapshot": "s1", "vertex": vertex_json()}))
    with client.transaction() as tx:
        tx.get_vertex("a", props=False, edges=False, aliases=False, edges_max=5)
    assert tx.result == CommitResult([], "s1")
    assert fake.sent("/v1/commit") == []
    assert fake.sent("/v1/vertex") == [{"vertex": "a", "vertex_alias": False, "snapshot": "s1",
                                        "props": False, "edges": False, "aliases": False,
                                        "edges_max": 5}]


def test_failed_block_discards_writes(fake: Fake, client: Client) -> None:
    with pytest.raises(ZeroDivisionError):
        with client.transaction() as tx:
            tx.create_vertex("a")
            raise ZeroDivisionError
    assert fake.sent("/v1/commit") == []
    with pytest.raises(RuntimeError):
        tx.create_vertex("b")


def test_retry_loop_reruns_body_after_abort(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/commit", err(409, "ABORTED", "a changed", True), err(409, "SNAPSHOT_TOO_OLD", "old", True),
            err(429, "OVERLOADED", "busy", True), (200, {"handles": [], "snapshot": "s9"}))
    runs = 0
    attempts = client.transaction()
    for tx in attempts:
        with tx:
            runs += 1
            tx.set_vertex_prop("a", "n", runs)
    assert runs == 4 and attempts.attempts == 4
    assert attempts.result == CommitResult([], "s9")
    assert [c["ops"][0]["value"] for c in fake.sent("/v1/commit")] == [1, 2, 3, 4]


def test_retry_loop_retries_errors_raised_in_the_body(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/vertex", err(409, "SNAPSHOT_TOO_OLD", "gc", True),
            (200, {"snapshot": "s1", "vertex": vertex_json()}))
    fake.on("POST", "/v1/commit", (200, {"handles": [], "snapshot": "s2"}))

    def body(tx: Any) -> str:
        v = tx.get_vertex("a")
        tx.set_vertex_prop("a", "seen", True)
        return str(v.handle)

    assert client.run_transaction(body) == "a"
    assert len(fake.sent("/v1/begin")) == 2


@pytest.mark.parametrize("error", [weft.KVQuorumError("2 of 3 replicas failed"),
                                   weft.OverloadedError("kronos busy")])
def test_retry_loop_leaves_other_services_retryable_errors(fake: Fake, client: Client, error: Exception) -> None:
    assert isinstance(error, weft.WeftError) and error.retryable
    runs = 0
    with pytest.raises(type(error)):
        for tx in client.transaction():
            with tx:
                runs += 1
                raise error
    assert runs == 1 and fake.sent("/v1/commit") == []


def test_retry_loop_gives_up_with_the_last_error(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/commit", err(409, "ABORTED", "conflict", True))
    runs = 0
    with pytest.raises(Aborted) as info:
        for tx in client.transaction(retries=2):
            with tx:
                runs += 1
                tx.create_vertex()
    assert runs == 3 and info.value.retryable and info.value.status == 409
    assert info.value.message == "conflict"


def test_retry_loop_does_not_retry_other_errors(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/commit", err(409, "ALREADY_EXISTS", 'vertex "a"'))
    runs = 0
    with pytest.raises(AlreadyExists):
        for tx in client.transaction():
            with tx:
                runs += 1
                tx.create_vertex("a")
    assert runs == 1
    missing: dict[str, int] = {}
    with pytest.raises(KeyError):
        client.run_transaction(lambda tx: missing["x"])


def test_single_attempt_with_block_raises_aborted(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/commit", err(409, "ABORTED", "conflict", True))
    with pytest.raises(Aborted):
        with client.transaction() as tx:
            tx.create_vertex()
    assert len(fake.sent("/v1/commit")) == 1


def test_loop_attempt_must_be_used_with_with(fake: Fake, client: Client) -> None:
    with pytest.raises(RuntimeError, match="with tx"):
        for tx in client.transaction():
            tx.create_vertex()


@pytest.mark.parametrize("answer, exc, code", [
    (err(409, "ABORTED", retryable=True), Aborted, "ABORTED"),
    (err(409, "SNAPSHOT_TOO_OLD", retryable=True), SnapshotTooOld, "SNAPSHOT_TOO_OLD"),
    (err(400, "INVALID_ARGUMENT"), InvalidArgument, "INVALID_ARGUMENT"),
    (err(413, "TOO_LARGE"), TooLarge, "TOO_LARGE"),
    (err(404, "NOT_FOUND"), NotFound, "NOT_FOUND"),
    (err(404, "UNKNOWN_PROGRAM"), UnknownProgram, "UNKNOWN_PROGRAM"),
    (err(409, "ALREADY_EXISTS"), AlreadyExists, "ALREADY_EXISTS"),
    (err(429, "OVERLOADED", retryable=True), Overloaded, "OVERLOADED"),
    (err(503, "UNAVAILABLE"), Unavailable, "UNAVAILABLE"),
    (err(504, "DEADLINE_EXCEEDED"), Timeout, "DEADLINE_EXCEEDED"),
    (err(500, "INTERNAL"), InternalError, "INTERNAL"),
    (err(418, "SOMETHING_NEW"), WeftError, "SOMETHING_NEW"),
    ((502, b"<html>bad gateway</html>"), Unavailable, "UNAVAILABLE"),
    ((429, b"slow down"), Overloaded, "OVERLOADED"),
])
def test_error_codes_map_to_exceptions(fake: Fake, client: Client, answer: Answer,
                                       exc: type[WeftError], code: str) -> None:
    fake.on("POST", "/v1/commit", answer)
    with pytest.raises(exc) as info:
        client.commit([{"op": "create_vertex"}])
    assert type(info.value) is exc and info.value.code == code
    assert info.value.status == answer[0]
    assert info.value.retryable == (code in ("ABORTED", "SNAPSHOT_TOO_OLD", "OVERLOADED"))


def test_bad_answers_raise_bad_response(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/begin", (200, b"not json"))
    with pytest.raises(BadResponse):
        client.begin()
    fake.on("POST", "/v1/begin", (200, {"snap": "x"}))
    with pytest.raises(BadResponse, match="snapshot"):
        client.begin()
    fake.on("POST", "/v1/vertex", (200, {"snapshot": "s", "vertex": vertex_json(props={"x": {"y": 1}})}))
    with pytest.raises(BadResponse):
        client.get_vertex("a")


def test_one_shot_reads(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/vertex", (200, {"snapshot": "s7", "vertex": vertex_json("a", exists=False)}))
    fake.on("POST", "/v1/edge", (200, {"snapshot": "s7", "edge": {
        "handle": "e", "src": "a", "dst": "b", "exists": True, "props": {},
        "reads": [{"vertex": "a", "alias": False, "version": ""}]}}))
    v = client.get_vertex("a")
    assert not v.exists and v.snapshot == "s7"
    e = client.get_edge(Alias("al"), "e", snapshot="s3")
    assert e.dst == "b" and e.reads == [Read("a", False, "")]
    assert fake.sent("/v1/vertex") == [{"vertex": "a", "vertex_alias": False}]
    assert fake.sent("/v1/edge") == [{"src": "al", "src_alias": True, "edge": "e", "snapshot": "s3"}]


def test_run_programs_status_health(fake: Fake, client: Client) -> None:
    fake.on("POST", "/v1/run/path finder", lambda body: (200, {"result": {"got": body}}))
    fake.on("POST", "/v1/run/bfs", lambda body: (200, {"result": [1, 2.5, "x"]}))
    fake.on("GET", "/v1/programs", (200, {"programs": [{"name": "bfs", "description": "breadth first"}]}))
    fake.on("GET", "/v1/status", (200, {"vertices": 3, "edges": 2, "commits": 1}))
    fake.on("GET", "/healthz", (200, {"status": "ok"}))
    assert client.run("bfs", start="a", depth=2) == [1, 2.5, "x"]
    assert client.run_at("s5", "bfs") == [1, 2.5, "x"]
    assert client.run_json("bfs", [1, 2], at="s6") == [1, 2.5, "x"]
    assert fake.sent("/v1/run/bfs") == [{"start": "a", "depth": 2}, {}, [1, 2]]
    assert [p for (_, p, _) in fake.requests if p.startswith("/v1/run/bfs")] == [
        "/v1/run/bfs", "/v1/run/bfs?at=s5", "/v1/run/bfs?at=s6"]
    # The program name is quoted into the path.
    fake.script[("POST", "/v1/run/path%20finder")] = fake.script.pop(("POST", "/v1/run/path finder"))
    assert client.run("path finder", k=1) == {"got": {"k": 1}}
    assert client.programs() == [ProgramInfo("bfs", "breadth first")]
    assert client.status() == {"vertices": 3, "edges": 2, "commits": 1}
    assert client.healthy()
    fake.on("GET", "/healthz", err(503, "UNAVAILABLE"))
    assert not client.healthy()


def test_value_encoding() -> None:
    utc = timezone.utc
    assert encode_value(3.0) == 3.0 and json.dumps(encode_value(3.0)) == "3.0"
    assert encode_value([1, (2, None)]) == [1, [2, None]]
    assert encode_value(datetime(2024, 1, 2, 4, 4, 5, tzinfo=timezone(timedelta(hours=1)))) == \
        {"$datetime": "2024-01-02T03:04:05.000000Z"}
    for bad, exc in [(None, ValueError), (float("nan"), ValueError), (float("inf"), ValueError),
                     (2**63, ValueError), (datetime(2024, 1, 1), ValueError), ({"a": 1}, TypeError),
                     (b"x", TypeError), ([[[[[[[[[1]]]]]]]]], ValueError)]:
        with pytest.raises(exc):
            encode_value(bad)  # type: ignore[arg-type]
    assert decode_value({"$datetime": "2024-01-02T03:04:05.123456789Z"}) == \
        datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=utc)
    assert decode_value({"$datetime": "2024-01-02T03:04:05-02:30"}) == \
        datetime(2024, 1, 2, 5, 34, 5, tzinfo=utc)
    with pytest.raises(BadResponse):
        decode_value({"$datetime": "yesterday"})


def test_bad_values_fail_before_sending(fake: Fake, client: Client) -> None:
    tx = client.begin()
    with pytest.raises(ValueError):
        tx.set_vertex_prop("a", "k", float("nan"))
    with pytest.raises(TypeError):
        tx.delete_vertex(7)  # type: ignore[arg-type]
    assert tx.ops == []


def test_connection_is_kept_alive(fake: Fake, client: Client) -> None:
    fake.on("GET", "/v1/status", (200, {"vertices": 1}))
    for _ in range(5):
        client.status()
    assert fake.connections == 1


def test_connection_closed_by_server_while_idle() -> None:
    fake = Fake(idle_close=0.1)
    try:
        fake.on("GET", "/v1/status", (200, {"vertices": 1}))
        fake.on("POST", "/v1/commit", (200, {"handles": [], "snapshot": "s2"}))
        with Client(fake.url, timeout=5.0) as c:
            c.status()
            time.sleep(0.4)
            # An idempotent call is sent again on a fresh connection.
            assert c.status() == {"vertices": 1}
            assert fake.connections == 2
            time.sleep(0.4)
            # A commit is not: its outcome would be unknown.
            with pytest.raises(Unavailable, match="outcome is unknown"):
                c.commit([{"op": "create_vertex"}])
            assert fake.sent("/v1/commit") == []
            assert c.commit([{"op": "create_vertex"}]) == CommitResult([], "s2")
    finally:
        fake.close()


def test_unreachable_server() -> None:
    with Client("127.0.0.1:9", timeout=1.0) as c:  # port 9 (discard) is closed here
        with pytest.raises(Unavailable) as info:
            c.begin()
        assert info.value.code == "TRANSPORT" and not info.value.retryable
    with pytest.raises(ValueError):
        Client("ftp://x")
