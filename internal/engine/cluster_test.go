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
