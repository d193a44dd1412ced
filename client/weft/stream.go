package weft

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Programs run over RunStream (weft.proto): a few long-lived streams per
// Client carry every Run, each request tagged with an id its reply echoes.
// A stream message costs a fraction of a unary call's HTTP/2 stream set-up
// and headers, which dominate small programs like get_node. A server
// without RunStream answers Unimplemented: the Client then uses unary Run
// for the rest of its life.

// runStream is one open RunStream: the requests waiting for their replies,
// and the lock that serialises sends (gRPC allows one sender at a time).
type runStream struct {
	stream pb.Weft_RunStreamClient
	cancel context.CancelFunc
	addr   string    // the server's address, as its connection reports it
	born   time.Time // opened at

	sendMu sync.Mutex

	mu      sync.Mutex
	pending map[uint64]pendingCall
	nextID  uint64
	err     error // set once the stream broke; pending calls got it
	// retired: no new calls; the stream ends once its pending calls are
	// answered (its server is closing, or left the configuration).
	retired bool
}

// pendingCall is a request waiting for its reply, failed by the stream's
// sweeper at its deadline.
type pendingCall struct {
	ch       chan streamReply
	deadline time.Time
}

type streamReply struct {
	resp *pb.RunStreamResponse
	err  error // the stream broke
}

// errNoStream means the server has no RunStream: fall back to unary calls.
var errNoStream = errors.New("weft: server has no RunStream")

// streams is the Client's pool of streams.
type streams struct {
	unsupported atomic.Bool
	next        atomic.Uint64
	mu          sync.Mutex
	open        []*runStream // len = Options.Streams; nil or broken slots are reopened
	closed      bool
}

var replyChans = sync.Pool{New: func() any { return make(chan streamReply, 1) }}

// getStream returns a live stream, opening one in an empty or broken slot;
// opening waits for a connection at most until deadline.
func (c *Client) getStream(ctx context.Context, deadline time.Time) (*runStream, error) {
	s := &c.streams
	i := int(s.next.Add(1) % uint64(len(s.open)))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &Error{Code: CodeUnavailable, Message: "weft: client closed"}
	}
	if rs := s.open[i]; rs != nil && !rs.broken() {
		if !c.failover || time.Since(rs.born) < c.opts.StreamAgeMax {
			return rs, nil
		}
		rs.retire() // old: reopen it, maybe on a gatekeeper that joined since
	}
	sctx, cancel := context.WithCancel(context.Background())
	// The stream outlives this call, but its opening is bounded by the
	// call's deadline: it blocks while no server is connected yet.
	octx, ocancel := context.WithDeadline(ctx, deadline)
	opened := context.AfterFunc(octx, cancel)
	st, err := c.rpc.RunStream(sctx)
	stillOpen := opened()
	ended := octx.Err() // before ocancel, which sets it
	ocancel()
	if err != nil || !stillOpen {
		cancel()
		if ended != nil {
			return nil, ended
		}
		return nil, streamErr(ctx, err) // not sctx: cancelled just now
	}
	rs := &runStream{stream: st, cancel: cancel, pending: map[uint64]pendingCall{}, born: time.Now()}
	if p, ok := peer.FromContext(st.Context()); ok && p.Addr != nil {
		rs.addr = p.Addr.String()
	}
	s.open[i] = rs
	go rs.receive()
	go rs.sweep(sctx)
	return rs, nil
}

func (s *streams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, rs := range s.open {
		if rs != nil {
			rs.cancel()
		}
	}
}

// retireExcept retires the streams whose server is not in addrs (a
// coordinator client's gatekeepers changed): gRPC drains a connection it
// no longer balances over but keeps its streams, which would keep using a
// gatekeeper the coordinator removed. (A gatekeeper listed by host name
// never matches its connection's IP address: its streams are retired at
// every change, which costs a reopen, not a wrong answer.)
func (s *streams) retireExcept(addrs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.open {
		if rs != nil && !slices.Contains(addrs, rs.addr) {
			rs.retire()
		}
	}
}

func (rs *runStream) broken() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.err != nil || rs.retired
}

// retire takes the stream out of use; it ends once its pending calls are
// answered or given up.
func (rs *runStream) retire() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.retired = true
	rs.endIfDrainedLocked()
}

// endIfDrainedLocked ends a retired stream without pending calls.
func (rs *runStream) endIfDrainedLocked() {
	if rs.retired && len(rs.pending) == 0 {
		rs.cancel()
	}
}

