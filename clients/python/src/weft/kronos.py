"""Client for Kronos, Weft's event-ordering service (Kronos paper §2).

Kronos keeps a graph of events and the happens-before edges between them. An
application creates events, asks how pairs of events are ordered, and commits
new orders, as hard constraints (``must``) or as preferences (``prefer``) that
Kronos may reverse to stay acyclic. Events are reference counted and garbage
collected once no application holds them and no live event is ordered before
them.

Events are named by the integer ids :meth:`KronosClient.create_event` returns,
or by a :class:`VClock` (a gatekeeper's vector timestamp), which Kronos
creates on first use by :meth:`KronosClient.assign_order`.

Failure model:

* Errors that are part of the API travel as stable codes and are raised as
  subclasses of :class:`KronosError`, one per code, each also the class of
  its condition in :mod:`weft.errors` where one is shared with the other
  services (:class:`OverloadedError` is a :class:`weft.Overloaded`,
  :class:`UnavailableError` a :class:`weft.Unavailable`, …). ``.code`` is
  the code's name (``"MUST_CONFLICT"``), ``.wire_code`` its
  :class:`ErrorCode`.
* Every mutating call carries a session (a random 64-bit client id and a
  sequence number). A retried call reuses its sequence number, and the
  replicated state machine answers a repeated number with the remembered
  reply, so a retry never applies a mutation twice.
* Transport failures (gRPC ``UNAVAILABLE``, ``DEADLINE_EXCEEDED``) and
  ``NOT_LEADER``/``SHUTTING_DOWN`` answers move the call to the leader hint or
  the next address; ``OVERLOADED`` is retried after a backoff. Retries are
  bounded by a count and by the call's overall deadline.
* A follower may answer some query pairs ``UNRESOLVED``; those pairs are sent
  again to the leader and merged back in request order, so callers never see
  ``UNRESOLVED``.
"""

from __future__ import annotations

import enum
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar, Union

from .errors import (
    ClockInvalidError,
    CollectedError,
    ErrorCode,
    KronosError,
    MalformedError,
    MustConflictError,
    NotLeaderError,
    OverloadedError,
    ProtocolError,
    RefOverflowError,
    RefUnderflowError,
    SelfOrderError,
    ShuttingDownError,
    TransportError,
    UnavailableError,
    UnknownEventError,
    from_code,
)

# grpcio and protobuf are the ``kronos`` extra (``pip install 'weft[kronos]'``):
# without them this module still imports, and KronosClient() says what to install.
try:
    from . import _kronos_wire as _wire
except ImportError as _e:  # tests/test_no_grpc.py runs this branch
    _WIRE_MISSING: ImportError | None = _e
else:
    _WIRE_MISSING = None


def _need_wire() -> None:
    """Raise the ImportError that says how to install the kronos extra."""
    if _WIRE_MISSING is not None:
        raise ImportError(
            "weft.KronosClient needs grpcio and protobuf, which the base install of weft leaves out: "
            f"pip install 'weft[kronos]' ({_WIRE_MISSING})",
            name=_WIRE_MISSING.name,
        ) from _WIRE_MISSING

if TYPE_CHECKING:
    from google.protobuf.message import Message

__all__ = [
    "AssignResult",
    "CleanupResult",
    "ClockInvalidError",
    "CollectedError",
    "ErrorCode",
    "KronosClient",
    "KronosError",
    "MalformedError",
    "MustConflictError",
    "NotLeaderError",
    "Order",
    "OverloadedError",
    "ProtocolError",
    "Ref",
    "RefOverflowError",
    "RefUnderflowError",
    "SelfOrderError",
    "ShuttingDownError",
    "Strength",
    "TransportError",
    "UnavailableError",
    "UnknownEventError",
    "VClock",
]

_U32_MAX: Final = 2**32 - 1
_U64_MAX: Final = 2**64 - 1

# Channels to leader hints outside the configured addresses are cached, but
# never more than this many (hints name cluster members, so this is slack).
_HINT_CHANNELS_MAX: Final = 16


# ---------------------------------------------------------------------------
# Values


