"""weft.kronos against a real ``weft kronos`` server (Kronos paper §2: the API;
dissertation ch.2: GC and clock-named events).

Each test creates its own events, so tests sharing the module's server do not
interfere; tests that touch global state (clock chains, the cleanup watermark,
replica failure) get a server or cluster of their own.
"""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from servers import Cluster, wait_for_leader

import weft._kronos_wire as kronos_wire
from weft import (
    AssignResult,
    ClockInvalidError,
    CollectedError,
    ErrorCode,
    KronosClient,
    KronosError,
    MustConflictError,
    Order,
    RefUnderflowError,
    SelfOrderError,
    Strength,
    UnknownEventError,
    VClock,
)

BEFORE, AFTER, CONCURRENT, UNKNOWN = (
    Order.BEFORE, Order.AFTER, Order.CONCURRENT, Order.UNKNOWN_EVENT)

# Ids start at 1 and increase by one per event: no test gets near this one.
NEVER_CREATED = 2**62


# -- §2 API: create_event, query_order, assign_order -------------------------


def test_create_query_assign_basics(client: KronosClient) -> None:
    a, b, c = client.create_events(3)
    assert len({a, b, c}) == 3 and a < b < c
    assert client.query_order([(a, b), (b, a)]) == [CONCURRENT, CONCURRENT]

    assert client.assign_order([(a, "->", b, "must")]) == [AssignResult(BEFORE, False)]
    # The enum spelling, and AFTER: (c <- b) means b -> c.
    assert client.assign_order([(c, Order.AFTER, b, Strength.MUST)]) == [AssignResult(AFTER, False)]

    assert client.query_order([(a, b), (b, a), (a, c), (c, a), (a, NEVER_CREATED)]) == [
        BEFORE, AFTER, BEFORE, AFTER, UNKNOWN]  # a -> c is transitive, never assigned
    d = client.create_event()
    assert d > c
    assert client.query_order([(d, a)]) == [CONCURRENT]


def test_assigning_a_held_order_again_is_a_no_op(client: KronosClient) -> None:
    a, b = client.create_events(2)
    client.assign_order([(a, "->", b, "must")])
    edges = client.stats()["edges"]
    assert client.assign_order([(b, "<-", a, "must")]) == [AssignResult(AFTER, False)]  # of (b, a)
    assert client.stats()["edges"] == edges


def test_must_conflict_rejects_whole_batch(client: KronosClient) -> None:
    a, b, c, d = client.create_events(4)
    client.assign_order([(a, "->", b, "must")])
    before = client.stats()

    with pytest.raises(MustConflictError) as info:
        client.assign_order([(c, "->", d, "must"), (b, "->", a, "must")])
    assert info.value.pair_index == 1
    assert info.value.actual is AFTER  # the order (b, a) already has
    assert info.value.wire_code is ErrorCode.MUST_CONFLICT and info.value.code == "MUST_CONFLICT"
    assert isinstance(info.value, KronosError)

    # Musts apply before prefers, so the index is still the request's.
    with pytest.raises(MustConflictError) as info:
        client.assign_order([(c, "->", d, "prefer"), (a, "<-", b, "must")])
    assert (info.value.pair_index, info.value.actual) == (1, BEFORE)

    assert client.query_order([(c, d), (a, b)]) == [CONCURRENT, BEFORE]
    after = client.stats()
    assert (after["edges"], after["events"]) == (before["edges"], before["events"])


def test_prefer_reversal_is_reported(client: KronosClient) -> None:
    a, b, c = client.create_events(3)
    client.assign_order([(a, "->", b, "must")])
    results = client.assign_order([(b, "->", a, "prefer"), (a, "->", c, "prefer")])
    assert results == [AssignResult(AFTER, True), AssignResult(BEFORE, False)]
    assert client.query_order([(a, b), (a, c)]) == [BEFORE, BEFORE]


