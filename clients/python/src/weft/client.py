"""Client for Weft's graph database over its HTTP/JSON API (docs/api.md).

Weft's transactions are interactive and optimistic: a transaction reads at one
snapshot, each read is recorded with the version it saw, writes are buffered,
and the commit sends both. The server checks that nothing the transaction read
has changed since and applies the writes atomically, or refuses with
:class:`Aborted`, after which the whole transaction should run again with fresh
reads. This client does that for you::

    from weft.client import Alias, Client

    with Client("http://127.0.0.1:7580") as client:
        for tx in client.transaction():          # retried on retryable aborts
            with tx:                             # commits when the block ends
                alice = tx.get_vertex(Alias("alice"))
                visits = alice.props.get("visits", 0)
                tx.set_vertex_prop(alice.handle, "visits", visits + 1)

A ``with`` block cannot re-run itself, so retrying takes the ``for`` loop
around it (or :meth:`Client.run_transaction` with a function). Either way **the
body runs again from the start on each retry**: keep it free of side effects
outside the transaction. ``with client.transaction() as tx:`` alone makes one
attempt and raises :class:`Aborted` if it conflicts.

Vertices are named by handle (a ``str``) or by alias (:class:`Alias`).
Property values are ``str``, ``int`` (64-bit), ``float`` (finite), ``bool``,
timezone-aware :class:`~datetime.datetime` and lists of these. Reads return
plain dataclasses (:class:`Vertex`, :class:`Edge`); :meth:`Client.run` returns
the program's result as plain Python objects (dicts, lists, numbers, strings).

Errors the server answers are raised as subclasses of :class:`WeftError`, one
per stable error code (:mod:`weft.errors`; the classes are re-exported here). A :class:`Client` is safe to share between threads
(each thread gets its own connection); a :class:`Transaction` is not.
"""

from __future__ import annotations

import math
import random
import re
import reprlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from types import TracebackType
from typing import Any, Final, Generic, Protocol, TypeAlias, TypeVar
from urllib.parse import quote, urlencode

from ._http import GatekeeperInfo, _ClusterTransport, _Requester, _Transport
from .errors import (
    Aborted,
    AlreadyExists,
    BadResponse,
    Cancelled,
    InternalError,
    InvalidArgument,
    KronosError,
    KVError,
    NotFound,
    Overloaded,
    SnapshotTooOld,
    Timeout,
    TooLarge,
    Unavailable,
    UnknownOutcome,
    UnknownProgram,
    WeftError,
)

__all__ = [
    "Aborted",
    "Alias",
    "AlreadyExists",
    "BadResponse",
    "Cancelled",
    "Client",
    "ClusterClient",
    "CommitResult",
    "Edge",
    "InternalError",
    "InvalidArgument",
    "NotFound",
    "Overloaded",
    "Placement",
    "ProgramInfo",
    "Read",
    "SnapshotTooOld",
    "Timeout",
    "TooLarge",
    "Transaction",
    "Transactions",
    "Unavailable",
    "UnknownOutcome",
    "UnitHome",
    "UnitMove",
    "UnknownProgram",
    "Value",
    "Vertex",
    "VertexRef",
    "WeftError",
]

#: A property value (``None`` only inside a list; tuples are sent as lists,
#: and lists come back).
Value: TypeAlias = str | int | float | bool | datetime | list["Value"] | tuple["Value", ...] | None

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

T = TypeVar("T")


# ---------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class Alias:
    """Names a vertex by one of its aliases: ``tx.get_vertex(Alias("alice"))``."""

    name: str


#: A vertex named by handle (``str``) or by alias (:class:`Alias`).
VertexRef: TypeAlias = str | Alias

_DATETIME_RE: Final = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def _ref(v: VertexRef) -> tuple[str, bool]:
    if isinstance(v, Alias):
        return v.name, True
    if isinstance(v, str):
        return v, False
    raise TypeError(f"a vertex is named by a str handle or an Alias, not {type(v).__name__}")