// receive hands each reply to its caller until the stream ends, then fails
// every call still waiting.
func (rs *runStream) receive() {
	for {
		resp, err := rs.stream.Recv()
		if err != nil {
			if status.Code(err) == codes.Unimplemented {
				err = errNoStream
			}
			rs.mu.Lock()
			rs.err = err
			for id, p := range rs.pending {
				p.ch <- streamReply{err: err}
				delete(rs.pending, id)
			}
			rs.mu.Unlock()
			rs.cancel()
			return
		}
		rs.mu.Lock()
		p, ok := rs.pending[resp.GetId()]
		delete(rs.pending, resp.GetId())
		rs.endIfDrainedLocked()
		rs.mu.Unlock()
		if ok { // else: the caller gave up on it, or the sweeper failed it
			p.ch <- streamReply{resp: resp}
		}
	}
}

// sweepEvery is how often a stream fails calls past their deadline: a
// deadline fires up to this late. (A timer per call would cost a tenth of
// a small program's CPU.)
const sweepEvery = 20 * time.Millisecond

// sweep fails calls past their deadline, and asks the server to cancel
// them, until the stream ends.
func (rs *runStream) sweep(ctx context.Context) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	var expired []uint64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			expired = expired[:0]
			rs.mu.Lock()
			for id, p := range rs.pending {
				if !now.Before(p.deadline) {
					p.ch <- streamReply{err: context.DeadlineExceeded}
					delete(rs.pending, id)
					expired = append(expired, id)
				}
			}
			rs.endIfDrainedLocked()
			rs.mu.Unlock()
			for _, id := range expired {
				_ = rs.send(&pb.RunStreamRequest{Id: id, Cancel: true}) // best effort
			}
		}
	}
}

// register reserves an id and the channel its reply comes on.
func (rs *runStream) register(deadline time.Time) (uint64, chan streamReply, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.err != nil {
		return 0, nil, rs.err
	}
	rs.nextID++
	ch := replyChans.Get().(chan streamReply)
	rs.pending[rs.nextID] = pendingCall{ch: ch, deadline: deadline}
	return rs.nextID, ch, nil
}

// forget drops a call that gave up; it reports whether a reply may still be
// on its way into ch (then ch must not be reused).
func (rs *runStream) forget(id uint64) (delivered bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.pending[id]; ok {
		delete(rs.pending, id)
		rs.endIfDrainedLocked()
		return false
	}
	return true
}

func (rs *runStream) send(req *pb.RunStreamRequest) error {
	rs.sendMu.Lock()
	defer rs.sendMu.Unlock()
	return rs.stream.Send(req)
}

// runStreamed runs req over a stream, within ctx's deadline or else
// Options.CallTimeout; errNoStream means use unary Run.
func (c *Client) runStreamed(ctx context.Context, req *pb.RunRequest) (string, error) {
	now := time.Now()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = now.Add(c.opts.CallTimeout)
	}
	rs, err := c.getStream(ctx, deadline)
	if err != nil {
		return "", err
	}
	id, ch, err := rs.register(deadline)
	if err != nil {
		return "", streamErr(ctx, err)
	}
	sreq := &pb.RunStreamRequest{Id: id, Run: req,
		TimeoutMicros: uint64(max(deadline.Sub(now), time.Microsecond) / time.Microsecond)}
	// io.EOF means the stream ended: its status (UNIMPLEMENTED from a
	// server without RunStream, UNAVAILABLE from one going away) comes to
	// receive, which fails this call with it, so wait below. Any other
	// error left the stream alive and the request unsent.
	if err := rs.send(sreq); err != nil && !errors.Is(err, io.EOF) {
		if !rs.forget(id) {
			replyChans.Put(ch)
			return "", streamErr(ctx, err)
		}
		r := <-ch // the stream broke and receive failed the call already
		return "", streamErr(ctx, r.err)
	}
	select {
	case r := <-ch:
		replyChans.Put(ch)
		if r.err == context.DeadlineExceeded { // the sweeper's
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "", r.err
		}
		if r.err != nil {
			return "", streamErr(ctx, r.err)
		}
		if e := r.resp.GetError(); e != nil {
			if e.GetCode() == pb.ErrorCode_UNAVAILABLE {
				rs.retire() // the server is closing: open the next stream elsewhere
			}
			return "", fromPB(e)
		}
		return r.resp.GetResultJson(), nil
	case <-ctx.Done():
		if !rs.forget(id) {
			replyChans.Put(ch)
			_ = rs.send(&pb.RunStreamRequest{Id: id, Cancel: true}) // best effort
		}
		return "", ctx.Err()
	}
}

// streamErr classifies a broken stream's error like a failed unary call.
func streamErr(ctx context.Context, err error) error {
	if errors.Is(err, errNoStream) {
		return err
	}
	if status.Code(err) == codes.Canceled && ctx.Err() == nil {
		// The stream was reset (a server stopping resets its streams with
		// CANCEL) or closed, not this call cancelled: the server is gone.
		return &Error{Code: CodeUnavailable, Message: "weft: run stream ended: " + status.Convert(err).Message()}
	}
	return fromRPC(ctx, err)
}
