"""weft.errors: one hierarchy, keyed by the stable codes, for every service.

The code tables are read from the servers' sources (internal/wire/apicode,
kronos.proto through the generated module, internal/kv/kvcore/errors.go), so
a code added on the server without a class here fails a test.

The last tests overload real servers (``weft kronos --proposals-max 1``,
``weft serve --programs-max 1``, ``weft kv serve --requests-max 1``, each
under concurrent calls) and check that one ``except weft.Overloaded``
catches each of them.
"""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import grpc
import pytest
from servers import LOG_TAIL, REPO_ROOT, free_ports

import weft
import weft.client
import weft.cluster
import weft.errors as errors
import weft.kronos
import weft.kv
from weft._proto import kronos_pb2 as pb
from weft.errors import (
    Aborted,
    BadResponse,
    ErrorCode,
    InvalidArgument,
    KronosError,
    KVError,
    NotFound,
    Overloaded,
    Unavailable,
    WeftError,
    from_code,
)


def _go_codes(path: str) -> dict[str, str]:
    """The ``Code… Code = "X"`` constants of a Go file: Go name → code."""
    text = (REPO_ROOT / path).read_text()
    return dict(re.findall(r'^\s*(Code\w+)\s+Code\s*=\s*"(\w*)"', text, re.M))


API_TABLE = "internal/wire/apicode/code.go"
API_CODES = {name: code for name, code in _go_codes(API_TABLE).items() if code != "OK"}
KV_CODES = {name: code for name, code in _go_codes("internal/kv/kvcore/errors.go").items() if code}
KRONOS_CODES = [name for name in pb.ErrorCode.keys() if name != "OK"]
# Key-value codes the client has no class of its own for: they come as a
# KVError carrying the code (INTERNAL and NOT_FOUND are server failures and
# unknown paths; WINDOW answers only the rollback coordinator's calls).
KV_CODES_BASE_ONLY = {"INTERNAL", "NOT_FOUND", "WINDOW"}


def _api_retryable() -> dict[str, bool]:
    """The API code table's retryable column (its fourth): code → retryable."""
    rows = re.findall(r"^\s*(Code\w+):\s*\{([^}]*)\},", (REPO_ROOT / API_TABLE).read_text(), re.M)
    assert rows, f"the code table was not found in {API_TABLE}"
    out = {}
    for name, fields in rows:
        flag = fields.split(",")[3].strip()
        assert flag in ("true", "false"), (name, fields)
        out[API_CODES[name]] = flag == "true"
    return out


def test_the_tables_were_read() -> None:
    assert {"ABORTED", "OVERLOADED", "UNAVAILABLE", "INTERNAL"} <= set(API_CODES.values())
    assert {"OVERLOADED", "QUORUM", "PAUSED"} <= set(KV_CODES.values())
    assert "MUST_CONFLICT" in KRONOS_CODES


@pytest.mark.parametrize("code", sorted(API_CODES.values()))
def test_every_api_code_has_a_class(code: str) -> None:
    for service in ("api", None):
        e = from_code(code, "m", service=service)
        assert type(e) is not WeftError, f"{code} has no class of its own"
        assert isinstance(e, WeftError) and not isinstance(e, (KronosError, KVError))
        assert (e.code, e.message, str(e)) == (code, "m", "m")


def test_api_classes_are_retryable_as_the_server_says() -> None:
    for code, retryable in _api_retryable().items():
        cls = type(from_code(code, "m", service="api"))
        assert cls.retryable is retryable, code
        assert from_code(code, "m").retryable is retryable, code


@pytest.mark.parametrize("name", KRONOS_CODES)
def test_every_kronos_code_has_a_class(name: str) -> None:
    e = from_code(name, "m", service="kronos", leader_hint="h:1")
    assert type(e) is not KronosError and isinstance(e, KronosError)
    assert e.code == name and e.wire_code == pb.ErrorCode.Value(name) and e.leader_hint == "h:1"
    # Kronos-only codes need no service.
    if name not in API_CODES.values():
        assert type(from_code(name, "m")) is type(e)


def test_error_code_enum_matches_the_proto() -> None:
    assert {c.name: c.value for c in ErrorCode} == dict(pb.ErrorCode.items())
    assert weft.kronos.ErrorCode is ErrorCode is weft.ErrorCode