def encode_value(v: Value, _depth: int = 0) -> Any:
    """Return the JSON form of a property value (docs/api.md, "Values")."""
    if v is None and _depth > 0:
        return None
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError(f"int {v} is outside the 64-bit range")
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"float {v} is not finite")
        return v
    if isinstance(v, datetime):
        if v.tzinfo is None:
            raise ValueError("naive datetime: give it a timezone (for example tzinfo=timezone.utc)")
        utc = v.astimezone(timezone.utc).replace(tzinfo=None)
        return {"$datetime": utc.isoformat(timespec="microseconds") + "Z"}
    if isinstance(v, (list, tuple)):
        if _depth >= 8:
            raise ValueError("lists nest deeper than 8")
        return [encode_value(e, _depth + 1) for e in v]
    if v is None:
        raise ValueError("None is not a property value (delete the property instead)")
    raise TypeError(f"{type(v).__name__} is not a property value "
                    "(str, int, float, bool, datetime or a list of these)")


def decode_value(j: Any) -> Value:
    """Return the Python value of a property value's JSON form.

    Datetimes come back as UTC :class:`~datetime.datetime` values, truncated
    to microseconds (the server keeps nanoseconds).
    """
    if isinstance(j, dict):
        text = j.get("$datetime")
        if len(j) == 1 and isinstance(text, str):
            return _parse_datetime(text)
        raise BadResponse(f"unexpected object as a property value: {j!r}")
    if isinstance(j, list):
        return [decode_value(e) for e in j]
    if j is None or isinstance(j, (str, int, float, bool)):
        return j
    raise BadResponse(f"unexpected property value {j!r}")


def _parse_datetime(text: str) -> datetime:
    m = _DATETIME_RE.match(text)
    if m is None:
        raise BadResponse(f"malformed datetime {text!r}")
    base, frac, zone = m.groups()
    micros = int((frac or "0").ljust(6, "0")[:6])
    tz = timezone.utc
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    parsed = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(microsecond=micros, tzinfo=tz)
    return parsed.astimezone(timezone.utc)


# ---------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Read:
    """One read-set entry: the vertex (or alias) read and the version seen."""

    vertex: str
    alias: bool
    version: str

    def to_json(self) -> dict[str, Any]:
        return {"vertex": self.vertex, "alias": self.alias, "version": self.version}


class _ValueRepr(reprlib.Repr):
    """Reprs of values read: long property maps, lists and strings are cut,
    datetimes are shown in ISO 8601."""

    def repr_datetime(self, x: datetime, level: int) -> str:
        return x.isoformat()


_REPR: Final = _ValueRepr()
_REPR.maxdict, _REPR.maxlist, _REPR.maxstring, _REPR.maxother, _REPR.maxlevel = 6, 6, 40, 40, 3


@dataclass
class Edge:
    """An out-edge as read at ``snapshot`` (``exists`` is False when missing).

    Its repr reads ``<Edge knows person/alice -> person/bob {'weight': 0.5} @AQACAQM>``.
    """

    handle: str
    src: str
    dst: str
    exists: bool
    props: dict[str, Value] = field(default_factory=dict)
    snapshot: str = ""
    #: The read-set entries this read adds to a transaction (empty for the
    #: edges listed inside a :class:`Vertex`).
    reads: list[Read] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        at = f" @{self.snapshot}" if self.snapshot else ""
        if not self.exists:
            return f"<Edge {self.handle} of {self.src} missing{at}>"
        props = f" {_REPR.repr(self.props)}" if self.props else ""
        return f"<Edge {self.handle} {self.src} -> {self.dst}{props}{at}>"


@dataclass
class Vertex:
    """A vertex as read at ``snapshot`` (``exists`` is False when missing).

    Its repr reads ``<Vertex person/alice {'name': 'Alice'} aliases=['alice']
    edges=3 @AQACAQM>`` (``edges=3+`` when :attr:`edges_truncated`).
    """

    handle: str
    exists: bool
    props: dict[str, Value] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    #: More out-edges exist than were returned (see ``edges_max``).
    edges_truncated: bool = False
    snapshot: str = ""
    #: The read-set entries this read adds to a transaction: the vertex's,
    #: and the alias's when it was named by alias.
    reads: list[Read] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        at = f" @{self.snapshot}" if self.snapshot else ""
        if not self.exists:
            return f"<Vertex {self.handle} missing{at}>"
        props = f" {_REPR.repr(self.props)}" if self.props else ""
        aliases = f" aliases={_REPR.repr(self.aliases)}" if self.aliases else ""
        edges = f" edges={len(self.edges)}{'+' if self.edges_truncated else ''}" if self.edges or \
            self.edges_truncated else ""
        return f"<Vertex {self.handle}{props}{aliases}{edges}{at}>"


