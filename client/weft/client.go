package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Options tune a Client. Zero fields take their defaults.
type Options struct {
	// CallTimeout bounds one call whose context has no deadline, its
	// retries on other gatekeepers included (DialCoordinator), and
	// DialCoordinator's wait for a first configuration. Default 30s.
	CallTimeout time.Duration
	// Attempts, if set, bounds the tries of one Update (the first
	// included). By default only RetryTimeout and ctx bound them, as
	// contention is usually brief and an Update that gives up after a
	// fixed count fails for no fault of its own under load.
	Attempts int
	// RetryTimeout bounds how long Update keeps retrying after aborts
	// (from its start; ctx's deadline, if sooner, wins). Default 30s.
	RetryTimeout time.Duration
	// BackoffMin is the pause before Update's first retry (and before a
	// coordinator client's first retry of a call on another gatekeeper);
	// each retry doubles it, up to BackoffMax, and waits a random time
	// between half of it and all of it. Defaults 2ms and 500ms.
	BackoffMin time.Duration
	BackoffMax time.Duration
	// MessageBytesMax bounds one answer from the server. Default 64 MiB.
	MessageBytesMax int
	// Streams is the number of RunStream streams Run multiplexes programs
	// over. Default 2.
	Streams int
	// NoStream makes Run use one unary call per program instead of streams.
	NoStream bool
	// StreamAgeMax retires a coordinator client's stream this old (its
	// calls in flight finish; the next call opens a stream anew), so that
	// streams spread over gatekeepers that joined after they were opened,
	// as HTTP/2 servers' connection ages do. Dial's streams ignore it.
	// Default 10s.
	StreamAgeMax time.Duration
}

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.RetryTimeout <= 0 {
		o.RetryTimeout = 30 * time.Second
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 2 * time.Millisecond
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(500*time.Millisecond, o.BackoffMin)
	}
	if o.MessageBytesMax <= 0 {
		o.MessageBytesMax = 64 << 20
	}
	if o.Streams <= 0 {
		o.Streams = 2
	}
	if o.StreamAgeMax <= 0 {
		o.StreamAgeMax = 10 * time.Second
	}
	return o
}

// Client is a connection to a Weft server (Dial), or to every live
// gatekeeper of a cluster (DialCoordinator).
type Client struct {
	opts    Options
	conn    *grpc.ClientConn
	rpc     pb.WeftClient
	streams streams
	// dir follows the coordinator (DialCoordinator); nil for Dial.
	dir *directory
	// failover: retry calls that lost their gatekeeper on another one.
	failover bool
}

func optionsOf(opts []Options) Options {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return o.withDefaults()
}

// dialOptions are the options of the Client's connection: the
// interceptor classifying commits (and, on a coordinator client, failing
// over), and the stats handler telling it whether a request was sent.
func (c *Client) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(c.opts.MessageBytesMax)),
		grpc.WithChainUnaryInterceptor(c.intercept), grpc.WithStatsHandler(sendTracker{})}
}

// Dial connects to the server's gRPC address (the connection is made lazily).
func Dial(addr string, opts ...Options) (*Client, error) {
	c := &Client{opts: optionsOf(opts)}
	conn, err := grpc.NewClient(addr, c.dialOptions()...)
	if err != nil {
		return nil, fmt.Errorf("weft: dial %s: %w", addr, err)
	}
	c.conn, c.rpc = conn, pb.NewWeftClient(conn)
	c.streams.open = make([]*runStream, c.opts.Streams)
	return c, nil
}

// Close closes the connection (and stops following the coordinator).
func (c *Client) Close() error {
	if c.dir != nil {
		c.dir.close()
	}
	c.streams.close()
	return c.conn.Close()
}

// call bounds ctx by CallTimeout unless it has a deadline already.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.opts.CallTimeout)
}

// Begin starts a transaction at a fresh snapshot.
func (c *Client) Begin(ctx context.Context) (*Tx, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.rpc.Begin(cctx, &pb.BeginRequest{})
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	return &Tx{c: c, snap: resp.GetSnapshot().GetToken(), seen: map[Ref]bool{}}, nil
}