@pytest.mark.parametrize("code", sorted(KV_CODES.values()))
def test_every_kv_code_has_a_class(code: str) -> None:
    e = from_code(code, "m", service="kv")
    assert isinstance(e, KVError) and e.code == code
    if code in KV_CODES_BASE_ONLY:
        assert type(e) is KVError
    else:
        assert type(e) is not KVError, f"kv code {code} has no class (or add it to KV_CODES_BASE_ONLY)"


def test_unknown_codes_keep_their_code() -> None:
    for service, base in ((None, WeftError), ("api", WeftError), ("kronos", KronosError), ("kv", KVError)):
        e = from_code("SOMETHING_NEW", "m", service=service, retryable=True)
        assert type(e) is base and e.code == "SOMETHING_NEW" and e.retryable
    with pytest.raises(ValueError):
        from_code("ABORTED", "m", service="nosuch")


def _classes() -> list[type[WeftError]]:
    out = []
    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            out.append(obj)
    return out


def test_every_class_is_a_weft_error_and_round_trips_its_code() -> None:
    classes = _classes()
    assert len(classes) > 30
    for cls in classes:
        assert issubclass(cls, WeftError), cls
        service = "kronos" if issubclass(cls, KronosError) else "kv" if issubclass(cls, KVError) else "api"
        if cls in (WeftError, KronosError, KVError):
            continue  # the bases: what an unknown code comes as
        e = from_code(cls.code, "m", service=service)
        assert type(e) is cls and e.code == cls.code, (cls, type(e))


# -- one condition, one class, whatever the service


@pytest.mark.parametrize("shared, members", [
    (Overloaded, ["OVERLOADED@api", "OVERLOADED@kronos", "OVERLOADED@kv"]),
    (Unavailable, ["UNAVAILABLE@api", "CANCELLED@api", "TRANSPORT@api", "UNAVAILABLE@kronos",
                   "NOT_LEADER@kronos", "SHUTTING_DOWN@kronos", "UNAVAILABLE@kv", "QUORUM@kv", "PAUSED@kv"]),
    (InvalidArgument, ["INVALID_ARGUMENT@api", "TOO_LARGE@api", "METHOD_NOT_ALLOWED@api",
                       "MALFORMED@kronos", "SELF_ORDER@kronos", "INVALID@kv"]),
    (NotFound, ["NOT_FOUND@api", "UNKNOWN_PROGRAM@api", "UNKNOWN_EVENT_ERROR@kronos"]),
    (Aborted, ["ABORTED@api", "CONFLICT@kv"]),
    (BadResponse, ["BAD_RESPONSE@api", "BAD_RESPONSE@kronos"]),
])
def test_a_condition_is_one_class_across_services(shared: type[WeftError], members: list[str]) -> None:
    for m in members:
        code, service = m.split("@")
        e = from_code(code, "m", service=service)
        assert isinstance(e, shared), m
        try:
            raise e
        except shared as caught:
            assert caught is e
        assert isinstance(e, {"api": WeftError, "kronos": KronosError, "kv": KVError}[service])


def test_overloaded_everywhere_is_caught_by_weft_overloaded() -> None:
    for e in (weft.Overloaded("gk"), weft.OverloadedError("kronos"), weft.KVOverloadedError("kv")):
        with pytest.raises(weft.Overloaded):
            raise e
        assert e.code == "OVERLOADED" and e.retryable


# -- the old names


def test_old_names_are_the_new_classes() -> None:
    for name in ("WeftError", "Aborted", "SnapshotTooOld", "InvalidArgument", "TooLarge", "NotFound",
                 "UnknownProgram", "AlreadyExists", "Overloaded", "Unavailable", "Timeout",
                 "UnknownOutcome", "InternalError", "BadResponse"):
        assert getattr(weft.client, name) is getattr(errors, name) is getattr(weft, name), name
    for name in ("KronosError", "UnknownEventError", "SelfOrderError", "MalformedError",
                 "RefUnderflowError", "RefOverflowError", "MustConflictError", "NotLeaderError",
                 "OverloadedError", "CollectedError", "ClockInvalidError", "ShuttingDownError",
                 "ProtocolError", "TransportError", "UnavailableError", "ErrorCode"):
        assert getattr(weft.kronos, name) is getattr(errors, name) is getattr(weft, name), name
    for name in ("KVError", "KVInvalidError", "KVTooManySiblingsError", "KVVersionReusedError",
                 "KVUnavailableError", "KVOverloadedError", "KVQuorumError", "KVPausedError",
                 "KVConflictError"):
        assert getattr(weft.kv, name) is getattr(errors, name) is getattr(weft, name), name


