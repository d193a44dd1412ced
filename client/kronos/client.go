package kronos

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// Order is the relation between the events of a pair.
type Order int8

// Orders as answered by QueryOrder and AssignOrder.
const (
	Concurrent Order = iota
	Before           // a → b
	After            // b → a
	Unknown          // an event does not exist
)

func (o Order) String() string {
	return [...]string{"concurrent", "before", "after", "unknown"}[o]
}

// Strength of an assignment.
type Strength int8

const (
	Must   Strength = 1 // contradiction aborts the batch
	Prefer Strength = 2 // contradiction is reversed and reported
)

// Clock is a vector timestamp stamped by gatekeeper Owner.
type Clock struct {
	Epoch    uint64
	Owner    uint32
	Counters []uint64
}

// Ref names an event by id, or by Clock when non-nil.
type Ref struct {
	ID    uint64
	Clock *Clock
}

// ID is shorthand for Ref{ID: id}.
func ID(id uint64) Ref { return Ref{ID: id} }

// Pair asks for the order of A relative to B.
type Pair struct{ A, B Ref }

// Assignment requests A → B (Before) or B → A (After).
type Assignment struct {
	A        Ref
	Order    Order
	B        Ref
	Strength Strength
}

// AssignResult is the resulting order of one pair.
type AssignResult struct {
	Order    Order
	Reversed bool
}

// Code is the stable code of an API error. Its values are the wire
// protocol's error codes (weft.kronos.v1.ErrorCode), which never change.
type Code int32

// API error codes (docs/kronos.md, "Errors").
const (
	CodeUnknownEvent Code = 1  // a request names an event that does not exist
	CodeSelfOrder    Code = 2  // a pair names one event twice
	CodeMalformed    Code = 3  // missing or invalid fields, empty or oversized batch
	CodeRefUnderflow Code = 4  // a release would take a count below 0
	CodeRefOverflow  Code = 5  // an acquire would take a count above 2^31-1
	CodeMustConflict Code = 6  // a must pair contradicts the graph; the batch is rejected
	CodeNotLeader    Code = 7  // the replica cannot serve the call (retried at the leader)
	CodeOverloaded   Code = 8  // the replica's queue is full (retried after a pause)
	CodeCollected    Code = 9  // a clock below the cleanup watermark
	CodeClockInvalid Code = 10 // a clock contradicts its gatekeeper's chain
	CodeShuttingDown Code = 11 // the replica is stopping (retried elsewhere)
)

var codeNames = [...]string{"", "UNKNOWN_EVENT_ERROR", "SELF_ORDER", "MALFORMED", "REF_UNDERFLOW",
	"REF_OVERFLOW", "MUST_CONFLICT", "NOT_LEADER", "OVERLOADED", "COLLECTED", "CLOCK_INVALID", "SHUTTING_DOWN"}

// String returns the code's wire name, e.g. "MUST_CONFLICT".
func (c Code) String() string {
	if c > 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int32(c))
}

// Error is an API error from the service, with its stable code.
type Error struct {
	Code      Code
	Message   string
	PairIndex int   // for CodeMustConflict
	Actual    Order // for CodeMustConflict
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "kronos: " + e.Code.String()
	}
	return e.Message
}

// Is lets errors.Is match on the code alone: errors.Is(err, ErrMustConflict).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels to match with errors.Is, one per code. A call retries
// CodeNotLeader, CodeOverloaded and CodeShuttingDown; when its attempts run
// out, its error matches both ErrUnavailable and the last error it got.
var (
	ErrUnknownEvent = &Error{Code: CodeUnknownEvent}
	ErrSelfOrder    = &Error{Code: CodeSelfOrder}
	ErrMalformed    = &Error{Code: CodeMalformed}
	ErrUnderflow    = &Error{Code: CodeRefUnderflow}
	ErrOverflow     = &Error{Code: CodeRefOverflow}
	ErrMustConflict = &Error{Code: CodeMustConflict}
	ErrNotLeader    = &Error{Code: CodeNotLeader}
	ErrOverloaded   = &Error{Code: CodeOverloaded}
	ErrCollected    = &Error{Code: CodeCollected}
	ErrClockInvalid = &Error{Code: CodeClockInvalid}
	ErrShuttingDown = &Error{Code: CodeShuttingDown}
	// ErrUnavailable: no replica answered as leader within the call's attempts.
	ErrUnavailable = errors.New("kronos: no leader reachable")
)

