"""Kronos's gRPC wire: the channel, the methods and their protobuf messages.

Everything of :mod:`weft.kronos` that needs grpcio or protobuf at import
time is here, so that :mod:`weft.kronos` (and ``import weft``) works without
them: it imports this module in a ``try`` and :class:`weft.KronosClient`
raises the ImportError that says ``pip install 'weft[kronos]'`` when it is
missing. Not public: the names may change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar, cast

import grpc
from google.protobuf.message import Message

from ._proto import kronos_pb2 as pb

__all__ = ["Conn", "Method", "grpc", "pb"]

# Channel options: reconnect quickly to a replica that comes back, instead of
# gRPC's default backoff of up to two minutes.
CHANNEL_OPTIONS: Final = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
)

ReqT = TypeVar("ReqT", bound=Message)
RespT = TypeVar("RespT", bound=Message)

SERVICE: Final = pb.DESCRIPTOR.services_by_name["Kronos"].full_name


@dataclass(frozen=True)
class Method(Generic[ReqT, RespT]):
    name: str
    request: type[ReqT]
    response: type[RespT]
    # Stats answers carry no error field.
    has_error: bool = True

    @property
    def path(self) -> str:
        return f"/{SERVICE}/{self.name}"


CREATE_EVENT: Final = Method("CreateEvent", pb.CreateEventRequest, pb.CreateEventResponse)
ACQUIRE_REF: Final = Method("AcquireRef", pb.RefsRequest, pb.RefsResponse)
RELEASE_REF: Final = Method("ReleaseRef", pb.RefsRequest, pb.RefsResponse)
QUERY_ORDER: Final = Method("QueryOrder", pb.QueryOrderRequest, pb.QueryOrderResponse)
ASSIGN_ORDER: Final = Method("AssignOrder", pb.AssignOrderRequest, pb.AssignOrderResponse)
CLEANUP: Final = Method("Cleanup", pb.CleanupRequest, pb.CleanupResponse)
STATS: Final = Method("Stats", pb.StatsRequest, pb.StatsResponse, has_error=False)

RETRYABLE_STATUS: Final = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
)


class Conn:
    """One channel and its bound methods.

    The methods are bound here rather than through the generated
    ``KronosStub`` because that stub passes ``_registered_method``, which
    grpcio < 1.63 rejects; this keeps the client working on grpcio >= 1.60.
    """

    def __init__(self, addr: str) -> None:
        self.channel = grpc.insecure_channel(addr, options=CHANNEL_OPTIONS)
        self._calls: dict[str, Callable[..., Any]] = {}

    def call(self, method: Method[ReqT, RespT], request: ReqT, timeout: float) -> RespT:
        fn = self._calls.get(method.name)
        if fn is None:
            fn = self.channel.unary_unary(
                method.path,
                request_serializer=method.request.SerializeToString,
                response_deserializer=method.response.FromString,
            )
            self._calls[method.name] = fn
        return cast(RespT, fn(request, timeout=timeout))


def status_of(err: grpc.RpcError) -> grpc.StatusCode | None:
    code = getattr(err, "code", None)
    return cast(grpc.StatusCode, code()) if callable(code) else None


def details_of(err: grpc.RpcError) -> str:
    details = getattr(err, "details", None)
    return str(details()) if callable(details) else str(err)
