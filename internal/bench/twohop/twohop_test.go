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
