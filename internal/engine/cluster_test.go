package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// startCluster runs a cluster's roles in this process, each behind its own
// gRPC server on loopback, with a Kronos replica over the network (the
// process-per-role tests are in internal/clustertest).
func startCluster(t *testing.T, gatekeepers, shards int) []*ClusterGatekeeper {
	t.Helper()
	return startClusterWith(t, LocalClusterConfig{Gatekeepers: gatekeepers, Shards: shards}).Gatekeepers
}

// startClusterWith is startCluster with more of the configuration; the
// Oracle and Log are filled in.
func startClusterWith(t *testing.T, cfg LocalClusterConfig) *LocalCluster {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	kcfg := kronos.DefaultServerConfig()
	kcfg.Addr, kcfg.DataDir, kcfg.Sync = "127.0.0.1:0", t.TempDir(), false
	ks, err := kronos.NewServer(kcfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Stop() })
	kcl, err := kc.Dial([]string{ks.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kcl.Close() })
	cfg.Oracle, cfg.Log = order.Remote{C: kcl}, quiet
	c, err := StartLocalCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The bank workload through two gatekeeper processes' engines and three
// shard servers: every snapshot read sums to the total.
func TestClusterBank(t *testing.T) {
	gks := startCluster(t, 2, 3)
	bankIsolation(t, []API{gks[0], gks[1]})
}

// The ring (FoundationDB's cycle workload, bfs walks) and Weaver's parity
// test (pathless_reachability) with programs hopping between shard servers.
func TestClusterRing(t *testing.T) {
	gks := startCluster(t, 2, 3)
	ringInvariant(t, []API{gks[0], gks[1]})
}

func TestClusterParity(t *testing.T) {
	gks := startCluster(t, 2, 3)
	parityReachability(t, []API{gks[0], gks[1]})
}

// Real-time order across gatekeepers: a write acknowledged by one is seen by
// a read started afterwards at the other, every time.
func TestClusterReadsFollowAcknowledgedWrites(t *testing.T) {
	gks := startCluster(t, 3, 2)
	ctx := context.Background()
	if _, err := gks[0].Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "c"},
		{Kind: txn.SetVertexProp, Vertex: "c", Key: "n", Value: value.I64(0)}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 60; i++ {
		w, r := gks[i%3], gks[(i+1)%3]
		if _, err := w.Commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: "c", Key: "n", Value: value.I64(int64(i))}}); err != nil {
			t.Fatal(err)
		}
		out, err := r.Run(ctx, "read_node_props", json.RawMessage(`{"node":"c","keys":["n"]}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Props map[string]value.Value `json:"props"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		if got := res.Props["n"].Int(); got != int64(i) {
			t.Fatalf("write %d acknowledged by gatekeeper %d; a later read at %d saw %d", i, i%3, (i+1)%3, got)
		}
		v, err := r.GetVertex(ctx, Snapshot{}, VertexRef{Name: "c"}, DefaultReadOptions())
		if err != nil || v.Props["n"].Int() != int64(i) {
			t.Fatalf("GetVertex after write %d: %+v %v", i, v, err)
		}
	}
}

// Bad input fails clearly and changes nothing.
func TestClusterRefusals(t *testing.T) {
	gks := startCluster(t, 1, 2)
	ctx := context.Background()
	if _, err := gks[0].Run(ctx, "wcc", json.RawMessage(`{"nonsense":1}`), nil); err == nil {
		t.Fatal("an analysis with bad params ran")
	}
	if _, err := gks[0].Run(ctx, "bfs", json.RawMessage(`{"src":"a","nonsense":1}`), nil); err == nil {
		t.Fatal("bad params were accepted")
	}
	if _, err := gks[0].Run(ctx, "nope", nil, nil); err == nil {
		t.Fatal("unknown program ran")
	}
	if _, err := gks[0].Commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: "ghost", Key: "k", Value: value.I64(1)}}); err == nil {
		t.Fatal("a write to a missing vertex committed")
	}
	v, err := gks[0].GetVertex(ctx, Snapshot{}, VertexRef{Name: "ghost"}, DefaultReadOptions())
	if err != nil || v.Exists {
		t.Fatalf("ghost: %+v %v", v, err)
	}
	if _, err := gks[0].GetVertex(ctx, Snapshot{Token: "!!"}, VertexRef{Name: "x"}, DefaultReadOptions()); err == nil {
		t.Fatal("a malformed snapshot was accepted")
	}
	st, err := gks[0].Status(ctx)
	if err != nil || st.Commits != 0 || st.Aborts != 1 || st.Vertices != 0 || st.Shards != 2 {
		t.Fatalf("status %+v %v", st, err)
	}
	if _, err := gks[0].Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "a"}, {Kind: txn.CreateVertex, Vertex: "b"},
		{Kind: txn.CreateEdge, Vertex: "a", Dst: "b"}}); err != nil {
		t.Fatal(err)
	}
	// Sizes are the shards', published after their rounds.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, err = gks[0].Status(ctx)
		if err == nil && st.Vertices == 2 && st.Edges == 1 && st.Commits == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status after a commit: %+v %v", st, err)
		}
	}
}

