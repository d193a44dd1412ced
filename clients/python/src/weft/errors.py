"""Every error the ``weft`` package raises for a failed call: one hierarchy.

The root is :class:`WeftError`. Each error carries ``.code``, the stable
code string the server answered (``"OVERLOADED"``, ``"NOT_FOUND"``, …; see
docs/api.md §5, Kronos's ``ErrorCode`` names and the key-value face's codes
in docs/kv.md) or one the client chose (``"TRANSPORT"``, ``"BAD_RESPONSE"``,
``"UNKNOWN_OUTCOME"``); ``.message``; and ``.retryable``, whether the same
work, tried again after a pause, may succeed.

A condition is one class whatever service reports it: an overloaded
gatekeeper raises :class:`Overloaded`, an overloaded Kronos
:class:`OverloadedError` and an overloaded key-value server
:class:`KVOverloadedError`, and the last two are subclasses of
:class:`Overloaded`, so ``except weft.Overloaded`` catches all three. Each
service also has a base of its own (:class:`KronosError`, :class:`KVError`),
so ``except weft.KronosError`` still catches every Kronos failure::

    WeftError                          (any code; unknown codes come as it)
    ├── Aborted                        ABORTED, retryable
    │   └── KVConflictError            CONFLICT (kv), retryable
    ├── SnapshotTooOld                 SNAPSHOT_TOO_OLD, retryable
    ├── InvalidArgument                INVALID_ARGUMENT, METHOD_NOT_ALLOWED
    │   ├── TooLarge                   TOO_LARGE
    │   ├── MalformedError             MALFORMED (kronos)
    │   ├── SelfOrderError             SELF_ORDER (kronos)
    │   └── KVInvalidError             INVALID (kv)
    ├── NotFound                       NOT_FOUND
    │   ├── UnknownProgram             UNKNOWN_PROGRAM
    │   └── UnknownEventError          UNKNOWN_EVENT_ERROR (kronos)
    ├── AlreadyExists                  ALREADY_EXISTS
    ├── Overloaded                     OVERLOADED, retryable
    │   ├── OverloadedError            OVERLOADED (kronos)
    │   └── KVOverloadedError          OVERLOADED (kv)
    ├── Unavailable                    UNAVAILABLE, TRANSPORT (the server was not reached)
    │   ├── Cancelled                  CANCELLED
    │   ├── NotLeaderError             NOT_LEADER (kronos)
    │   ├── ShuttingDownError          SHUTTING_DOWN (kronos)
    │   ├── UnavailableError           UNAVAILABLE (kronos; also a TransportError)
    │   ├── KVUnavailableError         UNAVAILABLE (kv), retryable
    │   └── KVQuorumError              QUORUM (kv), retryable
    │       └── KVPausedError          PAUSED (kv), retryable
    ├── Timeout                        DEADLINE_EXCEEDED (or TRANSPORT: no answer in time)
    ├── InternalError                  INTERNAL
    ├── BadResponse                    BAD_RESPONSE: an answer the protocol does not allow
    │   └── ProtocolError              BAD_RESPONSE (kronos)
    ├── UnknownOutcome                 UNKNOWN_OUTCOME: a sent commit's answer was lost
    ├── KronosError                    every Kronos error (the ones marked kronos above, and:)
    │   ├── RefUnderflowError          REF_UNDERFLOW
    │   ├── RefOverflowError           REF_OVERFLOW
    │   ├── MustConflictError          MUST_CONFLICT
    │   ├── CollectedError             COLLECTED
    │   ├── ClockInvalidError          CLOCK_INVALID
    │   └── TransportError             TRANSPORT: a gRPC failure (.status)
    └── KVError                        every key-value error (the ones marked kv above, and:)
        ├── KVTooManySiblingsError     TOO_MANY_SIBLINGS
        └── KVVersionReusedError       VERSION_REUSED

:func:`from_code` builds the class of a code (``service="kronos"`` or
``"kv"`` picks that service's class where codes are shared). This module
imports nothing else of ``weft``; ``weft``, :mod:`weft.client`,
:mod:`weft.kronos` and :mod:`weft.kv` re-export the names they raised
before.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import grpc

__all__ = [
    "Aborted",
    "AlreadyExists",
    "BadResponse",
    "Cancelled",
    "ClockInvalidError",
    "CollectedError",
    "ErrorCode",
    "InternalError",
    "InvalidArgument",
    "KVConflictError",
    "KVError",
    "KVInvalidError",
    "KVOverloadedError",
    "KVPausedError",
    "KVQuorumError",
    "KVTooManySiblingsError",
    "KVUnavailableError",
    "KVVersionReusedError",
    "KronosError",
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
    "from_code",
]


# ---------------------------------------------------------------------------
# The root and the conditions every service shares


class WeftError(Exception):
    """Base class of every error the ``weft`` package raises for a failed call.

    Attributes:
        code: The stable error code string: the server's (``"ABORTED"``,
            ``"OVERLOADED"``, ``"MUST_CONFLICT"``, …), or ``"TRANSPORT"``
            when the server was not reached, ``"BAD_RESPONSE"`` when its
            answer broke the protocol, ``"UNKNOWN_OUTCOME"``.
        message: The server's (or the client's) description.
        retryable: Whether doing the same work again, after a pause, may
            succeed (for a transaction: running all of it again).
        status: The transport's status of the failed answer when there was
            one: the HTTP status for HTTP services, the gRPC status code for
            a Kronos :class:`TransportError`; otherwise None.

    Each class's own code and retryability are its class attributes
    ``code`` and ``retryable``; an instance may carry another code (an
    unknown code keeps its text) or retryability (as the server said).
    """

    code: str = "INTERNAL"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None, retryable: bool | None = None,
                 status: int | grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = type(self).code if code is None else code
        self.retryable = type(self).retryable if retryable is None else retryable
        self.status = status


class Aborted(WeftError):
    """The work conflicted with other work and had no effect: run it again.

    For the native API, the transaction's reads changed before it committed;
    nothing was written.
    """

    code = "ABORTED"
    retryable = True


class SnapshotTooOld(WeftError):
    """The snapshot's versions were garbage collected. Retry with a fresh one."""

    code = "SNAPSHOT_TOO_OLD"
    retryable = True