def test_self_order_and_unknown_ids_change_nothing(client: KronosClient) -> None:
    a, b = client.create_events(2)
    edges = client.stats()["edges"]

    with pytest.raises(SelfOrderError):
        client.assign_order([(a, "->", b, "must"), (a, "->", a, "must")])
    with pytest.raises(SelfOrderError):
        client.query_order([(a, b), (b, b)])
    with pytest.raises(UnknownEventError):
        client.assign_order([(a, "->", b, "must"), (b, "->", NEVER_CREATED, "prefer")])
    with pytest.raises(UnknownEventError):
        client.acquire_ref([a, NEVER_CREATED])

    assert client.query_order([(a, b)]) == [CONCURRENT]
    assert client.stats()["edges"] == edges
    # a still holds exactly the one reference create gave it.
    assert client.release_ref([a]) == 1


# -- references and garbage collection ---------------------------------------


def test_release_underflow_changes_nothing(client: KronosClient) -> None:
    e, f = client.create_events(2)
    with pytest.raises(RefUnderflowError) as info:
        client.release_ref([e, e])
    assert info.value.wire_code is ErrorCode.REF_UNDERFLOW and info.value.code == "REF_UNDERFLOW"
    assert client.query_order([(e, f)]) == [CONCURRENT]  # still alive

    client.acquire_ref(e)
    assert client.release_ref([e, e]) == 1
    assert client.query_order([(e, f)]) == [UNKNOWN]


def test_gc_release_last_ref_collects(client: KronosClient) -> None:
    e, f = client.create_events(2)
    events = client.stats()["events"]
    assert client.release_ref(e) == 1
    assert client.query_order([(e, f), (f, e)]) == [UNKNOWN, UNKNOWN]
    assert client.stats()["events"] == events - 1
    with pytest.raises(UnknownEventError):
        client.release_ref(e)


def test_gc_event_pinned_by_edge_from_referenced_event(client: KronosClient) -> None:
    a, b = client.create_events(2)
    client.assign_order([(a, "->", b, "must")])

    assert client.release_ref(b) == 0  # b has no references, but a -> b pins it
    assert client.query_order([(a, b)]) == [BEFORE]

    assert client.release_ref(a) == 2  # a goes, and with it the pin on b
    assert client.query_order([(a, b)]) == [UNKNOWN]


# -- exactly-once sessions ---------------------------------------------------