@dataclass(frozen=True)
class CommitResult:
    """A committed transaction: the handles it created, in operation order
    (generated ones included), and its snapshot (reading at it shows it).

    It iterates over :attr:`handles` and its ``len`` is theirs
    (``a, b = tx.result``); it is true even when it created nothing.
    """

    handles: list[str]
    snapshot: str

    def __iter__(self) -> Iterator[str]:
        return iter(self.handles)

    def __len__(self) -> int:
        return len(self.handles)

    def __getitem__(self, i: int) -> str:
        return self.handles[i]

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True)
class ProgramInfo:
    """A program :meth:`Client.run` accepts."""

    name: str
    description: str


@dataclass(frozen=True)
class UnitHome:
    """A placement unit that moved off its base shard (docs/online-moves.md).

    Attributes:
        unit: ``"s:<slot>"`` or ``"g:<group>"``.
        shard: Where it lives now.
        from_shard: The shard it last left.
        held: The shards holding a copy of it (its home and the shards it
            left): it cannot move to these.
    """

    unit: str
    shard: int
    from_shard: int
    held: tuple[int, ...]


@dataclass(frozen=True)
class UnitMove:
    """One move: of :attr:`Placement.rebalance`, or done by :meth:`Client.move_unit`."""

    unit: str
    from_shard: int
    to_shard: int


@dataclass(frozen=True)
class Placement:
    """Where a server places vertices (``GET /v1/placement``).

    Attributes:
        base: The shard count slots are computed over (256·base slots).
        shards: The shards now.
        slots: Per shard, the slot units it serves.
        moved: The units that moved off their base shard, sorted.
        rebalance: The slot moves that give every shard its share.
    """

    base: int
    shards: int
    slots: tuple[int, ...]
    moved: tuple[UnitHome, ...]
    rebalance: tuple[UnitMove, ...]


def _get(obj: Any, key: str, typ: type[T]) -> T:
    """obj[key] checked to be a typ, or BadResponse."""
    if not isinstance(obj, dict) or not isinstance(obj.get(key), typ):
        raise BadResponse(f"answer lacks {key!r} ({typ.__name__}): {obj!r:.200}")
    value: T = obj[key]
    return value


def _read(j: Any) -> Read:
    return Read(_get(j, "vertex", str), _get(j, "alias", bool), _get(j, "version", str))


def _props(j: Any) -> dict[str, Value]:
    return {str(k): decode_value(v) for k, v in _get(j, "props", dict).items()}


def _edge(j: Any, snapshot: str) -> Edge:
    reads = [_read(r) for r in j.get("reads") or []] if isinstance(j, dict) else []
    return Edge(_get(j, "handle", str), _get(j, "src", str), _get(j, "dst", str), _get(j, "exists", bool),
                _props(j), snapshot, reads)


def _vertex(j: Any, snapshot: str) -> Vertex:
    return Vertex(
        handle=_get(j, "handle", str), exists=_get(j, "exists", bool), props=_props(j),
        aliases=[str(a) for a in _get(j, "aliases", list)],
        edges=[_edge(e, snapshot) for e in _get(j, "edges", list)],
        edges_truncated=bool(j.get("edges_truncated", False)), snapshot=snapshot,
        reads=[_read(r) for r in _get(j, "reads", list)])


# ---------------------------------------------------------------------------
# Calls apart from their I/O (shared by Client and weft.aio.Client)


@dataclass(frozen=True)
class _Call(Generic[T]):
    """One API call without its I/O: what to send, and how to read the
    decoded JSON answer. :class:`Client` sends it through its requester and
    :class:`weft.aio.Client` through its asyncio transport."""

    method: str
    path: str
    body: Any
    idempotent: bool
    parse: Callable[[Any], T]


def _begin_call() -> _Call[str]:
    return _Call("POST", "/v1/begin", {}, True, lambda j: _get(j, "snapshot", str))


def _read_body(body: dict[str, Any], snapshot: str | None, props: bool, edges: bool, aliases: bool,
               edges_max: int) -> dict[str, Any]:
    """A read's request body: ``body`` with the snapshot and the parts left out."""
    if snapshot:
        body["snapshot"] = snapshot
    if not props:
        body["props"] = False
    if not edges:
        body["edges"] = False
    if not aliases:
        body["aliases"] = False
    if edges_max:
        body["edges_max"] = edges_max
    return body