def test_old_names_catch_what_they_caught() -> None:
    # A service's own name still catches only that service's errors ...
    assert not issubclass(weft.Overloaded, weft.OverloadedError)
    assert not issubclass(weft.KVOverloadedError, weft.OverloadedError)
    assert not issubclass(weft.Unavailable, weft.UnavailableError)
    assert not issubclass(weft.NotLeaderError, weft.UnavailableError)
    # ... and the service bases still catch all of theirs.
    for name in ("UnknownEventError", "SelfOrderError", "MalformedError", "RefUnderflowError",
                 "RefOverflowError", "MustConflictError", "NotLeaderError", "OverloadedError",
                 "CollectedError", "ClockInvalidError", "ShuttingDownError", "ProtocolError",
                 "TransportError", "UnavailableError"):
        assert issubclass(getattr(weft, name), weft.KronosError), name
    assert issubclass(weft.UnavailableError, weft.TransportError)
    assert issubclass(weft.KVPausedError, weft.KVQuorumError)
    assert issubclass(weft.TooLarge, weft.InvalidArgument)
    assert issubclass(weft.UnknownProgram, weft.NotFound)
    assert issubclass(weft.errors.Cancelled, weft.Unavailable)  # CANCELLED was an Unavailable


def test_old_constructors_still_work() -> None:
    assert weft.KVError("m", "SOME_CODE").code == "SOME_CODE"
    assert weft.KVError("m").code == "INTERNAL"
    cause = weft.KVUnavailableError("down")
    q = weft.KVQuorumError("m", {1: cause})
    assert q.causes == {1: cause} and q.retryable and q.code == "QUORUM"
    assert weft.KVPausedError("m", {}).code == "PAUSED"
    t = weft.TransportError("m", status=grpc.StatusCode.UNIMPLEMENTED)
    assert t.status is grpc.StatusCode.UNIMPLEMENTED and t.code == "TRANSPORT" and t.wire_code is None
    mc = weft.MustConflictError("m", pair_index=2, actual=weft.Order.AFTER)
    assert (mc.pair_index, mc.actual, mc.wire_code) == (2, weft.Order.AFTER, ErrorCode.MUST_CONFLICT)
    nl = weft.NotLeaderError("m", leader_hint="h:1")
    assert nl.leader_hint == "h:1" and nl.code == "NOT_LEADER"
    inner = weft.Unavailable("gone", code="TRANSPORT", status=None)
    uo = weft.UnknownOutcome("m", cause=inner)
    assert uo.cause is inner and uo.code == "UNKNOWN_OUTCOME" and not uo.retryable
    assert weft.Aborted("m", code="ABORTED", retryable=False, status=409).status == 409


def test_catching_by_code() -> None:
    for e in (from_code("OVERLOADED", "m", service="kronos"), from_code("OVERLOADED", "m", service="kv"),
              from_code("OVERLOADED", "m", service="api", status=429)):
        try:
            raise e
        except WeftError as caught:
            assert caught.code == "OVERLOADED"


# -- real servers, overloaded

START_TIMEOUT = 30.0  # seconds for a server to serve
OVERLOAD_WITHIN = 20.0  # seconds of concurrent calls that must provoke OVERLOADED
CALLERS = 8  # threads calling at once


