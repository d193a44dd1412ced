from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Order(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORDER_UNSPECIFIED: _ClassVar[Order]
    BEFORE: _ClassVar[Order]
    AFTER: _ClassVar[Order]
    CONCURRENT: _ClassVar[Order]
    UNKNOWN_EVENT: _ClassVar[Order]
    UNRESOLVED: _ClassVar[Order]

class Strength(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRENGTH_UNSPECIFIED: _ClassVar[Strength]
    MUST: _ClassVar[Strength]
    PREFER: _ClassVar[Strength]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OK: _ClassVar[ErrorCode]
    UNKNOWN_EVENT_ERROR: _ClassVar[ErrorCode]
    SELF_ORDER: _ClassVar[ErrorCode]
    MALFORMED: _ClassVar[ErrorCode]
    REF_UNDERFLOW: _ClassVar[ErrorCode]
    REF_OVERFLOW: _ClassVar[ErrorCode]
    MUST_CONFLICT: _ClassVar[ErrorCode]
    NOT_LEADER: _ClassVar[ErrorCode]
    OVERLOADED: _ClassVar[ErrorCode]
    COLLECTED: _ClassVar[ErrorCode]
    CLOCK_INVALID: _ClassVar[ErrorCode]
    SHUTTING_DOWN: _ClassVar[ErrorCode]
ORDER_UNSPECIFIED: Order
BEFORE: Order
AFTER: Order
CONCURRENT: Order
UNKNOWN_EVENT: Order
UNRESOLVED: Order
STRENGTH_UNSPECIFIED: Strength
MUST: Strength
PREFER: Strength
OK: ErrorCode
UNKNOWN_EVENT_ERROR: ErrorCode
SELF_ORDER: ErrorCode
MALFORMED: ErrorCode
REF_UNDERFLOW: ErrorCode
REF_OVERFLOW: ErrorCode
MUST_CONFLICT: ErrorCode
NOT_LEADER: ErrorCode
OVERLOADED: ErrorCode
COLLECTED: ErrorCode
CLOCK_INVALID: ErrorCode
SHUTTING_DOWN: ErrorCode

class VClock(_message.Message):
    __slots__ = ("epoch", "owner", "counters")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    owner: int
    counters: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, epoch: _Optional[int] = ..., owner: _Optional[int] = ..., counters: _Optional[_Iterable[int]] = ...) -> None: ...

class Ref(_message.Message):
    __slots__ = ("id", "clock")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    id: int
    clock: VClock
    def __init__(self, id: _Optional[int] = ..., clock: _Optional[_Union[VClock, _Mapping]] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "message", "leader_hint", "pair_index", "actual")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LEADER_HINT_FIELD_NUMBER: _ClassVar[int]
    PAIR_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTUAL_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    message: str
    leader_hint: str
    pair_index: int
    actual: Order
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., message: _Optional[str] = ..., leader_hint: _Optional[str] = ..., pair_index: _Optional[int] = ..., actual: _Optional[_Union[Order, str]] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("client_id", "seq")
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    client_id: int
    seq: int
    def __init__(self, client_id: _Optional[int] = ..., seq: _Optional[int] = ...) -> None: ...

class CreateEventRequest(_message.Message):
    __slots__ = ("session", "count")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    session: Session
    count: int
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., count: _Optional[int] = ...) -> None: ...

class CreateEventResponse(_message.Message):
    __slots__ = ("ids", "error")
    IDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    error: Error
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class RefsRequest(_message.Message):
    __slots__ = ("session", "ids")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    session: Session
    ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., ids: _Optional[_Iterable[int]] = ...) -> None: ...

