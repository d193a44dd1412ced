package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// shardCluster is shard processes' servers on loopback, fed by gatekeeper
// cores the test drives (the gatekeeper processes to come).
type shardCluster struct {
	t       *testing.T
	shards  []*ShardServer
	clients []pb.ShardClient
	gks     []*fakeGK
}

type fakeGK struct {
	mu      sync.Mutex
	id      int
	core    *gatekeeper.Core
	streams []pb.Shard_DeliverClient
}

const clusterEpoch = 100

func startShardCluster(t *testing.T, dataDir string, shards, gks int) *shardCluster {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir, cfg.Sync, cfg.Shards = dataDir, false, shards
	st, err := openStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := &shardCluster{t: t}
	for g := range gks {
		c.gks = append(c.gks, &fakeGK{id: g, core: gatekeeper.New(gatekeeper.Config{ID: uint32(g), Gatekeepers: gks,
			Shards: shards, Epoch: clusterEpoch})})
	}
	for i := range shards {
		s, err := NewShardServer(ShardConfig{ID: i, Shards: shards, Gatekeepers: gks, Epoch: clusterEpoch, Store: st,
			Oracle: oracle, Log: slog.New(slog.DiscardHandler),
			RequestNop: func(gk int, clock vclock.Clock) { go c.gks[gk].nop(uint32(i), clock) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		s.Register(srv)
		go srv.Serve(lis)
		t.Cleanup(srv.Stop)
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c.shards = append(c.shards, s)
		c.clients = append(c.clients, pb.NewShardClient(conn))
	}
	for _, g := range c.gks {
		for _, cl := range c.clients {
			st, err := cl.Deliver(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go func() { // drain acknowledgements
				for {
					if _, err := st.Recv(); err != nil {
						return
					}
				}
			}()
			g.streams = append(g.streams, st)
		}
	}
	return c
}

// flush sends the core's deliveries on their streams (mu held).
func (g *fakeGK) flush() error {
	for _, d := range g.core.Ready() {
		if err := g.streams[d.Shard].Send(&pb.Entries{Gatekeeper: uint32(g.id), Entries: [][]byte{gatekeeper.AppendEntry(nil, d.Entry)}}); err != nil {
			return err
		}
	}
	return nil
}

func (g *fakeGK) nop(shard uint32, clock vclock.Clock) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.core.RequestNop(shard, clock)
	_ = g.flush()
}

// stamp is gatekeeper g stamping after merging every peer's clock (what
// PeerAck guarantees for everything already answered).
func (c *shardCluster) stamp(g int) vclock.Stamp {
	for _, o := range c.gks {
		if o.id != g {
			o.mu.Lock()
			cl := o.core.Clock()
			o.mu.Unlock()
			c.gks[g].mu.Lock()
			c.gks[g].core.Merge(cl)
			c.gks[g].mu.Unlock()
		}
	}
	g0 := c.gks[g]
	g0.mu.Lock()
	defer g0.mu.Unlock()
	return g0.core.Stamp()
}

// write commits ops (all for their owning shards) at gatekeeper g.
func (c *shardCluster) write(g int, ops ...txn.ShardOp) vclock.Stamp {
	c.t.Helper()
	gk := c.gks[g]
	gk.mu.Lock()
	defer gk.mu.Unlock()
	ts, err := gk.core.BeginCommit()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := gk.core.Resolve(ts, ops); err != nil {
		c.t.Fatal(err)
	}
	if err := gk.flush(); err != nil {
		c.t.Fatal(err)
	}
	return ts
}

func (c *shardCluster) read(at vclock.Stamp, name string, alias bool) *pb.ReadResponse {
	c.t.Helper()
	sh := txn.ShardOf(name, uint32(len(c.shards)))
	r, err := c.clients[sh].Read(context.Background(), &pb.ReadRequest{Stamp: txn.EncodeStamp(at), Name: name, Alias: alias,
		Props: true, Edges: true, Aliases: true})
	if err != nil {
		c.t.Fatalf("read %s at %s: %v", name, at, err)
	}
	return r
}

func propOf(t *testing.T, r *pb.ReadResponse, key string) value.Value {
	t.Helper()
	for _, p := range r.GetProps() {
		if p.GetKey() == key {
			v, rest, err := value.Decode(p.GetValue())
			if err != nil || len(rest) != 0 {
				t.Fatalf("prop %s: %v", key, err)
			}
			return v
		}
	}
	return value.Value{}
}

// Shard processes rebuild their partitions from the store a single-process
// server wrote, serve reads at stamps with the versions the store holds,
// apply the gatekeepers' FIFO entries and keep older versions readable.
func TestShardServerRecoversAppliesAndReads(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir, cfg.Sync = dir, false
	db, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db,
		txn.Op{Kind: txn.CreateVertex, Vertex: "alice"}, txn.Op{Kind: txn.CreateVertex, Vertex: "bob"},
		txn.Op{Kind: txn.SetVertexProp, Vertex: "alice", Key: "age", Value: value.I64(30)},
		txn.Op{Kind: txn.CreateEdge, Vertex: "alice", Edge: "knows", Dst: "bob"},
		txn.Op{Kind: txn.AddAlias, Vertex: "alice", Alias: "al"})
	before, err := db.GetVertex(context.Background(), Snapshot{}, VertexRef{Name: "alice"}, ReadOptions{Props: true, Edges: true})
	if err != nil || !before.Exists {
		t.Fatalf("single process read: %+v %v", before, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	c := startShardCluster(t, dir, 4, 2)
	s0 := c.stamp(0)
	r := c.read(s0, "alice", false)
	if !r.GetExists() || propOf(t, r, "age").Int() != 30 || len(r.GetEdges()) != 1 || r.GetEdges()[0].GetDst() != "bob" ||
		len(r.GetAliases()) != 1 || string(r.GetVersion()) != string(before.Read.Version) {
		t.Fatalf("recovered alice: %v (single process version %x)", r, before.Read.Version)
	}
	if a := c.read(s0, "al", true); a.GetHandle() != "alice" {
		t.Fatalf("alias al: %v", a)
	}
	if r := c.read(s0, "carol", false); r.GetExists() {
		t.Fatalf("carol exists: %v", r)
	}

	// A write from gatekeeper 1, then reads at stamps of gatekeeper 0 on
	// both sides of it.
	ts := c.write(1, txn.ShardOp{Shard: txn.ShardOf("alice", 4), Kind: txn.OpSetVertexProp, Vertex: "alice", Key: "age", Value: value.I64(31)})
	s1 := c.stamp(0)
	if vclock.CompareStamps(ts, s1) != vclock.Before {
		t.Fatalf("stamp %s should follow the write %s", s1, ts)
	}
	if got := propOf(t, c.read(s1, "alice", false), "age"); got.Int() != 31 {
		t.Fatalf("after the write: age %v", got)
	}
	if got := propOf(t, c.read(s0, "alice", false), "age"); got.Int() != 30 {
		t.Fatalf("at the old stamp: age %v", got)
	}
	st, err := c.clients[txn.ShardOf("alice", 4)].Status(context.Background(), &pb.StatusRequest{})
	if err != nil || st.GetApplied() != 1 || st.GetDelivered()[1] == 0 {
		t.Fatalf("status %v %v", st, err)
	}

	// Concurrent stamps: a write stamped at gatekeeper 0 while gatekeeper 1
	// stamps a read without merging it; the shard orders them through the
	// oracle, and whichever it picks, the answer is one of the two states.
	c.gks[0].mu.Lock()
	w2, _ := c.gks[0].core.BeginCommit()
	c.gks[0].mu.Unlock()
	c.gks[1].mu.Lock()
	rs := c.gks[1].core.Stamp()
	c.gks[1].mu.Unlock()
	if vclock.CompareStamps(w2, rs) != vclock.Concurrent {
		t.Fatalf("stamps %s and %s should be concurrent", w2, rs)
	}
	c.gks[0].mu.Lock()
	_ = c.gks[0].core.Resolve(w2, []txn.ShardOp{{Shard: txn.ShardOf("alice", 4), Kind: txn.OpSetVertexProp, Vertex: "alice", Key: "age", Value: value.I64(32)}})
	_ = c.gks[0].flush()
	c.gks[0].mu.Unlock()
	if got := propOf(t, c.read(rs, "alice", false), "age").Int(); got != 31 && got != 32 {
		t.Fatalf("concurrent read: age %d", got)
	}
}

// Reads and entries that do not belong are refused, and nothing changes.
func TestShardServerRefusesWhatIsNotItsOwn(t *testing.T) {
	c := startShardCluster(t, "", 2, 1)
	at := c.stamp(0)
	other := vclock.Stamp{Clock: vclock.Clock{Epoch: clusterEpoch + 1, Counters: []uint64{1}}}
	for name, req := range map[string]*pb.ReadRequest{
		"other epoch": {Stamp: txn.EncodeStamp(other), Name: "x"},
		"no stamp":    {Name: "x"},
		"bad name":    {Stamp: txn.EncodeStamp(at), Name: ""},
	} {
		if _, err := c.clients[txn.ShardOf("x", 2)].Read(context.Background(), req); err == nil {
			t.Errorf("%s: read accepted", name)
		}
	}
	// A read on the wrong shard is answered with where to ask.
	if r, err := c.clients[1-txn.ShardOf("x", 2)].Read(context.Background(), &pb.ReadRequest{Stamp: txn.EncodeStamp(at), Name: "x"}); err != nil ||
		!r.GetMoved() || r.GetMovedTo() != txn.ShardOf("x", 2) || r.GetExists() {
		t.Errorf("read on the wrong shard: %v %v", r, err)
	}
	// An entry for the wrong shard breaks its stream.
	st, err := c.clients[0].Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := gatekeeper.Entry{GK: 0, Seq: 1, Stamp: at, Ops: []txn.ShardOp{{Shard: 1, Kind: txn.OpCreateVertex, Vertex: "y"}}}
	if err := st.Send(&pb.Entries{Gatekeeper: 0, Entries: [][]byte{gatekeeper.AppendEntry(nil, e)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("entry for shard 1 on shard 0: %v", err)
	}
	sts, err := c.clients[0].Status(context.Background(), &pb.StatusRequest{})
	if err != nil || sts.GetApplied() != 0 {
		t.Fatalf("status after refusals: %v %v", sts, err)
	}
}