// Options tune a Client.
type Options struct {
	// CallTimeout bounds one RPC attempt. Default 2s.
	CallTimeout time.Duration
	// Attempts bounds the tries of one call across replicas. Default 50.
	Attempts int
	// Backoff is the pause between tries when no leader is known. Default 20ms.
	Backoff time.Duration
}

// Client is a connection to a Kronos replica group.
type Client struct {
	opts   Options
	addrs  []string
	conns  map[string]*grpc.ClientConn
	mu     sync.Mutex
	leader string
	lanes  []*lane // idle sessions
}

// Dial connects to the replicas at addrs (connections are made lazily).
func Dial(addrs []string, opts ...Options) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("kronos: no addresses")
	}
	o := Options{CallTimeout: 2 * time.Second, Attempts: 50, Backoff: 20 * time.Millisecond}
	if len(opts) > 0 {
		if opts[0].CallTimeout > 0 {
			o.CallTimeout = opts[0].CallTimeout
		}
		if opts[0].Attempts > 0 {
			o.Attempts = opts[0].Attempts
		}
		if opts[0].Backoff > 0 {
			o.Backoff = opts[0].Backoff
		}
	}
	c := &Client{opts: o, addrs: append([]string(nil), addrs...), conns: map[string]*grpc.ClientConn{}, leader: addrs[0]}
	for _, a := range addrs {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.conns[a] = conn
	}
	return c, nil
}

// Close closes every connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = map[string]*grpc.ClientConn{}
	return nil
}

func (c *Client) stub(addr string) (pb.KronosClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, ok := c.conns[addr]
	if !ok {
		var err error
		if conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return nil, err
		}
		c.conns[addr] = conn
	}
	return pb.NewKronosClient(conn), nil
}

func (c *Client) target() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

// moveOn picks the hinted leader, or the next address after a failure.
func (c *Client) moveOn(failed, hint string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hint != "" && hint != failed {
		c.leader = hint
		return
	}
	for i, a := range c.addrs {
		if a == failed {
			c.leader = c.addrs[(i+1)%len(c.addrs)]
			return
		}
	}
	c.leader = c.addrs[0]
}

// call runs one RPC against the leader, following hints and retrying
// transport failures; f returns the response's API error (or nil).
func call[R any](ctx context.Context, c *Client, f func(context.Context, pb.KronosClient) (R, *pb.Error, error)) (R, error) {
	var zero R
	var last error = ErrUnavailable
	for range c.opts.Attempts {
		addr := c.target()
		stub, err := c.stub(addr)
		if err != nil {
			return zero, err
		}
		cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
		r, apiErr, err := f(cctx, stub)
		cancel()
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return zero, ctx.Err()
			}
			if s, ok := status.FromError(err); ok && s.Code() != codes.Unavailable && s.Code() != codes.DeadlineExceeded && s.Code() != codes.Canceled {
				return zero, err
			}
			last = err
			c.moveOn(addr, "")
		case apiErr == nil:
			return r, nil
		case Code(apiErr.GetCode()) == CodeNotLeader || Code(apiErr.GetCode()) == CodeShuttingDown:
			last = fromWire(apiErr)
			c.moveOn(addr, apiErr.GetLeaderHint())
		case Code(apiErr.GetCode()) == CodeOverloaded:
			last = fromWire(apiErr)
		default:
			return zero, fromWire(apiErr)
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(c.opts.Backoff):
		}
	}
	return zero, fmt.Errorf("%w: %w", ErrUnavailable, last)
}

