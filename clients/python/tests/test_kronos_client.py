"""weft.kronos client logic against scripted in-process gRPC servers.

The real-server tests (test_kronos.py) cannot make a replica answer
NOT_LEADER, OVERLOADED or UNRESOLVED on demand; these fakes can, so the retry,
leader-following, merge and session rules are checked deterministically here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from servers import free_ports

from weft import (
    AssignResult,
    ClockInvalidError,
    CollectedError,
    ErrorCode,
    KronosClient,
    KronosError,
    MalformedError,
    MustConflictError,
    NotLeaderError,
    Order,
    OverloadedError,
    RefOverflowError,
    RefUnderflowError,
    SelfOrderError,
    ShuttingDownError,
    Strength,
    UnavailableError,
    UnknownEventError,
    VClock,
)
from weft._proto import kronos_pb2 as pb
from weft._proto import kronos_pb2_grpc as pb_grpc

Handler = Callable[[Any], Any]
METHODS = ("CreateEvent", "AcquireRef", "ReleaseRef", "QueryOrder", "AssignOrder",
           "Cleanup", "Stats")


class Fake(pb_grpc.KronosServicer):
    """A replica whose answers are scripted per method; it records requests."""

    def __init__(self, addr: str, **handlers: Handler) -> None:
        self.addr = addr
        self.handlers = handlers
        self.requests: dict[str, list[Any]] = {m: [] for m in METHODS}

    def _serve(self, name: str, request: Any) -> Any:
        self.requests[name].append(request)
        return self.handlers[name](request)


for _name in METHODS:
    def _method(self: Fake, request: Any, context: grpc.ServicerContext, _n: str = _name) -> Any:
        return self._serve(_n, request)
    setattr(Fake, _name, _method)


@pytest.fixture
def fakes() -> Iterator[Callable[..., Fake]]:
    """Start fake replicas on demand; stop them all at teardown."""
    servers: list[grpc.Server] = []

    def start(**handlers: Handler) -> Fake:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        port = server.add_insecure_port("127.0.0.1:0")
        fake = Fake(f"127.0.0.1:{port}", **handlers)
        pb_grpc.add_KronosServicer_to_server(fake, server)
        server.start()
        servers.append(server)
        return fake

    yield start
    for s in servers:
        s.stop(grace=None)


def not_leader(hint: str = "") -> pb.Error:
    return pb.Error(code=pb.NOT_LEADER, message="not leader", leader_hint=hint)


def dead_addr() -> str:
    return f"127.0.0.1:{free_ports(1)[0]}"


# -- leader following --------------------------------------------------------


def test_not_leader_follows_hint_with_same_session(fakes: Callable[..., Fake]) -> None:
    leader = fakes(CreateEvent=lambda r: pb.CreateEventResponse(ids=[7]))
    follower = fakes(CreateEvent=lambda r: pb.CreateEventResponse(error=not_leader(leader.addr)))
    with KronosClient(follower.addr) as client:
        assert client.create_event() == 7
        assert client.target == leader.addr  # a hint outside the configured list
        sent = follower.requests["CreateEvent"] + leader.requests["CreateEvent"]
        assert [(r.session.client_id, r.session.seq) for r in sent] == [(client.client_id, 1)] * 2
        assert client.create_event() == 7  # straight to the leader now
        assert len(follower.requests["CreateEvent"]) == 1
        assert leader.requests["CreateEvent"][-1].session.seq == 2


def test_unavailable_moves_to_next_address(fakes: Callable[..., Fake]) -> None:
    live = fakes(CreateEvent=lambda r: pb.CreateEventResponse(ids=[1, 2]))
    with KronosClient([dead_addr(), live.addr], timeout=5.0) as client:
        assert client.create_events(2) == [1, 2]
        assert client.target == live.addr


def test_unresolved_pairs_go_to_leader_and_merge_in_order(fakes: Callable[..., Fake]) -> None:
    leader = fakes(QueryOrder=lambda r: pb.QueryOrderResponse(orders=[pb.AFTER, pb.UNKNOWN_EVENT]))
    follower = fakes(QueryOrder=lambda r: pb.QueryOrderResponse(
        orders=[pb.BEFORE, pb.UNRESOLVED, pb.CONCURRENT, pb.UNRESOLVED], leader_hint=leader.addr))
    with KronosClient(follower.addr) as client:
        got = client.query_order([(1, 2), (3, 4), (5, 6), (7, VClock(0, 0, (1,)))])
    assert got == [Order.BEFORE, Order.AFTER, Order.CONCURRENT, Order.UNKNOWN_EVENT]
    (resent,) = leader.requests["QueryOrder"]
    assert [(p.a.id, p.b.WhichOneof("ref")) for p in resent.pairs] == [(3, "id"), (7, "clock")]


def test_unresolved_without_a_leader_is_bounded(fakes: Callable[..., Fake]) -> None:
    lost = fakes(QueryOrder=lambda r: pb.QueryOrderResponse(orders=[pb.UNRESOLVED] * len(r.pairs)))
    with KronosClient(lost.addr, timeout=2.0, retry_max=3) as client:
        with pytest.raises(UnavailableError):
            client.query_order([(1, 2)])
    assert len(lost.requests["QueryOrder"]) == 4


# -- retry budget and sessions ------------------------------------------------


def test_overloaded_is_retried_with_the_same_seq(fakes: Callable[..., Fake]) -> None:
    answers = iter([pb.Error(code=pb.OVERLOADED), pb.Error(code=pb.OVERLOADED), None, None])
    server = fakes(ReleaseRef=lambda r: pb.RefsResponse(collected=3, error=next(answers)))
    with KronosClient(server.addr) as client:
        assert client.release_ref([1, 2, 3]) == 3
        assert client.release_ref(4) == 3
    assert [r.session.seq for r in server.requests["ReleaseRef"]] == [1, 1, 1, 2]
    assert len({r.session.client_id for r in server.requests["ReleaseRef"]}) == 1


def test_retry_count_is_bounded(fakes: Callable[..., Fake]) -> None:
    server = fakes(AcquireRef=lambda r: pb.RefsResponse(error=not_leader()))
    with KronosClient(server.addr, timeout=10.0, retry_max=3) as client:
        with pytest.raises(NotLeaderError):
            client.acquire_ref([1])
    assert len(server.requests["AcquireRef"]) == 4


def test_overloaded_until_the_budget_runs_out(fakes: Callable[..., Fake]) -> None:
    server = fakes(Cleanup=lambda r: pb.CleanupResponse(error=pb.Error(code=pb.OVERLOADED)))
    with KronosClient(server.addr, retry_max=2) as client:
        with pytest.raises(OverloadedError):
            client.cleanup(0, VClock(0, 0, (1,)))
    assert [r.session.seq for r in server.requests["Cleanup"]] == [1, 1, 1]


def test_deadline_is_bounded_when_nothing_answers() -> None:
    with KronosClient([dead_addr(), dead_addr()], timeout=0.5) as client:
        start = time.monotonic()
        with pytest.raises(UnavailableError) as info:
            client.create_event()
        assert time.monotonic() - start < 2.0
        assert info.value.status == grpc.StatusCode.UNAVAILABLE


def test_api_errors_are_not_retried(fakes: Callable[..., Fake]) -> None:
    server = fakes(AssignOrder=lambda r: pb.AssignOrderResponse(error=pb.Error(
        code=pb.MUST_CONFLICT, message="conflict", pair_index=2, actual=pb.AFTER)))
    with KronosClient(server.addr) as client:
        with pytest.raises(MustConflictError) as info:
            client.assign_order([(1, "->", 2, "must")] * 3)
    assert (info.value.pair_index, info.value.actual, info.value.wire_code) == (
        2, Order.AFTER, ErrorCode.MUST_CONFLICT)
    assert len(server.requests["AssignOrder"]) == 1


@pytest.mark.parametrize("code, exc", [
    (pb.UNKNOWN_EVENT_ERROR, UnknownEventError),
    (pb.SELF_ORDER, SelfOrderError),
    (pb.MALFORMED, MalformedError),
    (pb.REF_UNDERFLOW, RefUnderflowError),
    (pb.REF_OVERFLOW, RefOverflowError),
    (pb.COLLECTED, CollectedError),
    (pb.CLOCK_INVALID, ClockInvalidError),
])
def test_error_codes_map_to_exceptions(
    fakes: Callable[..., Fake], code: int, exc: type[KronosError]
) -> None:
    server = fakes(AcquireRef=lambda r: pb.RefsResponse(error=pb.Error(code=code, message="m")))
    with KronosClient(server.addr) as client:
        with pytest.raises(exc) as info:
            client.acquire_ref([1])
    assert info.value.wire_code == code and info.value.message == "m"
    assert info.value.code == ErrorCode(code).name


def test_shutting_down_moves_on_then_gives_up(fakes: Callable[..., Fake]) -> None:
    down = fakes(CreateEvent=lambda r: pb.CreateEventResponse(
        error=pb.Error(code=pb.SHUTTING_DOWN)))
    with KronosClient(down.addr, retry_max=2) as client:
        with pytest.raises(ShuttingDownError):
            client.create_event()
    assert len(down.requests["CreateEvent"]) == 3


# -- wire encoding and input checks ------------------------------------------


def test_assign_accepts_symbols_and_enums(fakes: Callable[..., Fake]) -> None:
    server = fakes(AssignOrder=lambda r: pb.AssignOrderResponse(results=[
        pb.AssignResult(order=pb.BEFORE), pb.AssignResult(order=pb.BEFORE, reversed=True)]))
    with KronosClient(server.addr) as client:
        got = client.assign_order([(1, "->", 2, "must"), (VClock(3, 1, (0, 9)), Order.AFTER, 4,
                                                          Strength.PREFER)])
    assert got == [AssignResult(Order.BEFORE, False), AssignResult(Order.BEFORE, True)]
    p0, p1 = server.requests["AssignOrder"][0].pairs
    assert (p0.a.id, p0.order, p0.b.id, p0.strength) == (1, pb.BEFORE, 2, pb.MUST)
    assert (p1.order, p1.strength) == (pb.AFTER, pb.PREFER)
    assert (p1.a.clock.epoch, p1.a.clock.owner, list(p1.a.clock.counters)) == (3, 1, [0, 9])


def test_bad_input_is_rejected_before_sending(fakes: Callable[..., Fake]) -> None:
    server = fakes()
    with KronosClient(server.addr) as client:
        with pytest.raises(ValueError):
            client.assign_order([(1, Order.CONCURRENT, 2, "must")])
        with pytest.raises(ValueError):
            client.assign_order([(1, "=>", 2, "must")])
        with pytest.raises(ValueError):
            client.assign_order([(1, "->", 2, "always")])
        with pytest.raises(ValueError):
            client.query_order([(-1, 2)])
        with pytest.raises(TypeError):
            client.query_order([(True, 2)])
        with pytest.raises(ValueError):
            client.create_events(0)
        assert client.query_order([]) == [] and client.assign_order([]) == []
    assert all(not reqs for reqs in server.requests.values())
    with pytest.raises(ValueError):
        VClock(0, 2, (1, 1))  # owner has no counter
    with pytest.raises(RuntimeError):
        client.create_event()  # closed


def test_order_and_strength_spellings() -> None:
    assert Order("->") is Order.BEFORE and Order("<-") is Order.AFTER
    assert Order("unknown_event") is Order.UNKNOWN_EVENT
    assert Order.BEFORE.reverse() is Order.AFTER and Order.CONCURRENT.reverse() is Order.CONCURRENT
    assert Strength("Prefer") is Strength.PREFER
    assert hash(VClock(0, 0, [1, 2])) == hash(VClock(0, 0, (1, 2)))


def test_stats_returns_every_field(fakes: Callable[..., Fake]) -> None:
    server = fakes(Stats=lambda r: pb.StatsResponse(events=3, is_leader=True, leader_hint="x"))
    with KronosClient(server.addr) as client:
        stats = client.stats()
    assert stats["events"] == 3 and stats["is_leader"] is True and stats["leader_hint"] == "x"
    assert set(stats) == {f.name for f in pb.StatsResponse.DESCRIPTOR.fields}


def test_order_and_strength_values_are_the_wires() -> None:
    # weft.kronos hard-codes them so that it imports without protobuf.
    for o in Order:
        assert o.value == pb.Order.Value(o.name)
    for s in Strength:
        assert s.value == pb.Strength.Value(s.name)
