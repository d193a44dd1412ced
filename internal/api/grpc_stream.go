package api

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// StreamInflightMax bounds the requests of one RunStream the server runs at
// once; while at the bound it stops reading the stream, and gRPC's flow
// control makes the client wait.
const StreamInflightMax = 256

// streamTimeoutMax bounds a request's timeout_micros (a client asking for
// more gets this).
const streamTimeoutMax = 10 * time.Minute

// errDuplicateID answers a request whose id is already in flight.
var errDuplicateID = invalid("run_stream: request id already in flight on this stream")

// runStream is one RunStream call's state: the requests in flight (to cancel
// them), the workers that run them, and the lock that serialises Send.
type runStream struct {
	g      *grpcService
	stream pb.Weft_RunStreamServer
	ctx    context.Context

	sendMu sync.Mutex
	sendOK bool // false once a Send failed: the stream is broken

	mu       sync.Mutex
	inflight map[uint64]*reqCtx

	jobs    chan *pb.RunStreamRequest
	slots   chan struct{} // one token per request in flight
	workers int           // started so far (only the receive loop touches it)
	wg      sync.WaitGroup
}

// RunStream serves many programs over one stream (see weft.proto). Requests
// run on a pool of workers started on demand, at most StreamInflightMax at
// once; replies are sent as programs finish. When the client closes its
// side, the requests in flight finish and are answered before the call ends;
// when the stream breaks, they are cancelled.
func (g *grpcService) RunStream(stream pb.Weft_RunStreamServer) error {
	s := &runStream{g: g, stream: stream, ctx: stream.Context(), sendOK: true,
		inflight: map[uint64]*reqCtx{},
		jobs:     make(chan *pb.RunStreamRequest),
		slots:    make(chan struct{}, StreamInflightMax)}
	stopSweep := make(chan struct{})
	swept := make(chan struct{})
	go s.sweep(stopSweep, swept)
	err := s.receive()
	if err != nil {
		s.cancelAll(context.Canceled)
	}
	close(s.jobs)
	s.wg.Wait()
	close(stopSweep)
	<-swept
	return err
}

// receive reads requests until the client closes its side (nil) or the
// stream fails.
func (s *runStream) receive() error {
	for {
		req, err := s.stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if req.GetCancel() {
			s.mu.Lock()
			if rc, ok := s.inflight[req.GetId()]; ok {
				rc.cancel(context.Canceled)
			}
			s.mu.Unlock()
			continue
		}
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
		s.dispatch(req)
	}
}

// dispatch hands req to an idle worker, or starts one if fewer than
// StreamInflightMax run (a slot is held, so one will free up otherwise).
func (s *runStream) dispatch(req *pb.RunStreamRequest) {
	select {
	case s.jobs <- req:
		return
	default:
	}
	if s.workers < StreamInflightMax {
		s.workers++
		s.wg.Add(1)
		go s.work(req)
		return
	}
	s.jobs <- req
}

func (s *runStream) work(req *pb.RunStreamRequest) {
	defer s.wg.Done()
	for {
		s.serve(req)
		<-s.slots
		var ok bool
		if req, ok = <-s.jobs; !ok {
			return
		}
	}
}

// serve runs one request and sends its reply.
func (s *runStream) serve(req *pb.RunStreamRequest) {
	start := time.Now()
	id := req.GetId()
	ctx := s.requestContext(req)
	s.mu.Lock()
	_, dup := s.inflight[id]
	if !dup {
		s.inflight[id] = ctx
	}
	s.mu.Unlock()
	var (
		out []byte
		err error
	)
	if dup {
		err = errDuplicateID
	} else {
		r := req.GetRun()
		out, err = s.g.svc.run(ctx, r.GetProgram(), []byte(r.GetParamsJson()), r.GetAt().GetToken())
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
	}
	code := CodeOf(err)
	s.g.m.observe("grpc", "run_stream", code, err, time.Since(start))
	resp := &pb.RunStreamResponse{Id: id}
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) && s.ctx.Err() == nil && errors.Is(err, context.Canceled) {
			return // cancelled by the client: no reply
		}
		resp.Error = errorPB(code, err.Error())
	} else {
		resp.ResultJson = string(out)
	}
	s.sendMu.Lock()
	if s.sendOK && s.stream.Send(resp) != nil {
		s.sendOK = false
	}
	s.sendMu.Unlock()
}

func (s *runStream) requestContext(req *pb.RunStreamRequest) *reqCtx {
	rc := &reqCtx{Context: s.ctx}
	if us := req.GetTimeoutMicros(); us > 0 {
		rc.deadline = time.Now().Add(time.Duration(min(us, uint64(streamTimeoutMax/time.Microsecond))) * time.Microsecond)
	}
	return rc
}

func (s *runStream) cancelAll(err error) {
	s.mu.Lock()
	for _, rc := range s.inflight {
		rc.cancel(err)
	}
	s.mu.Unlock()
}

// sweepEvery is how often a stream looks for requests past their deadline:
// a deadline fires up to this late.
const sweepEvery = 20 * time.Millisecond

// sweep cancels requests past their deadline until stop closes.
func (s *runStream) sweep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			for _, rc := range s.inflight {
				if !rc.deadline.IsZero() && !now.Before(rc.deadline) {
					rc.cancel(context.DeadlineExceeded)
				}
			}
			s.mu.Unlock()
		}
	}
}

// reqCtx is one stream request's context: the stream's, with its own
// cancellation and deadline. context.WithTimeout would cost a timer and a
// registration with the stream's context per request (a tenth of a small
// program's CPU); here the stream's sweeper enforces deadlines, and the
// stream cancels every request when it breaks. Done's channel is made only
// if someone asks for it.
type reqCtx struct {
	context.Context // the stream's
	deadline        time.Time

	mu   sync.Mutex
	done chan struct{}
	err  error
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *reqCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && (c.deadline.IsZero() || d.Before(c.deadline)) {
		return d, true
	}
	return c.deadline, !c.deadline.IsZero()
}

func (c *reqCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *reqCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.Context.Err()
}

func (c *reqCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done == nil {
		c.done = closedChan
	} else {
		close(c.done)
	}
}