// BeginAt starts a transaction reading at an earlier snapshot (a
// CommitResult's or another Tx's): historic reads, as long as the server
// keeps that history. Writes committed from it are validated like any
// other transaction's, so they abort if what it read has changed since.
func (c *Client) BeginAt(snapshot string) *Tx {
	return &Tx{c: c, snap: snapshot, seen: map[Ref]bool{}}
}

// Update runs fn in a transaction and commits it. When fn or the commit fails
// with a retryable error (IsRetryable), it waits (capped exponential backoff
// with jitter) and runs fn again in a fresh transaction, for at most
// Options.RetryTimeout (and Options.Attempts tries, if set); fn must
// therefore be safe to run again. Any other error from fn or the commit is
// returned at once. After the last attempt the last error is returned
// wrapped (errors.Is still matches it).
// fn must not call Commit itself.
func (c *Client) Update(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := c.UpdateResult(ctx, fn)
	return err
}

// UpdateResult is Update, also returning the commit's result (the handles
// of created elements, the transaction's snapshot).
func (c *Client) UpdateResult(ctx context.Context, fn func(tx *Tx) error) (*CommitResult, error) {
	deadline := time.Now().Add(c.opts.RetryTimeout)
	var err error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if c.opts.Attempts > 0 && attempt >= c.opts.Attempts {
				return nil, fmt.Errorf("weft: transaction failed %d times: %w", attempt, err)
			}
			if wait := c.backoffOf(attempt); time.Now().Add(wait).After(deadline) {
				return nil, fmt.Errorf("weft: transaction failed %d times in %v (Options.RetryTimeout): %w", attempt, c.opts.RetryTimeout, err)
			} else if werr := sleep(ctx, wait); werr != nil {
				return nil, fmt.Errorf("weft: %w (after %d attempts; last error: %v)", werr, attempt, err)
			}
		}
		var res *CommitResult
		if res, err = c.try(ctx, fn); err == nil || !IsRetryable(err) {
			return res, err
		}
	}
}

func (c *Client) try(ctx context.Context, fn func(tx *Tx) error) (*CommitResult, error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := fn(tx); err != nil {
		return nil, err
	}
	return tx.Commit(ctx)
}

// backoffOf is the pause before retry number attempt (1-based): capped
// exponential, with jitter.
func (c *Client) backoffOf(attempt int) time.Duration {
	d := c.opts.BackoffMax
	if shift := attempt - 1; shift < 30 && c.opts.BackoffMin<<shift < d {
		d = c.opts.BackoffMin << shift
	}
	return d/2 + rand.N(d/2+1)
}

// backoff sleeps before retry number attempt (1-based), or until ctx ends.
func (c *Client) backoff(ctx context.Context, attempt int) error {
	return sleep(ctx, c.backoffOf(attempt))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run runs a node program at a fresh snapshot. params is marshalled to JSON
// (nil: {}; a json.RawMessage is sent as is); the JSON result is unmarshalled
// into result (nil: discarded; a *json.RawMessage keeps it raw).
func (c *Client) Run(ctx context.Context, program string, params, result any) error {
	return c.RunAt(ctx, "", program, params, result)
}

// RunAt runs a node program at a snapshot (a Tx's Snapshot or a commit's):
// a historic query when the snapshot is old. "" means a fresh snapshot.
func (c *Client) RunAt(ctx context.Context, snapshot, program string, params, result any) error {
	req := &pb.RunRequest{Program: program}
	if snapshot != "" {
		req.At = &pb.Snapshot{Token: snapshot}
	}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("weft: params of %s: %v", program, err)}
		}
		req.ParamsJson = string(b)
	}
	out, err := c.run(ctx, req)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(out), result); err != nil {
		return fmt.Errorf("weft: result of %s: %w", program, err)
	}
	return nil
}

