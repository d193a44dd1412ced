"""The official pydgraph client (from PyPI, unchanged) against Weft's Dgraph API.

A real ``weft serve --in-memory`` (``$WEFT_BIN`` or built, as for the other
tests) serves Dgraph's gRPC API on a free port with access control on, as
pydgraph's own test suite expects; the tests follow pydgraph's usage
patterns: login, alter, mutations with commit_now, transactions that
conflict and are retried, upsert blocks, queries with variables, RunDQL,
token refresh. pydgraph comes from the ``test`` extra
(``pip install -e '.[test]'``).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from servers import LOG_TAIL, free_ports

pydgraph = pytest.importorskip("pydgraph", reason="pydgraph is in the test extra: pip install -e '.[test]'")

START_TIMEOUT = 30.0  # seconds for /health to answer
SECRET = "a-test-secret-of-at-least-32-bytes-for-jwt"


@dataclass
class DgraphServer:
    grpc_addr: str
    http_url: str
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-LOG_TAIL:]


def _start(weft_bin: Path, root: Path, *extra: str) -> DgraphServer:
    weft_grpc, weft_http, dg_grpc, dg_http = free_ports(4)
    secret = root / "acl-secret"
    secret.write_text(SECRET)
    log_path = root / "serve.log"
    args = [str(weft_bin), "serve", "--in-memory",
            "--grpc-addr", f"127.0.0.1:{weft_grpc}", "--http-addr", f"127.0.0.1:{weft_http}",
            "--dgraph-grpc", f"127.0.0.1:{dg_grpc}", "--dgraph-http", f"127.0.0.1:{dg_http}",
            "--acl-secret-file", str(secret), *extra]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, cwd=root)
    srv = DgraphServer(f"127.0.0.1:{dg_grpc}", f"http://127.0.0.1:{dg_http}", proc, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"weft serve exited with {proc.returncode}:\n{srv.log_tail()}", pytrace=False)
        try:
            with urllib.request.urlopen(srv.http_url + "/health", timeout=1) as resp:
                if json.load(resp)[0]["status"] == "healthy":
                    return srv
        except (OSError, urllib.error.URLError):
            pass
        if time.monotonic() > deadline:
            _stop(srv)
            pytest.fail(f"weft serve not healthy after {START_TIMEOUT}s:\n{srv.log_tail()}", pytrace=False)
        time.sleep(0.1)


def _stop(srv: DgraphServer) -> None:
    if srv.proc.poll() is None:
        srv.proc.terminate()
        try:
            srv.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            srv.proc.kill()
            srv.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(weft_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DgraphServer]:
    srv = _start(weft_bin, tmp_path_factory.mktemp("dgraph"))
    try:
        yield srv
    finally:
        _stop(srv)


def _client(addr: str) -> tuple[pydgraph.DgraphClient, pydgraph.DgraphClientStub]:
    stub = pydgraph.DgraphClientStub(addr)
    client = pydgraph.DgraphClient(stub)
    client.login("groot", "password")
    return client, stub


@pytest.fixture
def client(server: DgraphServer) -> Iterator[pydgraph.DgraphClient]:
    c, stub = _client(server.grpc_addr)
    yield c
    stub.close()


def _uniq(prefix: str) -> str:
    """A name of the test's own: tests share a server and do not drop its data."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_login_wrong_password_and_version(server: DgraphServer) -> None:
    stub = pydgraph.DgraphClientStub(server.grpc_addr)
    try:
        client = pydgraph.DgraphClient(stub)
        with pytest.raises(grpc.RpcError) as err:
            client.login("groot", "not-the-password")
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "invalid username or password" in err.value.details()
        # Without a login every call is refused.
        with pytest.raises(grpc.RpcError) as err:
            client.txn(read_only=True).query("{ q(func: has(name)) { uid } }")
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        client.login("groot", "password")
        assert client.check_version().startswith("v25.")
    finally:
        stub.close()