class Order(enum.Enum):
    """How two events ``(a, b)`` are ordered.

    ``Order("->")`` is :attr:`BEFORE` and ``Order("<-")`` is :attr:`AFTER`;
    names are accepted case-insensitively (``Order("before")``). The values
    are the wire's (``kronos.proto``'s ``Order``).
    """

    #: ``a`` happens before ``b`` (``a -> b``).
    BEFORE = 1
    #: ``b`` happens before ``a`` (``a <- b``).
    AFTER = 2
    #: No order is known (yet): either may be assigned.
    CONCURRENT = 3
    #: ``a`` or ``b`` does not exist (never created, or collected).
    UNKNOWN_EVENT = 4

    @classmethod
    def _missing_(cls, value: object) -> Order | None:
        if not isinstance(value, str):
            return None
        text = value.strip()
        if text == "->":
            return cls.BEFORE
        if text == "<-":
            return cls.AFTER
        return cls.__members__.get(text.upper())

    def reverse(self) -> Order:
        """Return the order of ``(b, a)`` given this order of ``(a, b)``."""
        if self is Order.BEFORE:
            return Order.AFTER
        if self is Order.AFTER:
            return Order.BEFORE
        return self


class Strength(enum.Enum):
    """How firmly :meth:`KronosClient.assign_order` should hold an order.

    ``Strength("must")`` and ``Strength("prefer")`` are accepted
    case-insensitively.
    """

    #: A hard constraint: a contradiction aborts the whole batch.
    MUST = 1
    #: A soft constraint: a contradiction is reversed and reported.
    PREFER = 2

    @classmethod
    def _missing_(cls, value: object) -> Strength | None:
        if not isinstance(value, str):
            return None
        return cls.__members__.get(value.strip().upper())


@dataclass(frozen=True)
class VClock:
    """A vector timestamp naming an event stamped by a gatekeeper.

    Epochs compare first; within an epoch clocks compare entry-wise.
    ``owner`` is the gatekeeper that stamped the event, and
    ``counters[owner]`` is its own counter. Clocks of one gatekeeper are
    totally ordered by that counter without any :meth:`~KronosClient.assign_order`.

    Attributes:
        epoch: The cluster configuration version (uint64).
        owner: Index of the stamping gatekeeper in ``counters`` (uint32).
        counters: One counter per gatekeeper (each a uint64). A list is
            accepted and stored as a tuple, so clocks are hashable.
    """

    epoch: int
    owner: int
    counters: tuple[int, ...]

    def __post_init__(self) -> None:
        counters = tuple(self.counters)
        object.__setattr__(self, "counters", counters)
        _check_uint("epoch", self.epoch, _U64_MAX)
        _check_uint("owner", self.owner, _U32_MAX)
        for c in counters:
            _check_uint("counter", c, _U64_MAX)
        if self.owner >= len(counters):
            raise ValueError(
                f"kronos: clock owner {self.owner} has no counter (len {len(counters)})"
            )


#: An event: an id from :meth:`KronosClient.create_event`, or a clock.
Ref = Union[int, VClock]


@dataclass(frozen=True)
class AssignResult:
    """The outcome of one pair of :meth:`KronosClient.assign_order`.

    Attributes:
        order: The order of ``(a, b)`` after the call.
        reversed: True when a ``prefer`` pair contradicted the graph and
            Kronos kept the opposite order (``order`` shows which).
    """

    order: Order
    reversed: bool


class CleanupResult(NamedTuple):
    """The outcome of :meth:`KronosClient.cleanup`: a ``(released, collected)`` tuple."""

    #: Clock-named events whose implicit reference was released.
    released: int
    #: Events garbage-collected as a result.
    collected: int


# ---------------------------------------------------------------------------
# Errors (the classes are weft.errors')


def _error_from_wire(err: _wire.pb.Error) -> KronosError:
    """Map a non-OK wire error to its exception."""
    try:
        code = ErrorCode(err.code)
    except ValueError:
        return ProtocolError(f"kronos: unknown error code {err.code}: {err.message}")
    message = err.message or code.name
    if code is ErrorCode.MUST_CONFLICT:
        try:
            actual = Order(err.actual)
        except ValueError:
            return ProtocolError(f"kronos: must conflict with invalid order {err.actual}: {message}")
        return MustConflictError(message, pair_index=err.pair_index, actual=actual)
    exc = from_code(code.name, message, service="kronos", leader_hint=err.leader_hint)
    assert isinstance(exc, KronosError)
    return exc