def _get_vertex_call(vertex: VertexRef, snapshot: str | None, props: bool, edges: bool, aliases: bool,
                     edges_max: int) -> _Call[Vertex]:
    name, is_alias = _ref(vertex)
    body = _read_body({"vertex": name, "vertex_alias": is_alias}, snapshot, props, edges, aliases, edges_max)
    return _Call("POST", "/v1/vertex", body, True,
                 lambda j: _vertex(_get(j, "vertex", dict), _get(j, "snapshot", str)))


def _get_vertices_call(vertices: Sequence[VertexRef], snapshot: str | None, props: bool, edges: bool,
                       aliases: bool, edges_max: int) -> _Call[list[Vertex]]:
    refs: list[Any] = []
    for v in vertices:
        name, is_alias = _ref(v)
        refs.append({"vertex": name, "vertex_alias": True} if is_alias else name)
    body = _read_body({"vertices": refs}, snapshot, props, edges, aliases, edges_max)

    def parse(j: Any) -> list[Vertex]:
        snap = _get(j, "snapshot", str)
        return [_vertex(v, snap) for v in _get(j, "vertices", list)]

    return _Call("POST", "/v1/vertices", body, True, parse)


def _get_edge_call(src: VertexRef, edge: str, snapshot: str | None) -> _Call[Edge]:
    name, is_alias = _ref(src)
    body: dict[str, Any] = {"src": name, "src_alias": is_alias, "edge": edge}
    if snapshot:
        body["snapshot"] = snapshot
    return _Call("POST", "/v1/edge", body, True, lambda j: _edge(_get(j, "edge", dict), _get(j, "snapshot", str)))


def _commit_call(ops: Sequence[Mapping[str, Any]], reads: Sequence[Read]) -> _Call[CommitResult]:
    return _Call("POST", "/v1/commit", {"reads": [r.to_json() for r in reads], "ops": list(ops)}, False,
                 lambda j: CommitResult([str(h) for h in _get(j, "handles", list)], _get(j, "snapshot", str)))


def _run_result(j: Any) -> Any:
    if not isinstance(j, dict) or "result" not in j:
        raise BadResponse(f"run answer lacks 'result': {j!r:.200}")
    return j["result"]


def _run_call(program: str, params: Any, at: str | None) -> _Call[Any]:
    path = "/v1/run/" + quote(program, safe="")
    if at:
        path += "?" + urlencode({"at": at})
    return _Call("POST", path, {} if params is None else params, True, _run_result)


def _programs_call() -> _Call[list[ProgramInfo]]:
    return _Call("GET", "/v1/programs", None, True,
                 lambda j: [ProgramInfo(_get(p, "name", str), _get(p, "description", str))
                            for p in _get(j, "programs", list)])


def _placement(j: Any) -> Placement:
    return Placement(
        base=_get(j, "base", int), shards=_get(j, "shards", int),
        slots=tuple(int(n) for n in _get(j, "slots", list)),
        moved=tuple(UnitHome(_get(m, "unit", str), _get(m, "shard", int), _get(m, "from", int),
                             tuple(int(h) for h in _get(m, "held", list)))
                    for m in _get(j, "moved", list)),
        rebalance=tuple(UnitMove(_get(m, "unit", str), _get(m, "from", int), _get(m, "to", int))
                        for m in _get(j, "rebalance", list)))


def _placement_call() -> _Call[Placement]:
    return _Call("GET", "/v1/placement", None, True, _placement)


def _move_unit_call(unit: str, shard: int) -> _Call[UnitMove]:
    return _Call("POST", "/v1/move", {"unit": unit, "shard": shard}, True,
                 lambda j: UnitMove(_get(j, "unit", str), _get(j, "from", int), _get(j, "to", int)))


def _status(j: Any) -> dict[str, int]:
    if not isinstance(j, dict):
        raise BadResponse(f"status answer is not an object: {j!r:.200}")
    return {str(k): int(v) for k, v in j.items() if isinstance(v, int)}


def _status_call() -> _Call[dict[str, int]]:
    return _Call("GET", "/v1/status", None, True, _status)


def _health_call() -> _Call[Any]:
    return _Call("GET", "/healthz", None, True, lambda j: j)


