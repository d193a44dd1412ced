package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/kv/kvcore"
)

// Types shared with the server.
type (
	// Version is a vector clock over client sessions.
	Version = kvcore.Version
	// Sibling is one ⟨version, value⟩ of a key.
	Sibling = kvcore.Sibling
	// Meta is a server's description of the store.
	Meta = kvcore.Meta
	// CandidatesResponse is a page of a server's detector candidates.
	CandidatesResponse = kvcore.CandidatesResponse
)

// Errors (test with errors.Is).
var (
	ErrQuorum          = kvcore.ErrQuorum
	ErrTooManySiblings = kvcore.ErrTooManySiblings
	ErrInvalid         = kvcore.ErrInvalid
	ErrUnavailable     = kvcore.ErrUnavailable
	ErrOverloaded      = kvcore.ErrOverloaded
	ErrClosed          = kvcore.ErrClosed
	// ErrPaused: the servers are fenced for a rollback; wait and retry,
	// then check Generation.
	ErrPaused = kvcore.ErrPaused
)

// Options configure a Client. The zero value takes every default.
type Options struct {
	// R and W are the session's quorum; 0 takes the servers' suggestion.
	R, W int
	// Preferred is the first round's fan-out; 0 means all N replicas.
	Preferred int
	// RoundTimeout is how long a round waits for answers before the
	// second round (or failure). Default 500 ms.
	RoundTimeout time.Duration
	// Tick is the timeout granularity. Default 10 ms.
	Tick time.Duration
	// NoReadRepair turns read repair off.
	NoReadRepair bool
	// Actor is the session's actor id; 0 draws a random one. Two live
	// sessions must never share one.
	Actor uint64
	// HTTPClient is used for every call; nil uses a private one.
	HTTPClient *http.Client
	// FollowAdvice makes the session adopt the R and W a rollback
	// coordinator advises (servers pass it on in their answers once
	// violations are frequent: §IV's switch to sequential consistency).
	FollowAdvice bool
}

// Client is one session against the store.
type Client struct {
	meta  Meta
	peers []string
	hc    *http.Client
	tick  time.Duration
	round time.Duration

	mu     sync.Mutex
	sess   *kvcore.Session
	closed bool
	bg     sync.WaitGroup // read repairs and trailing replica calls

	// Replica calls run on long-lived workers (at most workersMax, each
	// leaving after workerIdle without work) so their stacks stay grown
	// between calls: a goroutine per call grew its stack through the JSON
	// codec every time (about an eighth of a GET's CPU).
	work    chan func()
	workers atomic.Int32
	quit    chan struct{}

	follow bool
	gen    atomic.Uint64
	advice atomic.Pointer[kvcore.Advice]
}

// Dial fetches the metadata from the first server of servers that answers
// and returns a client for the whole ring.
func Dial(ctx context.Context, servers []string, opts Options) (*Client, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no server addresses", ErrInvalid)
	}
	c := &Client{hc: opts.HTTPClient, tick: opts.Tick, round: opts.RoundTimeout, follow: opts.FollowAdvice,
		work: make(chan func()), quit: make(chan struct{})}
	if c.hc == nil {
		c.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	}
	if c.tick <= 0 {
		c.tick = kvcore.TickDefault
	}
	if c.round <= 0 {
		c.round = 500 * time.Millisecond
	}
	var errs []error
	for _, addr := range servers {
		err := c.call(ctx, addr, http.MethodGet, "/v1/kv/meta", nil, &c.meta)
		if err == nil {
			break
		}
		errs = append(errs, err)
	}
	if len(errs) == len(servers) {
		return nil, fmt.Errorf("kv: no server answered: %w", errors.Join(errs...))
	}
	c.peers = c.meta.Peers
	c.gen.Store(c.meta.Gen)
	c.advice.Store(c.meta.Advice)
	ring, err := kvcore.NewRing(len(c.peers), c.meta.VNodes)
	if err != nil {
		return nil, err
	}
	q := kvcore.Quorum{N: c.meta.N, R: c.meta.R, W: c.meta.W, Preferred: opts.Preferred, ReadRepair: !opts.NoReadRepair,
		RoundTicks: max(1, int(c.round/c.tick))}
	if opts.R > 0 {
		q.R = opts.R
	}
	if opts.W > 0 {
		q.W = opts.W
	}
	actor := opts.Actor
	for actor == 0 {
		actor = rand.Uint64()
	}
	if c.follow && c.meta.Advice != nil {
		q.R, q.W = c.meta.Advice.R, c.meta.Advice.W
	}
	if c.sess, err = kvcore.NewSession(ring, actor, q); err != nil {
		return nil, err
	}
	return c, nil
}

