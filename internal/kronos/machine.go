package kronos

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// Machine is the replicated state machine: it applies wire commands to a
// Graph deterministically and makes client mutations exactly-once with
// sessions (the last sequence number and reply per client). Like Graph it is
// pure and not safe for concurrent use.
type Machine struct {
	g           *Graph
	cfg         Config
	sessions    map[uint64]*session
	sessionsMax int
	applied     uint64 // log index of the last applied command
}

type session struct {
	seq   uint64
	reply []byte // marshalled response to seq
	used  uint64 // log index of last use, for deterministic eviction
}

// SessionsMax is the default bound on remembered client sessions; the least
// recently used tenth is evicted when it is exceeded.
const SessionsMax = 10000

// NewMachine returns a machine over an empty graph.
func NewMachine(cfg Config, sessionsMax int) (*Machine, error) {
	g, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if sessionsMax <= 0 {
		return nil, fmt.Errorf("kronos: sessionsMax %d must be positive", sessionsMax)
	}
	return &Machine{g: g, cfg: cfg, sessions: map[uint64]*session{}, sessionsMax: sessionsMax}, nil
}

// Graph exposes the graph for read-only queries.
func (m *Machine) Graph() *Graph { return m.g }

// Applied returns the index of the last applied log entry.
func (m *Machine) Applied() uint64 { return m.applied }

// SetApplied records that every entry up to index is applied (entries with
// no commands, like raft's empty ones, included).
func (m *Machine) SetApplied(index uint64) { m.applied = index }

// Apply executes one command at log index and returns its response.
func (m *Machine) Apply(index uint64, c *pb.Command) proto.Message {
	m.applied = index
	sid, seq := c.GetSession().GetClientId(), c.GetSession().GetSeq()
	if sid != 0 {
		if s, ok := m.sessions[sid]; ok {
			if seq == s.seq {
				s.used = index
				return m.cachedReply(c, s.reply)
			}
			if seq < s.seq {
				return errReply(c, &pb.Error{Code: pb.ErrorCode_MALFORMED,
					Message: fmt.Sprintf("kronos: session %d sequence %d is older than %d", sid, seq, s.seq)})
			}
		}
	}
	reply := m.execute(c)
	if sid != 0 {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(reply)
		assert(err == nil, "marshal reply: %v", err)
		m.sessions[sid] = &session{seq: seq, reply: b, used: index}
		m.evictSessions()
	}
	return reply
}