# ---------------------------------------------------------------------------
# Wire conversion (pure helpers)


def _check_uint(what: str, value: object, limit: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"kronos: {what} must be an int, not {type(value).__name__}")
    if not 0 <= value <= limit:
        raise ValueError(f"kronos: {what} {value} out of range [0, {limit}]")


def _clock_to_wire(c: VClock) -> _wire.pb.VClock:
    return _wire.pb.VClock(epoch=c.epoch, owner=c.owner, counters=c.counters)


def _ref_to_wire(ref: Ref) -> _wire.pb.Ref:
    if isinstance(ref, VClock):
        return _wire.pb.Ref(clock=_clock_to_wire(ref))
    _check_uint("event id", ref, _U64_MAX)
    return _wire.pb.Ref(id=ref)


def _ids(ids: int | Iterable[int]) -> list[int]:
    out = [ids] if isinstance(ids, int) else list(ids)
    for i in out:
        _check_uint("event id", i, _U64_MAX)
    return out


def _assign_pair_to_wire(pair: Sequence[Any]) -> _wire.pb.AssignPair:
    if len(pair) != 4:
        raise ValueError(f"kronos: assign pair must be (a, order, b, strength), got {pair!r}")
    a, order, b, strength = pair
    o = order if isinstance(order, Order) else Order(order)
    if o not in (Order.BEFORE, Order.AFTER):
        raise ValueError(f"kronos: assign order must be BEFORE ('->') or AFTER ('<-'), not {o.name}")
    s = strength if isinstance(strength, Strength) else Strength(strength)
    return _wire.pb.AssignPair(a=_ref_to_wire(a), order=o.name, b=_ref_to_wire(b), strength=s.name)


def _order_from_wire(value: int) -> Order:
    try:
        return Order(value)
    except ValueError:
        raise ProtocolError(f"kronos: unexpected order {value} in an answer") from None


def _check_count(what: str, got: int, want: int) -> None:
    if got != want:
        raise ProtocolError(f"kronos: {what}: got {got} results for {want} requested")


# ---------------------------------------------------------------------------
# Transport

_ReqT = TypeVar("_ReqT", bound="Message")
_RespT = TypeVar("_RespT", bound="Message")


class _Budget:
    """The retry budget of one client call: an attempt count and a deadline."""

    def __init__(self, client: KronosClient) -> None:
        self._deadline = time.monotonic() + client.timeout
        self._attempts_left = client.retry_max + 1
        self._attempt_timeout = client.attempt_timeout
        self._backoff = client.backoff_min
        self._backoff_max = client.backoff_max
        self._rng = client._rng

    def remaining(self) -> float:
        return self._deadline - time.monotonic()

    def exhausted(self) -> bool:
        return self._attempts_left <= 0 or self.remaining() <= 0

    def take(self) -> float | None:
        """Spend one attempt; return its timeout, or None when none is left."""
        if self.exhausted():
            return None
        self._attempts_left -= 1
        return min(self.remaining(), self._attempt_timeout)

    def sleep(self) -> None:
        """Back off before the next attempt (exponential, jittered, capped)."""
        delay = min(self._backoff * (0.5 + self._rng.random() / 2), max(self.remaining(), 0.0))
        self._backoff = min(self._backoff * 2, self._backoff_max)
        if delay > 0:
            time.sleep(delay)


# ---------------------------------------------------------------------------
# Client