def test_alter_mutate_commit_now_and_query_with_variables(client: pydgraph.DgraphClient) -> None:
    name, friend = _uniq("name"), _uniq("friend")
    client.alter(pydgraph.Operation(schema=f"{name}: string @index(exact) .\n{friend}: [uid] @reverse ."))
    txn = client.txn()
    resp = txn.mutate(set_obj={"uid": "_:alice", name: "Alice", friend: [{"uid": "_:bob", name: "Bob"}]},
                      commit_now=True)
    alice, bob = resp.uids["alice"], resp.uids["bob"]
    assert alice.startswith("0x") and bob.startswith("0x") and alice != bob

    query = f"""query people($who: string) {{
      q(func: eq({name}, $who)) {{ uid {name} {friend} {{ {name} }} }}
    }}"""
    res = client.txn(read_only=True).query(query, variables={"$who": "Alice"})
    assert json.loads(res.json) == {"q": [{"uid": alice, name: "Alice", friend: [{name: "Bob"}]}]}
    res = client.txn(read_only=True).query(query, variables={"$who": "Nobody"})
    assert json.loads(res.json) == {"q": []}
    # Reverse edges, maintained by the same mutation.
    res = client.txn(read_only=True).query(f'{{ q(func: uid({bob})) {{ ~{friend} {{ {name} }} }} }}')
    assert json.loads(res.json) == {"q": [{f"~{friend}": [{name: "Alice"}]}]}


def test_nquads_transaction_commit_and_discard(client: pydgraph.DgraphClient) -> None:
    name = _uniq("name")
    client.alter(pydgraph.Operation(schema=f"{name}: string @index(exact) ."))
    txn = client.txn()
    txn.mutate(set_nquads=f'_:a <{name}> "kept" .')
    txn.mutate(set_nquads=f'_:a <{name}> "kept too" .')
    q = f'{{ q(func: has({name})) {{ {name} }} }}'
    # The transaction sees its own writes; others do not before the commit.
    inside = sorted(n[name] for n in json.loads(txn.query(q).json)["q"])
    assert inside == ["kept", "kept too"]
    assert json.loads(client.txn(read_only=True).query(q).json) == {"q": []}
    txn.commit()
    got = sorted(n[name] for n in json.loads(client.txn(read_only=True).query(q).json)["q"])
    assert got == ["kept", "kept too"]

    txn = client.txn()
    txn.mutate(set_nquads=f'_:a <{name}> "discarded" .')
    txn.discard()
    got = sorted(n[name] for n in json.loads(client.txn(read_only=True).query(q).json)["q"])
    assert got == ["kept", "kept too"]


def test_conflicting_transactions_abort_and_retry(client: pydgraph.DgraphClient) -> None:
    name, balance = _uniq("name"), _uniq("balance")
    client.alter(pydgraph.Operation(schema=f"{name}: string @index(exact) .\n{balance}: int ."))
    uid = client.txn().mutate(set_obj={"uid": "_:a", name: "acct", balance: 100}, commit_now=True).uids["a"]
    q = f'{{ q(func: eq({name}, "acct")) {{ uid {balance} }} }}'

    def read(txn: pydgraph.Txn) -> int:
        return json.loads(txn.query(q).json)["q"][0][balance]

    t1, t2 = client.txn(), client.txn()
    b1, b2 = read(t1), read(t2)
    t1.mutate(set_obj={"uid": uid, balance: b1 - 10})
    t2.mutate(set_obj={"uid": uid, balance: b2 - 20})
    t2.commit()
    with pytest.raises(pydgraph.AbortedError):
        t1.commit()
    assert read(client.txn(read_only=True)) == 80

    # pydgraph's retry helper runs the withdrawal again, on a fresh snapshot.
    attempts = []

    def withdraw(txn: pydgraph.Txn) -> None:
        attempts.append(1)
        b = read(txn)
        if len(attempts) == 1:  # a concurrent writer commits in between, once
            other = client.txn()
            other.mutate(set_obj={"uid": uid, balance: read(other) - 5})
            other.commit()
        txn.mutate(set_obj={"uid": uid, balance: b - 10})
        txn.commit()

    pydgraph.run_transaction(client, withdraw, max_retries=5, base_delay=0.01)
    assert len(attempts) == 2
    assert read(client.txn(read_only=True)) == 65


