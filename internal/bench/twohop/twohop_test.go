package twohop_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/bench/twohop"
	"github.com/weft-db/weft/internal/testproc"
)

// TestRun: a small run through every interface against a real weft serve:
// every answer correct, figures measured, the JSON and plots written.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and starts a server")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	out := t.TempDir()
	o := twohop.Options{Bin: bin, Vertices: 300, Edges: 2400, Queries: 40, Rounds: 2, Clients: []int{1, 3},
		Python: testproc.Python(t, ""), LoadBatch: 500, Out: out, Seed: 3}
	res, err := twohop.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results.(*twohop.Results)
	if r.Load.Vertices != 300 || r.Load.Edges != 2400 || r.Load.Transactions != 6 || r.MeanAnswer <= 1 {
		t.Errorf("load %+v, mean answer %v", r.Load, r.MeanAnswer)
	}
	if len(r.Cells) != len(twohop.Interfaces)*2 {
		t.Fatalf("%d cells, want %d", len(r.Cells), len(twohop.Interfaces)*2)
	}
	for _, c := range r.Cells {
		if c.Correct != 80 || len(c.Rounds) != 2 || c.QPS <= 0 || c.P50US <= 0 || c.P99US < c.P50US || c.ServerCPUMS <= 0 {
			t.Errorf("cell %+v", c)
		}
	}
	if r.DgraphLoad == nil || r.DgraphLoad.Edges != 2400 || r.DgraphLoad.Seconds <= 0 {
		t.Errorf("the Dgraph face's load: %+v", r.DgraphLoad)
	}
	if r.ServerRSS <= 0 {
		t.Errorf("server RSS %d", r.ServerRSS)
	}
	for _, f := range append([]string{"twohop.json"}, res.Plots...) {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(res.Plots) != 2 {
		t.Errorf("plots %v", res.Plots)
	}
	o.InMemory = true
	if _, err := twohop.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "dql-http reads a store bulk-loaded") {
		t.Errorf("dql-http in memory: %v", err)
	}
}

// TestRunRedisPeer: --peers redis starts Debian's redis-server (installed
// when missing), loads the graph, answers every query correctly through
// the Lua script in the same rounds, and each Weft cell gets its ratio.
func TestRunRedisPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and starts servers")
	}
	testproc.DebianPackage(t, "/usr/bin/redis-server", "redis-server")
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	o := twohop.Options{Bin: bin, Vertices: 300, Edges: 2400, Queries: 40, Rounds: 1, Clients: []int{1, 2},
		Interfaces: []string{"go-grpc-count"}, Peers: []string{"redis"}, InMemory: true, LoadBatch: 200, Loaders: 3, Seed: 4}
	res, err := twohop.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results.(*twohop.Results)
	if r.RedisLoad == nil || r.RedisLoad.Edges != 2400 {
		t.Errorf("redis load %+v", r.RedisLoad)
	}
	peers := 0
	for _, c := range r.Cells {
		switch c.Interface {
		case "redis-lua":
			peers++
			if c.Correct != 40 || c.QPS <= 0 || c.ServerCPUMS <= 0 {
				t.Errorf("redis cell %+v", c)
			}
		default:
			if c.VsRedis <= 0 {
				t.Errorf("%s at %d clients has no ratio to redis: %+v", c.Interface, c.Clients, c)
			}
		}
	}
	if peers != 2 {
		t.Errorf("%d redis cells, want 2", peers)
	}
	o.Peers = []string{"falkordb"}
	if _, err := twohop.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "falkordb") {
		t.Errorf("peer falkordb: %v", err)
	}
}
