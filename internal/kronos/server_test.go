package kronos_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/raftlog"
	"github.com/weft-db/weft/internal/testproc"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// In-process tests of the replicated service (server.go, service.go,
// transport.go) through the Go client and the raw gRPC stub. Replicas run
// DefaultServerConfig on loopback; "stop" is a clean Server.Stop (the
// linearizability test covers kill -9 of real processes).

// testLogger discards replica logs unless WEFT_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("WEFT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// group is a set of in-process replicas with fixed addresses and data dirs.
type group struct {
	t     *testing.T
	peers map[uint64]string // nil for a group of one
	cfgs  map[uint64]kronos.ServerConfig
	srvs  map[uint64]*kronos.Server // running replicas
}

// newGroup starts n replicas (n == 1: no peers, port picked by the kernel).
func newGroup(t *testing.T, n int, tweak func(*kronos.ServerConfig)) *group {
	t.Helper()
	g := &group{t: t, cfgs: map[uint64]kronos.ServerConfig{}, srvs: map[uint64]*kronos.Server{}}
	addrs := []string{"127.0.0.1:0"}
	if n > 1 {
		var err error
		if addrs, err = testproc.FreeAddrs(n); err != nil {
			t.Fatal(err)
		}
		g.peers = map[uint64]string{}
		for i, a := range addrs {
			g.peers[uint64(i+1)] = a
		}
	}
	for i := range n {
		id := uint64(i + 1)
		cfg := kronos.DefaultServerConfig()
		cfg.ID, cfg.Addr, cfg.Peers, cfg.DataDir = id, addrs[i], g.peers, t.TempDir()
		if tweak != nil {
			tweak(&cfg)
		}
		g.cfgs[id] = cfg
		g.start(id)
	}
	return g
}

// start runs replica id on its data dir; a group of one keeps the port it
// got first, so clients can reconnect.
func (g *group) start(id uint64) *kronos.Server {
	g.t.Helper()
	if _, ok := g.srvs[id]; ok {
		g.t.Fatalf("replica %d already running", id)
	}
	s, err := kronos.NewServer(g.cfgs[id], testLogger())
	if err != nil {
		g.t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		g.t.Fatalf("start replica %d: %v", id, err)
	}
	g.t.Cleanup(s.Stop)
	if g.peers == nil {
		cfg := g.cfgs[id]
		cfg.Addr = s.Addr()
		g.cfgs[id] = cfg
	}
	g.srvs[id] = s
	return s
}

func (g *group) stop(id uint64) {
	g.t.Helper()
	s, ok := g.srvs[id]
	if !ok {
		g.t.Fatalf("replica %d is not running", id)
	}
	s.Stop()
	delete(g.srvs, id)
}

func (g *group) addr(id uint64) string { return g.cfgs[id].Addr }

func (g *group) addrs() []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(g.cfgs)) {
		out = append(out, g.addr(id))
	}
	return out
}

func (g *group) stats(id uint64) *pb.StatsResponse {
	g.t.Helper()
	st, err := g.srvs[id].Stats(context.Background(), &pb.StatsRequest{})
	if err != nil {
		g.t.Fatal(err)
	}
	return st
}

// leader waits until the running replicas agree on one leader among them.
func (g *group) leader() uint64 {
	g.t.Helper()
	var lead uint64
	eventually(g.t, 10*time.Second, func() error {
		lead = 0
		for id := range g.srvs {
			st := g.stats(id)
			if st.IsLeader {
				lead = id
			}
		}
		if lead == 0 {
			return errors.New("no leader")
		}
		for id := range g.srvs {
			if l := g.stats(id).LeaderId; l != lead {
				return fmt.Errorf("replica %d follows %d, not %d", id, l, lead)
			}
		}
		return nil
	})
	return lead
}

func (g *group) follower(lead uint64) uint64 {
	for _, id := range slices.Sorted(maps.Keys(g.srvs)) {
		if id != lead {
			return id
		}
	}
	g.t.Fatal("no follower running")
	return 0
}

// caughtUp waits until replica id has applied everything the leader has.
func (g *group) caughtUp(id uint64) {
	g.t.Helper()
	lead := g.leader()
	eventually(g.t, 10*time.Second, func() error {
		want, got := g.stats(lead).AppliedIndex, g.stats(id).AppliedIndex
		if got < want {
			return fmt.Errorf("replica %d applied %d, leader %d applied %d", id, got, lead, want)
		}
		return nil
	})
}

