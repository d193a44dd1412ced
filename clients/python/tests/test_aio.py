"""weft.aio against a real ``weft serve --in-memory --demo``, and its
HTTP/1.1 answer reader against scripted bytes.

The tests are plain functions that run their coroutine with ``asyncio.run``
(no pytest plugin). The async client shares the sync client's requests,
answer parsing and errors, so the checks here are that the calls arrive,
that the retry loop has the sync loop's semantics, and that the transport
(keep-alive, a bounded pool, chunked answers, close) behaves.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from servers import Server, start

import weft
import weft.aio
from weft.aio import _read_answer

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def server(weft_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start("serve", weft_bin, ["serve", "--in-memory", "--demo"], tmp_path_factory.mktemp("aio"))
    yield s
    s.stop()


@pytest.fixture
def ns() -> str:
    return f"aio-{uuid.uuid4().hex[:8]}/"


def test_reads_programs_and_status_match_the_sync_client(server: Server) -> None:
    async def main() -> None:
        async with weft.aio.Client(server.url, timeout=10) as c:
            assert repr(c) == f"<weft.aio.Client {server.url}>"
            assert await c.healthy()
            alice = await c.get_vertex(weft.Alias("alice"))
            with weft.Client(server.url) as sync:
                assert alice == sync.get_vertex(weft.Alias("alice"), snapshot=alice.snapshot)
                assert await c.run_at(alice.snapshot, "get_node", node="person/alice") == \
                    sync.run_at(alice.snapshot, "get_node", node="person/alice")
            assert alice.exists and alice.props["name"] == "Alice"
            edge = alice.edges[0]
            assert (await c.get_edge("person/alice", edge.handle, snapshot=alice.snapshot)).dst == edge.dst
            assert (await c.run("get_node", node="person/alice"))["props"]["name"] == "Alice"
            assert "get_node" in {p.name for p in await c.programs()}
            assert (await c.status())["vertices"] >= 51
            assert (await c.placement()).shards >= 1
            vs = await c.get_vertices(["person/bob", weft.Alias("alice")], snapshot=alice.snapshot)
            with weft.Client(server.url) as sync:
                assert vs == sync.get_vertices(["person/bob", weft.Alias("alice")], snapshot=alice.snapshot)
            assert vs[1] == alice
            tx = await c.begin()
            assert [v.handle for v in await tx.get_vertices(["person/bob", "person/nobody"])] == \
                ["person/bob", "person/nobody"]
    run(main())


def test_errors_are_the_sync_clients(server: Server) -> None:
    async def main() -> None:
        async with weft.aio.Client(server.url) as c:
            with pytest.raises(weft.UnknownProgram):
                await c.run("no-such-program")
            with pytest.raises(weft.InvalidArgument):
                await c.commit([{"op": "no_such_op"}])
    run(main())


def test_transaction_commits_and_reads_back(server: Server, ns: str) -> None:
    async def main() -> None:
        async with weft.aio.Client(server.url) as c:
            loop = c.transaction()
            async for tx in loop:
                async with tx:
                    assert not (await tx.get_vertex(ns + "ada")).exists
                    tx.create_vertex(ns + "ada")
                    tx.set_vertex_prop(ns + "ada", "born", 1815)
                    tx.add_alias(ns + "ada", ns + "countess")
            assert loop.result is not None and loop.result.handles == [ns + "ada"]
            ada = await c.get_vertex(weft.Alias(ns + "countess"))
            assert ada.handle == ns + "ada" and ada.props == {"born": 1815}
            res = await c.commit([{"op": "create_vertex", "vertex": ns + "bob"}])
            assert res.handles == [ns + "bob"]
            async with c.transaction() as tx:  # one attempt
                tx.create_edge(ns + "ada", ns + "bob", "knows")
            assert (await c.get_edge(ns + "ada", "knows")).dst == ns + "bob"
            with pytest.raises(weft.AlreadyExists):
                async with c.transaction() as tx:
                    tx.create_vertex(ns + "ada")
    run(main())


def test_concurrent_increments_retry_and_lose_nothing(server: Server, ns: str) -> None:
    workers, each = 8, 5

    async def bump(c: weft.aio.Client) -> int:
        attempts = 0
        for _ in range(each):
            loop = c.transaction(retries=100)
            async for tx in loop:
                async with tx:
                    n = (await tx.get_vertex(ns + "counter")).props.get("n", 0)
                    assert isinstance(n, int)
                    await asyncio.sleep(0)  # let the others read the same version
                    tx.set_vertex_prop(ns + "counter", "n", n + 1)
            attempts += loop.attempts
        return attempts

    async def main() -> None:
        async with weft.aio.Client(server.url, connections_max=4) as c:
            await c.commit([{"op": "create_vertex", "vertex": ns + "counter"}])
            attempts = await asyncio.gather(*(bump(c) for _ in range(workers)))
            assert (await c.get_vertex(ns + "counter")).props["n"] == workers * each
            assert sum(attempts) > workers * each, "no conflict was retried"
            assert len(c._http._idle) <= 4

            async def incr(tx: weft.aio.Transaction) -> int:
                n = (await tx.get_vertex(ns + "counter")).props["n"]
                assert isinstance(n, int)
                tx.set_vertex_prop(ns + "counter", "n", n + 1)
                return n + 1
            assert await c.run_transaction(incr) == workers * each + 1
    run(main())


def test_an_attempt_not_used_with_async_with_is_an_error(server: Server) -> None:
    async def main() -> None:
        async with weft.aio.Client(server.url) as c:
            with pytest.raises(RuntimeError, match="must be used as"):
                async for _tx in c.transaction():
                    pass
    run(main())


def test_close_is_idempotent_and_the_client_reconnects(server: Server) -> None:
    async def main() -> None:
        c = weft.aio.Client(server.url)
        assert await c.healthy()
        await c.close()
        await c.close()
        assert (await c.get_vertex("person/alice")).exists
        await c.close()
        assert not await weft.aio.Client("http://127.0.0.1:1", timeout=2).healthy()
        with pytest.raises(weft.Unavailable, match="nothing was sent"):
            await weft.aio.Client("http://127.0.0.1:1", timeout=2).commit([])
    run(main())


def _answer(raw: bytes) -> tuple[int, bytes, bool]:
    async def main() -> tuple[int, bytes, bool]:
        reader = asyncio.StreamReader()
        reader.feed_data(raw)
        reader.feed_eof()
        return await _read_answer(reader)
    return run(main())


@pytest.mark.parametrize("raw, want", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", (200, b"{}", True)),
    (b"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\nConnection: close\r\n\r\n{ }", (404, b"{ }", False)),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[1,\r\n9;x=y\r\n 2, 3, 4]\r\n0\r\nT: 1\r\n\r\n",
     (200, b"[1, 2, 3, 4]", True)),
    (b"HTTP/1.0 200 OK\r\n\r\n[true]", (200, b"[true]", False)),
    (b"HTTP/1.1 204 No Content\r\n\r\n", (204, b"", True)),
])
def test_read_answer(raw: bytes, want: tuple[int, bytes, bool]) -> None:
    assert _answer(raw) == want


@pytest.mark.parametrize("raw", [b"", b"SSH-2.0-x\r\n", b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
                                 b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                 b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}xx0\r\n\r\n"])
def test_read_answer_refuses_what_is_not_http(raw: bytes) -> None:
    with pytest.raises(weft.aio._BrokenAnswer):
        _answer(raw)


async def _scripted_server(answer: bytes | None) -> tuple[asyncio.Server, list[int]]:
    """A server that reads one request per connection, answers ``answer``
    (None: never) and closes the connection without saying so."""
    conns: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(1)
        await reader.readuntil(b"\r\n\r\n")
        if answer is None:
            await asyncio.sleep(5)
        else:
            writer.write(answer)
            await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    return srv, conns


@pytest.mark.parametrize("pause", [0.0, 0.01])  # found closed on sending, or before
def test_a_connection_the_server_closed_is_replaced(pause: float) -> None:
    async def main() -> None:
        srv, conns = await _scripted_server(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ntrue")
        port = srv.sockets[0].getsockname()[1]
        async with srv, weft.aio.Client(f"http://127.0.0.1:{port}") as c:
            for _ in range(3):
                assert await c.healthy()
                await asyncio.sleep(pause)
            assert len(conns) == 3
    run(main())


def test_no_answer_in_time_is_a_timeout() -> None:
    async def main() -> None:
        srv, _ = await _scripted_server(None)
        port = srv.sockets[0].getsockname()[1]
        async with srv, weft.aio.Client(f"http://127.0.0.1:{port}", timeout=0.2) as c:
            with pytest.raises(weft.Timeout, match="no answer within"):
                await c.status()
    run(main())