def _backoff_delay(attempt: int, backoff: float, backoff_max: float) -> float:
    """Seconds to wait before retry ``attempt`` (1, 2, …): capped
    exponential backoff with jitter."""
    return min(backoff_max, backoff * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.0)


# ---------------------------------------------------------------------------
# Transactions


class _TxState:
    """What a transaction holds whatever its I/O: the snapshot, the read set,
    the buffered writes and the retry bookkeeping. :class:`Transaction` and
    :class:`weft.aio.Transaction` add the reads and the commit."""

    def __init__(self, snapshot: str) -> None:
        #: The snapshot every read of this transaction is made at.
        self.snapshot = snapshot
        self._reads: dict[tuple[str, bool], Read] = {}
        self._ops: list[dict[str, Any]] = []
        self._done = False
        #: The commit's result, once committed.
        self.result: CommitResult | None = None
        # Set by Transactions: suppress a retryable error at the end of the
        # with block and remember it, so the loop can run the body again.
        self._absorb_retryable = False
        self._retry_error: WeftError | None = None

    # -- the read set

    def _check_open(self) -> None:
        if self._done:
            raise RuntimeError("transaction already committed or discarded")

    def _record(self, reads: list[Read]) -> None:
        # An entry seen before at this snapshot has the same version.
        for r in reads:
            self._reads.setdefault((r.vertex, r.alias), r)

    # -- writes

    def _add(self, op: str, vertex: VertexRef | None, **fields: Any) -> None:
        self._check_open()
        o: dict[str, Any] = {"op": op}
        if vertex is not None:
            name, is_alias = _ref(vertex)
            o["vertex"] = name
            if is_alias:
                o["vertex_alias"] = True
        o.update((k, v) for k, v in fields.items() if v is not None)
        self._ops.append(o)

    def create_vertex(self, handle: str | None = None) -> None:
        """Create a vertex; without a handle the server generates one
        (:attr:`CommitResult.handles` reports it)."""
        self._add("create_vertex", handle)

    def delete_vertex(self, vertex: VertexRef) -> None:
        """Delete a vertex with its edges (in and out), properties and aliases."""
        self._add("delete_vertex", vertex)

    def create_edge(self, src: VertexRef, dst: VertexRef, edge: str | None = None) -> None:
        """Create an edge from ``src`` to ``dst``; without a handle one is generated."""
        name, is_alias = _ref(dst)
        self._add("create_edge", src, edge=edge, dst=name, dst_alias=True if is_alias else None)

    def delete_edge(self, src: VertexRef, edge: str) -> None:
        """Delete an out-edge of ``src``."""
        self._add("delete_edge", src, edge=edge)

    def set_vertex_prop(self, vertex: VertexRef, key: str, value: Value) -> None:
        """Set a vertex property (the value is checked now)."""
        self._add("set_vertex_prop", vertex, key=key, value=encode_value(value))

    def delete_vertex_prop(self, vertex: VertexRef, key: str) -> None:
        """Delete a vertex property."""
        self._add("delete_vertex_prop", vertex, key=key)

    def set_edge_prop(self, src: VertexRef, edge: str, key: str, value: Value) -> None:
        """Set a property of an out-edge of ``src``."""
        self._add("set_edge_prop", src, edge=edge, key=key, value=encode_value(value))

    def delete_edge_prop(self, src: VertexRef, edge: str, key: str) -> None:
        """Delete a property of an out-edge of ``src``."""
        self._add("delete_edge_prop", src, edge=edge, key=key)

    def add_alias(self, vertex: VertexRef, alias: str) -> None:
        """Give a vertex an alias (aliases are unique across the graph)."""
        self._add("add_alias", vertex, alias=alias)

    def remove_alias(self, vertex: VertexRef, alias: str) -> None:
        """Remove one of a vertex's aliases."""
        self._add("remove_alias", vertex, alias=alias)

    @property
    def ops(self) -> list[dict[str, Any]]:
        """The buffered operations, in the API's JSON form (a copy)."""
        return [dict(o) for o in self._ops]

    @property
    def reads(self) -> list[Read]:
        """The recorded read set (a copy)."""
        return list(self._reads.values())

    # -- commit

    def _commit_call(self) -> _Call[CommitResult] | None:
        """Close the transaction for commit: the call that sends it, or None
        (:attr:`result` set) when it has no writes to send."""
        self._check_open()
        self._done = True
        if not self._ops:
            self.result = CommitResult([], self.snapshot)
            return None
        return _commit_call(self._ops, list(self._reads.values()))

    def discard(self) -> None:
        """Drop the buffered writes; the transaction can no longer be used."""
        self._done = True

    def _absorb(self, e: BaseException | None) -> bool:
        """Whether the retry loop takes e (remembered) and runs another attempt."""
        if self._absorb_retryable and isinstance(e, WeftError) and _retries_transaction(e):
            self._retry_error = e
            return True
        return False