def test_write_skew_is_prevented(client: pydgraph.DgraphClient) -> None:
    """Dgraph's snapshot isolation would commit both; Weft is serializable."""
    name, balance = _uniq("name"), _uniq("balance")
    client.alter(pydgraph.Operation(schema=f"{name}: string @index(exact) .\n{balance}: int ."))
    uids = client.txn().mutate(set_obj=[{"uid": "_:x", name: "x", balance: 50},
                                        {"uid": "_:y", name: "y", balance: 50}], commit_now=True).uids
    q = f'{{ q(func: eq({name}, ["x", "y"])) {{ {balance} }} }}'
    t1, t2 = client.txn(), client.txn()
    for txn, acct in ((t1, "x"), (t2, "y")):
        total = sum(n[balance] for n in json.loads(txn.query(q).json)["q"])
        assert total == 100
        txn.mutate(set_obj={"uid": uids[acct], balance: 50 - 90})
    t1.commit()
    with pytest.raises(pydgraph.AbortedError):
        t2.commit()


def test_upsert_block(client: pydgraph.DgraphClient) -> None:
    email, seen = _uniq("email"), _uniq("seen")
    client.alter(pydgraph.Operation(schema=f"{email}: string @index(exact) @upsert .\n{seen}: int ."))
    query = f'{{ u as var(func: eq({email}, "wrong@x.com")) }}'
    create = pydgraph.Mutation(set_nquads=f'_:u <{email}> "wrong@x.com" .'.encode(), cond="@if(eq(len(u), 0))")
    bump = pydgraph.Mutation(set_nquads=f'uid(u) <{seen}> "2" .'.encode(), cond="@if(eq(len(u), 1))")
    for _ in range(2):
        client.txn().do_request(pydgraph.Request(query=query, mutations=[create, bump], commit_now=True))
    res = client.txn(read_only=True).query(f'{{ q(func: eq({email}, "wrong@x.com")) {{ {email} {seen} }} }}')
    assert json.loads(res.json) == {"q": [{email: "wrong@x.com", seen: 2}]}

    # The same as one DQL text through RunDQL (pydgraph >= 25).
    up = f"""upsert {{
      query {{ v as var(func: eq({email}, "right@x.com")) }}
      mutation @if(eq(len(v), 0)) {{ set {{
        _:v <{email}> "right@x.com" .
      }} }}
    }}"""
    client.run_dql(up)
    client.run_dql(up)
    res = client.run_dql(f'query q($e: string) {{ q(func: eq({email}, $e)) {{ count(uid) }} }}',
                         vars={"$e": "right@x.com"}, read_only=True)
    assert json.loads(res.json) == {"q": [{"count": 1}]}


def test_drop_predicate_and_drop_all(client: pydgraph.DgraphClient) -> None:
    keep, gone = _uniq("keep"), _uniq("gone")
    client.set_schema(f"{keep}: string @index(exact) .\n{gone}: string @index(exact) .")
    client.txn().mutate(set_obj={keep: "k", gone: "g"}, commit_now=True)
    client.drop_predicate(gone)
    ro = client.txn(read_only=True)
    assert json.loads(ro.query(f'{{ q(func: eq({keep}, "k")) {{ {keep} {gone} }} }}').json) == {"q": [{keep: "k"}]}
    schema = json.loads(client.txn(read_only=True).query("schema {}").json)["schema"]
    preds = {p["predicate"] for p in schema}
    assert keep in preds and gone not in preds
    client.drop_all()
    schema = json.loads(client.txn(read_only=True).query("schema {}").json)["schema"]
    assert keep not in {p["predicate"] for p in schema}


def test_allocate_uids(client: pydgraph.DgraphClient) -> None:
    start, end = client.allocate_uids(100)
    start2, end2 = client.allocate_uids(10)
    assert end - start == 100 and end2 - start2 == 10 and start2 >= end