func (m *Machine) evictSessions() {
	if len(m.sessions) <= m.sessionsMax {
		return
	}
	type su struct{ id, used uint64 }
	all := make([]su, 0, len(m.sessions))
	for id, s := range m.sessions {
		all = append(all, su{id, s.used})
	}
	slices.SortFunc(all, func(a, b su) int {
		if a.used != b.used {
			return cmpU64(a.used, b.used)
		}
		return cmpU64(a.id, b.id)
	})
	for _, e := range all[:len(all)-m.sessionsMax*9/10] {
		delete(m.sessions, e.id)
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *Machine) cachedReply(c *pb.Command, b []byte) proto.Message {
	reply := emptyReply(c)
	if err := proto.Unmarshal(b, reply); err != nil {
		panic(fmt.Sprintf("kronos: cached reply: %v", err))
	}
	return reply
}

func emptyReply(c *pb.Command) proto.Message {
	switch c.Op.(type) {
	case *pb.Command_Create:
		return &pb.CreateEventResponse{}
	case *pb.Command_Acquire, *pb.Command_Release:
		return &pb.RefsResponse{}
	case *pb.Command_Assign:
		return &pb.AssignOrderResponse{}
	case *pb.Command_Cleanup:
		return &pb.CleanupResponse{}
	}
	return &pb.RefsResponse{}
}

func errReply(c *pb.Command, e *pb.Error) proto.Message {
	switch r := emptyReply(c).(type) {
	case *pb.CreateEventResponse:
		r.Error = e
		return r
	case *pb.RefsResponse:
		r.Error = e
		return r
	case *pb.AssignOrderResponse:
		r.Error = e
		return r
	case *pb.CleanupResponse:
		r.Error = e
		return r
	}
	panic("unreachable")
}

func (m *Machine) execute(c *pb.Command) proto.Message {
	switch op := c.Op.(type) {
	case *pb.Command_Create:
		n := int(op.Create.GetCount())
		if n == 0 {
			n = 1
		}
		ids, err := m.g.CreateEvents(nil, n)
		return &pb.CreateEventResponse{Ids: ids, Error: WireError(err)}
	case *pb.Command_Acquire:
		return &pb.RefsResponse{Error: WireError(m.g.AcquireRefs(op.Acquire.GetIds()))}
	case *pb.Command_Release:
		n, err := m.g.ReleaseRefs(op.Release.GetIds())
		return &pb.RefsResponse{Collected: uint64(n), Error: WireError(err)}
	case *pb.Command_Assign:
		as, err := AssignmentsFromWire(op.Assign.GetPairs())
		if err != nil {
			return &pb.AssignOrderResponse{Error: WireError(err)}
		}
		res, err := m.g.AssignOrder(nil, as)
		out := &pb.AssignOrderResponse{Error: WireError(err)}
		for _, r := range res {
			out.Results = append(out.Results, &pb.AssignResult{Order: OrderToWire(r.Order), Reversed: r.Reversed})
		}
		return out
	case *pb.Command_Cleanup:
		cl := op.Cleanup.GetClock()
		if cl == nil {
			return &pb.CleanupResponse{Error: WireError(fmt.Errorf("%w: cleanup without a clock", ErrMalformed))}
		}
		rel, col, err := m.g.Cleanup(op.Cleanup.GetGatekeeper(), vclock.Clock{Epoch: cl.Epoch, Counters: cl.Counters})
		return &pb.CleanupResponse{Released: uint64(rel), Collected: uint64(col), Error: WireError(err)}
	}
	return &pb.RefsResponse{Error: WireError(fmt.Errorf("%w: command without an operation", ErrMalformed))}
}

// Query answers a QueryOrder request on the local copy.
func (m *Machine) Query(req *pb.QueryOrderRequest) *pb.QueryOrderResponse {
	pairs := make([]Pair, 0, len(req.GetPairs()))
	for i, p := range req.GetPairs() {
		a, err := RefFromWire(p.GetA())
		if err == nil {
			var b Ref
			b, err = RefFromWire(p.GetB())
			pairs = append(pairs, Pair{a, b})
		}
		if err != nil {
			return &pb.QueryOrderResponse{Error: WireError(fmt.Errorf("pair %d: %w", i, err))}
		}
	}
	orders, err := m.g.QueryOrder(nil, pairs)
	if err != nil {
		return &pb.QueryOrderResponse{Error: WireError(err)}
	}
	out := &pb.QueryOrderResponse{Orders: make([]pb.Order, len(orders))}
	for i, o := range orders {
		out.Orders[i] = OrderToWire(o)
	}
	return out
}

// RefFromWire converts a wire ref.
func RefFromWire(r *pb.Ref) (Ref, error) {
	switch v := r.GetRef().(type) {
	case *pb.Ref_Id:
		return ID(v.Id), nil
	case *pb.Ref_Clock:
		c := v.Clock
		return Ref{Clock: &Clock{Clock: vclock.Clock{Epoch: c.GetEpoch(), Counters: c.GetCounters()}, Owner: c.GetOwner()}}, nil
	}
	return Ref{}, fmt.Errorf("%w: empty event reference", ErrMalformed)
}

// AssignmentsFromWire converts a wire batch.
func AssignmentsFromWire(ps []*pb.AssignPair) ([]Assignment, error) {
	out := make([]Assignment, len(ps))
	for i, p := range ps {
		a, err := RefFromWire(p.GetA())
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", i, err)
		}
		b, err := RefFromWire(p.GetB())
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", i, err)
		}
		out[i] = Assignment{A: a, B: b, Order: OrderFromWire(p.GetOrder())}
		switch p.GetStrength() {
		case pb.Strength_MUST:
			out[i].Strength = Must
		case pb.Strength_PREFER:
			out[i].Strength = Prefer
		}
	}
	return out, nil
}