func fromWire(e *pb.Error) *Error {
	return &Error{Code: Code(e.GetCode()), Message: e.GetMessage(), PairIndex: int(e.GetPairIndex()), Actual: orderFromWire(e.GetActual())}
}

// lane is one exactly-once session: the state machine keeps one sequence
// number per client id, so a lane carries one mutation at a time and
// concurrent calls take different lanes (created on demand, reused after).
type lane struct {
	id  uint64
	seq uint64
}

// takeSession reserves a lane for one mutation (and all its retries, which
// reuse the sequence number); done returns the lane.
func (c *Client) takeSession() (*pb.Session, func()) {
	c.mu.Lock()
	var l *lane
	if n := len(c.lanes); n > 0 {
		l, c.lanes = c.lanes[n-1], c.lanes[:n-1]
	}
	c.mu.Unlock()
	if l == nil {
		l = &lane{id: randomID()}
	}
	l.seq++
	return &pb.Session{ClientId: l.id, Seq: l.seq}, func() {
		c.mu.Lock()
		c.lanes = append(c.lanes, l)
		c.mu.Unlock()
	}
}

func randomID() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("kronos: no randomness: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:]) | 1
}

// CreateEvent creates one event holding one reference.
func (c *Client) CreateEvent(ctx context.Context) (uint64, error) {
	ids, err := c.CreateEvents(ctx, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// CreateEvents creates n events, each holding one reference.
func (c *Client) CreateEvents(ctx context.Context, n int) ([]uint64, error) {
	sess, done := c.takeSession()
	defer done()
	req := &pb.CreateEventRequest{Session: sess, Count: uint32(n)}
	r, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.CreateEventResponse, *pb.Error, error) {
		r, err := k.CreateEvent(ctx, req)
		return r, r.GetError(), err
	})
	if err != nil {
		return nil, err
	}
	return r.GetIds(), nil
}

// AcquireRef adds one reference per listed id.
func (c *Client) AcquireRef(ctx context.Context, ids ...uint64) error {
	sess, done := c.takeSession()
	defer done()
	req := &pb.RefsRequest{Session: sess, Ids: ids}
	_, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.RefsResponse, *pb.Error, error) {
		r, err := k.AcquireRef(ctx, req)
		return r, r.GetError(), err
	})
	return err
}

// ReleaseRef drops one reference per listed id and returns the number of
// events collected.
func (c *Client) ReleaseRef(ctx context.Context, ids ...uint64) (int, error) {
	sess, done := c.takeSession()
	defer done()
	req := &pb.RefsRequest{Session: sess, Ids: ids}
	r, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.RefsResponse, *pb.Error, error) {
		r, err := k.ReleaseRef(ctx, req)
		return r, r.GetError(), err
	})
	return int(r.GetCollected()), err
}

// QueryOrder answers the order of each pair. Pairs a follower could not
// answer are asked again of the leader.
func (c *Client) QueryOrder(ctx context.Context, pairs []Pair) ([]Order, error) {
	req := &pb.QueryOrderRequest{Pairs: make([]*pb.Pair, len(pairs))}
	for i, p := range pairs {
		req.Pairs[i] = &pb.Pair{A: refToWire(p.A), B: refToWire(p.B)}
	}
	out := make([]Order, len(pairs))
	idx := make([]int, len(pairs))
	for i := range idx {
		idx[i] = i
	}
	for range c.opts.Attempts {
		r, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.QueryOrderResponse, *pb.Error, error) {
			r, err := k.QueryOrder(ctx, req)
			return r, r.GetError(), err
		})
		if err != nil {
			return nil, err
		}
		if len(r.GetOrders()) != len(req.Pairs) {
			return nil, fmt.Errorf("kronos: %d answers for %d pairs", len(r.GetOrders()), len(req.Pairs))
		}
		var again []*pb.Pair
		var againIdx []int
		for i, o := range r.GetOrders() {
			if o == pb.Order_UNRESOLVED {
				again, againIdx = append(again, req.Pairs[i]), append(againIdx, idx[i])
				continue
			}
			out[idx[i]] = orderFromWire(o)
		}
		if len(again) == 0 {
			return out, nil
		}
		c.moveOn(c.target(), r.GetLeaderHint())
		req, idx = &pb.QueryOrderRequest{Pairs: again}, againIdx
		if r.GetLeaderHint() == "" {
			// The replica knows no leader (an election is on): pause as call
			// does, or the attempts run out before a leader is elected.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(c.opts.Backoff):
			}
		}
	}
	return nil, ErrUnavailable
}