def test_expired_access_token_is_refreshed(weft_bin: Path, tmp_path: Path) -> None:
    """pydgraph logs in again with its refresh token on "Token is expired"."""
    srv = _start(weft_bin, tmp_path, "--acl-access-ttl", "2s")
    try:
        client, stub = _client(srv.grpc_addr)
        name = _uniq("name")
        client.alter(pydgraph.Operation(schema=f"{name}: string @index(exact) ."))
        first = client._jwt.access_jwt
        time.sleep(3)  # past the access token's lifetime (not a speed assertion)
        client.txn().mutate(set_obj={name: "after expiry"}, commit_now=True)
        assert client._jwt.access_jwt != first
        res = client.txn(read_only=True).query(f'{{ q(func: eq({name}, "after expiry")) {{ {name} }} }}')
        assert json.loads(res.json) == {"q": [{name: "after expiry"}]}
        stub.close()
    finally:
        _stop(srv)


# --- Namespaces (Dgraph's multi-tenancy) ------------------------------------
#
# A server of their own: the galaxy's drop_all drops every namespace's data,
# and these tests create and delete namespaces.

TENANT_SCHEMA = """
name: string @index(exact) .
email: string @index(exact) @upsert .
friend: [uid] @reverse .
type Person { name email friend }
"""


@pytest.fixture(scope="module")
def ns_server(weft_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DgraphServer]:
    srv = _start(weft_bin, tmp_path_factory.mktemp("dgraph-ns"))
    try:
        yield srv
    finally:
        _stop(srv)


def _tenant(addr: str, namespace: int, password: str = "password") -> tuple[pydgraph.DgraphClient, pydgraph.DgraphClientStub]:
    stub = pydgraph.DgraphClientStub(addr)
    client = pydgraph.DgraphClient(stub)
    client.login_into_namespace("groot", password, namespace)
    return client, stub