class InvalidArgument(WeftError):
    """The request was malformed or invalid; nothing changed."""

    code = "INVALID_ARGUMENT"


class TooLarge(InvalidArgument):
    """A transaction, value or request over a documented limit."""

    code = "TOO_LARGE"


class NotFound(WeftError):
    """An operation names something that does not exist (a vertex, edge or
    alias; for Kronos, an event)."""

    code = "NOT_FOUND"


class UnknownProgram(NotFound):
    """:meth:`weft.Client.run` names a program the server does not have."""

    code = "UNKNOWN_PROGRAM"


class AlreadyExists(WeftError):
    """A create names a handle or alias already in use."""

    code = "ALREADY_EXISTS"


class Overloaded(WeftError):
    """A server is at a queue bound (nothing was done); retry after a pause.

    Every service's overload is one of these: a gatekeeper's (``OVERLOADED``,
    HTTP 429), Kronos's (:class:`OverloadedError`, after the client's own
    retries) and a key-value server's (:class:`KVOverloadedError`).
    """

    code = "OVERLOADED"
    retryable = True


class Unavailable(WeftError):
    """The server is shutting down, has no leader, or could not be reached.

    After a commit (or any mutation) fails this way its outcome is unknown.
    """

    code = "UNAVAILABLE"


class Cancelled(Unavailable):
    """The call was cancelled (the server's caller went away) before it finished."""

    code = "CANCELLED"


class Timeout(WeftError):
    """The call took longer than its deadline (a commit's outcome is unknown)."""

    code = "DEADLINE_EXCEEDED"


class InternalError(WeftError):
    """The server failed in a way it did not expect."""

    code = "INTERNAL"


class BadResponse(WeftError):
    """The server's answer was not what its protocol documents."""

    code = "BAD_RESPONSE"


class UnknownOutcome(WeftError):
    """A commit was sent but its answer was lost: it may or may not have
    been applied.

    Raised by a cluster client (:meth:`weft.Client.from_coordinator`) when
    the gatekeeper that took a commit failed before answering (the
    connection broke, the answer timed out, or the gatekeeper answered
    ``UNAVAILABLE``, ``INTERNAL``, ``DEADLINE_EXCEEDED`` or ``CANCELLED``
    while closing). Never retried automatically: read to learn whether the
    transaction committed, or make it idempotent (for example with
    client-chosen handles). ``__cause__`` holds the failure. A commit whose
    request provably never left the client (the connection could not be
    opened) is retried on another gatekeeper instead.

    Attributes:
        cause: The error the commit failed with.
    """

    code = "UNKNOWN_OUTCOME"

    def __init__(self, message: str, *, cause: WeftError | None = None, **kw: Any) -> None:
        kw.setdefault("status", cause.status if cause is not None else None)
        super().__init__(message, **kw)
        self.cause = cause


# ---------------------------------------------------------------------------
# Kronos