// AssignOrder applies an atomic batch: Must pairs first, then Prefer pairs,
// each group in request order. A contradicted Must fails the whole batch with
// an *Error of code MUST_CONFLICT naming the pair and the true order.
func (c *Client) AssignOrder(ctx context.Context, as []Assignment) ([]AssignResult, error) {
	sess, done := c.takeSession()
	defer done()
	req := &pb.AssignOrderRequest{Session: sess, Pairs: make([]*pb.AssignPair, len(as))}
	for i, a := range as {
		req.Pairs[i] = &pb.AssignPair{A: refToWire(a.A), B: refToWire(a.B), Order: orderToWire(a.Order), Strength: pb.Strength(a.Strength)}
	}
	r, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.AssignOrderResponse, *pb.Error, error) {
		r, err := k.AssignOrder(ctx, req)
		return r, r.GetError(), err
	})
	if err != nil {
		return nil, err
	}
	out := make([]AssignResult, len(r.GetResults()))
	for i, x := range r.GetResults() {
		out[i] = AssignResult{Order: orderFromWire(x.GetOrder()), Reversed: x.GetReversed()}
	}
	return out, nil
}

// Cleanup reports gatekeeper gk's cleanup clock; it returns the events
// released from chains and collected.
func (c *Client) Cleanup(ctx context.Context, gk uint32, clock Clock) (released, collected int, err error) {
	sess, done := c.takeSession()
	defer done()
	req := &pb.CleanupRequest{Session: sess, Gatekeeper: gk,
		Clock: &pb.VClock{Epoch: clock.Epoch, Owner: clock.Owner, Counters: clock.Counters}}
	r, err := call(ctx, c, func(ctx context.Context, k pb.KronosClient) (*pb.CleanupResponse, *pb.Error, error) {
		r, err := k.Cleanup(ctx, req)
		return r, r.GetError(), err
	})
	return int(r.GetReleased()), int(r.GetCollected()), err
}

// Stats returns the statistics of the replica at addr ("" means the leader).
func (c *Client) Stats(ctx context.Context, addr string) (*pb.StatsResponse, error) {
	if addr == "" {
		addr = c.target()
	}
	stub, err := c.stub(addr)
	if err != nil {
		return nil, err
	}
	return stub.Stats(ctx, &pb.StatsRequest{})
}

func refToWire(r Ref) *pb.Ref {
	if r.Clock != nil {
		return &pb.Ref{Ref: &pb.Ref_Clock{Clock: &pb.VClock{Epoch: r.Clock.Epoch, Owner: r.Clock.Owner, Counters: r.Clock.Counters}}}
	}
	return &pb.Ref{Ref: &pb.Ref_Id{Id: r.ID}}
}

func orderToWire(o Order) pb.Order {
	switch o {
	case Before:
		return pb.Order_BEFORE
	case After:
		return pb.Order_AFTER
	}
	return pb.Order_ORDER_UNSPECIFIED
}

func orderFromWire(o pb.Order) Order {
	switch o {
	case pb.Order_BEFORE:
		return Before
	case pb.Order_AFTER:
		return After
	case pb.Order_CONCURRENT:
		return Concurrent
	}
	return Unknown
}
