"""An asyncio client of Weft's graph database: :class:`weft.Client`'s API, awaited.

::

    import weft.aio

    async with weft.aio.Client("http://127.0.0.1:7580") as client:
        async for tx in client.transaction():      # retried on retryable aborts
            async with tx:                         # commits when the block ends
                ada = await tx.get_vertex(weft.Alias("ada"))
                tx.set_vertex_prop(ada.handle, "visits", ada.props.get("visits", 0) + 1)
        print(await client.run("get_node", node="person/ada"))

The calls, their answers, the errors and the retry rules are
:class:`weft.Client`'s (:mod:`weft.client`): reads and programs are
awaited, writes are buffered by the transaction without I/O, and **the
body of ``async for tx in client.transaction()`` runs again from the start
on each retry**. Only the transport differs: HTTP/1.1 over asyncio streams,
with up to ``connections_max`` kept-alive connections, each carrying one
request at a time (no third-party dependency).

A :class:`Client` belongs to the event loop it is first used on; use one per
loop. It is safe to share between that loop's tasks.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, TypeVar

from ._http import _IDLE_REUSE_MAX, URL, _NotSent, decode_answer, encode_body, parse_url
from .client import (
    CommitResult,
    Edge,
    Placement,
    ProgramInfo,
    Read,
    UnitMove,
    Value,
    Vertex,
    VertexRef,
    _attempt_done,
    _backoff_delay,
    _begin_call,
    _Call,
    _check_retry_options,
    _commit_call,
    _get_edge_call,
    _get_vertex_call,
    _get_vertices_call,
    _health_call,
    _move_unit_call,
    _placement_call,
    _programs_call,
    _run_call,
    _status_call,
    _tx_repr,
    _TxState,
)
from .errors import BadResponse, Timeout, Unavailable, WeftError

__all__ = ["Client", "Transaction", "Transactions", "Value"]

T = TypeVar("T")

# Limits of one answer: header lines, and body bytes (an answer above it is
# refused as BadResponse rather than held in memory).
_HEADERS_MAX: Final = 100
_ANSWER_BYTES_MAX: Final = 1 << 28


# ---------------------------------------------------------------------------
# HTTP/1.1 over asyncio streams


class _BrokenAnswer(Exception):
    """The connection closed or the bytes are not an HTTP/1.1 answer."""


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.last_used = time.monotonic()
        self.used = False

    def stale(self) -> bool:
        """Whether the server closed it, or it idled long enough that it may."""
        return self.reader.at_eof() or time.monotonic() - self.last_used > _IDLE_REUSE_MAX

    def close(self) -> None:
        self.writer.close()


async def _read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, keep-alive) of one HTTP/1.1 answer."""
    line = await reader.readline()
    if not line:
        raise _BrokenAnswer("the server closed the connection")
    parts = line.decode("latin-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise _BrokenAnswer(f"not an HTTP answer: {line[:100]!r}")
    status, keep = int(parts[1]), parts[0] == "HTTP/1.1"
    headers: dict[str, str] = {}
    for _ in range(_HEADERS_MAX + 1):
        line = await reader.readline()
        if line in (b"\r\n", b"\n"):
            break
        if not line:
            raise _BrokenAnswer("the server closed the connection in the headers")
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise _BrokenAnswer(f"malformed header {line[:100]!r}")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _BrokenAnswer(f"more than {_HEADERS_MAX} header lines")
    if headers.get("connection", "").lower() == "close":
        keep = False
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size_line = await reader.readline()
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise _BrokenAnswer(f"malformed chunk size {size_line[:100]!r}") from None
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                break
            if len(body) + size > _ANSWER_BYTES_MAX:
                raise BadResponse(f"answer larger than {_ANSWER_BYTES_MAX} bytes", status=status)
            body += await reader.readexactly(size)
            if await reader.readexactly(2) != b"\r\n":
                raise _BrokenAnswer("a chunk does not end with CRLF")
        return status, bytes(body), keep
    if "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise _BrokenAnswer(f"malformed Content-Length {headers['content-length']!r}") from None
        if not 0 <= length <= _ANSWER_BYTES_MAX:
            raise BadResponse(f"answer of {length} bytes (the most is {_ANSWER_BYTES_MAX})", status=status)
        return status, await reader.readexactly(length), keep
    if status in (204, 304) or 100 <= status < 200:
        return status, b"", keep
    body_to_eof = await reader.read(_ANSWER_BYTES_MAX + 1)  # no length: the body ends with the connection
    if len(body_to_eof) > _ANSWER_BYTES_MAX:
        raise BadResponse(f"answer larger than {_ANSWER_BYTES_MAX} bytes", status=status)
    return status, body_to_eof, False


class _AsyncTransport:
    """One server over HTTP/1.1: up to ``connections_max`` kept-alive
    connections, one request on each at a time. The asyncio twin of
    ``weft._http._Transport``: the same encoding, answers and errors."""

    def __init__(self, url: str, timeout: float, connections_max: int) -> None:
        if connections_max < 1:
            raise ValueError("want connections_max >= 1")
        self.url: URL = parse_url(url)
        self.timeout = timeout
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self._slots: asyncio.Semaphore | None = None  # made on first use, in the running loop
        self._connections_max = connections_max

    def _semaphore(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._connections_max)
        return self._slots

    async def _take(self, what: str) -> _Conn:
        while self._idle:
            c = self._idle.pop()
            if not c.stale():
                return c
            c.close()
        ctx = ssl.create_default_context() if self.url.scheme == "https" else None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.url.host, self.url.port, ssl=ctx), self.timeout)
        except (OSError, asyncio.TimeoutError) as e:
            raise _NotSent(f"{what}: cannot connect to {self.url.host}:{self.url.port}: {e!r} "
                           "(nothing was sent)", code="TRANSPORT") from e
        return _Conn(reader, writer)

    async def request(self, method: str, path: str, body: Any = None, *, idempotent: bool) -> Any:
        """Send one request; return the decoded JSON answer or raise WeftError
        (as ``_Transport.request``: a reused connection found closed is
        replaced, and an idempotent request sent again on the fresh one)."""
        data, headers = encode_body(body)
        head = [f"{method} {self.url.prefix}{path} HTTP/1.1", f"Host: {self.url.host}:{self.url.port}",
                f"Content-Length: {len(data or b'')}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b"")
        what = f"{method} {path}"
        async with self._semaphore():
            for attempt in (0, 1):
                c = await self._take(what)
                reused = c.used
                self._busy.add(c)
                try:
                    c.writer.write(request)
                    status, raw, keep = await asyncio.wait_for(self._exchange(c), self.timeout)
                except asyncio.TimeoutError as e:
                    c.close()
                    raise Timeout(f"{what}: no answer within {self.timeout}s", code="TRANSPORT") from e
                except (_BrokenAnswer, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
                    c.close()
                    if reused and idempotent and attempt == 0:
                        continue
                    outcome = "" if idempotent else " (the commit's outcome is unknown)"
                    raise Unavailable(f"{what}: {e!r}{outcome}", code="TRANSPORT") from e
                except BaseException:
                    c.close()  # cancelled, or an answer too large: the connection is mid-answer
                    raise
                finally:
                    self._busy.discard(c)
                c.used, c.last_used = True, time.monotonic()
                if keep:
                    self._idle.append(c)
                else:
                    c.close()
                return decode_answer(method, path, status, raw)
        raise AssertionError("unreachable")

    @staticmethod
    async def _exchange(c: _Conn) -> tuple[int, bytes, bool]:
        await c.writer.drain()
        return await _read_answer(c.reader)

    async def close(self) -> None:
        every = self._idle + list(self._busy)
        self._idle, self._busy = [], set()
        for c in every:
            c.close()
        for c in every:
            try:
                await c.writer.wait_closed()
            except (OSError, asyncio.CancelledError, RuntimeError):
                pass


# ---------------------------------------------------------------------------
# Transactions


class Transaction(_TxState):
    """:class:`weft.Transaction` with awaited reads and commit; writes are
    buffered (not awaited). ``async with tx:`` commits when the block ends
    normally and discards the writes when it raises."""

    def __init__(self, client: Client, snapshot: str) -> None:
        super().__init__(snapshot)
        self._client = client

    async def get_vertex(self, vertex: VertexRef, *, props: bool = True, edges: bool = True,
                         aliases: bool = True, edges_max: int = 0) -> Vertex:
        """Read a vertex and record the read (missing: ``exists`` False)."""
        self._check_open()
        v = await self._client.get_vertex(vertex, snapshot=self.snapshot, props=props, edges=edges,
                                          aliases=aliases, edges_max=edges_max)
        self._record(v.reads)
        return v

    async def get_vertices(self, vertices: Sequence[VertexRef], *, props: bool = True, edges: bool = True,
                           aliases: bool = True, edges_max: int = 0) -> list[Vertex]:
        """Read several vertices (at most 1,000) in one request and record the reads."""
        self._check_open()
        vs = await self._client.get_vertices(vertices, snapshot=self.snapshot, props=props, edges=edges,
                                             aliases=aliases, edges_max=edges_max)
        for v in vs:
            self._record(v.reads)
        return vs

    async def get_edge(self, src: VertexRef, edge: str) -> Edge:
        """Read an out-edge of ``src`` and record the read."""
        self._check_open()
        e = await self._client.get_edge(src, edge, snapshot=self.snapshot)
        self._record(e.reads)
        return e

    async def commit(self) -> CommitResult:
        """Send the reads and writes (see :meth:`weft.Transaction.commit`)."""
        call = self._commit_call()
        if call is not None:
            self.result = await self._client._do(call)
        assert self.result is not None
        return self.result

    async def __aenter__(self) -> Transaction:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool:
        if exc is None:
            try:
                await self.commit()
            except WeftError as e:
                if self._absorb(e):
                    return False
                raise
            return False
        self.discard()
        return self._absorb(exc)

    def __repr__(self) -> str:
        return _tx_repr(self)


class Transactions:
    """Attempts at one transaction, from :meth:`Client.transaction`:
    ``async for tx in client.transaction(): async with tx: ...``, with
    :class:`weft.Transactions`' rules. ``async with client.transaction() as
    tx:`` makes a single attempt."""

    def __init__(self, client: Client, retries: int) -> None:
        self._client = client
        self._retries = retries
        self._single: Transaction | None = None
        #: The commit's result once an attempt committed.
        self.result: CommitResult | None = None
        #: How many attempts were started.
        self.attempts = 0

    async def __aiter__(self) -> AsyncIterator[Transaction]:
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(_backoff_delay(attempt, self._client.backoff, self._client.backoff_max))
            tx = await self._client.begin()
            tx._absorb_retryable = attempt < self._retries
            self.attempts += 1
            yield tx
            if _attempt_done(self, tx):
                return

    async def __aenter__(self) -> Transaction:
        self._single = await self._client.begin()
        self.attempts = 1
        return self._single

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool:
        assert self._single is not None
        suppress = await self._single.__aexit__(exc_type, exc, tb)
        self.result = self._single.result
        return suppress


# ---------------------------------------------------------------------------
# The client


class Client:
    """An asyncio client of one Weft server's HTTP API.

    Args:
        url: The server's HTTP address, e.g. ``"http://127.0.0.1:7580"``.
        timeout: Seconds to wait for one answer (and to connect).
        retries, backoff, backoff_max: As for :class:`weft.Client`.
        connections_max: Kept-alive connections at most; more concurrent
            calls wait for one.
    """

    def __init__(self, url: str = "http://127.0.0.1:7580", *, timeout: float = 30.0, retries: int = 10,
                 backoff: float = 0.002, backoff_max: float = 0.5, connections_max: int = 16) -> None:
        _check_retry_options(timeout, retries, backoff, backoff_max)
        self._http = _AsyncTransport(url, timeout, connections_max)
        self.retries = retries
        self.backoff = backoff
        self.backoff_max = backoff_max

    def __repr__(self) -> str:
        return f"<weft.aio.Client {self._http.url}>"

    async def close(self) -> None:
        """Close every connection (the client reconnects if used again); idempotent."""
        await self._http.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def _do(self, call: _Call[T]) -> T:
        return call.parse(await self._http.request(call.method, call.path, call.body,
                                                   idempotent=call.idempotent))

    # -- transactions

    async def begin(self) -> Transaction:
        """Start a transaction at a fresh snapshot (commit it yourself)."""
        return Transaction(self, await self._do(_begin_call()))

    def transaction(self, *, retries: int | None = None) -> Transactions:
        """Attempts at a transaction: ``async for tx in client.transaction(): async with tx: ...``."""
        return Transactions(self, self.retries if retries is None else retries)

    async def run_transaction(self, fn: Callable[[Transaction], Awaitable[T]], *,
                              retries: int | None = None) -> T:
        """Await ``fn(tx)`` in a transaction and commit it, again on
        retryable failures; return what the committed attempt returned."""
        out: list[T] = []
        async for tx in self.transaction(retries=retries):
            async with tx:
                out[:] = [await fn(tx)]
        return out[0]

    # -- reads and writes

    async def get_vertex(self, vertex: VertexRef, *, snapshot: str | None = None, props: bool = True,
                         edges: bool = True, aliases: bool = True, edges_max: int = 0) -> Vertex:
        """Read a vertex at ``snapshot`` (default: a fresh one)."""
        return await self._do(_get_vertex_call(vertex, snapshot, props, edges, aliases, edges_max))

    async def get_vertices(self, vertices: Sequence[VertexRef], *, snapshot: str | None = None,
                           props: bool = True, edges: bool = True, aliases: bool = True,
                           edges_max: int = 0) -> list[Vertex]:
        """Read several vertices (at most 1,000) at one ``snapshot`` (default: a fresh one) in one request."""
        return await self._do(_get_vertices_call(vertices, snapshot, props, edges, aliases, edges_max))

    async def get_edge(self, src: VertexRef, edge: str, *, snapshot: str | None = None) -> Edge:
        """Read an out-edge of ``src`` at ``snapshot`` (default: a fresh one)."""
        return await self._do(_get_edge_call(src, edge, snapshot))

    async def commit(self, ops: Sequence[Mapping[str, Any]], reads: Sequence[Read] = ()) -> CommitResult:
        """Commit operations in the API's JSON form with a read set, in one
        request (never retried automatically)."""
        return await self._do(_commit_call(ops, reads))

    # -- programs and status

    async def run(self, program: str, /, **params: Any) -> Any:
        """Run a node program at a fresh snapshot with keyword parameters."""
        return await self._do(_run_call(program, params, None))

    async def run_at(self, snapshot: str, program: str, /, **params: Any) -> Any:
        """Run a node program at ``snapshot``."""
        return await self._do(_run_call(program, params, snapshot))

    async def run_json(self, program: str, params: Any = None, *, at: str | None = None) -> Any:
        """Run a node program with any JSON-serializable ``params`` (None: {})."""
        return await self._do(_run_call(program, params, at))

    async def programs(self) -> list[ProgramInfo]:
        """The programs :meth:`run` accepts."""
        return await self._do(_programs_call())

    async def placement(self) -> Placement:
        """Where placement units live (see :meth:`weft.Client.placement`)."""
        return await self._do(_placement_call())

    async def move_unit(self, unit: str, shard: int) -> UnitMove:
        """Move a placement unit online (see :meth:`weft.Client.move_unit`)."""
        return await self._do(_move_unit_call(unit, shard))

    async def status(self) -> dict[str, int]:
        """The server's health and size counters."""
        return await self._do(_status_call())

    async def healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            await self._do(_health_call())
        except WeftError:
            return False
        return True