def _admin(srv: DgraphServer, token: str, query: str, variables: dict[str, object] | None = None) -> dict[str, object]:
    """POST /admin (GraphQL) with an access token; returns the decoded answer."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(srv.http_url + "/admin", data=body, method="POST",
                                 headers={"Content-Type": "application/json", "X-Dgraph-AccessToken": token})
    with urllib.request.urlopen(req, timeout=30) as resp:
        out: dict[str, object] = json.load(resp)
        return out


def _names(client: pydgraph.DgraphClient, query: str, block: str = "q") -> list[str]:
    res = json.loads(client.txn(read_only=True).query(query).json)
    return sorted(n.get("name", "") for n in res[block])


def test_namespaces_isolate_data_schema_and_upserts(ns_server: DgraphServer) -> None:
    galaxy, gstub = _client(ns_server.grpc_addr)
    stubs = [gstub]
    try:
        a, b = galaxy.create_namespace(), galaxy.create_namespace()
        assert a != b and a > 0 and b > 0
        assert {0, a, b} <= set(galaxy.list_namespaces())
        tenants = {}
        for ns in (0, a, b):
            if ns == 0:
                tenants[ns] = galaxy
                continue
            c, stub = _tenant(ns_server.grpc_addr, ns)
            stubs.append(stub)
            tenants[ns] = c
        for ns, c in tenants.items():
            c.alter(pydgraph.Operation(schema=TENANT_SCHEMA + ("only_b: int .\n" if ns == b else "")))
            c.txn().mutate(set_obj={"uid": "_:a", "name": f"alice-{ns}", "email": "a@x", "dgraph.type": "Person",
                                    "friend": [{"uid": "_:b", "name": f"bob-{ns}", "dgraph.type": "Person"}]},
                           commit_now=True)
        for ns, c in tenants.items():
            mine = [f"alice-{ns}", f"bob-{ns}"]
            assert _names(c, "{ q(func: has(name)) { name } }") == mine
            assert _names(c, "{ q(func: type(Person)) { name } }") == mine
            assert _names(c, f'{{ q(func: eq(name, "alice-{a}")) {{ name }} }}') == ([f"alice-{a}"] if ns == a else [])
            res = json.loads(c.txn(read_only=True).query(
                '{ q(func: eq(email, "a@x")) { expand(_all_) { name } } }').json)["q"]
            assert [r["name"] for r in res] == [f"alice-{ns}"]
            assert res[0]["friend"] == [{"name": f"bob-{ns}"}]
            res = json.loads(c.txn(read_only=True).query(
                f'{{ q(func: eq(name, "bob-{ns}")) {{ ~friend {{ name }} }} }}').json)["q"]
            assert res == [{"~friend": [{"name": f"alice-{ns}"}]}]
            preds = {p["predicate"] for p in json.loads(c.txn(read_only=True).query("schema {}").json)["schema"]}
            assert ("only_b" in preds) == (ns == b) and "email" in preds
        # An upsert keyed on email sees only its namespace's node.
        tenants[a].run_dql("""upsert {
          query { v as var(func: eq(email, "a@x")) }
          mutation @if(eq(len(v), 1)) { set { uid(v) <name> "upserted" . } }
        }""")
        for ns, c in tenants.items():
            want = "upserted" if ns == a else f"alice-{ns}"
            assert _names(c, '{ q(func: eq(email, "a@x")) { name } }') == [want]
        # drop_all by a namespace's guardian drops that namespace only.
        tenants[b].drop_all()
        for ns, c in tenants.items():
            assert (_names(c, "{ q(func: has(email)) { name } }") == []) == (ns == b)
    finally:
        for stub in stubs:
            stub.close()


def test_namespace_admin_over_http_and_access(ns_server: DgraphServer) -> None:
    galaxy, gstub = _client(ns_server.grpc_addr)
    token = galaxy._jwt.access_jwt
    stubs = [gstub]
    try:
        out = _admin(ns_server, token, "mutation add($pw: String!) { addNamespace(input: {password: $pw}) "
                                       "{ namespaceId message } }", {"pw": "tenant-secret"})
        ns = out["data"]["addNamespace"]["namespaceId"]  # type: ignore[index]
        assert out["data"]["addNamespace"]["message"] == "Created namespace successfully"  # type: ignore[index]
        other = galaxy.create_namespace()
        tenant, stub = _tenant(ns_server.grpc_addr, ns, "tenant-secret")
        stubs.append(stub)
        # Its groot's password is its own: it opens neither the other
        # namespace nor the galaxy, and the default one does not open it.
        for target, pw in ((other, "tenant-secret"), (0, "tenant-secret"), (ns, "password")):
            with pytest.raises(grpc.RpcError) as err:
                _tenant(ns_server.grpc_addr, target, pw)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # A namespace's guardian cannot manage namespaces.
        with pytest.raises(grpc.RpcError) as err:
            tenant.create_namespace()
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.RpcError) as err:
            tenant.drop_namespace(other)
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        out = _admin(ns_server, tenant._jwt.access_jwt,
                     f"mutation {{ deleteNamespace(input: {{namespaceId: {other}}}) {{ namespaceId }} }}")
        assert "guardians of the galaxy" in out["errors"][0]["message"]  # type: ignore[index]
        # Anything but the two mutations is refused, naming them.
        out = _admin(ns_server, token, "query { state { groups { id } } }")
        assert "addNamespace" in out["errors"][0]["message"]  # type: ignore[index]

        tenant.alter(pydgraph.Operation(schema=TENANT_SCHEMA))
        tenant.txn().mutate(set_obj={"name": "doomed"}, commit_now=True)
        out = _admin(ns_server, token, f"mutation {{ deleteNamespace(input: {{namespaceId: {ns}}}) "
                                       "{ namespaceId message } }")
        assert out["data"] == {"deleteNamespace": {"namespaceId": ns, "message": "Deleted namespace successfully"}}
        with pytest.raises(grpc.RpcError) as err:
            _tenant(ns_server.grpc_addr, ns, "tenant-secret")
        assert "was deleted" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            tenant.txn(read_only=True).query("{ q(func: has(name)) { name } }")
        assert "was deleted" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            galaxy.drop_namespace(0)
        assert "cannot be deleted" in err.value.details()
        assert ns not in galaxy.list_namespaces() and other in galaxy.list_namespaces()
        assert galaxy.create_namespace() > max(ns, other)  # ids are never reused
    finally:
        for stub in stubs:
            stub.close()