// OrderToWire and OrderFromWire convert orders.
func OrderToWire(o Order) pb.Order {
	switch o {
	case Before:
		return pb.Order_BEFORE
	case After:
		return pb.Order_AFTER
	case Concurrent:
		return pb.Order_CONCURRENT
	}
	return pb.Order_UNKNOWN_EVENT
}

// OrderFromWire maps a wire order; anything but BEFORE/AFTER/CONCURRENT/UNKNOWN_EVENT
// becomes an invalid Order that AssignOrder rejects.
func OrderFromWire(o pb.Order) Order {
	switch o {
	case pb.Order_BEFORE:
		return Before
	case pb.Order_AFTER:
		return After
	case pb.Order_CONCURRENT:
		return Concurrent
	case pb.Order_UNKNOWN_EVENT:
		return Unknown
	}
	return Order(-1)
}

// WireError maps a core error to its stable wire code (nil for nil).
func WireError(err error) *pb.Error {
	if err == nil {
		return nil
	}
	e := &pb.Error{Message: err.Error()}
	var ce *ConflictError
	switch {
	case errors.As(err, &ce):
		e.Code, e.PairIndex, e.Actual = pb.ErrorCode_MUST_CONFLICT, uint32(ce.Index), OrderToWire(ce.Actual)
	case errors.Is(err, ErrUnknownEvent):
		e.Code = pb.ErrorCode_UNKNOWN_EVENT_ERROR
	case errors.Is(err, ErrSelfOrder):
		e.Code = pb.ErrorCode_SELF_ORDER
	case errors.Is(err, ErrUnderflow):
		e.Code = pb.ErrorCode_REF_UNDERFLOW
	case errors.Is(err, ErrOverflow):
		e.Code = pb.ErrorCode_REF_OVERFLOW
	case errors.Is(err, ErrCollected):
		e.Code = pb.ErrorCode_COLLECTED
	case errors.Is(err, ErrClockInvalid):
		e.Code = pb.ErrorCode_CLOCK_INVALID
	default:
		e.Code = pb.ErrorCode_MALFORMED
	}
	return e
}

const machineMagic = "KRM1"

// Snapshot serialises the machine: applied index, sessions, graph.
func (m *Machine) Snapshot() []byte {
	b := append([]byte(machineMagic), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint64(b[len(machineMagic):], m.applied)
	ids := make([]uint64, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		s := m.sessions[id]
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, s.seq)
		b = binary.AppendUvarint(b, s.used)
		b = binary.AppendUvarint(b, uint64(len(s.reply)))
		b = append(b, s.reply...)
	}
	return m.g.AppendSnapshot(b)
}

// RestoreMachine rebuilds a machine from Snapshot's bytes.
func RestoreMachine(cfg Config, sessionsMax int, b []byte) (*Machine, error) {
	if len(b) < len(machineMagic)+8 || string(b[:len(machineMagic)]) != machineMagic {
		return nil, fmt.Errorf("%w: bad machine header", errSnapshot)
	}
	m, err := NewMachine(cfg, sessionsMax)
	if err != nil {
		return nil, err
	}
	m.applied = binary.BigEndian.Uint64(b[len(machineMagic):])
	r := &reader{b: b[len(machineMagic)+8:]}
	for range r.count() {
		id, seq, used := r.uvarint(), r.uvarint(), r.uvarint()
		n := r.count()
		if r.err != nil {
			break
		}
		m.sessions[id] = &session{seq: seq, used: used, reply: slices.Clone(r.b[:n])}
		r.b = r.b[n:]
	}
	if r.err != nil {
		return nil, r.err
	}
	if m.g, err = Restore(cfg, r.b); err != nil {
		return nil, err
	}
	return m, nil
}
