"""A client of a whole Weft cluster, found through its coordinator.

A cluster (``weft cluster up``) has several gatekeepers, each serving the
HTTP API of docs/api.md, and a coordinator that knows which member holds each
gatekeeper slot in each configuration epoch. :class:`ClusterClient` asks the
coordinator replicas' HTTP status (``/status.json``) for the gatekeepers'
HTTP addresses, spreads calls over them round robin, and follows the
configuration as gatekeepers fail and backups are promoted into their slots::

    from weft import Client

    with Client.from_coordinator(["http://127.0.0.1:7611"]) as client:
        for tx in client.transaction():
            with tx:
                n = tx.get_vertex("counter").props.get("n", 0)
                tx.set_vertex_prop("counter", "n", n + 1)

It behaves as the Go client's ``DialCoordinator`` (client/weft/coord.go):

* The configuration is the serving leader's: every replica is asked in turn
  and the first that says it is the leader wins; when none does, the view
  with the highest applied index is taken. A configuration is adopted only
  if its epoch is at least the one held, so a lagging replica never moves
  the client back.
* It is read when the client is made (within ``timeout``), every
  ``refresh_every`` seconds on the next call, and at once (at most every
  0.1 s) when a call loses its gatekeeper.
* A call that loses its gatekeeper — the connection is refused or breaks,
  the answer times out, or the gatekeeper answers ``UNAVAILABLE`` (503) or
  ``OVERLOADED`` — is sent again to another gatekeeper, with backoff, until
  ``timeout`` has passed since it started: begin, reads, programs, program
  lists, status and health checks. The last failure is raised then.
* A commit is sent again only when it provably never left the client (the
  connection could not be opened). Once sent, a failure that is not the
  server refusing it raises :class:`~weft.client.UnknownOutcome`, which the
  transaction loop does not retry; ``OVERLOADED`` and ``ABORTED`` answers are
  refusals (nothing was written) and the loop runs the transaction again.

A :class:`ClusterClient` is safe to share between threads (each thread has
its own connection to each gatekeeper); it starts no threads of its own.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

from .client import (
    BadResponse,
    Client,
    Overloaded,
    Timeout,
    Unavailable,
    UnknownOutcome,
    WeftError,
    _check_retry_options,
    _NotSent,
    _Transport,
)

__all__ = ["ClusterClient", "GatekeeperInfo", "parse_status"]

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
        raise BadResponse(f"coordinator status: {what} is not an integer: {v!r}", code="BAD_RESPONSE") from e
    return n


def parse_status(status: Any) -> tuple[bool, int, _Config]:
    """(is_leader, applied_index, configuration) of a coordinator replica's
    ``/status.json``. A gatekeeper slot is listed when it has a holder that
    is live and has an HTTP address."""
    config = _field(status, "config", "config")
    if not isinstance(status, dict) or not isinstance(config, dict):
        raise BadResponse(f"coordinator status lacks 'config': {status!r:.200}", code="BAD_RESPONSE")
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


class ClusterClient(Client):
    """A :class:`~weft.client.Client` of every live gatekeeper of a cluster,
    found through the coordinator (see the module's doc).

    Args:
        coord_urls: The coordinator replicas' HTTP addresses (their
            ``--http-addr``, ``http_addr`` in ``weft cluster``'s
            cluster.json), e.g. ``["http://127.0.0.1:7611"]``; asked in
            this order.
        timeout: Seconds one call may take, failovers included; also the
            bound on finding a first configuration.
        attempt_timeout: Seconds to wait for one gatekeeper's answer
            (default: ``timeout``); a read that runs out of it is tried on
            another gatekeeper while ``timeout`` allows.
        retries, backoff, backoff_max: As for :class:`~weft.client.Client`:
            how :meth:`transaction` runs transactions again after aborts.
        refresh_every: Seconds between configuration reads while calls
            succeed (a failed call reads it at once).

    Raises:
        Unavailable: No coordinator replica served a configuration within
            ``timeout``.
    """

    def __init__(self, coord_urls: Sequence[str], *, timeout: float = 30.0,
                 attempt_timeout: float | None = None, retries: int = 10, backoff: float = 0.002,
                 backoff_max: float = 0.5, refresh_every: float = 5.0) -> None:
        _check_retry_options(timeout, retries, backoff, backoff_max)
        attempt = timeout if attempt_timeout is None else attempt_timeout
        if attempt <= 0 or refresh_every <= 0:
            raise ValueError("want attempt_timeout > 0 and refresh_every > 0")
        self._cluster = _ClusterTransport(coord_urls, timeout=timeout, attempt_timeout=attempt,
                                          refresh_every=refresh_every)
        self._http = self._cluster
        self.retries = retries
        self.backoff = backoff
        self.backoff_max = backoff_max

    @property
    def epoch(self) -> int:
        """The configuration epoch the client follows."""
        return self._cluster.epoch

    @property
    def gatekeepers(self) -> list[GatekeeperInfo]:
        """The gatekeepers calls are spread over, by slot."""
        return self._cluster.gatekeepers

    def refresh(self) -> bool:
        """Read the coordinator's configuration now; whether a replica
        answered (a configuration older than the one held is ignored)."""
        return self._cluster.refresh()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