// Generation is the highest rollback generation any server has answered
// with. When it grows, a rollback discarded recent writes (possibly this
// session's): work based on what this session read before must be redone
// from the restored state.
func (c *Client) Generation() uint64 { return c.gen.Load() }

// Advice is the quorum the servers last advised (ok false: none).
func (c *Client) Advice() (r, w int, ok bool) {
	if a := c.advice.Load(); a != nil {
		return a.R, a.W, true
	}
	return 0, 0, false
}

// observe records a server's generation and advice.
func (c *Client) observe(gen uint64, adv *kvcore.Advice) {
	for {
		g := c.gen.Load()
		if gen <= g || c.gen.CompareAndSwap(g, gen) {
			break
		}
	}
	if adv == nil {
		return
	}
	if old := c.advice.Swap(adv); c.follow && (old == nil || *old != *adv) {
		c.mu.Lock()
		q := c.sess.Quorum()
		q.R, q.W = adv.R, adv.W
		_ = c.sess.SetQuorum(q) // invalid advice is ignored
		c.mu.Unlock()
	}
}

// Meta is the metadata the client joined with.
func (c *Client) Meta() Meta { return c.meta }

// Quorum is the session's quorum.
func (c *Client) Quorum() kvcore.Quorum {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.Quorum()
}

// Close waits for background calls (read repairs, replicas still being
// written after a PUT's quorum) and makes further calls fail.
func (c *Client) Close() error {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	c.bg.Wait()
	if !already {
		close(c.quit)
	}
	return nil
}

// ReqOption adjusts one request.
type ReqOption func(*kvcore.Quorum)

// WithQuorum sets R and W for one request (0 keeps the session's).
func WithQuorum(r, w int) ReqOption {
	return func(q *kvcore.Quorum) {
		if r > 0 {
			q.R = r
		}
		if w > 0 {
			q.W = w
		}
	}
}

// GetResult is a GET's answer.
type GetResult struct {
	// Siblings are the key's concurrent values (none: never written).
	Siblings []Sibling
	// Context is their versions: pass it to Put to supersede them.
	Context []Version
	// Acks is the replicas that answered in time; Round the round (1, 2).
	Acks, Round int
}

// Get reads key's siblings from R of its replicas.
func (c *Client) Get(ctx context.Context, key string, opts ...ReqOption) (GetResult, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return GetResult{}, ErrClosed
	}
	q := c.requestQuorum(opts)
	op, err := c.sess.Get(key, q)
	c.mu.Unlock()
	if err != nil {
		return GetResult{}, err
	}
	res, err := c.run(ctx, op)
	if err != nil {
		return GetResult{}, err
	}
	return GetResult{Siblings: res.Siblings, Context: kvcore.Versions(res.Siblings), Acks: res.Acks, Round: res.Round}, nil
}

// Put writes value to key on W of its replicas, superseding the versions in
// context (nil: a blind write, which leaves existing values as siblings).
// It returns the version written.
func (c *Client) Put(ctx context.Context, key string, value []byte, context []Version, opts ...ReqOption) (Version, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Version{}, ErrClosed
	}
	q := c.requestQuorum(opts)
	op, err := c.sess.Put(key, value, context, q)
	c.mu.Unlock()
	if err != nil {
		return Version{}, err
	}
	res, err := c.run(ctx, op)
	if err != nil {
		return Version{}, err
	}
	return res.Version, nil
}