class _LostReply(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "injected by the test: reply lost"


def test_retry_after_lost_reply_is_exactly_once(
    client: KronosClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server applies a create, the reply is lost, the client retries with
    the same sequence number and gets the first reply back: one event, not two."""
    sent: list[bytes] = []
    lost: list[Any] = []
    real_call = kronos_wire.Conn.call

    def lose_first_reply(self: Any, method: Any, request: Any, timeout: float) -> Any:
        sent.append(request.SerializeToString())
        resp = real_call(self, method, request, timeout)
        if not lost:
            lost.append(resp)
            raise _LostReply()
        return resp

    created = client.stats()["created"]
    monkeypatch.setattr(kronos_wire.Conn, "call", lose_first_reply)
    ids = client.create_events(2)
    monkeypatch.undo()

    assert len(sent) == 2 and sent[0] == sent[1]  # same client id and seq
    assert ids == list(lost[0].ids)  # the first application's reply
    assert client.stats()["created"] == created + 2
    assert client.query_order([(ids[0], ids[1])]) == [CONCURRENT]


# -- clock-named events (dissertation §3.5.1) --------------------------------


def test_clock_refs(fresh_kronos_addr: str) -> None:
    with KronosClient(fresh_kronos_addr) as client:
        g0 = VClock(epoch=0, owner=0, counters=(1, 0))
        g1 = VClock(epoch=0, owner=1, counters=(0, 1))
        assert client.stats()["clock_events"] == 0
        assert client.query_order([(g0, g1)]) == [CONCURRENT]  # not created yet

        assert client.assign_order([(g0, "->", g1, "must")]) == [AssignResult(BEFORE, False)]
        assert client.stats()["clock_events"] == 2
        assert client.query_order([(g0, g1), (g1, g0)]) == [BEFORE, AFTER]

        # Same gatekeeper: ordered by its own counter, with no assign between
        # them. g1b joins gatekeeper 1's chain after g1 through an unrelated
        # pair, so g0 -> g1b holds only through that chain.
        g1b = VClock(epoch=0, owner=1, counters=(0, 2))
        x = client.create_event()
        client.assign_order([(g1b, "->", x, "must")])
        assert client.query_order([(g1, g1b), (g0, g1b), (g0, x)]) == [BEFORE, BEFORE, BEFORE]
        with pytest.raises(MustConflictError) as info:
            client.assign_order([(g1b, "->", g0, "must")])
        assert (info.value.pair_index, info.value.actual) == (0, AFTER)

        # Clocks one gatekeeper stamped are ordered even before they exist.
        later = VClock(epoch=0, owner=0, counters=(7, 0))
        assert client.query_order([(g0, later), (later, g0)]) == [BEFORE, AFTER]


def test_clock_contradicting_its_chain_is_rejected(fresh_kronos_addr: str) -> None:
    with KronosClient(fresh_kronos_addr) as client:
        g0 = VClock(0, 0, (1, 0))
        g1 = VClock(0, 1, (0, 1))
        client.assign_order([(g0, "->", g1, "must")])
        forged = VClock(0, 0, (1, 5))  # gatekeeper 0's counter 1 is (1, 0)
        with pytest.raises(ClockInvalidError):
            client.query_order([(forged, g1)])
        with pytest.raises(ClockInvalidError):
            client.assign_order([(g1, "->", VClock(0, 0, (2, 0, 0)), "must")])  # wrong width
        assert client.stats()["clock_events"] == 2


def test_cleanup_releases_clocks_below_watermark(fresh_kronos_addr: str) -> None:
    with KronosClient(fresh_kronos_addr) as client:
        g0 = VClock(0, 0, (1, 0))
        g1 = VClock(0, 1, (0, 1))
        client.assign_order([(g0, "->", g1, "must")])

        # Nothing moves until every gatekeeper of the epoch has reported.
        assert client.cleanup(0, VClock(0, 0, (3, 3))) == (0, 0)
        result = client.cleanup(1, VClock(0, 1, (3, 3)))
        assert (result.released, result.collected) == (2, 2)

        assert client.stats()["clock_events"] == 0
        assert client.query_order([(g0, g1)]) == [UNKNOWN]
        with pytest.raises(CollectedError):
            client.assign_order([(g0, "->", VClock(0, 1, (0, 4)), "must")])


# -- replication: leader following and failover -----------------------------


def test_cluster_writes_via_any_address_follow_leader(kronos_cluster: Cluster) -> None:
    leader = wait_for_leader(kronos_cluster)
    for addr in kronos_cluster.addrs:
        with KronosClient([addr], timeout=10.0) as client:
            a, b = client.create_events(2)
            assert client.assign_order([(a, "->", b, "must")]) == [AssignResult(BEFORE, False)]
            assert client.target == leader  # followed the hint, even outside its list
            assert client.stats()["is_leader"] is True

    # A follower's reads: pairs it cannot answer come back from the leader,
    # merged in request order.
    with KronosClient(kronos_cluster.addrs, timeout=10.0) as writer:
        a, b, c = writer.create_events(3)
        writer.assign_order([(a, "->", b, "must"), (c, "<-", b, "must")])
        applied = writer.stats(leader)["applied_index"]
    follower = next(x for x in kronos_cluster.addrs if x != leader)
    with KronosClient([follower], timeout=10.0) as reader:
        deadline = time.monotonic() + 10.0
        while reader.stats(follower)["applied_index"] < applied:
            assert time.monotonic() < deadline, "follower never caught up"
            time.sleep(0.05)
        assert reader.query_order([(a, b), (c, a), (a, NEVER_CREATED), (b, c)]) == [
            BEFORE, AFTER, UNKNOWN, BEFORE]


def test_cluster_survives_leader_kill(kronos_cluster: Cluster) -> None:
    with KronosClient(kronos_cluster.addrs, timeout=20.0) as client:
        a, b = client.create_events(2)
        client.assign_order([(a, "->", b, "must")])
        old = client.stats()
        assert old["is_leader"] is True
        old_leader = client.target

        kronos_cluster.node_at(old_leader).kill()

        # Committed state survives, and the client finds the new leader.
        assert client.query_order([(a, b)]) == [BEFORE]
        c = client.create_event()
        assert client.assign_order([(b, "->", c, "must")]) == [AssignResult(BEFORE, False)]
        assert client.query_order([(a, c)]) == [BEFORE]
        assert client.target != old_leader
        new = client.stats()
        assert new["is_leader"] is True
        assert new["node_id"] != old["node_id"]
        assert new["term"] > old["term"]
