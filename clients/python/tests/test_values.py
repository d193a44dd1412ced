"""What the clients hand back, without a server: reprs that show the
address and read well, results that iterate, context managers and close."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

import weft
from weft import Alias, Client, CommitResult, Edge, Read, Vertex


def test_client_repr_shows_the_address() -> None:
    assert repr(Client("http://127.0.0.1:7580")) == "<weft.Client http://127.0.0.1:7580>"
    assert repr(Client("127.0.0.1:7581/base/")) == "<weft.Client http://127.0.0.1:7581/base>"
    assert repr(weft.aio.Client("http://localhost:80")) == "<weft.aio.Client http://localhost:80>"


def test_kronos_repr_shows_the_addresses() -> None:
    pytest.importorskip("grpc", reason="KronosClient needs the kronos extra")
    k = weft.KronosClient("127.0.0.1:7100, 127.0.0.1:7101")
    assert repr(k) == "<weft.KronosClient 127.0.0.1:7100,127.0.0.1:7101>"
    with k:
        pass
    assert repr(k) == "<weft.KronosClient 127.0.0.1:7100,127.0.0.1:7101 closed>"
    k.close()  # again: idempotent


def test_client_context_manager_closes_and_close_is_idempotent() -> None:
    with Client("http://127.0.0.1:1") as c:
        assert not c.healthy()  # opens nothing that stays open
    c.close()
    c.close()


def test_vertex_and_edge_reprs_read_well() -> None:
    e = Edge("knows", "person/alice", "person/bob", True, {"weight": 0.5}, "AQACAQM",
             [Read("person/alice", False, "v1")])
    assert repr(e) == "<Edge knows person/alice -> person/bob {'weight': 0.5} @AQACAQM>"
    v = Vertex("person/alice", True, {"name": "Alice"}, ["alice"], [e, e], False, "AQACAQM")
    assert repr(v) == "<Vertex person/alice {'name': 'Alice'} aliases=['alice'] edges=2 @AQACAQM>"
    v.edges_truncated = True
    assert "edges=2+" in repr(v)
    assert repr(Vertex("x", False, snapshot="s1")) == "<Vertex x missing @s1>"
    assert repr(Edge("e", "x", "", False)) == "<Edge e of x missing>"
    big = Vertex("big", True, {f"k{i}": "v" * 100 for i in range(20)})
    assert len(repr(big)) < 400 and "..." in repr(big)
    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert repr(Vertex("t", True, {"at": when})) == "<Vertex t {'at': 2024-01-02T03:04:05+00:00}>"


def test_commit_result_iterates_over_its_handles() -> None:
    r = CommitResult(["a", "b"], "s")
    a, b = r
    assert (a, b) == ("a", "b") and len(r) == 2 and r[1] == "b" and list(r) == r.handles
    empty = CommitResult([], "s")
    assert len(empty) == 0 and empty  # true though it created nothing


def test_transaction_repr() -> None:
    from weft.client import Transaction
    tx = Transaction(Client(), "s9")
    tx.create_vertex("a")
    tx._record([Read("a", False, "v")])
    assert repr(tx) == "<weft.Transaction @s9 open: 1 reads, 1 writes>"
    tx.discard()
    assert repr(tx).endswith("done: 1 reads, 1 writes>")
    assert Alias("x") == Alias("x")


@pytest.mark.parametrize("url", ["ftp://x:1", "http://", "http://h:notaport"])
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="bad server URL"):
        Client(url)
    with pytest.raises(ValueError, match="bad server URL"):
        weft.aio.Client(url)