// RunRaw runs a node program with params already encoded as JSON (nil:
// {}) and returns its result's JSON as the server sent it, unparsed: for
// callers that pass results on, or decode them their own way.
func (c *Client) RunRaw(ctx context.Context, snapshot, program string, params []byte) ([]byte, error) {
	req := &pb.RunRequest{Program: program, ParamsJson: string(params)}
	if snapshot != "" {
		req.At = &pb.Snapshot{Token: snapshot}
	}
	out, err := c.run(ctx, req)
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// run runs req, within ctx's deadline or else Options.CallTimeout; a
// coordinator client retries it on another gatekeeper when its own went
// away (programs only read, so running one twice is harmless).
func (c *Client) run(ctx context.Context, req *pb.RunRequest) (string, error) {
	if !c.failover {
		return c.runOnce(ctx, req)
	}
	start := time.Now()
	out, err := c.runFailover(ctx, req)
	if err == nil || !lostGatekeeper(err) {
		return out, err
	}
	// Retries share the first try's deadline. (Set only now: a timer per
	// call is a noticeable part of a small program's cost.)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(c.opts.CallTimeout))
		defer cancel()
	}
	for attempt := 1; attempt < failoverAttemptsMax; attempt++ {
		if werr := c.backoff(ctx, attempt); werr != nil {
			if errors.Is(werr, context.Canceled) {
				return "", werr
			}
			return "", err // the deadline passed while gatekeepers were away: say why
		}
		if out, err = c.runFailover(ctx, req); err == nil || !lostGatekeeper(err) {
			return out, err
		}
	}
	return "", err
}

// runFailover is one try of a coordinator client's run.
func (c *Client) runFailover(ctx context.Context, req *pb.RunRequest) (string, error) {
	if err := c.dir.noGatekeeper(); err != nil {
		return "", fromRPC(ctx, err)
	}
	return c.runOnce(ctx, req)
}

// runOnce runs req over a stream, or as a unary call when streams are off
// or the server has none, within ctx's deadline or else Options.CallTimeout.
func (c *Client) runOnce(ctx context.Context, req *pb.RunRequest) (string, error) {
	if !c.opts.NoStream && !c.streams.unsupported.Load() {
		out, err := c.runStreamed(ctx, req)
		if !errors.Is(err, errNoStream) {
			return out, err
		}
		c.streams.unsupported.Store(true)
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.rpc.Run(cctx, req)
	if err != nil {
		return "", fromRPC(cctx, err)
	}
	return resp.GetResultJson(), nil
}

// ProgramInfo describes one program Run accepts.
type ProgramInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Programs lists the programs Run accepts.
func (c *Client) Programs(ctx context.Context) ([]ProgramInfo, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.rpc.Programs(cctx, &pb.ProgramsRequest{})
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	out := make([]ProgramInfo, len(resp.GetPrograms()))
	for i, p := range resp.GetPrograms() {
		out[i] = ProgramInfo{Name: p.GetName(), Description: p.GetDescription()}
	}
	return out, nil
}

// Status is the server's health and size summary.
type Status struct {
	Gatekeepers int    `json:"gatekeepers"`
	Shards      int    `json:"shards"`
	Vertices    int64  `json:"vertices"`
	Edges       int64  `json:"edges"`
	Epoch       uint64 `json:"epoch"`
	Commits     uint64 `json:"commits"`
	Aborts      uint64 `json:"aborts"`
	Programs    uint64 `json:"programs"`
	KronosCalls uint64 `json:"kronos_calls"`
}

// Status reports the server's health and sizes.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	s, err := c.rpc.Status(cctx, &pb.StatusRequest{})
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	return &Status{Gatekeepers: int(s.GetGatekeepers()), Shards: int(s.GetShards()), Vertices: s.GetVertices(),
		Edges: s.GetEdges(), Epoch: s.GetEpoch(), Commits: s.GetCommits(), Aborts: s.GetAborts(),
		Programs: s.GetPrograms(), KronosCalls: s.GetKronosCalls()}, nil
}

var errNoAnswer = errors.New("weft: the server answered without a result")
