package weft

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/weft-db/weft/internal/wire/coordclient"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// A coordinator client (DialCoordinator) has one grpc.ClientConn whose
// target is every live gatekeeper's API address, as the coordinator lists
// them. The list comes from a gRPC name resolver of this file's own (a
// builder passed to that ClientConn alone with grpc.WithResolvers: nothing
// is registered globally), fed by a directory that watches the
// coordinator's configurations; round_robin spreads calls over the
// gatekeepers and skips one whose connection is down. When a call fails
// because its gatekeeper went away, the client retries it on another one
// (intercept), unless it is a commit that may have reached the store.

// coordScheme is the target scheme of a coordinator client's ClientConn.
const coordScheme = "weftcoord"

// roundRobin is the service config of a coordinator client: one
// round_robin over the gatekeepers.
const roundRobin = `{"loadBalancingConfig": [{"round_robin": {}}]}`

const (
	// coordPollEvery is how often the directory asks the coordinator's
	// leader for the configuration besides watching it: a Watch stream on a
	// partitioned replica lags without breaking.
	coordPollEvery = 5 * time.Second
	// coordPollGap is the least time between two polls, however often gRPC
	// asks to resolve again (it does when a gatekeeper's connection drops).
	coordPollGap = 100 * time.Millisecond
	// coordPollTimeout bounds one poll.
	coordPollTimeout = 3 * time.Second
	// failoverAttemptsMax bounds the tries of one call moving from a lost
	// gatekeeper to another; the call's deadline (Options.CallTimeout when
	// its context has none) usually ends it first.
	failoverAttemptsMax = 100
)

// DialCoordinator returns a Client of every live gatekeeper, found through
// the coordinator replicas at coordAddrs: calls are spread over the
// gatekeepers (round robin), and follow the coordinator's configuration as
// gatekeepers fail and backups are promoted into their slots. It fails
// when no coordinator replica answers with a configuration within ctx's
// deadline, or else Options.CallTimeout; a configuration without a live
// gatekeeper is accepted, and calls wait for one within their own deadline.
//
// A call that fails because its gatekeeper went away (UNAVAILABLE: a
// broken connection, or the gatekeeper closing; or OVERLOADED) is retried
// on another gatekeeper with backoff until its deadline: Begin, reads,
// Run and its variants, Programs and Status. A commit is retried only when
// its request was provably never sent; once sent, a failure that is not
// the server's answer is ErrUnknownOutcome, and Update does not retry it.
// Close stops following the coordinator.
func DialCoordinator(ctx context.Context, coordAddrs []string, opts ...Options) (*Client, error) {
	o := optionsOf(opts)
	if len(coordAddrs) == 0 {
		return nil, errors.New("weft: no coordinator addresses")
	}
	cc, err := coordclient.NewClient(coordAddrs)
	if err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	cfg, err := firstConfig(ctx, cc, coordAddrs, o.CallTimeout)
	if err != nil {
		cc.Close()
		return nil, err
	}
	d := &directory{coord: cc, subs: map[*coordResolver]struct{}{}, poke: make(chan struct{}, 1)}
	d.apply(cfg)
	c := &Client{opts: o, dir: d, failover: true}
	conn, err := grpc.NewClient(coordScheme+":///gatekeepers", append(c.dialOptions(),
		grpc.WithResolvers(d), grpc.WithDefaultServiceConfig(roundRobin))...)
	if err != nil {
		cc.Close()
		return nil, fmt.Errorf("weft: dial the gatekeepers: %w", err)
	}
	c.conn, c.rpc = conn, pb.NewWeftClient(conn)
	c.streams.open = make([]*runStream, o.Streams)
	d.mu.Lock()
	d.onChange = c.streams.retireExcept
	d.mu.Unlock()
	d.start()
	return c, nil
}