class Transaction(_TxState):
    """One transaction: reads at :attr:`snapshot`, recorded with the versions
    they saw, and buffered writes, sent together by :meth:`commit`.

    Used as a context manager it commits when the block ends normally and
    discards the writes when the block raises.
    """

    def __init__(self, client: Client, snapshot: str) -> None:
        super().__init__(snapshot)
        self._client = client

    # -- reads

    def get_vertex(self, vertex: VertexRef, *, props: bool = True, edges: bool = True,
                   aliases: bool = True, edges_max: int = 0) -> Vertex:
        """Read a vertex and record the read. A missing vertex is not an
        error: it has ``exists`` False, and its absence is checked at commit."""
        self._check_open()
        v = self._client.get_vertex(vertex, snapshot=self.snapshot, props=props, edges=edges,
                                    aliases=aliases, edges_max=edges_max)
        self._record(v.reads)
        return v

    def get_vertices(self, vertices: Sequence[VertexRef], *, props: bool = True, edges: bool = True,
                     aliases: bool = True, edges_max: int = 0) -> list[Vertex]:
        """Read several vertices (at most 1,000) in one request and record
        the reads; one :class:`Vertex` per one asked, in order."""
        self._check_open()
        vs = self._client.get_vertices(vertices, snapshot=self.snapshot, props=props, edges=edges,
                                       aliases=aliases, edges_max=edges_max)
        for v in vs:
            self._record(v.reads)
        return vs

    def get_edge(self, src: VertexRef, edge: str) -> Edge:
        """Read an out-edge of ``src`` and record the read."""
        self._check_open()
        e = self._client.get_edge(src, edge, snapshot=self.snapshot)
        self._record(e.reads)
        return e

    # -- commit

    def commit(self) -> CommitResult:
        """Send the reads and writes. Raises :class:`Aborted` (or another
        retryable error) when the transaction should run again from the
        start. A transaction without writes sends nothing: its reads were all
        made at one snapshot, which is consistent already."""
        call = self._commit_call()
        if call is not None:
            self.result = self._client._do(call)
        assert self.result is not None
        return self.result

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if exc is None:
            try:
                self.commit()
            except WeftError as e:
                if self._absorb(e):
                    return False
                raise
            return False
        self.discard()
        return self._absorb(exc)

    def __repr__(self) -> str:
        return _tx_repr(self)


def _tx_repr(tx: _TxState) -> str:
    state = "committed" if tx.result is not None else "done" if tx._done else "open"
    return (f"<{type(tx).__module__.removesuffix('.client')}.{type(tx).__name__} @{tx.snapshot} {state}: "
            f"{len(tx._reads)} reads, {len(tx._ops)} writes>")


def _retries_transaction(e: WeftError) -> bool:
    """Whether e starts another attempt of a native transaction: a retryable
    error of the native API. Retryable errors of Kronos or of the key-value
    face raised inside the block are not the transaction's to retry (a kv
    QUORUM error may mean a PUT reached some replicas), so they leave the loop."""
    return e.retryable and not isinstance(e, (KronosError, KVError))


