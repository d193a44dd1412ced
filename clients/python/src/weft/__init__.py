"""Python client for Weft, a distributed graph database.

:class:`Client` talks to ``weft serve`` over HTTP/JSON (:mod:`weft.client`)::

    from weft import Client

    client = Client("http://127.0.0.1:7580")
    for tx in client.transaction():        # retried on conflicts
        with tx:
            tx.create_vertex("ada")
            tx.set_vertex_prop("ada", "born", 1815)
    print(client.run("get_node", node="ada"))

:class:`ClusterClient` (``Client.from_coordinator``, :mod:`weft.cluster`)
finds a cluster's gatekeepers through the coordinator, spreads calls over
them, and follows failovers::

    client = Client.from_coordinator(["http://127.0.0.1:7611"])

The client of Kronos, Weft's event-ordering service, is :mod:`weft.kronos`::

    from weft import KronosClient, Order

    with KronosClient(["127.0.0.1:7100"]) as kronos:
        a, b = kronos.create_events(2)
        kronos.assign_order([(a, "->", b, "must")])
        assert kronos.query_order([(a, b)]) == [Order.BEFORE]

:mod:`weft.kv` is the client of the replicated key-value face (``weft kv
serve``), with R and W chosen per request or per session.

Every public name of :mod:`weft.client`, :mod:`weft.cluster`, :mod:`weft.kronos` and the
key-value client's (:class:`KVClient` and its errors) is re-exported here.
"""

from .client import (
    Aborted,
    Alias,
    AlreadyExists,
    BadResponse,
    Client,
    CommitResult,
    Edge,
    InternalError,
    InvalidArgument,
    NotFound,
    Overloaded,
    Placement,
    ProgramInfo,
    Read,
    SnapshotTooOld,
    Timeout,
    TooLarge,
    Transaction,
    Transactions,
    Unavailable,
    UnitHome,
    UnitMove,
    UnknownOutcome,
    UnknownProgram,
    Vertex,
    WeftError,
)

from .cluster import ClusterClient, GatekeeperInfo

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

from . import kv
from .kv import (
    KVClient,
    KVError,
    KVPausedError,
    KVQuorumError,
)

__version__ = "0.1.0"

__all__ = [
    "Aborted",
    "Alias",
    "AlreadyExists",
    "BadResponse",
    "Client",
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
    "UnitHome",
    "UnitMove",
    "UnknownOutcome",
    "UnknownProgram",
    "Vertex",
    "WeftError",
    "ClusterClient",
    "GatekeeperInfo",
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
    "kv",
    "KVClient",
    "KVError",
    "KVPausedError",
    "KVQuorumError",
]
