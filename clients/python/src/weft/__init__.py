"""Python client for Weft, a distributed graph database.

Today this package holds the client of Kronos, Weft's event-ordering service
(:mod:`weft.kronos`)::

    from weft import KronosClient, Order

    with KronosClient(["127.0.0.1:7100"]) as kronos:
        a, b = kronos.create_events(2)
        kronos.assign_order([(a, "->", b, "must")])
        assert kronos.query_order([(a, b)]) == [Order.BEFORE]

Every public name of :mod:`weft.kronos` is re-exported here.
"""

from .kronos import (
    AssignResult,
    CleanupResult,
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
    ProtocolError,
    Ref,
    RefOverflowError,
    RefUnderflowError,
    SelfOrderError,
    ShuttingDownError,
    Strength,
    TransportError,
    UnavailableError,
    UnknownEventError,
    VClock,
)

__version__ = "0.1.0"

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