class Transactions:
    """Attempts at one transaction, from :meth:`Client.transaction`.

    Iterate to retry; each attempt is used with ``with``::

        for tx in client.transaction():
            with tx:
                ...

    The loop ends after the first attempt that commits. A retryable failure
    (:class:`Aborted`, :class:`SnapshotTooOld`, :class:`Overloaded`) inside
    the block or at its commit starts another attempt after a pause (capped
    exponential backoff with jitter); the last allowed attempt raises it.
    Any other exception leaves the loop at once, including a retryable error
    of Kronos or of the key-value face raised in the block. :attr:`result` holds the
    commit's result afterwards.

    Used directly as ``with client.transaction() as tx:`` it makes a single
    attempt, without retries.
    """

    def __init__(self, client: Client, retries: int) -> None:
        self._client = client
        self._retries = retries
        self._single: Transaction | None = None
        #: The commit's result once an attempt committed.
        self.result: CommitResult | None = None
        #: How many attempts were started.
        self.attempts = 0

    def __iter__(self) -> Iterator[Transaction]:
        for attempt in range(self._retries + 1):
            if attempt:
                self._client._pause(attempt)
            tx = self._client.begin()
            tx._absorb_retryable = attempt < self._retries
            self.attempts += 1
            yield tx
            if _attempt_done(self, tx):
                return

    def __enter__(self) -> Transaction:
        self._single = self._client.begin()
        self.attempts = 1
        return self._single

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        assert self._single is not None
        suppress = self._single.__exit__(exc_type, exc, tb)
        self.result = self._single.result
        return suppress


# ---------------------------------------------------------------------------
# The client


class _Loop(Protocol):
    """A retry loop (:class:`Transactions`, :class:`weft.aio.Transactions`)."""

    result: CommitResult | None


def _attempt_done(loop: _Loop, tx: _TxState) -> bool:
    """After an attempt of a retry loop: whether it committed (the loop
    ends), else it took a retryable error (another attempt follows)."""
    if tx.result is not None:
        loop.result = tx.result
        return True
    if tx._retry_error is None:
        raise RuntimeError("each attempt of client.transaction() must be used as `with tx:`")
    return False


def _check_retry_options(timeout: float, retries: int, backoff: float, backoff_max: float) -> None:
    if retries < 0 or backoff < 0 or backoff_max < backoff or timeout <= 0:
        raise ValueError("want retries >= 0, 0 <= backoff <= backoff_max and timeout > 0")