class ErrorCode(enum.IntEnum):
    """The stable error codes of the Kronos wire protocol (kronos.proto's
    ``ErrorCode``); a :class:`KronosError`'s ``code`` is the member's name."""

    OK = 0
    UNKNOWN_EVENT_ERROR = 1
    SELF_ORDER = 2
    MALFORMED = 3
    REF_UNDERFLOW = 4
    REF_OVERFLOW = 5
    MUST_CONFLICT = 6
    NOT_LEADER = 7
    OVERLOADED = 8
    COLLECTED = 9
    CLOCK_INVALID = 10
    SHUTTING_DOWN = 11


class KronosError(WeftError):
    """Base class of every error :class:`weft.KronosClient` raises for a failed call.

    Attributes:
        code: The wire code's name (``"MUST_CONFLICT"``), or ``"TRANSPORT"``,
            ``"UNAVAILABLE"``, ``"BAD_RESPONSE"`` for failures that did not
            come from a Kronos answer.
        wire_code: The wire code as an :class:`ErrorCode`, or None for
            failures that did not come from a Kronos answer.
        leader_hint: For :class:`NotLeaderError`, the leader's address when
            known; otherwise empty.
    """

    def __init__(self, message: str, *, leader_hint: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.leader_hint = leader_hint

    @property
    def wire_code(self) -> ErrorCode | None:
        """The Kronos wire code of this error, when it came from an answer."""
        member = ErrorCode.__members__.get(self.code)
        return None if member is None or member is ErrorCode.OK else member


class UnknownEventError(KronosError, NotFound):
    """A request names an event that does not exist (or was collected)."""

    code = "UNKNOWN_EVENT_ERROR"


class SelfOrderError(KronosError, InvalidArgument):
    """A pair names the same event twice."""

    code = "SELF_ORDER"


class MalformedError(KronosError, InvalidArgument):
    """The request had missing or invalid fields."""

    code = "MALFORMED"


class RefUnderflowError(KronosError):
    """``release_ref`` would take a reference count below zero."""

    code = "REF_UNDERFLOW"


class RefOverflowError(KronosError):
    """``acquire_ref`` would take a reference count above 2**32 - 1."""

    code = "REF_OVERFLOW"


class MustConflictError(KronosError):
    """A ``must`` pair contradicts the graph; the whole batch was rejected.

    Attributes:
        pair_index: Index into the request's pairs of the contradicting pair
            (-1 when unknown).
        actual: The :class:`weft.Order` that pair already has in the graph
            (None when unknown).
    """

    code = "MUST_CONFLICT"

    def __init__(self, message: str, *, pair_index: int = -1, actual: enum.Enum | None = None,
                 **kw: Any) -> None:
        super().__init__(message, **kw)
        self.pair_index = pair_index
        self.actual = actual


class NotLeaderError(KronosError, Unavailable):
    """No leader accepted the call before the retry budget ran out."""

    code = "NOT_LEADER"


class OverloadedError(KronosError, Overloaded):
    """The server's queue stayed full until the retry budget ran out."""

    code = "OVERLOADED"
    retryable = True


class CollectedError(KronosError):
    """A clock is below its gatekeeper's cleanup watermark."""

    code = "COLLECTED"


class ClockInvalidError(KronosError):
    """A clock contradicts its gatekeeper's chain of earlier clocks."""

    code = "CLOCK_INVALID"


class ShuttingDownError(KronosError, Unavailable):
    """Every replica tried was shutting down."""

    code = "SHUTTING_DOWN"


class ProtocolError(KronosError, BadResponse):
    """An answer broke the wire protocol (e.g. the wrong number of results)."""

    code = "BAD_RESPONSE"


class TransportError(KronosError):
    """The call failed below the Kronos protocol, with a gRPC status.

    Attributes:
        status: The gRPC status code of the last failure, when there was one.
    """

    code = "TRANSPORT"


class UnavailableError(TransportError, Unavailable):
    """No replica answered before the retry count or the deadline ran out.

    A mutating call that ends this way may or may not have been applied.
    """

    code = "UNAVAILABLE"


# ---------------------------------------------------------------------------
# The key-value face


class KVError(WeftError):
    """Base of every error of :mod:`weft.kv`; ``code`` is the server's stable code."""

    def __init__(self, message: str, code: str | None = None, **kw: Any) -> None:
        super().__init__(message, code=code, **kw)


class KVInvalidError(KVError, InvalidArgument):
    """A malformed request (bad key, value, version or quorum); nothing changed."""

    code = "INVALID"


class KVTooManySiblingsError(KVError):
    """The PUT would leave more concurrent values than the key may hold.

    Resolve: :meth:`weft.kv.KVClient.get`, then :meth:`weft.kv.KVClient.put`
    with the whole context.
    """

    code = "TOO_MANY_SIBLINGS"


class KVVersionReusedError(KVError):
    """A version was reused with a different value (a client bug)."""

    code = "VERSION_REUSED"


class KVUnavailableError(KVError, Unavailable):
    """A replica could not be reached or failed; it counts as no answer."""

    code = "UNAVAILABLE"
    retryable = True


class KVOverloadedError(KVError, Overloaded):
    """A server's bounded request queue is full; retry later."""

    code = "OVERLOADED"
    retryable = True


class KVQuorumError(KVError, Unavailable):
    """The request did not get its R (or W) answers in two rounds.

    A failed PUT may still have reached some replicas. ``causes`` maps each
    replica (server number) that failed to its error.
    """

    code = "QUORUM"
    retryable = True

    def __init__(self, message: str, causes: dict[int, KVError] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.causes: dict[int, KVError] = causes or {}


class KVPausedError(KVQuorumError):
    """The servers are fenced for a rollback; wait, retry, then check the generation."""

    code = "PAUSED"
    retryable = True


class KVConflictError(KVError, Aborted):
    """Kronos could not order a transaction after a concurrent one: it
    aborted without effect; retry it."""

    code = "CONFLICT"
    retryable = True


# ---------------------------------------------------------------------------
# Codes to classes

_NATIVE: Final[Mapping[str, type[WeftError]]] = {
    "ABORTED": Aborted,
    "SNAPSHOT_TOO_OLD": SnapshotTooOld,
    "INVALID_ARGUMENT": InvalidArgument,
    "METHOD_NOT_ALLOWED": InvalidArgument,
    "TOO_LARGE": TooLarge,
    "NOT_FOUND": NotFound,
    "UNKNOWN_PROGRAM": UnknownProgram,
    "ALREADY_EXISTS": AlreadyExists,
    "OVERLOADED": Overloaded,
    "UNAVAILABLE": Unavailable,
    "DEADLINE_EXCEEDED": Timeout,
    "CANCELLED": Cancelled,
    "INTERNAL": InternalError,
    # The client's own.
    "TRANSPORT": Unavailable,
    "BAD_RESPONSE": BadResponse,
    "UNKNOWN_OUTCOME": UnknownOutcome,
}

_KRONOS: Final[Mapping[str, type[KronosError]]] = {
    "UNKNOWN_EVENT_ERROR": UnknownEventError,
    "SELF_ORDER": SelfOrderError,
    "MALFORMED": MalformedError,
    "REF_UNDERFLOW": RefUnderflowError,
    "REF_OVERFLOW": RefOverflowError,
    "MUST_CONFLICT": MustConflictError,
    "NOT_LEADER": NotLeaderError,
    "OVERLOADED": OverloadedError,
    "COLLECTED": CollectedError,
    "CLOCK_INVALID": ClockInvalidError,
    "SHUTTING_DOWN": ShuttingDownError,
    # The client's own.
    "TRANSPORT": TransportError,
    "UNAVAILABLE": UnavailableError,
    "BAD_RESPONSE": ProtocolError,
}

_KV: Final[Mapping[str, type[KVError]]] = {
    "INVALID": KVInvalidError,
    "TOO_MANY_SIBLINGS": KVTooManySiblingsError,
    "VERSION_REUSED": KVVersionReusedError,
    "UNAVAILABLE": KVUnavailableError,
    "OVERLOADED": KVOverloadedError,
    "QUORUM": KVQuorumError,
    "PAUSED": KVPausedError,
    "CONFLICT": KVConflictError,
}

# Per service: its codes, and the class of a code it does not know.
_SERVICES: Final[Mapping[str, tuple[Mapping[str, type[WeftError]], type[WeftError]]]] = {
    "api": (_NATIVE, WeftError),
    "kronos": (_KRONOS, KronosError),
    "kv": (_KV, KVError),
}


def from_code(code: str, message: str, *, service: str | None = None, **kw: Any) -> WeftError:
    """The error for a stable code, with ``message`` and the keyword
    arguments of its class (``retryable``, ``status``, ``leader_hint``, …).

    ``service`` (``"api"``, the native API; ``"kronos"``; ``"kv"``) picks
    that service's class where services share a code: ``from_code(
    "OVERLOADED", m, service="kronos")`` is an :class:`OverloadedError`,
    without a service an :class:`Overloaded`. Without a service a code is
    looked up in the native API's codes, then Kronos's, then the key-value
    face's. A code no table knows gives the service's base class (or
    :class:`WeftError`) carrying that code, so the code is never lost.
    """
    if service is None:
        for table, _ in _SERVICES.values():
            cls = table.get(code)
            if cls is not None:
                return cls(message, code=code, **kw)
        return WeftError(message, code=code, **kw)
    try:
        table, base = _SERVICES[service]
    except KeyError:
        raise ValueError(f"unknown service {service!r}: want one of {sorted(_SERVICES)}") from None
    return table.get(code, base)(message, code=code, **kw)
