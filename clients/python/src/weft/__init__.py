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

The client of Kronos, Weft's event-ordering service, is :mod:`weft.kronos`.
It speaks gRPC, which the base install leaves out: ``pip install
'weft[kronos]'`` (or ``'weft[grpc]'``) adds grpcio and protobuf; without them
``import weft`` and everything else work, and ``KronosClient(...)`` raises an
ImportError saying so::

    from weft import KronosClient, Order

    with KronosClient(["127.0.0.1:7100"]) as kronos:
        a, b = kronos.create_events(2)
        kronos.assign_order([(a, "->", b, "must")])
        assert kronos.query_order([(a, b)]) == [Order.BEFORE]

:mod:`weft.aio` is the graph client for asyncio::

    async with weft.aio.Client("http://127.0.0.1:7580") as client:
        async for tx in client.transaction():
            async with tx:
                tx.create_vertex("ada")
        print(await client.run("get_node", node="ada"))

:mod:`weft.kv` is the client of the replicated key-value face (``weft kv
serve``), with R and W chosen per request or per session.

Every error is a :class:`WeftError` of :mod:`weft.errors`, one class per
condition whatever the service: ``except weft.Overloaded`` catches an
overloaded gatekeeper, Kronos and key-value server alike, and ``.code`` is
the stable code string.

Every public name of :mod:`weft.errors`, :mod:`weft.client`, :mod:`weft.cluster`,
:mod:`weft.kronos` and the key-value client's (:class:`KVClient` and its errors)
is re-exported here.
"""

from . import aio, errors, kv
from .client import (
    Alias,
    Client,
    ClusterClient,
    CommitResult,
    Edge,
    Placement,
    ProgramInfo,
    Read,
    Transaction,
    Transactions,
    UnitHome,
    UnitMove,
    Vertex,
)
from .cluster import GatekeeperInfo
from .errors import (
    Aborted,
    AlreadyExists,
    BadResponse,
    Cancelled,
    ClockInvalidError,
    CollectedError,
    ErrorCode,
    InternalError,
    InvalidArgument,
    KronosError,
    KVConflictError,
    KVError,
    KVInvalidError,
    KVOverloadedError,
    KVPausedError,
    KVQuorumError,
    KVTooManySiblingsError,
    KVUnavailableError,
    KVVersionReusedError,
    MalformedError,
    MustConflictError,
    NotFound,
    NotLeaderError,
    Overloaded,
    OverloadedError,
    ProtocolError,
    RefOverflowError,
    RefUnderflowError,
    SelfOrderError,
    ShuttingDownError,
    SnapshotTooOld,
    Timeout,
    TooLarge,
    TransportError,
    Unavailable,
    UnavailableError,
    UnknownEventError,
    UnknownOutcome,
    UnknownProgram,
    WeftError,
    from_code,
)
from .kronos import (
    AssignResult,
    CleanupResult,
    KronosClient,
    Order,
    Ref,
    Strength,
    VClock,
)
from .kv import KVClient

__version__ = "0.1.0"

__all__ = [
    # weft.errors
    "Aborted",
    "AlreadyExists",
    "BadResponse",
    "Cancelled",
    "ClockInvalidError",
    "CollectedError",
    "ErrorCode",
    "InternalError",
    "InvalidArgument",
    "KronosError",
    "KVConflictError",
    "KVError",
    "KVInvalidError",
    "KVOverloadedError",
    "KVPausedError",
    "KVQuorumError",
    "KVTooManySiblingsError",
    "KVUnavailableError",
    "KVVersionReusedError",
    "MalformedError",
    "MustConflictError",
    "NotFound",
    "NotLeaderError",
    "Overloaded",
    "OverloadedError",
    "ProtocolError",
    "RefOverflowError",
    "RefUnderflowError",
    "SelfOrderError",
    "ShuttingDownError",
    "SnapshotTooOld",
    "Timeout",
    "TooLarge",
    "TransportError",
    "Unavailable",
    "UnavailableError",
    "UnknownEventError",
    "UnknownOutcome",
    "UnknownProgram",
    "WeftError",
    "errors",
    "from_code",
    # weft.client, weft.cluster
    "Alias",
    "Client",
    "ClusterClient",
    "CommitResult",
    "Edge",
    "GatekeeperInfo",
    "Placement",
    "ProgramInfo",
    "Read",
    "Transaction",
    "Transactions",
    "UnitHome",
    "UnitMove",
    "Vertex",
    # weft.kronos
    "AssignResult",
    "CleanupResult",
    "KronosClient",
    "Order",
    "Ref",
    "Strength",
    "VClock",
    # weft.kv
    "KVClient",
    "kv",
    # weft.aio
    "aio",
]