class Client:
    """A client of one Weft server's HTTP API (of a whole cluster's
    gatekeepers: :meth:`from_coordinator`).

    Args:
        url: The server's HTTP address, e.g. ``"http://127.0.0.1:7580"``.
        timeout: Seconds to wait for one answer.
        retries: How many times :meth:`transaction` and :meth:`run_transaction`
            run a transaction again after retryable failures (so at most
            ``retries + 1`` attempts).
        backoff: Seconds before the first retry; each retry doubles it, up to
            ``backoff_max``, and waits a random time between half of it and
            all of it.
    """

    def __init__(self, url: str = "http://127.0.0.1:7580", *, timeout: float = 30.0,
                 retries: int = 10, backoff: float = 0.002, backoff_max: float = 0.5) -> None:
        _check_retry_options(timeout, retries, backoff, backoff_max)
        transport = _Transport(url, timeout)
        self._http: _Requester = transport
        self._url = str(transport.url)
        self.retries = retries
        self.backoff = backoff
        self.backoff_max = backoff_max

    @classmethod
    def from_coordinator(cls, coord_urls: Sequence[str], *, timeout: float = 30.0,
                         attempt_timeout: float | None = None, retries: int = 10,
                         backoff: float = 0.002, backoff_max: float = 0.5,
                         refresh_every: float = 5.0) -> ClusterClient:
        """A client of every live gatekeeper of a cluster, found through its
        coordinator replicas' HTTP addresses (``weft coord --http-addr``):
        the same as ``ClusterClient(coord_urls, ...)``, which see."""
        return ClusterClient(coord_urls, timeout=timeout, attempt_timeout=attempt_timeout,
                             retries=retries, backoff=backoff, backoff_max=backoff_max,
                             refresh_every=refresh_every)

    def close(self) -> None:
        """Close every connection (the client reconnects if used again)."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<weft.{type(self).__name__} {self._url}>"

    def _pause(self, attempt: int) -> None:
        time.sleep(_backoff_delay(attempt, self.backoff, self.backoff_max))

    def _do(self, call: _Call[T]) -> T:
        return call.parse(self._http.request(call.method, call.path, call.body, idempotent=call.idempotent))

    # -- transactions

    def begin(self) -> Transaction:
        """Start a transaction at a fresh snapshot (commit it yourself)."""
        return Transaction(self, self._do(_begin_call()))

    def transaction(self, *, retries: int | None = None) -> Transactions:
        """Attempts at a transaction: ``for tx in client.transaction(): with tx: ...``
        (see :class:`Transactions`)."""
        return Transactions(self, self.retries if retries is None else retries)

    def run_transaction(self, fn: Callable[[Transaction], T], *, retries: int | None = None) -> T:
        """Run ``fn(tx)`` in a transaction and commit it, running it again on
        retryable failures; return what the committed attempt of ``fn``
        returned. ``fn`` must be safe to run more than once."""
        out: list[T] = []
        for tx in self.transaction(retries=retries):
            with tx:
                out[:] = [fn(tx)]
        return out[0]

    # -- reads and writes

    def get_vertex(self, vertex: VertexRef, *, snapshot: str | None = None, props: bool = True,
                   edges: bool = True, aliases: bool = True, edges_max: int = 0) -> Vertex:
        """Read a vertex at ``snapshot`` (default: a fresh one, reported in
        :attr:`Vertex.snapshot`). Outside a transaction nothing is recorded."""
        return self._do(_get_vertex_call(vertex, snapshot, props, edges, aliases, edges_max))

    def get_vertices(self, vertices: Sequence[VertexRef], *, snapshot: str | None = None, props: bool = True,
                     edges: bool = True, aliases: bool = True, edges_max: int = 0) -> list[Vertex]:
        """Read several vertices (at most 1,000) at one ``snapshot`` (default:
        a fresh one) in one request: one :class:`Vertex` per one asked, in
        order (``exists`` False for one not there). Each vertex's edges are
        bounded by ``edges_max``, which defaults to (and may be at most)
        100,000 divided by the vertices asked, capped at 10,000."""
        return self._do(_get_vertices_call(vertices, snapshot, props, edges, aliases, edges_max))

    def get_edge(self, src: VertexRef, edge: str, *, snapshot: str | None = None) -> Edge:
        """Read an out-edge of ``src`` at ``snapshot`` (default: a fresh one)."""
        return self._do(_get_edge_call(src, edge, snapshot))

    def commit(self, ops: Sequence[Mapping[str, Any]], reads: Sequence[Read] = ()) -> CommitResult:
        """Commit operations in the API's JSON form (``{"op": "create_vertex",
        "vertex": "a"}``, …) with a read set, in one request: the low-level
        call under :meth:`Transaction.commit`. Never retried automatically."""
        return self._do(_commit_call(ops, reads))

    # -- programs and status

    def run(self, program: str, /, **params: Any) -> Any:
        """Run a node program at a fresh snapshot with keyword parameters;
        return its result as plain Python objects."""
        return self.run_json(program, params)

    def run_at(self, snapshot: str, program: str, /, **params: Any) -> Any:
        """Run a node program at ``snapshot`` (a historic query when old)."""
        return self.run_json(program, params, at=snapshot)

    def run_json(self, program: str, params: Any = None, *, at: str | None = None) -> Any:
        """Run a node program with any JSON-serializable ``params`` (None: {})."""
        return self._do(_run_call(program, params, at))

    def programs(self) -> list[ProgramInfo]:
        """The programs :meth:`run` accepts."""
        return self._do(_programs_call())

    # -- placement

    def placement(self) -> Placement:
        """Where placement units live, and the plan that evens out the shards."""
        return self._do(_placement_call())

    def move_unit(self, unit: str, shard: int) -> UnitMove:
        """Move placement unit ``unit`` (``"s:<slot>"`` or ``"g:<group>"``) to
        ``shard`` online: transactions, reads and programs go on. Raises
        :class:`Aborted` when the unit changed while the move read it (call
        again), :class:`InvalidArgument` for a bad unit or shard or a shard
        still holding the copy the unit left there. Moving a unit where it
        is does nothing, so a retried call is safe."""
        return self._do(_move_unit_call(unit, shard))

    def status(self) -> dict[str, int]:
        """The server's health and size counters (vertices, edges, commits, …)."""
        return self._do(_status_call())

    def healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            self._do(_health_call())
        except WeftError:
            return False
        return True


# ---------------------------------------------------------------------------
# A cluster through its coordinator (weft.cluster documents it)


class ClusterClient(Client):
    """A :class:`~weft.client.Client` of every live gatekeeper of a cluster,
    found through the coordinator (the rules: :mod:`weft.cluster`).

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

    def __repr__(self) -> str:
        gks = ",".join(g.http_address for g in self.gatekeepers) or "none"
        return (f"<weft.ClusterClient coordinators={','.join(self._cluster._coord_urls)} "
                f"epoch={self.epoch} gatekeepers={gks}>")

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
