"""Client of Weft's replicated key-value face (``weft kv serve``).

As in Voldemort (and in Nguyen et al., "Optimistic Execution in Key-Value
Store", §II-B), the *client* replicates: it learns the ring from any server's
metadata, sends each GET or PUT to the key's N replicas over HTTP/JSON, and
succeeds with R answers (GET) or W acknowledgements (PUT), making a second
round to the replicas that have not succeeded when the first round times out.
W + R > N with W > N/2 is sequential consistency; W + R ≤ N is eventual, and a
GET may then miss an acknowledged PUT.

A key holds a list of siblings ⟨version, value⟩, where a version is a vector
clock over client sessions. :meth:`KVClient.get` returns every concurrent
value and their versions (``context``); :meth:`KVClient.put` writes a version
that supersedes exactly the context it is given, so concurrent writers leave
siblings instead of losing updates; :meth:`KVClient.write` is get-then-put.

The client carries the servers' hybrid vector clocks between requests, so the
monitors and rollbacks of ``weft monitor`` see causality that flows through
it. When a rollback has discarded recent writes, the servers answer with a new
*generation* (:attr:`KVClient.generation`); while one runs they refuse
requests with ``PAUSED`` (:class:`KVPausedError`, retryable).

Errors are :class:`KVError` subclasses, each also the :mod:`weft.errors`
class of its condition where the other services share it
(:class:`KVOverloadedError` is a :class:`weft.Overloaded`,
:class:`KVUnavailableError` and :class:`KVQuorumError` are
:class:`weft.Unavailable`, :class:`KVInvalidError` a
:class:`weft.InvalidArgument`, :class:`KVConflictError` a
:class:`weft.Aborted`).

Example::

    from weft.kv import KVClient

    with KVClient(["127.0.0.1:7800"], r=2, w=2) as kv:
        kv.write("greeting", b"hello")
        print(kv.get("greeting").values)          # [b'hello']
        kv.put("greeting", b"hi", kv.get("greeting").context, w=3)

A client is safe to share between threads (one lock around its session
state); each client is one session with its own random 64-bit actor id.
"""

from __future__ import annotations

import base64
import bisect
import json
import random
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from .errors import (
    KVConflictError,
    KVError,
    KVInvalidError,
    KVOverloadedError,
    KVPausedError,
    KVQuorumError,
    KVTooManySiblingsError,
    KVUnavailableError,
    KVVersionReusedError,
    from_code,
)

__all__ = [
    "GetResult",
    "KVClient",
    "KVConflictError",
    "KVError",
    "KVInvalidError",
    "KVOverloadedError",
    "KVPausedError",
    "KVQuorumError",
    "KVTooManySiblingsError",
    "KVUnavailableError",
    "KVVersionReusedError",
    "Ring",
    "Sibling",
    "Version",
    "key_hash",
]

_MASK = (1 << 64) - 1
VERSION_ENTRIES_MAX = 64  # internal/kv.VersionEntriesMax
EPSILON_INFINITE = _MASK


# --- errors (the classes are weft.errors') ---------------------------------


def _error_of(code: str, message: str) -> KVError:
    exc = from_code(code, message, service="kv")
    assert isinstance(exc, KVError)
    return exc


# --- versions, siblings, ring ---------------------------------------------