// Online moves on a cluster: the bank and ring workloads through two
// gatekeepers while their units move between three shard servers, each
// move through either gatekeeper (so the other routes by a stale
// directory until a commit tells it).
func TestClusterBankWhileMoving(t *testing.T) {
	gks := startCluster(t, 2, 3)
	var names []string
	for i := 0; i < 8; i++ {
		names = append(names, acct(i))
	}
	stop := make(chan struct{})
	done := mover(t, []Mover{gks[0], gks[1]}, 3, names, stop)
	bankIsolation(t, []API{gks[0], gks[1]})
	close(stop)
	moved := <-done
	_, f0 := gks[0].Moves()
	_, f1 := gks[1].Moves()
	t.Logf("%d moves, %d forwarded reads", moved, f0+f1)
	if moved == 0 {
		t.Fatal("no unit moved")
	}
}

func TestClusterRingWhileMoving(t *testing.T) {
	gks := startCluster(t, 2, 3)
	var names []string
	for i := 0; i < 12; i++ {
		names = append(names, node(i))
	}
	stop := make(chan struct{})
	done := mover(t, []Mover{gks[0], gks[1]}, 3, names, stop)
	ringInvariant(t, []API{gks[0], gks[1]})
	close(stop)
	if moved := <-done; moved == 0 {
		t.Fatal("no unit moved")
	}
}

// Old snapshots read through the forwarding pointers of the shard
// processes; the other gatekeeper, whose directory is stale, reads and
// writes the moved units; the next epoch's shards rebuild by the
// directory.
func TestClusterMoveKeepsSnapshotsAndSurvivesNewEpoch(t *testing.T) {
	ctx := context.Background()
	ecfg := DefaultConfig()
	ecfg.Sync, ecfg.Shards = false, 3
	st, err := openStore(ecfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := startClusterWith(t, LocalClusterConfig{Gatekeepers: 2, Shards: 3, Store: st})
	gks := c.Gatekeepers
	names := moveEveryUnit(t, gks[0], gks[0], 3)
	if _, f := gks[0].Moves(); f == 0 {
		t.Error("no read was forwarded, yet every unit moved after the old snapshot")
	}
	snap, _ := gks[1].Begin(ctx)
	checkMovedReads(t, gks[1], snap, names, 100, "the other gatekeeper")
	var upd []txn.Op
	for i, h := range names {
		upd = append(upd, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "n", Value: value.I64(int64(200 + i))})
	}
	if _, err := gks[1].Commit(ctx, nil, upd); err != nil {
		t.Fatalf("a commit through the gatekeeper with the stale directory: %v", err)
	}
	if gks[1].Directory().Moved() != gks[0].Directory().Moved() {
		t.Fatalf("the other gatekeeper knows %d moved units after its commit, want %d", gks[1].Directory().Moved(), gks[0].Directory().Moved())
	}
	moved := gks[0].Directory().Moved()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := startClusterWith(t, LocalClusterConfig{Gatekeepers: 2, Shards: 3, Store: st, Epoch: 2})
	if got := c2.Gatekeepers[1].Directory().Moved(); got != moved {
		t.Fatalf("the next epoch reads %d moved units, want %d", got, moved)
	}
	snap, _ = c2.Gatekeepers[1].Begin(ctx)
	checkMovedReads(t, c2.Gatekeepers[1], snap, names, 200, "the next epoch")
	// Every vertex is rebuilt on one shard only (the directory's).
	if stt, err := c2.Gatekeepers[0].Status(ctx); err != nil || stt.Vertices != int64(len(names)) {
		t.Fatalf("the next epoch's shards hold %+v (%v), want %d vertices", stt, err, len(names))
	}
}
