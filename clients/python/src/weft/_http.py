"""How the native API's calls reach servers: HTTP/1.1 with JSON bodies.

Shared by :mod:`weft.client` and :mod:`weft.cluster` (it imports only
:mod:`weft.errors`, and they import it):

* :class:`_Transport`: one server, one kept-alive connection per thread;
  an answer that is not 2xx becomes the :class:`~weft.errors.WeftError`
  of its stable code (:func:`error_of_answer`).
* :class:`_ClusterTransport`: a cluster's gatekeepers, found through the
  coordinator replicas' ``/status.json``, with the failover rules the
  module doc of :mod:`weft.cluster` states.

Both are a :class:`_Requester`, what a :class:`weft.Client` sends its
calls through. The pure parts — :func:`parse_url`, :func:`encode_body`,
:func:`decode_answer` and :func:`error_of_answer` — are also what
:mod:`weft.aio`'s transport is made of. Not public: the names may change.
"""

from __future__ import annotations

import http.client
import json
import random
import select
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from .errors import (
    BadResponse,
    Overloaded,
    Timeout,
    Unavailable,
    UnknownOutcome,
    WeftError,
    from_code,
)

# A kept-alive connection idle longer than this is replaced before use: the
# server closes idle connections after two minutes, and a request racing that
# close could fail after being sent.
_IDLE_REUSE_MAX: Final = 30.0


class _Requester(Protocol):
    """What a :class:`weft.Client` sends its calls through: one server
    (:class:`_Transport`) or a cluster's gatekeepers (:class:`_ClusterTransport`)."""

    def request(self, method: str, path: str, body: Any = None, *, idempotent: bool) -> Any: ...

    def close(self) -> None: ...


class _NotSent(Unavailable):
    """A request failed before any of it was sent (the connection could not
    be opened): the server never saw it, so even a commit may be sent again."""


# ---------------------------------------------------------------------------
# Answers

# Codes for answers without an error body (a proxy's, or a server too old).
_STATUS_CODES: Final[Mapping[int, str]] = {
    400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 409: "ABORTED", 413: "TOO_LARGE",
    429: "OVERLOADED", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

_RETRYABLE: Final = frozenset({"ABORTED", "SNAPSHOT_TOO_OLD", "OVERLOADED"})


@dataclass(frozen=True)
class URL:
    """A server's HTTP address, split."""

    scheme: str
    host: str
    port: int
    #: A path prefix (no trailing slash) put before every request's path.
    prefix: str

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.prefix}"


def parse_url(url: str) -> URL:
    """Split ``http://host:port[/prefix]`` (the scheme may be left out)."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"bad server URL {url!r}: want http://host:port")
    try:
        port = parts.port
    except ValueError as e:
        raise ValueError(f"bad server URL {url!r}: {e}") from None
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return URL(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


def encode_body(body: Any) -> tuple[bytes | None, dict[str, str]]:
    """A request's body as JSON, and its headers."""
    data = None if body is None else json.dumps(body, allow_nan=False).encode()
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    return data, headers


def decode_answer(method: str, path: str, status: int, raw: bytes) -> Any:
    """The decoded JSON of a 2xx answer, or raise the answer's WeftError."""
    if status // 100 != 2:
        raise error_of_answer(status, raw)
    try:
        return json.loads(raw)
    except ValueError as e:
        raise BadResponse(f"{method} {path}: answer is not JSON: {raw[:200]!r}", status=status) from e


def error_of_answer(status: int, body: bytes) -> WeftError:
    """The exception for a non-2xx answer of the native API (docs/api.md §5)."""
    try:
        err = json.loads(body)["error"]
        code, message = str(err["code"]), str(err["message"])
        retryable = bool(err.get("retryable", code in _RETRYABLE))
    except (ValueError, KeyError, TypeError):
        code = _STATUS_CODES.get(status, "INTERNAL")
        message = f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}"
        retryable = code in _RETRYABLE and status != 409
    return from_code(code, message, service="api", retryable=retryable, status=status)


# ---------------------------------------------------------------------------
# One server