@dataclass(frozen=True)
class Version:
    """A vector clock over client sessions: sorted ``(actor, counter)`` pairs."""

    entries: tuple[tuple[int, int], ...] = ()

    def get(self, actor: int) -> int:
        for a, c in self.entries:
            if a == actor:
                return c
        return 0

    def compare(self, other: Version) -> str:
        """``"before"`` (other descends from self), ``"after"``, ``"equal"`` or ``"concurrent"``."""
        mine, theirs = dict(self.entries), dict(other.entries)
        less = any(mine.get(a, 0) < c for a, c in theirs.items())
        greater = any(theirs.get(a, 0) < c for a, c in mine.items())
        if less and greater:
            return "concurrent"
        if less:
            return "before"
        if greater:
            return "after"
        return "equal"

    def to_json(self) -> dict[str, Any]:
        return {"entries": [{"actor": a, "counter": c} for a, c in self.entries]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Version:
        return Version(tuple((int(e["actor"]), int(e["counter"])) for e in d.get("entries") or []))

    @staticmethod
    def join(vs: Iterable[Version]) -> Version:
        out: dict[int, int] = {}
        for v in vs:
            for a, c in v.entries:
                out[a] = max(out.get(a, 0), c)
        return Version(tuple(sorted(out.items())))

    @staticmethod
    def descend(context: Sequence[Version], actor: int, counter: int,
                entries_max: int = VERSION_ENTRIES_MAX) -> Version:
        """The version a session writes: the join of ``context`` with its own dot.

        Pruned as the servers' Go code does (kv.Descend): beyond
        ``entries_max`` entries, the smallest counters other than the
        writer's go first.
        """
        entries = dict(Version.join(context).entries)
        entries[actor] = counter
        if len(entries) > entries_max:
            others = sorted(((c, a) for a, c in entries.items() if a != actor), reverse=True)
            kept = {a: c for c, a in others[:entries_max - 1]}
            kept[actor] = counter
            entries = kept
        return Version(tuple(sorted(entries.items())))

    def __str__(self) -> str:
        return "{" + ",".join(f"{a:x}:{c}" for a, c in self.entries) + "}"


@dataclass(frozen=True)
class Sibling:
    """One ⟨version, value⟩ of a key."""

    version: Version
    value: bytes

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version.to_json(), "value": base64.b64encode(self.value).decode()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Sibling:
        return Sibling(Version.from_json(d["version"]), base64.b64decode(d.get("value") or ""))


def merge_siblings(lists: Iterable[Sequence[Sibling]]) -> list[Sibling]:
    """Every version no other answered version descends from, once (kv.Merge)."""
    allsibs = [s for lst in lists for s in lst]
    out: list[Sibling] = []
    for i, s in enumerate(allsibs):
        keep = True
        for j, t in enumerate(allsibs):
            if i == j:
                continue
            r = s.version.compare(t.version)
            if r == "before" or (r == "equal" and j < i):
                keep = False
                break
        if keep:
            out.append(s)
    out.sort(key=lambda s: s.version.entries)
    return out


def _hash64(b: bytes) -> int:
    x = 14695981039346656037
    for c in b:
        x ^= c
        x = (x * 1099511628211) & _MASK
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK
    x ^= x >> 31
    return x


def key_hash(key: str) -> int:
    """The ring position of a key (kv.KeyHash: FNV-1a, then a 64-bit mixer)."""
    return _hash64(key.encode())


class Ring:
    """The consistent-hash ring of kv.Ring: ``vnodes`` tokens per server."""

    def __init__(self, servers: int, vnodes: int) -> None:
        self.servers = servers
        toks = sorted((_hash64(struct.pack(">QQ", s, v)), s) for s in range(servers) for v in range(vnodes))
        self._hashes = [h for h, _ in toks]
        self._servers = [s for _, s in toks]

    def replicas(self, key: str, n: int) -> list[int]:
        """The key's preference list: the first ``n`` distinct servers clockwise."""
        n = min(n, self.servers)
        i = bisect.bisect_left(self._hashes, key_hash(key))
        out: list[int] = []
        for k in range(len(self._servers)):
            s = self._servers[(i + k) % len(self._servers)]
            if s not in out:
                out.append(s)
                if len(out) == n:
                    break
        return out


# --- hybrid vector clocks (carried, never interpreted beyond merging) ------


def _hvc_at(h: dict[str, Any], k: int) -> int:
    entries, own_i, eps = h["entries"], h["self"], h["epsilon"]
    own = entries[own_i]
    if k == own_i:
        return int(own)
    floor = 0 if eps >= own else own - eps
    if k < len(entries) and entries[k] > floor:
        return int(entries[k])
    return int(floor)


def _merge_hvc(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """kv.MergeHVC: entry-wise maximum under each clock's ε rule."""
    if not b:
        return a
    if not a or len(a["entries"]) != len(b["entries"]) or a["epsilon"] != b["epsilon"]:
        return {"self": b["self"], "epsilon": b["epsilon"], "entries": list(b["entries"])}
    entries = [max(_hvc_at(a, k), _hvc_at(b, k)) for k in range(len(a["entries"]))]
    own = max(range(len(entries)), key=lambda k: (entries[k], -k))
    return {"self": own, "epsilon": a["epsilon"], "entries": entries}


# --- the client -----------------------------------------------------------


@dataclass
class GetResult:
    """A GET's answer: the key's concurrent values (none: never written).

    It iterates over :attr:`siblings` and its ``len`` is theirs; it is true
    even when the key holds nothing.
    """

    siblings: list[Sibling]
    acks: int
    round: int
    context: list[Version] = field(default_factory=list)

    def __iter__(self) -> Iterator[Sibling]:
        return iter(self.siblings)

    def __len__(self) -> int:
        return len(self.siblings)

    def __getitem__(self, i: int) -> Sibling:
        return self.siblings[i]

    def __bool__(self) -> bool:
        return True

    @property
    def values(self) -> list[bytes]:
        return [s.value for s in self.siblings]


class KVClient:
    """One session against a ``weft kv serve`` ring.

    :param servers: any servers' ``host:port``; the first that answers gives
        the metadata (ring, N, suggested R and W).
    :param r, w: the session's quorum (``None``: the servers' suggestion).
    :param round_timeout: seconds a round waits before the second round.
    :param follow_advice: adopt the R and W a rollback coordinator advises.
    """

    def __init__(self, servers: Sequence[str], *, r: int | None = None, w: int | None = None,
                 round_timeout: float = 0.5, actor: int | None = None, follow_advice: bool = False) -> None:
        if not servers:
            raise KVInvalidError("no server addresses")
        self._round = round_timeout
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="weft-kv")
        self._closed = False
        errors: list[str] = []
        meta: dict[str, Any] | None = None
        for addr in servers:
            try:
                meta = self._call(addr, "GET", "/v1/kv/meta", None, timeout=max(2 * round_timeout, 2.0))
                break
            except KVError as err:
                errors.append(f"{addr}: {err}")
        if meta is None:
            self._pool.shutdown(wait=False)
            raise KVUnavailableError("no server answered: " + "; ".join(errors))
        self.meta: dict[str, Any] = meta
        self.peers: list[str] = list(meta["peers"])
        self.n: int = int(meta["n"])
        self.ring = Ring(len(self.peers), int(meta["vnodes"]))
        self.r: int = r if r else int(meta["r"])
        self.w: int = w if w else int(meta["w"])
        self._follow = follow_advice
        self._advice: tuple[int, int] | None = None
        self._generation = int(meta.get("gen") or 0)
        self._observe_advice(meta.get("advice"))
        self._check_quorum(self.r, self.w)
        self.actor: int = actor if actor else random.getrandbits(64) or 1
        self._counter = 0
        self._hvc: dict[str, Any] | None = None

    # context manager and lifetime

    def __enter__(self) -> KVClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Wait for calls still reaching replicas, then release the threads.
        Idempotent; a closed client's quorum calls raise RuntimeError."""
        self._closed = True
        self._pool.shutdown(wait=True)

    def __repr__(self) -> str:
        closed = " closed" if self._closed else ""
        return f"<weft.KVClient {','.join(self.peers)} n={self.n} r={self.r} w={self.w}{closed}>"

    # public API

    @property
    def generation(self) -> int:
        """The highest rollback generation any server answered with.

        When it grows, a rollback discarded recent writes: work based on what
        this session read before must be redone from the restored state.
        """
        return self._generation

    @property
    def advice(self) -> tuple[int, int] | None:
        """The (R, W) the servers last advised, if any."""
        return self._advice

    def get(self, key: str, *, r: int | None = None) -> GetResult:
        """Read ``key`` from R of its replicas: every concurrent value."""
        need = r or self.r
        self._check_quorum(need, self.w)
        answers = self._quorum("get", key, need, lambda: {"key": key, "hvc": self._hvc})
        sibs = merge_siblings([[Sibling.from_json(s) for s in a["siblings"] or []] for _, a in answers[0]])
        return GetResult(sibs, len(answers[0]), answers[1], [s.version for s in sibs])

    def put(self, key: str, value: bytes | str, context: Sequence[Version] = (), *,
            w: int | None = None) -> Version:
        """Write ``value`` to W of ``key``'s replicas, superseding ``context``.

        An empty context is a blind write: existing values stay as siblings.
        Returns the version written.
        """
        need = w or self.w
        self._check_quorum(self.r, need)
        data = value.encode() if isinstance(value, str) else bytes(value)
        with self._lock:
            nxt = max([self._counter] + [v.get(self.actor) for v in context]) + 1
            self._counter = nxt  # used even if the PUT fails: its dot may be on some replicas
        version = Version.descend(context, self.actor, nxt)
        sib = Sibling(version, data).to_json()
        self._quorum("put", key, need, lambda: {"key": key, "sibling": sib, "hvc": self._hvc})
        return version

    def write(self, key: str, value: bytes | str, *, r: int | None = None, w: int | None = None) -> Version:
        """Read ``key``, then write ``value`` superseding every sibling read."""
        return self.put(key, value, self.get(key, r=r).context, w=w)

    def txn(self, reads: Sequence[str] = (), writes: Sequence[tuple[str, bytes | str] | tuple[str, bytes | str, bool]] = (),
            *, server: int | None = None, timeout: float = 30.0) -> dict[str, list[Sibling]]:
        """Run a multi-key transaction (the Kronos transactional mode; the
        servers must run with ``--kronos``): read ``reads`` and apply
        ``writes`` atomically, serialisably with every other transaction.

        Each write is ``(key, value)`` or ``(key, value, add)``; with ``add``
        the value is a signed decimal integer added to the key's current value
        (read as one; absent is 0). ``server`` coordinates it (default: a
        random one). Returns each read key's siblings at the transaction's
        place in the serial order. Raises :class:`KVConflictError` when it
        aborted without effect (retry), :class:`KVUnavailableError` when its
        outcome is unknown. Transactional writes run on each key's primary
        replica, bypassing the session's quorum; the primary answers once W
        replicas of the key hold them (the servers' ``--w``) and pushes them
        to the rest of the key's N replicas from a durable outbox.
        """
        ws: list[dict[str, Any]] = []
        for w in writes:
            key, value = w[0], w[1]
            data = value.encode() if isinstance(value, str) else bytes(value)
            item: dict[str, Any] = {"key": key, "value": base64.b64encode(data).decode()}
            if len(w) > 2 and w[2]:
                item["add"] = True
            ws.append(item)
        i = random.randrange(len(self.peers)) if server is None else server
        out = self._call(self.peers[i], "POST", "/v1/kv/txn", {"reads": list(reads), "writes": ws}, timeout=timeout)
        return {k: [Sibling.from_json(s) for s in v or []] for k, v in (out.get("reads") or {}).items()}

    def get_replica(self, server: int, key: str) -> list[Sibling]:
        """``key``'s siblings on server ``server`` alone (R = 1 directed at
        one replica; no read repair): for checking what each replica holds."""
        out = self._call(self.peers[server], "POST", "/v1/kv/get", {"key": key}, timeout=2 * self._round)
        return [Sibling.from_json(s) for s in out.get("siblings") or []]

    def stats(self, server: int) -> dict[str, Any]:
        """Server ``server``'s counters (``GET /v1/kv/stats``), among them
        ``outbox``: transactional writes not yet acknowledged by a replica."""
        return self._call(self.peers[server], "GET", "/v1/kv/stats", None, timeout=2 * self._round)

    def candidates(self, server: int, after: int = 0, limit: int = 1024) -> dict[str, Any]:
        """One page of server ``server``'s detector candidates (monitoring)."""
        return self._call(self.peers[server], "GET", f"/v1/kv/candidates?after={after}&max={limit}", None,
                          timeout=2 * self._round)

    # internals

    def _check_quorum(self, r: int, w: int) -> None:
        if not (1 <= r <= self.n and 1 <= w <= self.n):
            raise KVInvalidError(f"R={r} W={w}: each must be in [1, N={self.n}]")

    def _observe(self, ans: dict[str, Any]) -> None:
        with self._lock:
            self._generation = max(self._generation, int(ans.get("gen") or 0))
            self._hvc = _merge_hvc(self._hvc, ans.get("hvc"))
        self._observe_advice(ans.get("advice"))

    def _observe_advice(self, adv: dict[str, Any] | None) -> None:
        if not adv:
            return
        pair = (int(adv["r"]), int(adv["w"]))
        with self._lock:
            self._advice = pair
            if self._follow:
                self.r, self.w = pair

    def _quorum(self, kind: str, key: str, need: int,
                body: Any) -> tuple[list[tuple[int, dict[str, Any]]], int]:
        """Send to the key's replicas; succeed with ``need`` answers in two rounds."""
        if self._closed:
            raise RuntimeError("kv: client is closed")
        replicas = self.ring.replicas(key, self.n)
        path = "/v1/kv/get" if kind == "get" else "/v1/kv/put"
        ok: list[tuple[int, dict[str, Any]]] = []
        failed: dict[int, KVError] = {}
        pending: dict[Future[dict[str, Any]], int] = {}
        for rnd in (1, 2):
            for s in replicas:
                if any(s == o for o, _ in ok) or s in pending.values():
                    continue
                if s in failed and not failed[s].retryable:
                    continue
                failed.pop(s, None)
                pending[self._pool.submit(self._call, self.peers[s], "POST", path, body(), 2 * self._round)] = s
            deadline = time.monotonic() + self._round
            while pending and len(ok) < need:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                done, _ = wait(list(pending), timeout=left, return_when=FIRST_COMPLETED)
                for f in done:
                    s = pending.pop(f)
                    try:
                        ans = f.result()
                    except KVError as err:
                        failed[s] = err
                        continue
                    self._observe(ans)
                    ok.append((s, ans))
            if len(ok) >= need:
                return ok, rnd
            if len(ok) + len(pending) + sum(1 for e in failed.values() if e.retryable) < need:
                break
        detail = "; ".join(f"s{s}: {e}" for s, e in sorted(failed.items()))
        msg = f"{kind} of {key!r}: {len(ok)} of {need} answers in 2 rounds (N={self.n})" + (f"; {detail}" if detail else "")
        refused = [e for e in failed.values() if not e.retryable]
        if refused:
            raise type(refused[0])(f"{refused[0]} ({msg})", code=refused[0].code)
        if any(isinstance(e, KVPausedError) for e in failed.values()):
            raise KVPausedError(msg, failed)
        raise KVQuorumError(msg, failed)

    def _call(self, addr: str, method: str, path: str, body: Any, timeout: float) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://{addr}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                out: dict[str, Any] = json.loads(resp.read())
                return out
        except urllib.error.HTTPError as err:
            try:
                e = json.loads(err.read())["error"]
            except (ValueError, KeyError, TypeError):
                raise KVUnavailableError(f"{addr}: HTTP {err.code}") from None
            raise _error_of(str(e.get("code", "")), str(e.get("message", ""))) from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise KVUnavailableError(f"{addr}: {err}") from None