// Write reads key and writes value superseding every sibling it read: the
// last-writer-wins update most callers want (Voldemort's StoreClient.put).
func (c *Client) Write(ctx context.Context, key string, value []byte, opts ...ReqOption) (Version, error) {
	g, err := c.Get(ctx, key, opts...)
	if err != nil {
		return Version{}, err
	}
	return c.Put(ctx, key, value, g.Context, opts...)
}

// Candidates fetches a page of server's detector candidates after index after.
func (c *Client) Candidates(ctx context.Context, server int, after uint64, limit int) (CandidatesResponse, error) {
	var out CandidatesResponse
	if server < 0 || server >= len(c.peers) {
		return out, fmt.Errorf("%w: no server %d", ErrInvalid, server)
	}
	path := fmt.Sprintf("/v1/kv/candidates?after=%d&max=%d", after, limit)
	err := c.call(ctx, c.peers[server], http.MethodGet, path, nil, &out)
	return out, err
}

func (c *Client) requestQuorum(opts []ReqOption) *kvcore.Quorum {
	if len(opts) == 0 {
		return nil
	}
	q := c.sess.Quorum()
	for _, o := range opts {
		o(&q)
	}
	return &q
}

// run drives op to its end: it sends its messages (one goroutine per
// replica call), feeds the answers back, and ticks it.
func (c *Client) run(ctx context.Context, op *kvcore.Op) (kvcore.Result, error) {
	// At most 2N sends per op (each round asks each replica at most once).
	replies := make(chan kvcore.Reply, 2*c.meta.N)
	tick := time.NewTicker(c.tick)
	defer tick.Stop()
	op.Start()
	for {
		c.dispatch(op.Ready(), replies)
		op.Advance()
		if res, done := op.Done(); done {
			c.mu.Lock()
			c.sess.Finish(res)
			c.mu.Unlock()
			return res, res.Err
		}
		select {
		case r := <-replies:
			op.Step(r)
		case <-tick.C:
			op.Tick()
		case <-ctx.Done():
			return kvcore.Result{}, ctx.Err()
		}
	}
}

// dispatch starts one call per message. Calls outlive the op if they must
// (a PUT still reaching its last replicas, a read repair); each is bounded
// by two round timeouts.
func (c *Client) dispatch(sends []kvcore.Send, replies chan<- kvcore.Reply) {
	for _, s := range sends {
		c.bg.Add(1)
		c.spawn(func() {
			defer c.bg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*c.round)
			defer cancel()
			r := c.send(ctx, s)
			if s.Repair {
				return
			}
			select {
			case replies <- r:
			default: // the op is over and nobody reads; never block
			}
		})
	}
}

const (
	workersMax = 64
	workerIdle = 30 * time.Second
)

// spawn runs f on an idle worker, else on a new worker while there are
// fewer than workersMax, else on a goroutine of its own. It never blocks.
func (c *Client) spawn(f func()) {
	select {
	case c.work <- f:
		return
	default:
	}
	if c.workers.Add(1) <= workersMax {
		go c.worker(f)
		return
	}
	c.workers.Add(-1)
	go f()
}

// worker runs f, then whatever work comes, until it has been idle for
// workerIdle or the client closes.
func (c *Client) worker(f func()) {
	defer c.workers.Add(-1)
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-c.work:
		case <-idle.C:
			return
		case <-c.quit:
			return
		}
	}
}

func (c *Client) send(ctx context.Context, s kvcore.Send) kvcore.Reply {
	r := kvcore.Reply{From: s.To, Op: s.Op, Round: s.Round}
	addr := c.peers[s.To]
	switch s.Kind {
	case kvcore.KindGet:
		var out kvcore.GetResponse
		r.Err = c.call(ctx, addr, http.MethodPost, "/v1/kv/get", kvcore.GetRequest{Key: s.Key, HVC: kvcore.ToHVCJSON(s.HVC)}, &out)
		r.Siblings, r.HVC = out.Siblings, out.HVC.HVC()
		if r.Err == nil {
			c.observe(out.Gen, out.Advice)
		}
	case kvcore.KindPut:
		var out kvcore.PutResponse
		r.Err = c.call(ctx, addr, http.MethodPost, "/v1/kv/put", kvcore.PutRequest{Key: s.Key, Sibling: s.Sibling, HVC: kvcore.ToHVCJSON(s.HVC)}, &out)
		if r.Err == nil {
			o, ok := kvcore.ParseOutcome(out.Outcome)
			if !ok {
				r.Err = fmt.Errorf("%w: server %d answered outcome %q", ErrUnavailable, s.To, out.Outcome)
			}
			r.Outcome, r.HVC = o, out.HVC.HVC()
			c.observe(out.Gen, out.Advice)
		}
	}
	return r
}