@contextmanager
def _serving(weft_bin: Path, args: list[str], root: Path, ready: Callable[[], bool]) -> Iterator[None]:
    """Run ``weft <args>`` until the block ends; wait until ready() first."""
    log_path = root / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(weft_bin), *args], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, cwd=root)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"weft {' '.join(args)} did not serve:\n"
                            f"{log_path.read_text(errors='replace')[-LOG_TAIL:]}", pytrace=False)
            time.sleep(0.05)
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _first_overload(calls: list[Callable[[], object]]) -> weft.Overloaded:
    """Run each call in a loop in its own thread until one raises; that
    error, which must be caught by ``except weft.Overloaded``."""
    stop = threading.Event()
    caught: list[weft.Overloaded] = []
    other: list[BaseException] = []

    def loop(call: Callable[[], object]) -> None:
        deadline = time.monotonic() + OVERLOAD_WITHIN
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                call()
            except weft.Overloaded as e:  # the one clause every service's overload must meet
                caught.append(e)
                stop.set()
            except BaseException as e:  # reported below
                other.append(e)
                stop.set()

    threads = [threading.Thread(target=loop, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not other, f"failed otherwise than OVERLOADED: {other[:3]!r}"
    assert caught, f"no OVERLOADED within {OVERLOAD_WITHIN}s of {len(calls)} concurrent callers"
    return caught[0]


def _connects(addr: str) -> bool:
    host, port = addr.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.25):
            return True
    except OSError:
        return False


def _leads(probe: weft.KronosClient) -> bool:
    """Whether the probe's replica is its group's leader (a lone replica
    elects itself shortly after it listens; until then it answers NOT_LEADER)."""
    try:
        return bool(probe.stats(probe.addrs[0])["is_leader"])
    except weft.KronosError:
        return False


def _overloaded_kronos(weft_bin: Path, root: Path) -> weft.Overloaded:
    addr = f"127.0.0.1:{free_ports(1)[0]}"
    args = ["kronos", "--id", "1", "--addr", addr, "--data-dir", str(root / "k1"), "--proposals-max", "1"]
    with weft.KronosClient([addr], timeout=1.0, retry_max=0) as probe, \
            _serving(weft_bin, args, root, lambda: _leads(probe)), ExitStack() as stack:
        # One client per thread: a client has one mutation in flight.
        clients = [stack.enter_context(weft.KronosClient([addr], timeout=5.0, retry_max=0))
                   for _ in range(CALLERS)]
        return _first_overload([c.create_event for c in clients])


def _overloaded_gatekeeper(weft_bin: Path, root: Path) -> weft.Overloaded:
    http_port, grpc_port = free_ports(2)
    url = f"http://127.0.0.1:{http_port}"
    args = ["serve", "--in-memory", "--demo", "--gatekeepers", "1", "--programs-max", "1",
            "--http-addr", f"127.0.0.1:{http_port}", "--grpc-addr", f"127.0.0.1:{grpc_port}"]
    with weft.Client(url, timeout=10.0) as client, _serving(weft_bin, args, root, client.healthy):
        # bfs is a node program (get_node, one vertex, is a snapshot read
        # that takes no program slot).
        return _first_overload([lambda: client.run("bfs", src="person/alice")] * CALLERS)


def _overloaded_kv(weft_bin: Path, root: Path) -> weft.Overloaded:
    addr = f"127.0.0.1:{free_ports(1)[0]}"
    args = ["kv", "serve", "--id", "0", "--peers", addr, "--data-dir", str(root / "kv0"),
            "--n", "1", "--r", "1", "--w", "1", "--requests-max", "1"]
    with _serving(weft_bin, args, root, lambda: _connects(addr)), weft.KVClient([addr]) as kv:
        return _first_overload([lambda: kv.get_replica(0, "k")] * CALLERS)


def test_an_overloaded_kronos_is_caught_by_weft_overloaded(weft_bin: Path, tmp_path: Path) -> None:
    e = _overloaded_kronos(weft_bin, tmp_path)
    assert type(e) is weft.OverloadedError and isinstance(e, weft.KronosError)
    assert weft.kronos.OverloadedError is type(e)  # the old name catches it still
    assert (e.code, e.wire_code, e.retryable) == ("OVERLOADED", ErrorCode.OVERLOADED, True)


def test_every_service_overloaded_is_one_class(weft_bin: Path, tmp_path: Path) -> None:
    got = {}
    for name, provoke in (("kronos", _overloaded_kronos), ("gatekeeper", _overloaded_gatekeeper),
                          ("kv", _overloaded_kv)):
        root = tmp_path / name
        root.mkdir()
        got[name] = provoke(weft_bin, root)
    assert type(got["gatekeeper"]) is weft.Overloaded and got["gatekeeper"].status == 429
    assert type(got["kv"]) is weft.KVOverloadedError and isinstance(got["kv"], weft.KVError)
    assert type(got["kronos"]) is weft.OverloadedError
    for e in got.values():
        assert isinstance(e, weft.client.Overloaded) and isinstance(e, WeftError)
        assert e.code == "OVERLOADED" and e.retryable