def _readable(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: its end of file
    when the server closed it."""
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True  # closed or broken
    return bool(ready)


class _Conn:
    """One thread's kept-alive connection."""

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        self.conn = conn
        self.last_used = time.monotonic()
        self.used = False


class _Transport:
    """HTTP/1.1 with one kept-alive connection per thread."""

    def __init__(self, url: str, timeout: float, *, reopen_closed: bool = False) -> None:
        self.url = parse_url(url)
        self.scheme = self.url.scheme
        self.host = self.url.host
        self.port = self.url.port
        self.prefix = self.url.prefix
        self.timeout = timeout
        # Check a kept-alive connection for the server's close before each
        # request and reopen it (a cluster client: a gatekeeper that died
        # between calls then costs no unknown commit outcome).
        self.reopen_closed = reopen_closed
        self.local = threading.local()
        self.lock = threading.Lock()
        self.all: list[_Conn] = []

    def _conn(self) -> _Conn:
        c: _Conn | None = getattr(self.local, "conn", None)
        if c is not None and time.monotonic() - c.last_used > _IDLE_REUSE_MAX:
            c.conn.close()
            c.used = False
        if c is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            c = _Conn(cls(self.host, self.port, timeout=self.timeout))
            self.local.conn = c
            with self.lock:
                self.all.append(c)
        return c

    def close(self) -> None:
        with self.lock:
            for c in self.all:
                c.conn.close()
            self.all.clear()
        self.local = threading.local()

    def request(self, method: str, path: str, body: Any = None, *, idempotent: bool) -> Any:
        """Send one request; return the decoded JSON answer or raise WeftError.

        A request on a reused connection that finds it closed is sent again
        on a fresh one if it is idempotent (every call but commit).
        """
        data, headers = encode_body(body)
        for attempt in (0, 1):
            c = self._conn()
            if self.reopen_closed and c.conn.sock is not None and _readable(c.conn.sock):
                # Between answers an HTTP/1.1 server only ever closes the
                # connection (or fails): start a fresh one rather than send
                # on a dead one and lose the outcome of a commit.
                c.conn.close()
                c.used = False
            reused = c.used
            if c.conn.sock is None:
                # Connect apart from sending, so that a failure here is
                # known to have sent nothing (a cluster client moves even a
                # commit to another gatekeeper then).
                try:
                    c.conn.connect()
                except OSError as e:
                    c.conn.close()
                    raise _NotSent(f"{method} {path}: cannot connect to {self.host}:{self.port}: {e!r} "
                                   "(nothing was sent)", code="TRANSPORT") from e
            try:
                c.conn.request(method, self.prefix + path, body=data, headers=headers)
                resp = c.conn.getresponse()
                raw = resp.read()
            except TimeoutError as e:
                c.conn.close()
                c.used = False
                raise Timeout(f"{method} {path}: no answer within {self.timeout}s", code="TRANSPORT") from e
            except (http.client.HTTPException, OSError) as e:
                c.conn.close()
                c.used = False
                if reused and idempotent and attempt == 0:
                    continue
                what = "" if idempotent else " (the commit's outcome is unknown)"
                raise Unavailable(f"{method} {path}: {e!r}{what}", code="TRANSPORT") from e
            c.used, c.last_used = True, time.monotonic()
            return decode_answer(method, path, resp.status, raw)
        raise AssertionError("unreachable")


# ---------------------------------------------------------------------------
# A cluster's gatekeepers (weft.cluster's doc states the rules)

# The least time between two configuration reads however often calls fail
# (the Go client's coordPollGap).
_REFRESH_GAP: Final = 0.1
# Seconds a coordinator replica has to answer /status.json.
_COORD_TIMEOUT_MAX: Final = 3.0
# A gatekeeper whose connection failed is passed over for this long while
# another one is available (round robin skips a connection that is down).
_SUSPECT_FOR: Final = 1.0
# Failover backoff: the first pause, the cap, and the most tries of one call.
_FAILOVER_BACKOFF: Final = 0.01
_FAILOVER_BACKOFF_MAX: Final = 0.2
_FAILOVER_ATTEMPTS_MAX: Final = 100
# Transports of gatekeepers that left the configuration are kept (another
# thread may be using one) and closed with the client; at most this many,
# the oldest closed first.
_RETIRED_MAX: Final = 32
# Codes of a sent commit's answer that do not say it was not applied: the
# gatekeeper was closing, failed, or ran out of time (the Go client's
# ambiguous()). "TRANSPORT" is a failure without an answer.
_AMBIGUOUS: Final = frozenset({"UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "CANCELLED", "TRANSPORT"})


@dataclass(frozen=True)
class GatekeeperInfo:
    """A gatekeeper slot's holder, as the coordinator lists it."""

    slot: int
    member: int
    #: The gatekeeper's HTTP API address (``host:port``).
    http_address: str


@dataclass(frozen=True)
class _Config:
    epoch: int
    gatekeepers: tuple[GatekeeperInfo, ...]


def _field(obj: Any, camel: str, snake: str) -> Any:
    """A field of protobuf JSON, in its JSON name or its proto name."""
    if not isinstance(obj, dict):
        return None
    return obj[camel] if camel in obj else obj.get(snake)


def _uint(v: Any, what: str) -> int:
    # protobuf JSON writes 64-bit integers as strings.
    try:
        n = int(v if v is not None else 0)
    except (TypeError, ValueError) as e:
        raise BadResponse(f"coordinator status: {what} is not an integer: {v!r}") from e
    return n


def parse_status(status: Any) -> tuple[bool, int, _Config]:
    """(is_leader, applied_index, configuration) of a coordinator replica's
    ``/status.json``. A gatekeeper slot is listed when it has a holder that
    is live and has an HTTP address."""
    config = _field(status, "config", "config")
    if not isinstance(status, dict) or not isinstance(config, dict):
        raise BadResponse(f"coordinator status lacks 'config': {status!r:.200}")
    members: dict[int, Any] = {}
    for m in _field(status, "members", "members") or []:
        members[_uint(_field(m, "id", "id"), "member id")] = m
    gks = []
    for e in _field(config, "gatekeepers", "gatekeepers") or []:
        member = _uint(_field(e, "member", "member"), "gatekeeper member")
        m = members.get(member)
        if member == 0 or m is None or _field(m, "live", "live") is False:
            continue  # vacant, or a holder the coordinator no longer lists as live
        http_address = _field(m, "httpAddress", "http_address")
        if not isinstance(http_address, str) or not http_address:
            continue  # serves no HTTP API
        gks.append(GatekeeperInfo(_uint(_field(e, "slot", "slot"), "slot"), member, http_address))
    gks.sort(key=lambda g: g.slot)
    cfg = _Config(_uint(_field(config, "epoch", "epoch"), "epoch"), tuple(gks))
    leader = _field(status, "isLeader", "is_leader") is True
    return leader, _uint(_field(status, "appliedIndex", "applied_index"), "applied index"), cfg


class _Gatekeeper:
    """One gatekeeper's transport and health."""

    def __init__(self, info: GatekeeperInfo, timeout: float) -> None:
        self.info = info
        self.http = _Transport("http://" + info.http_address, timeout, reopen_closed=True)
        self.suspect_until = 0.0


class _ClusterTransport:
    """Sends each call to a live gatekeeper; the _Requester of ClusterClient."""

    def __init__(self, coord_urls: Sequence[str], *, timeout: float, attempt_timeout: float,
                 refresh_every: float) -> None:
        if isinstance(coord_urls, str):
            raise TypeError("coord_urls is a list of URLs, not one str")
        if not coord_urls:
            raise ValueError("no coordinator URLs")
        self.timeout = timeout
        self.attempt_timeout = attempt_timeout
        self.refresh_every = refresh_every
        coord_timeout = min(attempt_timeout, _COORD_TIMEOUT_MAX)
        self._coords = [_Transport(u, coord_timeout) for u in coord_urls]
        self._coord_urls = list(coord_urls)
        self._lock = threading.Lock()
        self._epoch = -1
        self._gatekeepers: list[_Gatekeeper] = []
        self._retired: list[_Gatekeeper] = []
        self._next = 0
        self._read_at = 0.0  # monotonic time of the last configuration read
        self._reading = False
        self._first_config()

    # -- the configuration

    def _first_config(self) -> None:
        deadline = time.monotonic() + self.timeout
        pause = 0.01
        while True:
            try:
                self._apply(self._read_config())
                self._read_at = time.monotonic()
                return
            except WeftError as e:
                if time.monotonic() + pause > deadline:
                    self.close()
                    raise Unavailable(f"no coordinator at {self._coord_urls} served a configuration "
                                      f"within {self.timeout}s: {e.message}", code=e.code) from e
            time.sleep(pause)
            pause = min(2 * pause, 0.2)

    def _read_config(self) -> _Config:
        """The serving leader's configuration, else the most advanced replica's."""
        best: tuple[int, _Config] | None = None
        last: WeftError | None = None
        for coord in self._coords:
            try:
                leader, applied, cfg = parse_status(coord.request("GET", "/status.json", idempotent=True))
            except WeftError as e:
                last = e
                continue
            if leader:
                return cfg
            if best is None or applied > best[0]:
                best = (applied, cfg)
        if best is None:
            assert last is not None
            raise last
        return best[1]

    def _apply(self, cfg: _Config) -> None:
        """Adopt cfg unless it is older than the configuration held."""
        with self._lock:
            if cfg.epoch < self._epoch:
                return  # a lagging replica's
            self._epoch = cfg.epoch
            old = {g.info.http_address: g for g in self._gatekeepers}
            new: list[_Gatekeeper] = []
            for info in cfg.gatekeepers:
                g = old.pop(info.http_address, None)
                if g is None:
                    g = _Gatekeeper(info, self.attempt_timeout)
                else:
                    g.info = info
                new.append(g)
            self._gatekeepers = new
            self._retired.extend(old.values())
            while len(self._retired) > _RETIRED_MAX:
                self._retired.pop(0).http.close()

    def refresh(self, *, gap: float = 0.0) -> bool:
        """Read the configuration now, unless it was read less than ``gap``
        seconds ago or another thread is reading it; whether it was read."""
        now = time.monotonic()
        with self._lock:
            if self._reading or now - self._read_at < gap:
                return False
            self._reading, self._read_at = True, now
        try:
            self._apply(self._read_config())
            return True
        except WeftError:
            return False  # no replica answered: the next failure or period tries again
        finally:
            with self._lock:
                self._reading = False

    @property
    def epoch(self) -> int:
        with self._lock:
            return self._epoch

    @property
    def gatekeepers(self) -> list[GatekeeperInfo]:
        with self._lock:
            return [g.info for g in self._gatekeepers]

    # -- calls

    def _pick(self) -> _Gatekeeper:
        """The next gatekeeper round robin, passing over suspects while
        another is available."""
        now = time.monotonic()
        with self._lock:
            gks = self._gatekeepers
            if not gks:
                raise Unavailable(f"the coordinator lists no live gatekeeper (epoch {self._epoch})",
                                  code="UNAVAILABLE")
            start = self._next
            self._next += 1
            for i in range(len(gks)):
                g = gks[(start + i) % len(gks)]
                if g.suspect_until <= now:
                    return g
            return gks[start % len(gks)]

    def _suspect(self, g: _Gatekeeper) -> None:
        with self._lock:
            g.suspect_until = time.monotonic() + _SUSPECT_FOR

    def request(self, method: str, path: str, body: Any = None, *, idempotent: bool) -> Any:
        """Send one call to a gatekeeper, moving it to another one when
        its gatekeeper is lost (see the module's doc)."""
        start = time.monotonic()
        self.refresh(gap=self.refresh_every)
        last: WeftError | None = None
        for attempt in range(_FAILOVER_ATTEMPTS_MAX):
            if attempt:
                pause = min(_FAILOVER_BACKOFF_MAX, _FAILOVER_BACKOFF * 2 ** (attempt - 1))
                pause *= random.uniform(0.5, 1.0)
                if time.monotonic() + pause - start > self.timeout:
                    break
                time.sleep(pause)
            try:
                g = self._pick()
            except Unavailable as e:
                last = e
                self.refresh(gap=_REFRESH_GAP)
                continue
            try:
                return g.http.request(method, path, body, idempotent=idempotent)
            except WeftError as e:
                last = e
                if isinstance(e, _NotSent) or e.code == "TRANSPORT":
                    self._suspect(g)
                if not idempotent and not isinstance(e, _NotSent):
                    self._after_commit_failure(e)
                    raise _commit_error(e, method, path, g) from e
                if not _lost_gatekeeper(e):
                    raise
            self.refresh(gap=_REFRESH_GAP)
        assert last is not None
        raise last

    def _after_commit_failure(self, e: WeftError) -> None:
        if _lost_gatekeeper(e) or e.code in _AMBIGUOUS:
            self.refresh(gap=_REFRESH_GAP)

    def close(self) -> None:
        """Close every connection (they reopen if the client is used again)."""
        with self._lock:
            every = self._gatekeepers + self._retired
            self._retired = []
        for g in every:
            g.http.close()
        for c in self._coords:
            c.close()


def _lost_gatekeeper(e: WeftError) -> bool:
    """Whether another gatekeeper (or this one later) may serve the call."""
    return isinstance(e, (Unavailable, Overloaded, Timeout)) or e.code in ("UNAVAILABLE", "OVERLOADED")


def _commit_error(e: WeftError, method: str, path: str, g: _Gatekeeper) -> WeftError:
    """The error of a sent commit: UnknownOutcome unless the answer says
    it was not applied."""
    if e.code in _AMBIGUOUS or isinstance(e, Timeout):
        return UnknownOutcome(f"{method} {path} to gatekeeper {g.info.http_address} (slot {g.info.slot}): "
                              f"outcome unknown: {e.message}", cause=e)
    return e