class KronosClient:
    """A client of a Kronos replica group.

    Args:
        addrs: Replica addresses (``host:port``): a list, or one string
            holding one address or several separated by commas. Calls start
            at the first and follow the leader from there.
        timeout: Overall deadline of one client call in seconds, retries
            included.
        retry_max: Retries of one call after its first attempt; with
            ``timeout`` it bounds every retry loop.
        attempt_timeout: Deadline of one attempt in seconds; defaults to half
            of ``timeout``, so one unresponsive replica cannot take the whole
            call.
        backoff_min: First backoff between attempts in seconds; it doubles per
            retry up to ``backoff_max``, with jitter.
        backoff_max: Largest backoff between attempts in seconds.

    Raises:
        ImportError: grpcio or protobuf is not installed (they are the
            ``kronos`` extra: ``pip install 'weft[kronos]'``).

    The client is a context manager and is safe for use by several threads.
    Mutating calls are serialized per client: the replicas remember only each
    client's last sequence number, so exactly-once needs one mutation in
    flight per client id. Use one client per thread for parallel writes.
    """

    def __init__(
        self,
        addrs: Sequence[str] | str,
        timeout: float = 5.0,
        *,
        retry_max: int = 32,
        attempt_timeout: float | None = None,
        backoff_min: float = 0.02,
        backoff_max: float = 0.5,
    ) -> None:
        _need_wire()
        raw = addrs.split(",") if isinstance(addrs, str) else list(addrs)
        cleaned = list(dict.fromkeys(a.strip() for a in raw if a.strip()))
        if not cleaned:
            raise ValueError("kronos: no addresses")
        if timeout <= 0:
            raise ValueError(f"kronos: timeout must be positive, not {timeout}")
        if retry_max < 0:
            raise ValueError(f"kronos: retry_max must be >= 0, not {retry_max}")
        if not 0 < backoff_min <= backoff_max:
            raise ValueError("kronos: need 0 < backoff_min <= backoff_max")
        self._addrs: tuple[str, ...] = tuple(cleaned)
        self.timeout = float(timeout)
        self.retry_max = retry_max
        self.attempt_timeout = float(attempt_timeout) if attempt_timeout else self.timeout / 2
        self.backoff_min = float(backoff_min)
        self.backoff_max = float(backoff_max)
        self._rng = random.Random(secrets.randbits(64))
        # Zero reads as "no session" on the wire, so never use it.
        self._client_id = secrets.randbits(64) or 1
        self._seq = 0
        self._mu = threading.Lock()  # guards _conns, _target, _closed
        self._session_mu = threading.Lock()  # one mutation in flight
        self._conns: dict[str, _wire.Conn] = {}
        self._target = self._addrs[0]
        self._closed = False

    # -- lifecycle ----------------------------------------------------------

    def __enter__(self) -> KronosClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every channel. Idempotent; later calls raise RuntimeError."""
        with self._mu:
            self._closed = True
            conns, self._conns = self._conns, {}
        for conn in conns.values():
            conn.channel.close()

    def __repr__(self) -> str:
        closed = " closed" if self._closed else ""
        return f"<weft.KronosClient {','.join(self._addrs)}{closed}>"

    @property
    def addrs(self) -> tuple[str, ...]:
        """The configured replica addresses."""
        return self._addrs

    @property
    def client_id(self) -> int:
        """This client's random 64-bit session id."""
        return self._client_id

    @property
    def target(self) -> str:
        """The address the next call goes to first: the last known leader,
        or the last replica that answered."""
        with self._mu:
            return self._target

    # -- API ----------------------------------------------------------------

    def create_event(self) -> int:
        """Create one event, holding one reference to it; return its id."""
        return self.create_events(1)[0]

    def create_events(self, n: int) -> list[int]:
        """Create ``n`` events (1 <= n < 2**32), each with one reference held."""
        _check_uint("count", n, _U32_MAX)
        if n < 1:
            raise ValueError("kronos: create_events needs n >= 1")
        resp = self._mutate(_wire.CREATE_EVENT, lambda s: _wire.pb.CreateEventRequest(session=s, count=n))
        _check_count("create_event", len(resp.ids), n)
        return list(resp.ids)

    def acquire_ref(self, ids: int | Iterable[int]) -> None:
        """Take one more reference to each event (an id may repeat).

        Raises:
            UnknownEventError: An id does not exist; nothing changed.
            RefOverflowError: A count would pass 2**32 - 1; nothing changed.
        """
        wire = _ids(ids)
        if wire:
            self._mutate(_wire.ACQUIRE_REF, lambda s: _wire.pb.RefsRequest(session=s, ids=wire))

    def release_ref(self, ids: int | Iterable[int]) -> int:
        """Drop one reference to each event; return how many events this collected.

        An event is collected once it has no references and no live event is
        ordered before it; collecting it may free events ordered after it.

        Raises:
            UnknownEventError: An id does not exist; nothing changed.
            RefUnderflowError: A count would go below zero; nothing changed.
        """
        wire = _ids(ids)
        if not wire:
            return 0
        resp = self._mutate(_wire.RELEASE_REF, lambda s: _wire.pb.RefsRequest(session=s, ids=wire))
        return int(resp.collected)

    def query_order(self, pairs: Sequence[tuple[Ref, Ref]]) -> list[Order]:
        """Return the order of each pair ``(a, b)``, in request order.

        A missing event answers :attr:`Order.UNKNOWN_EVENT` for its pair
        rather than failing the call. Pairs a follower cannot answer are asked
        of the leader.

        Raises:
            SelfOrderError: A pair names one event twice.
        """
        wire = [_wire.pb.Pair(a=_ref_to_wire(a), b=_ref_to_wire(b)) for a, b in pairs]
        if not wire:
            return []
        budget = _Budget(self)
        resp, addr = self._call(_wire.QUERY_ORDER, _wire.pb.QueryOrderRequest(pairs=wire), budget)
        _check_count("query_order", len(resp.orders), len(wire))
        orders = list(resp.orders)
        hint = resp.leader_hint
        while True:
            pending = [i for i, o in enumerate(orders) if o == _wire.pb.UNRESOLVED]
            if not pending:
                return [_order_from_wire(o) for o in orders]
            if budget.exhausted():
                raise UnavailableError(
                    f"kronos: no leader resolved {len(pending)} pairs before the retry budget ran out"
                )
            if hint and hint != addr:
                leader = hint
            else:
                leader = self._next_addr(addr)
                budget.sleep()  # no known leader: likely an election
            sub = _wire.pb.QueryOrderRequest(pairs=[wire[i] for i in pending])
            resp, addr = self._call(_wire.QUERY_ORDER, sub, budget, start=leader)
            _check_count("query_order", len(resp.orders), len(pending))
            for i, o in zip(pending, resp.orders):
                orders[i] = o
            hint = resp.leader_hint

    def assign_order(
        self,
        pairs: Sequence[tuple[Ref, str | Order, Ref, str | Strength]],
    ) -> list[AssignResult]:
        """Commit an order for each pair ``(a, order, b, strength)``, atomically.

        ``order`` is ``'->'`` or :attr:`Order.BEFORE` (``a`` before ``b``), or
        ``'<-'`` or :attr:`Order.AFTER`; ``strength`` is ``'must'``/``'prefer'``
        or a :class:`Strength`. Every ``must`` pair applies first, then every
        ``prefer`` pair, each in request order, so a later pair sees the edges
        of earlier ones. Clocks name events that are created on first use and
        linked into their gatekeeper's chain.

        Returns:
            One :class:`AssignResult` per pair, in request order.

        Raises:
            MustConflictError: A ``must`` pair contradicts the graph; nothing
                changed. ``pair_index`` and ``actual`` say which and why.
            SelfOrderError, UnknownEventError, ClockInvalidError,
            CollectedError: The batch was rejected; nothing changed.
        """
        wire = [_assign_pair_to_wire(p) for p in pairs]
        if not wire:
            return []
        resp = self._mutate(_wire.ASSIGN_ORDER, lambda s: _wire.pb.AssignOrderRequest(session=s, pairs=wire))
        _check_count("assign_order", len(resp.results), len(wire))
        return [AssignResult(_order_from_wire(r.order), bool(r.reversed)) for r in resp.results]

    def cleanup(self, gatekeeper: int, clock: VClock) -> CleanupResult:
        """Tell Kronos that ``gatekeeper`` will never again name a clock below ``clock``.

        Clock-named events of that gatekeeper below the watermark lose their
        implicit reference and may be collected; naming such a clock later
        raises :class:`CollectedError`.

        Returns:
            ``(released, collected)`` as a :class:`CleanupResult`.
        """
        _check_uint("gatekeeper", gatekeeper, _U32_MAX)
        wire = _clock_to_wire(clock)
        resp = self._mutate(
            _wire.CLEANUP, lambda s: _wire.pb.CleanupRequest(session=s, gatekeeper=gatekeeper, clock=wire)
        )
        return CleanupResult(int(resp.released), int(resp.collected))

    def stats(self, addr: str | None = None) -> dict[str, int | str | bool]:
        """Return one replica's counters and raft state as a dict.

        Keys are the ``StatsResponse`` fields (``events``, ``edges``,
        ``node_id``, ``leader_id``, ``is_leader``, ``term``, ...). With
        ``addr``, ask that replica only; otherwise ask the current target.
        """
        budget = _Budget(self)
        resp, _ = self._call(_wire.STATS, _wire.pb.StatsRequest(), budget, start=addr, pinned=addr is not None)
        out: dict[str, int | str | bool] = {}
        for field in resp.DESCRIPTOR.fields:
            out[field.name] = getattr(resp, field.name)
        return out

    # -- internals ----------------------------------------------------------

    def _mutate(self, method: _wire.Method[_ReqT, _RespT], build: Callable[[_wire.pb.Session], _ReqT]) -> _RespT:
        """Run a mutating call under a fresh sequence number, reused by every retry."""
        with self._session_mu:
            self._seq += 1
            request = build(_wire.pb.Session(client_id=self._client_id, seq=self._seq))
            resp, _ = self._call(method, request, _Budget(self))
            return resp

    def _conn(self, addr: str) -> _wire.Conn:
        with self._mu:
            if self._closed:
                raise RuntimeError("kronos: client is closed")
            conn = self._conns.get(addr)
            if conn is None:
                self._evict_hint_channels()
                conn = self._conns[addr] = _wire.Conn(addr)
            return conn

    def _evict_hint_channels(self) -> None:
        hints = [a for a in self._conns if a not in self._addrs]
        for a in hints[: max(0, len(hints) - _HINT_CHANNELS_MAX + 1)]:
            self._conns.pop(a).channel.close()

    def _next_addr(self, addr: str) -> str:
        """The configured address after ``addr`` (the first if it is a hint)."""
        try:
            return self._addrs[(self._addrs.index(addr) + 1) % len(self._addrs)]
        except ValueError:
            return self._addrs[0]

    def _call(
        self,
        method: _wire.Method[_ReqT, _RespT],
        request: _ReqT,
        budget: _Budget,
        *,
        start: str | None = None,
        pinned: bool = False,
    ) -> tuple[_RespT, str]:
        """Send ``request`` until a replica accepts it; return the answer and who gave it.

        ``pinned`` keeps every attempt on ``start`` instead of moving on.
        """
        with self._mu:
            addr = start or self._target
        last: BaseException | None = None
        while True:
            timeout = budget.take()
            if timeout is None:
                raise _exhausted(method, last)
            try:
                resp = self._conn(addr).call(method, request, timeout)
            except _wire.grpc.RpcError as err:
                status = _wire.status_of(err)
                if status not in _wire.RETRYABLE_STATUS:
                    raise TransportError(
                        f"kronos: {method.name} to {addr}: {status}: {_wire.details_of(err)}",
                        status=status,
                    ) from err
                last = err
                addr = addr if pinned else self._next_addr(addr)
                budget.sleep()
                continue
            wire_err: _wire.pb.Error | None = getattr(resp, "error") if method.has_error else None
            if wire_err is None or wire_err.code == _wire.pb.OK:
                if not pinned:
                    with self._mu:
                        self._target = addr
                return resp, addr
            exc = _error_from_wire(wire_err)
            if isinstance(exc, NotLeaderError) and not pinned:
                last = exc
                if wire_err.leader_hint and wire_err.leader_hint != addr:
                    addr = wire_err.leader_hint  # a fresh hint is worth trying at once
                else:
                    addr = self._next_addr(addr)
                    budget.sleep()
                continue
            if isinstance(exc, ShuttingDownError) and not pinned:
                last = exc
                addr = self._next_addr(addr)
                budget.sleep()
                continue
            if isinstance(exc, OverloadedError):
                last = exc
                budget.sleep()
                continue
            raise exc


def _exhausted(method: _wire.Method[Any, Any], last: BaseException | None) -> KronosError:
    """The error to raise when a call's retry budget ran out."""
    if isinstance(last, KronosError):
        return last
    if last is None:
        return UnavailableError(f"kronos: {method.name}: deadline passed before any attempt")
    status = _wire.status_of(last) if isinstance(last, _wire.grpc.RpcError) else None
    exc = UnavailableError(
        f"kronos: {method.name}: no replica answered: {status}: "
        f"{_wire.details_of(last) if isinstance(last, _wire.grpc.RpcError) else last}",
        status=status,
    )
    exc.__cause__ = last
    return exc