// firstConfig asks the coordinator for its configuration until one
// replica answers or the bound (ctx's deadline, else timeout) passes.
func firstConfig(ctx context.Context, cc *coordclient.Client, addrs []string, timeout time.Duration) (*coordpb.Config, error) {
	bound := timeout
	if dl, ok := ctx.Deadline(); ok {
		bound = time.Until(dl)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	backoff := 10 * time.Millisecond
	for {
		cfg, err := cc.Config(ctx)
		if err == nil {
			return cfg, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("weft: no coordinator at %v served a configuration within %v: %w", addrs,
				bound.Round(time.Millisecond), err)
		case <-t.C:
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// directory follows the coordinator's configuration and hands the live
// gatekeepers' API addresses to the resolvers gRPC builds from it (one at
// a time; gRPC closes it when the connection idles and builds another when
// it wakes). Its goroutines run from start to close.
type directory struct {
	coord    *coordclient.Client
	poke     chan struct{} // gRPC asked to resolve again
	onChange func(addrs []string)
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	// pushMu orders updates to the resolvers: taken before mu, held while
	// calling into gRPC (which never calls back into the directory under
	// its own locks but through ResolveNow, which only pokes).
	pushMu sync.Mutex
	mu     sync.Mutex
	epoch  uint64   // of the configuration applied
	addrs  []string // sorted, distinct
	subs   map[*coordResolver]struct{}
}

// gatekeeperAddrs lists the API addresses of the held gatekeeper slots,
// sorted and distinct (a vacant slot has no holder and no address).
func gatekeeperAddrs(cfg *coordpb.Config) []string {
	var out []string
	for _, e := range cfg.GetGatekeepers() {
		if e.GetMember() != 0 && e.GetApiAddress() != "" {
			out = append(out, e.GetApiAddress())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// apply adopts cfg unless an epoch as recent was applied already, and
// tells the resolvers when the gatekeepers changed.
func (d *directory) apply(cfg *coordpb.Config) {
	addrs := gatekeeperAddrs(cfg)
	d.pushMu.Lock()
	defer d.pushMu.Unlock()
	d.mu.Lock()
	if cfg.GetEpoch() < d.epoch || (cfg.GetEpoch() == d.epoch && d.addrs != nil) {
		d.mu.Unlock()
		return // a lagging replica's, or seen already (the watch and the polls both deliver it)
	}
	changed := d.addrs == nil || !slices.Equal(addrs, d.addrs)
	d.epoch, d.addrs = cfg.GetEpoch(), addrs
	if d.addrs == nil {
		d.addrs = []string{} // applied: no longer nil
	}
	subs := make([]*coordResolver, 0, len(d.subs))
	for r := range d.subs {
		subs = append(subs, r)
	}
	onChange := d.onChange
	d.mu.Unlock()
	if !changed {
		return
	}
	for _, r := range subs {
		r.update(addrs)
	}
	if onChange != nil {
		onChange(addrs)
	}
}

// start runs the watch and the polls until close.
func (d *directory) start() {
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		// Watch moves to another replica, with backoff, whenever its
		// stream breaks; it returns when ctx ends.
		_ = d.coord.Watch(ctx, func(cfg *coordpb.Config) error {
			d.apply(cfg)
			return nil
		})
	}()
	go func() {
		defer d.wg.Done()
		d.poll(ctx)
	}()
}

// poll asks the coordinator's serving leader for the configuration every
// coordPollEvery, and when gRPC asks (a gatekeeper's connection dropped).
func (d *directory) poll(ctx context.Context) {
	t := time.NewTicker(coordPollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.poke:
		}
		pctx, cancel := context.WithTimeout(ctx, coordPollTimeout)
		cfg, err := d.coord.Config(pctx)
		cancel()
		if err == nil {
			d.apply(cfg)
		} // else: no serving leader now; the watch, the next tick or poke retries
		gap := time.NewTimer(coordPollGap)
		select {
		case <-ctx.Done():
			gap.Stop()
			return
		case <-gap.C:
		}
	}
}

// close stops the watch and the polls and closes the coordinator client.
func (d *directory) close() {
	d.cancel()
	d.wg.Wait()
	d.coord.Close()
}

// Build implements resolver.Builder: a resolver that gets the current
// gatekeepers at once, and every change after.
func (d *directory) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	r := &coordResolver{d: d, cc: cc}
	d.pushMu.Lock()
	defer d.pushMu.Unlock()
	d.mu.Lock()
	d.subs[r] = struct{}{}
	addrs := d.addrs
	d.mu.Unlock()
	r.update(addrs)
	return r, nil
}

// Scheme implements resolver.Builder.
func (d *directory) Scheme() string { return coordScheme }

// coordResolver is the resolver of one coordinator client's ClientConn.
type coordResolver struct {
	d  *directory
	cc resolver.ClientConn
}

func (r *coordResolver) update(addrs []string) {
	st := resolver.State{Addresses: make([]resolver.Address, len(addrs))}
	for i, a := range addrs {
		st.Addresses[i] = resolver.Address{Addr: a}
	}
	// With no address round_robin answers an error and drops the old
	// gatekeepers (a resolver error would keep them): the watch brings the
	// next configuration, so the error needs no re-resolution. Calls
	// meanwhile fail with UNAVAILABLE (see noGatekeeper).
	_ = r.cc.UpdateState(st)
}

// noGatekeeper returns the error of a call while the coordinator lists no
// live gatekeeper, or nil.
func (d *directory) noGatekeeper() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.addrs) > 0 {
		return nil
	}
	return status.Errorf(codes.Unavailable, "the coordinator lists no live gatekeeper (epoch %d)", d.epoch)
}

// ResolveNow implements resolver.Resolver: poll the coordinator soon.
func (r *coordResolver) ResolveNow(resolver.ResolveNowOptions) {
	select {
	case r.d.poke <- struct{}{}:
	default: // a poll is due already
	}
}

// Close implements resolver.Resolver.
func (r *coordResolver) Close() {
	r.d.mu.Lock()
	delete(r.d.subs, r)
	r.d.mu.Unlock()
}

// idempotent are the methods a coordinator client moves to another
// gatekeeper when theirs went away: snapshots, reads at a snapshot,
// programs (node programs only read) and status. Not Commit.
var idempotent = map[string]bool{
	pb.Weft_Begin_FullMethodName: true, pb.Weft_GetVertex_FullMethodName: true, pb.Weft_GetVertices_FullMethodName: true,
	pb.Weft_GetEdge_FullMethodName: true, pb.Weft_Run_FullMethodName: true,
	pb.Weft_Programs_FullMethodName: true, pb.Weft_Status_FullMethodName: true,
}

// intercept runs every unary call. On a coordinator client it retries an
// idempotent call that lost its gatekeeper, and a commit that was never
// sent, with backoff until ctx's deadline (the caller's, or CallTimeout).
// On every client it marks a commit whose outcome is unknown.
func (c *Client) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	commit := method == pb.Weft_Commit_FullMethodName
	if !commit && !(c.failover && idempotent[method]) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var err error
	for attempt := range failoverAttemptsMax {
		if attempt > 0 {
			if werr := c.backoff(ctx, attempt); werr != nil {
				if errors.Is(werr, context.Canceled) {
					return status.FromContextError(werr).Err()
				}
				return err // the deadline passed while gatekeepers were away: say why
			}
		}
		actx, sent := ctx, (*sentFlag)(nil)
		if commit {
			sent = new(sentFlag)
			actx = context.WithValue(ctx, sentKey{}, sent)
		}
		err = nil
		if c.dir != nil {
			err = c.dir.noGatekeeper()
		}
		if err == nil {
			if err = invoker(actx, method, req, reply, cc, opts...); err == nil {
				return nil
			}
		}
		e := fromRPC(ctx, err)
		if commit && sent.Load() {
			if ambiguous(e) {
				return &outcomeUnknown{err: err}
			}
			return err // the server's answer: it did not commit
		}
		if !c.failover || !lostGatekeeper(e) {
			return err
		}
	}
	return err
}

// lostGatekeeper reports an error after which another gatekeeper (or the
// same one later) may serve the call: the connection is down, the
// gatekeeper is closing (UNAVAILABLE) or overloaded.
func lostGatekeeper(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == CodeUnavailable || e.Code == CodeOverloaded)
}

// ambiguous reports a failure of a sent commit that is not the server
// saying it did not apply it: the connection broke, the gatekeeper closed
// (it may have made the commit durable first), the deadline passed.
func ambiguous(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case CodeUnavailable, CodeInternal, CodeDeadlineExceeded, CodeCancelled:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// sentKey keys a call's sentFlag in its context.
type sentKey struct{}

// sentFlag is set once a call's request message was handed to a
// connection: from then on the server may act on it.
type sentFlag struct{ atomic.Bool }

// sendTracker is the stats handler that sets sentFlags. gRPC reports
// OutPayload only after the message was queued on a live transport, so a
// call without one never reached a server.
type sendTracker struct{}

func (sendTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sendTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.OutPayload); !ok {
		return
	}
	if f, ok := ctx.Value(sentKey{}).(*sentFlag); ok {
		f.Store(true)
	}
}

func (sendTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sendTracker) HandleConn(context.Context, stats.ConnStats) {}

// outcomeUnknown carries the RPC error of a sent commit that failed
// ambiguously, from intercept to fromRPC.
type outcomeUnknown struct{ err error }

func (e *outcomeUnknown) Error() string { return e.err.Error() }
