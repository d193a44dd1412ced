package weft_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/wire/coordclient"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// These tests run a real coordinator (one replica, in process), real Weft
// API servers over one in-memory engine as the gatekeepers (each
// registered and heartbeating with coord.RunMember), and the client found
// them through the coordinator: issue 5, "clients find gatekeepers through
// the coordinator".

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// waitFor polls cond until it holds, failing the test after a bound (a
// bound on waiting, not an assertion on speed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cluster is a coordinator and the gatekeepers registered with it.
type cluster struct {
	t     *testing.T
	coord *coord.Server
	addrs []string // the coordinator's
	cc    *coordclient.Client
	db    *engine.DB
}

func newCluster(t *testing.T, slots int32) *cluster {
	t.Helper()
	cfg := coord.DefaultServerConfig()
	cfg.Addr, cfg.HTTPAddr, cfg.DataDir, cfg.Sync = "127.0.0.1:0", "", t.TempDir(), false
	cfg.Gatekeepers = slots
	cfg.SuspectAfter = time.Second // > 2 × ElectionTicks × Tick = 400ms; heartbeats every 50ms
	s, err := coord.NewServer(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	cc, err := coordclient.NewClient([]string{s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	ecfg := engine.DefaultConfig()
	ecfg.DataDir = ""
	db, err := engine.Open(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &cluster{t: t, coord: s, addrs: []string{s.Addr()}, cc: cc, db: db}
}

// gatekeeper is one Weft API server registered as a gatekeeper.
type gatekeeper struct {
	name  string
	srv   *api.Server
	addr  string
	leave func() // stops its member
	once  sync.Once
}

// startGatekeeper serves the cluster's engine on a new port and registers
// it with the coordinator (it takes a vacant slot, or waits as a backup).
func (cl *cluster) startGatekeeper(name string) *gatekeeper {
	t := cl.t
	t.Helper()
	acfg := api.DefaultConfig()
	acfg.GRPCAddr, acfg.HTTPAddr = "127.0.0.1:0", ""
	srv, err := api.NewServer(cl.db, acfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatekeeper{name: name, srv: srv, addr: srv.GRPCAddr()}
	g.leave = cl.register(name, g.addr)
	t.Cleanup(g.stop)
	return g
}

// register runs a gatekeeper member for the API at addr until the
// returned function (also a cleanup) stops it.
func (cl *cluster) register(name, addr string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- coord.RunMember(ctx, cl.cc, coord.MemberConfig{Name: name, Role: coordpb.Role_GATEKEEPER,
			Address: addr, APIAddress: addr, Interval: 50 * time.Millisecond}, quietLog)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			cl.t.Errorf("member %s: %v", name, err)
		}
	})
	cl.t.Cleanup(stop)
	return stop
}

// stop stops heartbeating and serving: the process is gone.
func (g *gatekeeper) stop() {
	g.once.Do(func() {
		g.leave()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		g.srv.Stop(ctx) // cuts the streams that remain after 100ms
	})
}

// requests counts the gRPC requests the server answered, of op ("" any).
func (g *gatekeeper) requests(op string) int {
	fams, err := g.srv.Metrics.Registry().Gather()
	if err != nil {
		panic(err)
	}
	n := 0.0
	for _, f := range fams {
		if f.GetName() != "weft_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			match := true
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" && op != "" && l.GetValue() != op {
					match = false
				}
			}
			if match {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// serving reports whether the coordinator lists exactly these gatekeepers
// in its slots.
func (cl *cluster) serving(gs ...*gatekeeper) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cfg, err := cl.cc.Config(ctx)
	if err != nil {
		return false
	}
	var listed []string
	for _, e := range cfg.GetGatekeepers() {
		if e.GetMember() != 0 {
			listed = append(listed, e.GetApiAddress())
		}
	}
	if len(listed) != len(gs) {
		return false
	}
	for _, g := range gs {
		found := false
		for _, a := range listed {
			found = found || a == g.addr
		}
		if !found {
			return false
		}
	}
	return true
}

// memberID is the coordinator's id of the member named name.
func (cl *cluster) memberID(name string) uint64 {
	st, err := cl.cc.LeaderStatus(context.Background())
	if err != nil {
		cl.t.Fatal(err)
	}
	for _, m := range st.GetMembers() {
		if m.GetName() == name {
			return m.GetId()
		}
	}
	cl.t.Fatalf("no member %s", name)
	return 0
}

// spread makes n Status calls and returns how many each gatekeeper served.
func spread(t *testing.T, c *weft.Client, n int, gs ...*gatekeeper) []int {
	t.Helper()
	before := make([]int, len(gs))
	for i, g := range gs {
		before[i] = g.requests("status")
	}
	for i := range n {
		if _, err := c.Status(t.Context()); err != nil {
			t.Fatalf("status call %d: %v", i, err)
		}
	}
	out := make([]int, len(gs))
	for i, g := range gs {
		out[i] = g.requests("status") - before[i]
	}
	return out
}

// readCounter reads vertex counter's n at a fresh snapshot.
func readCounter(t *testing.T, c *weft.Client) int64 {
	t.Helper()
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := tx.GetVertex(t.Context(), weft.Handle("counter"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := v.Props["n"].(int64)
	return n
}

func increment(t *testing.T, c *weft.Client) {
	t.Helper()
	if err := c.Update(t.Context(), func(tx *weft.Tx) error {
		v, err := tx.GetVertex(t.Context(), weft.Handle("counter"))
		if err != nil {
			return err
		}
		n, _ := v.Props["n"].(int64)
		tx.SetVertexProp(weft.Handle("counter"), "n", n+1)
		return nil
	}); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// runGetNode runs get_node on counter n times, concurrently, and checks
// every answer.
func runGetNode(t *testing.T, c *weft.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct{ Handle string }
			if err := c.Run(t.Context(), "get_node", map[string]string{"node": "counter"}, &out); err != nil {
				errs <- err
			} else if out.Handle != "counter" {
				errs <- fmt.Errorf("get_node answered %+v", out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("run: %v", err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// TestDialCoordinatorFailover: calls spread over the gatekeepers the
// coordinator lists; when one goes away, calls (unary, streamed programs,
// transactions) carry on through the other; and when a backup is promoted
// into the vacated slot the client starts using it.
func TestDialCoordinatorFailover(t *testing.T) {
	cl := newCluster(t, 2)
	g1, g2 := cl.startGatekeeper("gk-1"), cl.startGatekeeper("gk-2")
	waitFor(t, "both gatekeepers in the configuration", func() bool { return cl.serving(g1, g2) })

	c, err := weft.DialCoordinator(t.Context(), cl.addrs, weft.Options{Streams: 4, CallTimeout: 20 * time.Second,
		BackoffMax: 50 * time.Millisecond, StreamAgeMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Update(t.Context(), func(tx *weft.Tx) error {
		tx.CreateVertex("counter")
		tx.SetVertexProp(weft.Handle("counter"), "n", 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// (a) Calls spread over both gatekeepers, once both connections are up.
	waitFor(t, "a call served by each gatekeeper", func() bool {
		got := spread(t, c, 2, g1, g2)
		return got[0] > 0 && got[1] > 0
	})
	if got := spread(t, c, 40, g1, g2); got[0] < 10 || got[1] < 10 {
		t.Fatalf("40 calls over two gatekeepers served %v: not spread", got)
	}
	// Streams open round robin too: programs run on both.
	waitFor(t, "programs run over streams on each gatekeeper", func() bool {
		runGetNode(t, c, 8)
		return g1.requests("run_stream") > 0 && g2.requests("run_stream") > 0
	})
	increment(t, c)

	// (b) gk-1 goes away: it stops serving and heartbeating. The
	// coordinator still lists it until it suspects it; meanwhile the
	// client skips it.
	g1.stop()
	streamed2 := g2.requests("run_stream")
	for range 5 {
		runGetNode(t, c, 16)
		if _, err := c.Status(t.Context()); err != nil {
			t.Fatalf("status with gk-1 gone: %v", err)
		}
		if _, err := c.Programs(t.Context()); err != nil {
			t.Fatalf("programs with gk-1 gone: %v", err)
		}
		increment(t, c)
	}
	if g2.requests("run_stream") <= streamed2 {
		t.Fatal("programs were not served by gk-2 after gk-1 went away")
	}
	if n := readCounter(t, c); n != 6 {
		t.Fatalf("counter = %d after 6 increments", n)
	}

	// (c) A backup registers and is promoted into gk-1's slot once the
	// coordinator declares gk-1 failed; the client follows.
	g3 := cl.startGatekeeper("gk-3")
	waitFor(t, "gk-3 promoted into gk-1's slot", func() bool { return cl.serving(g2, g3) })
	st, err := cl.cc.LeaderStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	last := st.GetPromotions()[len(st.GetPromotions())-1]
	if last.GetFailed() != cl.memberID("gk-1") || last.GetPromoted() != cl.memberID("gk-3") {
		t.Fatalf("last promotion %v: want gk-1's slot to gk-3", last)
	}
	waitFor(t, "a call served by gk-3", func() bool { return spread(t, c, 2, g2, g3)[1] > 0 })
	if got := spread(t, c, 40, g2, g3); got[0] < 10 || got[1] < 10 {
		t.Fatalf("40 calls over gk-2 and gk-3 served %v: not spread", got)
	}
	waitFor(t, "programs streamed to gk-3", func() bool {
		runGetNode(t, c, 8)
		return g3.requests("run_stream") > 0
	})
	increment(t, c)
	if n := readCounter(t, c); n != 7 {
		t.Fatalf("counter = %d after 7 increments", n)
	}
}

// A commit that could not be sent because no gatekeeper was up waits for
// one (here a backup promoted into the slot), and is applied once.
func TestDialCoordinatorCommitWaitsForGatekeeper(t *testing.T) {
	cl := newCluster(t, 1)
	g1 := cl.startGatekeeper("gk-1")
	waitFor(t, "gk-1 in the configuration", func() bool { return cl.serving(g1) })
	c, err := weft.DialCoordinator(t.Context(), cl.addrs, weft.Options{CallTimeout: 20 * time.Second,
		BackoffMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tx.CreateVertex("once")
	g1.stop()
	g3 := cl.startGatekeeper("gk-3")
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatalf("commit across the failover: %v", err)
	}
	if !cl.serving(g3) {
		t.Fatal("the commit succeeded without gk-3 in the configuration")
	}
	if n := g3.requests("commit"); n != 1 {
		t.Fatalf("gk-3 answered %d commits, want 1", n)
	}
	tx, err = c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tx.CreateVertex("once")
	if _, err := tx.Commit(t.Context()); !errors.Is(err, weft.ErrAlreadyExists) {
		t.Fatalf("second create of the committed vertex: %v", err)
	}
}

// (d) Without a coordinator, DialCoordinator fails within its bound (the
// context's deadline, or CallTimeout), naming the addresses.
func TestDialCoordinatorUnreachable(t *testing.T) {
	var dead []string
	for range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead = append(dead, lis.Addr().String())
		lis.Close()
	}
	if _, err := weft.DialCoordinator(t.Context(), nil); err == nil {
		t.Fatal("no addresses: no error")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := weft.DialCoordinator(ctx, dead)
	if err == nil {
		c.Close()
		t.Fatal("dialled a coordinator that is not there")
	}
	if !strings.Contains(err.Error(), dead[0]) || !strings.Contains(err.Error(), "no coordinator") {
		t.Fatalf("unclear error: %v", err)
	}
	t.Logf("context deadline 300ms: failed after %v: %v", time.Since(start), err)
	start = time.Now()
	if c, err = weft.DialCoordinator(context.Background(), dead, weft.Options{CallTimeout: 300 * time.Millisecond}); err == nil {
		c.Close()
		t.Fatal("dialled a coordinator that is not there")
	}
	t.Logf("CallTimeout 300ms: failed after %v: %v", time.Since(start), err)
}

// (e) Close stops everything the client started: its watch of the
// coordinator, its polls, its streams and connections.
func TestDialCoordinatorCloseLeaksNothing(t *testing.T) {
	cl := newCluster(t, 2)
	g1, g2 := cl.startGatekeeper("gk-1"), cl.startGatekeeper("gk-2")
	waitFor(t, "both gatekeepers in the configuration", func() bool { return cl.serving(g1, g2) })
	use := func() {
		c, err := weft.DialCoordinator(t.Context(), cl.addrs, weft.Options{Streams: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Update(t.Context(), func(tx *weft.Tx) error {
			tx.CreateVertex("")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := c.RunRaw(t.Context(), "", "get_node", []byte(`{"node":"nobody"}`)); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	use() // warms up gRPC's own lazily started goroutines
	settle := func() int {
		// Servers end a closed client's connections asynchronously.
		n := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(20 * time.Millisecond)
			n = min(n, runtime.NumGoroutine())
		}
		return n
	}
	base := settle()
	use()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines after Close, %d before the client:\n%s", runtime.NumGoroutine(), base, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// blockingCommits is a server that receives commits and never answers
// them; others it aborts.
type blockingCommits struct {
	pb.UnimplementedWeftServer
	commits  atomic.Int32
	received chan struct{}
}

func (s *blockingCommits) Begin(context.Context, *pb.BeginRequest) (*pb.BeginResponse, error) {
	return &pb.BeginResponse{Snapshot: &pb.Snapshot{Token: "s"}}, nil
}

func (s *blockingCommits) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	s.commits.Add(1)
	if req.GetOps()[0].GetVertex() == "abort" {
		return nil, api.StatusError(weft.CodeAborted, "weft: aborted")
	}
	s.received <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// A commit whose request reached a server that then went away has an
// unknown outcome: it says so, and Update does not run it again. One
// refused before it was sent, or answered "aborted", is not unknown.
func TestCommitOutcomeUnknown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	fake := &blockingCommits{received: make(chan struct{}, 1)}
	pb.RegisterWeftServer(s, fake)
	go s.Serve(lis)
	defer s.Stop()
	c, err := weft.Dial(lis.Addr().String(), weft.Options{Attempts: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	runs := 0
	errc := make(chan error, 1)
	go func() {
		errc <- c.Update(t.Context(), func(tx *weft.Tx) error {
			runs++
			tx.CreateVertex("x")
			return nil
		})
	}()
	<-fake.received
	s.Stop() // the server goes away with the commit in hand
	err = <-errc
	if !errors.Is(err, weft.ErrUnknownOutcome) || !errors.Is(err, weft.ErrUnavailable) || weft.IsRetryable(err) {
		t.Fatalf("commit cut off by the server: %v", err)
	}
	if runs != 1 || fake.commits.Load() != 1 {
		t.Fatalf("Update ran %d times and sent %d commits; want 1 and 1", runs, fake.commits.Load())
	}

	// The deadline passes while the server holds the commit: unknown too.
	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s2 := grpc.NewServer()
	fake2 := &blockingCommits{received: make(chan struct{}, 1)}
	pb.RegisterWeftServer(s2, fake2)
	go s2.Serve(lis2)
	defer s2.Stop()
	c2, err := weft.Dial(lis2.Addr().String(), weft.Options{Attempts: 5, CallTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	tx, err := c2.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tx.CreateVertex("x")
	if _, err := tx.Commit(context.Background()); !errors.Is(err, weft.ErrUnknownOutcome) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("commit past its deadline: %v", err)
	}
	<-fake2.received
	// An answer is an answer.
	tx, _ = c2.Begin(t.Context())
	tx.CreateVertex("abort")
	if _, err := tx.Commit(t.Context()); !errors.Is(err, weft.ErrAborted) || errors.Is(err, weft.ErrUnknownOutcome) {
		t.Fatalf("aborted commit: %v", err)
	}

	// Nothing listens: the commit is never sent, so its outcome is known.
	tx = c.BeginAt("s")
	tx.CreateVertex("y")
	if _, err := tx.Commit(t.Context()); !errors.Is(err, weft.ErrUnavailable) || errors.Is(err, weft.ErrUnknownOutcome) {
		t.Fatalf("commit to a stopped server: %v", err)
	}
}

// A coordinator client does not move a commit that reached its gatekeeper
// to another one: when that gatekeeper goes away, the outcome is unknown.
func TestDialCoordinatorSentCommitNotRetried(t *testing.T) {
	cl := newCluster(t, 2)
	type fakeGK struct {
		srv  *grpc.Server
		fake *blockingCommits
		addr string
	}
	var gks []fakeGK
	for i := range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		g := fakeGK{srv: grpc.NewServer(), fake: &blockingCommits{received: make(chan struct{}, 1)}, addr: lis.Addr().String()}
		pb.RegisterWeftServer(g.srv, g.fake)
		go g.srv.Serve(lis)
		t.Cleanup(g.srv.Stop)
		cl.register(fmt.Sprintf("gk-%d", i+1), g.addr)
		gks = append(gks, g)
	}
	waitFor(t, "both gatekeepers in the configuration", func() bool {
		cfg, err := cl.cc.Config(t.Context())
		return err == nil && len(gatekeeperAddrs(cfg)) == 2
	})
	c, err := weft.DialCoordinator(t.Context(), cl.addrs, weft.Options{CallTimeout: 2 * time.Second,
		BackoffMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tx := c.BeginAt("s")
	tx.CreateVertex("x")
	errc := make(chan error, 1)
	go func() {
		_, err := tx.Commit(t.Context())
		errc <- err
	}()
	select {
	case <-gks[0].fake.received:
		gks[0].srv.Stop()
	case <-gks[1].fake.received:
		gks[1].srv.Stop()
	}
	err = <-errc
	if !errors.Is(err, weft.ErrUnknownOutcome) || !errors.Is(err, weft.ErrUnavailable) {
		t.Fatalf("commit cut off by its gatekeeper: %v", err)
	}
	if n := gks[0].fake.commits.Load() + gks[1].fake.commits.Load(); n != 1 {
		t.Fatalf("the commit was sent %d times", n)
	}
}

func gatekeeperAddrs(cfg *coordpb.Config) []string {
	var out []string
	for _, e := range cfg.GetGatekeepers() {
		if e.GetMember() != 0 && e.GetApiAddress() != "" {
			out = append(out, e.GetApiAddress())
		}
	}
	return out
}

// A client may start before any gatekeeper: calls fail, saying why, until
// one registers, and a call waits for it within its deadline.
func TestDialCoordinatorBeforeGatekeepers(t *testing.T) {
	cl := newCluster(t, 1)
	dctx, dcancel := context.WithTimeout(t.Context(), 20*time.Second) // the coordinator is electing itself
	defer dcancel()
	c, err := weft.DialCoordinator(dctx, cl.addrs, weft.Options{CallTimeout: 300 * time.Millisecond,
		BackoffMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Status(t.Context())
	if !errors.Is(err, weft.ErrUnavailable) || !strings.HasPrefix(err.Error(), "weft: the coordinator lists no live gatekeeper") {
		t.Fatalf("status without gatekeepers: %v", err)
	}
	if err := c.Run(t.Context(), "get_node", map[string]string{"node": "a"}, nil); !errors.Is(err, weft.ErrUnavailable) {
		t.Fatalf("run without gatekeepers: %v", err)
	}
	g := cl.startGatekeeper("gk-1")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := c.Begin(ctx); err != nil {
		t.Fatalf("begin once a gatekeeper registered: %v", err)
	}
	if !cl.serving(g) {
		t.Fatal("begin succeeded with no gatekeeper")
	}
	var out struct{ Handle string }
	if err := c.Run(ctx, "get_node", map[string]string{"node": "a"}, &out); err != nil {
		t.Fatalf("run once a gatekeeper registered: %v", err)
	}
}

// BenchmarkGetNode runs get_node over streams, in parallel, against one
// gatekeeper dialled directly and against two found through the
// coordinator (the same engine behind them).
func BenchmarkGetNode(b *testing.B) {
	cfg := coord.DefaultServerConfig()
	cfg.Addr, cfg.HTTPAddr, cfg.DataDir, cfg.Sync, cfg.Gatekeepers = "127.0.0.1:0", "", b.TempDir(), false, 2
	cs, err := coord.NewServer(cfg, quietLog)
	if err != nil {
		b.Fatal(err)
	}
	if err := cs.Start(); err != nil {
		b.Fatal(err)
	}
	defer cs.Stop()
	cc, err := coordclient.NewClient([]string{cs.Addr()})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	ecfg := engine.DefaultConfig()
	ecfg.DataDir = ""
	db, err := engine.Open(ecfg)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var members sync.WaitGroup
	defer members.Wait()
	defer cancel()
	var addrs []string
	for i := range 2 {
		acfg := api.DefaultConfig()
		acfg.GRPCAddr, acfg.HTTPAddr = "127.0.0.1:0", ""
		srv, err := api.NewServer(db, acfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		defer srv.Stop(context.Background())
		addrs = append(addrs, srv.GRPCAddr())
		members.Add(1)
		go func() {
			defer members.Done()
			_ = coord.RunMember(ctx, cc, coord.MemberConfig{Name: fmt.Sprint("gk-", i), Role: coordpb.Role_GATEKEEPER,
				Address: srv.GRPCAddr(), APIAddress: srv.GRPCAddr()}, quietLog)
		}()
	}
	dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
	defer dcancel()
	for {
		cfg, err := cc.Config(dctx)
		if err == nil && len(gatekeeperAddrs(cfg)) == 2 {
			break
		}
		if dctx.Err() != nil {
			b.Fatal("gatekeepers did not register")
		}
		time.Sleep(10 * time.Millisecond)
	}
	direct, err := weft.Dial(addrs[0], weft.Options{Streams: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	viaCoord, err := weft.DialCoordinator(dctx, []string{cs.Addr()}, weft.Options{Streams: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer viaCoord.Close()
	if err := direct.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex("a")
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		c    *weft.Client
	}{{"dial", direct}, {"coordinator", viaCoord}} {
		b.Run(bc.name, func(b *testing.B) {
			params := []byte(`{"node":"a"}`)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.c.RunRaw(ctx, "", "get_node", params); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