// responseBytesMax bounds an answer read from a server.
const responseBytesMax = 256 << 20

// call does one HTTP exchange, mapping error answers back to kv errors and
// transport failures to ErrUnavailable.
func (c *Client) call(ctx context.Context, addr, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e kvcore.ErrorJSON
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return fmt.Errorf("%w: %s: HTTP %d", ErrUnavailable, addr, resp.StatusCode)
		}
		return kvcore.ErrorOf(e.Error.Code, e.Error.Message)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s: bad answer: %v", ErrUnavailable, addr, err)
	}
	return nil
}

// ErrTxnConflict: Kronos could not order the transaction after a
// concurrent one; it aborted without effect, retry it.
var ErrTxnConflict = kvcore.ErrTxnConflict

// TxnWrite is one write of a transaction: Value replaces the key's value,
// or, with Add, Value is a signed decimal integer added to the key's
// current value (read as one; absent is 0) at the transaction's place in
// the serial order.
type TxnWrite = kvcore.TxnWriteJSON

// TxnResult is a committed transaction's reads: each read key's siblings
// after every transaction serialised before it and before its own writes.
type TxnResult = kvcore.TxnResponse

// Txn runs a multi-key transaction in the Kronos transactional mode (the
// servers must run with --kronos): it reads reads and writes writes
// atomically, serialisably with every other transaction. It goes to server
// (any server coordinates; −1 picks one at random). A transaction that
// conflicts fails with ErrTxnConflict and had no effect; one that fails
// with ErrUnavailable may or may not have committed. Transactions bypass
// the session's quorum: each key's part runs on its primary replica, which
// answers once W replicas of the key hold its writes (the server's W) and
// pushes them to the rest of the key's N replicas.
func (c *Client) Txn(ctx context.Context, server int, reads []string, writes []TxnWrite) (TxnResult, error) {
	var out TxnResult
	if server < 0 {
		server = rand.IntN(len(c.peers))
	}
	if server >= len(c.peers) {
		return out, fmt.Errorf("%w: no server %d", ErrInvalid, server)
	}
	err := c.call(ctx, c.peers[server], http.MethodPost, "/v1/kv/txn", kvcore.TxnRequest{Reads: reads, Writes: writes}, &out)
	return out, err
}

// GetReplica reads key's siblings from one server only (R = 1 directed at
// that replica), bypassing the session's quorum and read repair: for
// checking what each replica holds.
func (c *Client) GetReplica(ctx context.Context, server int, key string) ([]Sibling, error) {
	if server < 0 || server >= len(c.peers) {
		return nil, fmt.Errorf("%w: no server %d", ErrInvalid, server)
	}
	var out kvcore.GetResponse
	if err := c.call(ctx, c.peers[server], http.MethodPost, "/v1/kv/get", kvcore.GetRequest{Key: key}, &out); err != nil {
		return nil, err
	}
	return out.Siblings, nil
}

// ServerStats fetches one server's counters (GET /v1/kv/stats), among them
// its transactional outbox (writes not yet acknowledged by a replica).
func (c *Client) ServerStats(ctx context.Context, server int) (kvcore.ServerStats, error) {
	var out kvcore.ServerStats
	if server < 0 || server >= len(c.peers) {
		return out, fmt.Errorf("%w: no server %d", ErrInvalid, server)
	}
	err := c.call(ctx, c.peers[server], http.MethodGet, "/v1/kv/stats", nil, &out)
	return out, err
}