func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func dial(t *testing.T, addrs ...string) *kc.Client {
	t.Helper()
	c, err := kc.Dial(addrs, kc.Options{CallTimeout: time.Second, Attempts: 200, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func rawStub(t *testing.T, addr string) pb.KronosClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewKronosClient(conn)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func create(t *testing.T, c *kc.Client, n int) []uint64 {
	t.Helper()
	ids, err := c.CreateEvents(testCtx(t), n)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != n {
		t.Fatalf("created %d events, want %d", len(ids), n)
	}
	return ids
}

func assign(t *testing.T, c *kc.Client, as ...kc.Assignment) []kc.AssignResult {
	t.Helper()
	r, err := c.AssignOrder(testCtx(t), as)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must(a uint64, o kc.Order, b uint64) kc.Assignment {
	return kc.Assignment{A: kc.ID(a), Order: o, B: kc.ID(b), Strength: kc.Must}
}

func prefer(a uint64, o kc.Order, b uint64) kc.Assignment {
	return kc.Assignment{A: kc.ID(a), Order: o, B: kc.ID(b), Strength: kc.Prefer}
}

func query(t *testing.T, c *kc.Client, pairs ...[2]uint64) []kc.Order {
	t.Helper()
	ps := make([]kc.Pair, len(pairs))
	for i, p := range pairs {
		ps[i] = kc.Pair{A: kc.ID(p[0]), B: kc.ID(p[1])}
	}
	orders, err := c.QueryOrder(testCtx(t), ps)
	if err != nil {
		t.Fatal(err)
	}
	return orders
}

// allPairs lists every ordered pair (a, b), a < b, of ids.
func allPairs(ids []uint64) [][2]uint64 {
	var out [][2]uint64
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			out = append(out, [2]uint64{a, b})
		}
	}
	return out
}

// randomWrites applies n acknowledged writes (creates and assignments on
// random pairs, must conflicts included) and returns the events created.
func randomWrites(t *testing.T, c *kc.Client, rng *rand.Rand, ids []uint64, n int) []uint64 {
	t.Helper()
	for range n {
		if len(ids) < 2 || rng.IntN(10) < 3 {
			ids = append(ids, create(t, c, 1)...)
			continue
		}
		a, b := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
		if a == b {
			continue
		}
		as := kc.Assignment{A: kc.ID(a), Order: kc.Before, B: kc.ID(b), Strength: kc.Strength(1 + rng.IntN(2))}
		if _, err := c.AssignOrder(testCtx(t), []kc.Assignment{as}); err != nil && !errors.Is(err, kc.ErrMustConflict) {
			t.Fatal(err)
		}
	}
	return ids
}

func TestServerSingleReplica(t *testing.T) {
	g := newGroup(t, 1, nil)
	c := dial(t, g.addr(1))
	ids := create(t, c, 4)
	a, b, cc, d := ids[0], ids[1], ids[2], ids[3]
	if !slices.IsSorted(ids) || a == 0 {
		t.Fatalf("ids %v not increasing from 1", ids)
	}
	// b → c is written as (c After b), a Prefer that holds.
	got := assign(t, c, must(a, kc.Before, b), prefer(cc, kc.After, b))
	if want := []kc.AssignResult{{Order: kc.Before}, {Order: kc.After}}; !slices.Equal(got, want) {
		t.Fatalf("assign = %v, want %v", got, want)
	}
	if got, want := query(t, c, [2]uint64{a, cc}, [2]uint64{cc, a}, [2]uint64{a, d}, [2]uint64{a, 1 << 40}),
		[]kc.Order{kc.Before, kc.After, kc.Concurrent, kc.Unknown}; !slices.Equal(got, want) {
		t.Fatalf("query = %v, want %v", got, want)
	}

	// A contradicted Must rejects the whole batch, Musts first: d → a is not added.
	_, err := c.AssignOrder(testCtx(t), []kc.Assignment{prefer(d, kc.Before, a), must(cc, kc.Before, a)})
	var ke *kc.Error
	if !errors.As(err, &ke) || ke.Code != kc.CodeMustConflict || ke.PairIndex != 1 || ke.Actual != kc.After {
		t.Fatalf("conflicting must: err %v, want MUST_CONFLICT at pair 1 holding after", err)
	}
	if o := query(t, c, [2]uint64{d, a}); o[0] != kc.Concurrent {
		t.Fatalf("rejected batch left d %v a", o[0])
	}
	// A contradicted Prefer is reversed and reported.
	if got := assign(t, c, prefer(cc, kc.Before, a)); got[0] != (kc.AssignResult{Order: kc.After, Reversed: true}) {
		t.Fatalf("reversed prefer = %+v", got[0])
	}
	if _, err := c.AssignOrder(testCtx(t), []kc.Assignment{must(a, kc.Before, 1<<40)}); !errors.Is(err, kc.ErrUnknownEvent) {
		t.Fatalf("unknown event: %v", err)
	}
	if _, err := c.AssignOrder(testCtx(t), []kc.Assignment{must(a, kc.Before, a)}); !errors.Is(err, kc.ErrSelfOrder) {
		t.Fatalf("self order: %v", err)
	}
	st := g.stats(1)
	if st.Events != 4 || st.Edges != 2 || st.Created != 4 || !st.IsLeader || st.NodeId != 1 || st.LeaderHint != g.addr(1) {
		t.Fatalf("stats %v", st)
	}
}

// A group of one elects itself as soon as its configuration is applied, not
// after an election timeout: with a tick of an hour no timeout ever fires,
// yet a fresh replica, one restarted on its log, and one restarted from a
// snapshot with entries after it all serve at once. Before the fix, the
// campaign at start was refused ("pending configuration changes") and the
// replica waited for its election timeout.
func TestServerSingleReplicaLeadsWithoutElectionTimeout(t *testing.T) {
	g := newGroup(t, 1, func(cfg *kronos.ServerConfig) {
		// Entries: bootstrap, then per round a leader's empty entry and 3
		// creates; the snapshot at 8 falls in round 1, before round 2.
		cfg.Tick, cfg.SnapshotEvery = time.Hour, 8
	})
	for round := range 3 {
		if round > 0 {
			g.stop(1)
			g.start(1)
		}
		if g.leader() != 1 {
			t.Fatalf("round %d: replica 1 does not lead", round)
		}
		c := dial(t, g.addr(1))
		create(t, c, 1)
		create(t, c, 1)
		create(t, c, 1)
	}
	g.stop(1)
	if snap, _ := raftlogState(t, g.cfgs[1].DataDir); snap != 8 {
		t.Fatalf("snapshot at %d, want 8: the restart from a snapshot was not covered", snap)
	}
}

func TestServerRestartKeepsAcknowledged(t *testing.T) {
	g := newGroup(t, 1, nil)
	c := dial(t, g.addr(1))
	rng := rand.New(rand.NewPCG(1, 2))
	ids := randomWrites(t, c, rng, nil, 150)
	pairs := allPairs(ids)
	before, st := query(t, c, pairs...), g.stats(1)

	g.stop(1)
	g.start(1)
	c = dial(t, g.addr(1))
	if after := query(t, c, pairs...); !slices.Equal(before, after) {
		t.Fatalf("orders changed across restart")
	}
	st2 := g.stats(1)
	if st2.Created != st.Created || st2.Edges != st.Edges || st2.NextId != st.NextId || st2.AppliedIndex < st.AppliedIndex {
		t.Fatalf("stats before restart %v, after %v", st, st2)
	}
	// Ids are never reused.
	if id := create(t, c, 1)[0]; id != st.NextId {
		t.Fatalf("first id after restart %d, want %d", id, st.NextId)
	}
}

func TestServerWritesThroughAnyReplica(t *testing.T) {
	g := newGroup(t, 3, nil)
	lead := g.leader()
	for _, id := range []uint64{1, 2, 3} {
		// A client that knows one replica only follows NOT_LEADER hints.
		c := dial(t, g.addr(id))
		ids := create(t, c, 2)
		if got := assign(t, c, must(ids[0], kc.Before, ids[1])); got[0].Order != kc.Before {
			t.Fatalf("via replica %d: assign %v", id, got)
		}
		if got := query(t, c, [2]uint64{ids[1], ids[0]}); got[0] != kc.After {
			t.Fatalf("via replica %d: query %v", id, got)
		}
	}
	if st := g.stats(lead); st.Created != 6 || st.Edges != 3 {
		t.Fatalf("leader stats %v", st)
	}
}

func TestServerLeaderFailover(t *testing.T) {
	g := newGroup(t, 3, nil)
	c := dial(t, g.addrs()...)
	rng := rand.New(rand.NewPCG(3, 4))
	ids := randomWrites(t, c, rng, nil, 40)
	pairs := allPairs(ids)
	want := query(t, c, pairs...)
	old := g.leader()
	oldTerm := g.stats(old).Term

	g.stop(old)
	// Writes go on through the same client while a new leader is elected.
	more := create(t, c, 2)
	if got := assign(t, c, must(ids[0], kc.Before, more[0])); got[0].Order != kc.Before && got[0].Order != kc.After {
		t.Fatalf("assign after failover: %v", got)
	}
	lead := g.leader()
	if lead == old || g.stats(lead).Term <= oldTerm {
		t.Fatalf("leader %d term %d, was %d term %d", lead, g.stats(lead).Term, old, oldTerm)
	}
	if got := query(t, c, pairs...); !slices.Equal(got, want) {
		t.Fatal("acknowledged orders changed after the leader stopped")
	}
}

func TestServerRestartedReplicaCatchesUp(t *testing.T) {
	g := newGroup(t, 3, nil)
	c := dial(t, g.addrs()...)
	lead := g.leader()
	f := g.follower(lead)
	g.stop(f)
	rng := rand.New(rand.NewPCG(5, 6))
	ids := randomWrites(t, c, rng, nil, 60)
	pairs := allPairs(ids)
	want := query(t, c, pairs...)

	g.start(f)
	g.caughtUp(f)
	if st, ls := g.stats(f), g.stats(g.leader()); st.Created != ls.Created || st.Edges != ls.Edges {
		t.Fatalf("replica %d stats %v, leader %v", f, st, ls)
	}
	// A client that knows only the restarted replica gets the same answers
	// (ordered ones from its copy, concurrent ones via the leader).
	if got := query(t, dial(t, g.addr(f)), pairs...); !slices.Equal(got, want) {
		t.Fatal("restarted replica answers differ")
	}
}

func TestServerFollowerAnswersOrderedPairs(t *testing.T) {
	g := newGroup(t, 3, nil)
	c := dial(t, g.addrs()...)
	ids := create(t, c, 3)
	a, b, x := ids[0], ids[1], ids[2]
	assign(t, c, must(a, kc.Before, b))
	lead := g.leader()
	f := g.follower(lead)
	g.caughtUp(f)

	stub := rawStub(t, g.addr(f))
	req := &pb.QueryOrderRequest{Pairs: []*pb.Pair{
		{A: &pb.Ref{Ref: &pb.Ref_Id{Id: b}}, B: &pb.Ref{Ref: &pb.Ref_Id{Id: a}}},
		{A: &pb.Ref{Ref: &pb.Ref_Id{Id: a}}, B: &pb.Ref{Ref: &pb.Ref_Id{Id: x}}},
	}}
	r, err := stub.QueryOrder(testCtx(t), req)
	if err != nil || r.Error != nil {
		t.Fatal(err, r.GetError())
	}
	if want := []pb.Order{pb.Order_AFTER, pb.Order_UNRESOLVED}; !slices.Equal(r.Orders, want) || r.LeaderHint != g.addr(lead) {
		t.Fatalf("follower answered %v hint %q, want %v hint %q", r.Orders, r.LeaderHint, want, g.addr(lead))
	}
	// The client merges: the unresolved pair is asked of the leader.
	if got := query(t, dial(t, g.addr(f)), [2]uint64{b, a}, [2]uint64{a, x}); !slices.Equal(got, []kc.Order{kc.After, kc.Concurrent}) {
		t.Fatalf("client merged %v", got)
	}
	// Alone, without a quorum, the follower still answers ordered pairs.
	for id := range g.srvs {
		if id != f {
			g.stop(id)
		}
	}
	r, err = stub.QueryOrder(testCtx(t), req)
	if err != nil || r.Error != nil {
		t.Fatal(err, r.GetError())
	}
	if want := []pb.Order{pb.Order_AFTER, pb.Order_UNRESOLVED}; !slices.Equal(r.Orders, want) {
		t.Fatalf("isolated follower answered %v, want %v", r.Orders, want)
	}
}

func TestServerSessionExactlyOnce(t *testing.T) {
	g := newGroup(t, 3, nil)
	lead := g.leader()
	stub := rawStub(t, g.addr(lead))
	ctx := testCtx(t)
	sess := func(seq uint64) *pb.Session { return &pb.Session{ClientId: 42, Seq: seq} }
	id := func(x uint64) *pb.Ref { return &pb.Ref{Ref: &pb.Ref_Id{Id: x}} }

	creq := &pb.CreateEventRequest{Session: sess(1), Count: 2}
	c1, err := stub.CreateEvent(ctx, creq)
	if err != nil || c1.Error != nil || len(c1.Ids) != 2 {
		t.Fatal(err, c1)
	}
	c2, err := stub.CreateEvent(ctx, creq)
	if err != nil || !slices.Equal(c1.Ids, c2.Ids) || c2.Error != nil {
		t.Fatalf("retried create: %v %v, want ids %v", err, c2, c1.Ids)
	}
	a, b := c1.Ids[0], c1.Ids[1]
	areq := &pb.AssignOrderRequest{Session: sess(2), Pairs: []*pb.AssignPair{
		{A: id(a), Order: pb.Order_BEFORE, B: id(b), Strength: pb.Strength_MUST}}}
	for range 2 {
		r, err := stub.AssignOrder(ctx, areq)
		if err != nil || r.Error != nil || len(r.Results) != 1 || r.Results[0].Order != pb.Order_BEFORE {
			t.Fatal(err, r)
		}
	}
	// The session remembers the reply by sequence number, not by content.
	flipped := &pb.AssignOrderRequest{Session: sess(2), Pairs: []*pb.AssignPair{
		{A: id(b), Order: pb.Order_BEFORE, B: id(a), Strength: pb.Strength_MUST}}}
	if r, err := stub.AssignOrder(ctx, flipped); err != nil || r.Error != nil || r.Results[0].Order != pb.Order_BEFORE {
		t.Fatalf("same seq, other content: %v %v, want the cached BEFORE", err, r)
	}
	if r, err := stub.CreateEvent(ctx, &pb.CreateEventRequest{Session: sess(1)}); err != nil || r.GetError().GetCode() != pb.ErrorCode_MALFORMED {
		t.Fatalf("older seq: %v %v, want MALFORMED", err, r)
	}
	if st := g.stats(lead); st.Created != 2 || st.Edges != 1 {
		t.Fatalf("stats %v: a retried request changed the graph", st)
	}

	// Sessions are replicated: the new leader answers a retry from the cache.
	g.caughtUp(g.follower(lead))
	c3, err := stub.CreateEvent(ctx, &pb.CreateEventRequest{Session: sess(3)})
	if err != nil || c3.Error != nil {
		t.Fatal(err, c3)
	}
	g.stop(lead)
	lead = g.leader()
	stub = rawStub(t, g.addr(lead))
	c4, err := stub.CreateEvent(ctx, &pb.CreateEventRequest{Session: sess(3)})
	if err != nil || c4.Error != nil || !slices.Equal(c3.Ids, c4.Ids) {
		t.Fatalf("retry at the new leader: %v %v, want ids %v", err, c4, c3.Ids)
	}
	if st := g.stats(lead); st.Created != 3 {
		t.Fatalf("new leader created %d events, want 3", st.Created)
	}
}

// raftlogState opens a stopped replica's log and returns its snapshot index
// and first log index.
func raftlogState(t *testing.T, dataDir string) (snap, first uint64) {
	t.Helper()
	l, err := raftlog.Open(filepath.Join(dataDir, "raft"), raftlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := l.Mem.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	first, err = l.Mem.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	return s.GetMetadata().GetIndex(), first
}

func TestServerSnapshotRestore(t *testing.T) {
	const every = 50
	g := newGroup(t, 3, func(c *kronos.ServerConfig) { c.SnapshotEvery = every })
	c := dial(t, g.addrs()...)
	lead := g.leader()
	f := g.follower(lead)
	g.caughtUp(f)
	lagging := g.stats(f).AppliedIndex
	g.stop(f)

	rng := rand.New(rand.NewPCG(7, 8))
	ids := randomWrites(t, c, rng, nil, 4*every)
	pairs := allPairs(ids)
	want := query(t, c, pairs...)
	wantStats := g.stats(g.leader())

	// Both running replicas snapshotted and dropped the entries the stopped
	// one lacks, so it can only catch up from a snapshot.
	for id := range g.srvs {
		g.stop(id)
		snap, first := raftlogState(t, g.cfgs[id].DataDir)
		if snap < 3*every || first <= lagging+1 {
			t.Fatalf("replica %d: snapshot at %d, first entry %d; want a snapshot past %d and entries after %d only",
				id, snap, first, 3*every, lagging+1)
		}
	}
	// Restart them from snapshot + log.
	for _, id := range []uint64{1, 2, 3} {
		if id != f {
			g.start(id)
		}
	}
	if got := query(t, c, pairs...); !slices.Equal(got, want) {
		t.Fatal("orders changed across a restart from snapshot")
	}
	// The lagging replica installs the leader's snapshot.
	g.start(f)
	g.caughtUp(f)
	st := g.stats(f)
	if st.Created != wantStats.Created || st.Edges != wantStats.Edges || st.NextId != wantStats.NextId {
		t.Fatalf("replica %d after catch-up: %v, want %v", f, st, wantStats)
	}
	if got := query(t, dial(t, g.addr(f)), pairs...); !slices.Equal(got, want) {
		t.Fatal("replica restored from a sent snapshot answers differently")
	}
	g.stop(f)
	if snap, _ := raftlogState(t, g.cfgs[f].DataDir); snap <= lagging {
		t.Fatalf("replica %d holds no snapshot past %d (has %d)", f, lagging, snap)
	}
}

// TestServerRaftLogRestart checks what a replica reloads from its log after a
// new leader overwrote a suffix and after a snapshot replaced the log: the
// overwritten and superseded entries must not come back.
func TestServerRaftLogRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "raft")
	open := func() *raftlog.Log {
		l, err := raftlog.Open(dir, raftlog.Options{Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	save := func(l *raftlog.Log, from, to, term uint64, snap *raftpb.Snapshot) {
		var ents []*raftpb.Entry
		for i := from; i <= to && from > 0; i++ {
			ents = append(ents, &raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(term)})
		}
		if err := l.Save(nil, ents, snap); err != nil {
			t.Fatal(err)
		}
	}
	// reopen closes l and checks the reloaded log holds entries first..last
	// with the given terms (terms[i] for first+i).
	reopen := func(l *raftlog.Log, first uint64, terms ...uint64) *raftlog.Log {
		t.Helper()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = open()
		f, _ := l.Mem.FirstIndex()
		last, _ := l.Mem.LastIndex()
		if f != first || last != first+uint64(len(terms))-1 {
			t.Fatalf("reloaded entries %d..%d, want %d..%d", f, last, first, first+uint64(len(terms))-1)
		}
		for i, want := range terms {
			if got, err := l.Mem.Term(first + uint64(i)); err != nil || got != want {
				t.Fatalf("entry %d: term %d (%v), want %d", first+uint64(i), got, err, want)
			}
		}
		return l
	}
	l := open()
	save(l, 1, 10, 1, nil)
	save(l, 6, 7, 2, nil) // a new leader overwrote 6..10
	l = reopen(l, 1, 1, 1, 1, 1, 1, 2, 2)
	save(l, 8, 8, 2, nil)
	l = reopen(l, 1, 1, 1, 1, 1, 1, 2, 2, 2)
	save(l, 9, 15, 2, nil)
	// A snapshot from a leader whose history differs at 12 replaces the
	// whole log: 13..15 of the old history must not come back.
	snap := &raftpb.Snapshot{Data: []byte("state"), Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(12), Term: proto.Uint64(3), ConfState: &raftpb.ConfState{}}}
	save(l, 0, 0, 0, snap)
	l = reopen(l, 13)
	save(l, 13, 14, 3, nil)
	l = reopen(l, 13, 3, 3)
	if s, _ := l.Mem.Snapshot(); s.GetMetadata().GetIndex() != 12 || string(s.GetData()) != "state" {
		t.Fatalf("reloaded snapshot %v", s.GetMetadata())
	}
	l.Close()
}