class RefsResponse(_message.Message):
    __slots__ = ("collected", "error")
    COLLECTED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    collected: int
    error: Error
    def __init__(self, collected: _Optional[int] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class Pair(_message.Message):
    __slots__ = ("a", "b")
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    a: Ref
    b: Ref
    def __init__(self, a: _Optional[_Union[Ref, _Mapping]] = ..., b: _Optional[_Union[Ref, _Mapping]] = ...) -> None: ...

class QueryOrderRequest(_message.Message):
    __slots__ = ("pairs",)
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    pairs: _containers.RepeatedCompositeFieldContainer[Pair]
    def __init__(self, pairs: _Optional[_Iterable[_Union[Pair, _Mapping]]] = ...) -> None: ...

class QueryOrderResponse(_message.Message):
    __slots__ = ("orders", "error", "leader_hint")
    ORDERS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LEADER_HINT_FIELD_NUMBER: _ClassVar[int]
    orders: _containers.RepeatedScalarFieldContainer[Order]
    error: Error
    leader_hint: str
    def __init__(self, orders: _Optional[_Iterable[_Union[Order, str]]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., leader_hint: _Optional[str] = ...) -> None: ...

class AssignPair(_message.Message):
    __slots__ = ("a", "order", "b", "strength")
    A_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    a: Ref
    order: Order
    b: Ref
    strength: Strength
    def __init__(self, a: _Optional[_Union[Ref, _Mapping]] = ..., order: _Optional[_Union[Order, str]] = ..., b: _Optional[_Union[Ref, _Mapping]] = ..., strength: _Optional[_Union[Strength, str]] = ...) -> None: ...

class AssignResult(_message.Message):
    __slots__ = ("order", "reversed")
    ORDER_FIELD_NUMBER: _ClassVar[int]
    REVERSED_FIELD_NUMBER: _ClassVar[int]
    order: Order
    reversed: bool
    def __init__(self, order: _Optional[_Union[Order, str]] = ..., reversed: bool = ...) -> None: ...

class AssignOrderRequest(_message.Message):
    __slots__ = ("session", "pairs")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    session: Session
    pairs: _containers.RepeatedCompositeFieldContainer[AssignPair]
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., pairs: _Optional[_Iterable[_Union[AssignPair, _Mapping]]] = ...) -> None: ...

class AssignOrderResponse(_message.Message):
    __slots__ = ("results", "error")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AssignResult]
    error: Error
    def __init__(self, results: _Optional[_Iterable[_Union[AssignResult, _Mapping]]] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class CleanupRequest(_message.Message):
    __slots__ = ("session", "gatekeeper", "clock")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    GATEKEEPER_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    session: Session
    gatekeeper: int
    clock: VClock
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., gatekeeper: _Optional[int] = ..., clock: _Optional[_Union[VClock, _Mapping]] = ...) -> None: ...

class CleanupResponse(_message.Message):
    __slots__ = ("released", "collected", "error")
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    COLLECTED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    released: int
    collected: int
    error: Error
    def __init__(self, released: _Optional[int] = ..., collected: _Optional[int] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("events", "edges", "next_id", "created", "collected", "applied_index", "node_id", "leader_id", "leader_hint", "term", "is_leader", "clock_events")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    COLLECTED_FIELD_NUMBER: _ClassVar[int]
    APPLIED_INDEX_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_HINT_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    IS_LEADER_FIELD_NUMBER: _ClassVar[int]
    CLOCK_EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: int
    edges: int
    next_id: int
    created: int
    collected: int
    applied_index: int
    node_id: int
    leader_id: int
    leader_hint: str
    term: int
    is_leader: bool
    clock_events: int
    def __init__(self, events: _Optional[int] = ..., edges: _Optional[int] = ..., next_id: _Optional[int] = ..., created: _Optional[int] = ..., collected: _Optional[int] = ..., applied_index: _Optional[int] = ..., node_id: _Optional[int] = ..., leader_id: _Optional[int] = ..., leader_hint: _Optional[str] = ..., term: _Optional[int] = ..., is_leader: bool = ..., clock_events: _Optional[int] = ...) -> None: ...

class Command(_message.Message):
    __slots__ = ("proposal", "session", "create", "acquire", "release", "assign", "cleanup")
    PROPOSAL_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    CREATE_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    ASSIGN_FIELD_NUMBER: _ClassVar[int]
    CLEANUP_FIELD_NUMBER: _ClassVar[int]
    proposal: int
    session: Session
    create: CreateEventRequest
    acquire: RefsRequest
    release: RefsRequest
    assign: AssignOrderRequest
    cleanup: CleanupRequest
    def __init__(self, proposal: _Optional[int] = ..., session: _Optional[_Union[Session, _Mapping]] = ..., create: _Optional[_Union[CreateEventRequest, _Mapping]] = ..., acquire: _Optional[_Union[RefsRequest, _Mapping]] = ..., release: _Optional[_Union[RefsRequest, _Mapping]] = ..., assign: _Optional[_Union[AssignOrderRequest, _Mapping]] = ..., cleanup: _Optional[_Union[CleanupRequest, _Mapping]] = ...) -> None: ...

class Batch(_message.Message):
    __slots__ = ("commands",)
    COMMANDS_FIELD_NUMBER: _ClassVar[int]
    commands: _containers.RepeatedCompositeFieldContainer[Command]
    def __init__(self, commands: _Optional[_Iterable[_Union[Command, _Mapping]]] = ...) -> None: ...

class RaftEnvelope(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: bytes
    def __init__(self, message: _Optional[bytes] = ...) -> None: ...

class RaftAck(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
