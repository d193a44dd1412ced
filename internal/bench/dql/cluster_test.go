package dql

import (
	"bufio"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
	"github.com/weft-db/weft/internal/dgraph/exec"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
)

// TestRunDQLCluster: the film benchmark on a cluster in process (gatekeeper
// and shard roles behind their own gRPC servers) in both placements: the
// load goes through the cluster, the cells run through every gatekeeper's
// Dgraph HTTP API without errors, and every engine request of a query is
// exactly one call at the shards (no alias reads in these queries), the
// predicate placement's through ReadBatch.
func TestRunDQLCluster(t *testing.T) {
	rdfPath := dqlFilm(t)
	for _, placement := range []string{"vertex", "predicate"} {
		t.Run(placement, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Out: dir, Quick: true, RDF: rdfPath, Lines: 3000, Duration: 150 * time.Millisecond,
				Clients: []int{2}, Placement: placement, Cluster: true, Gatekeepers: 2, Shards: 3, CallsSample: 40, Seed: 5}
			res, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := "dql/film-cluster-http-" + placement + "-quick"; res.Benchmark != want {
				t.Errorf("benchmark %q, want %q", res.Benchmark, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "film-cluster-http-"+placement+"-quick.json")); err != nil {
				t.Error(err)
			}
			r := res.Results.(dqlResults)
			if r.Load.Quads < 2900 || r.Load.EngineEdges == 0 {
				t.Errorf("load: %d quads, %d engine edges", r.Load.Quads, r.Load.EngineEdges)
			}
			for _, q := range Queries {
				c := r.Calls[q.Name]
				if c.Roots == 0 || c.ShardRPCsMean <= 0 || c.ShardRPCsMean != c.GetVertexMean {
					t.Errorf("%s: %d roots, %.2f shard calls per query for %.2f engine requests", q.Name, c.Roots, c.ShardRPCsMean, c.GetVertexMean)
				}
				if placement == "predicate" && c.ShardReadBatchesMean <= 0 {
					t.Errorf("%s: no ReadBatch calls in the predicate placement", q.Name)
				}
			}
			for _, c := range r.Cells {
				if c.Queries == 0 || c.Errors != 0 {
					t.Errorf("cell %s/%d: %d queries, %d errors %v", c.Query, c.Clients, c.Queries, c.Errors, c.ErrorSamples)
				}
			}
			if len(r.Cells) != len(Queries) {
				t.Errorf("%d cells, want %d", len(r.Cells), len(Queries))
			}
		})
	}
}

// TestRunDQLTarget: against an external server (here the Dgraph HTTP API
// over an engine of this process, loaded beforehand), the benchmark loads
// nothing, finds each query's roots through the API — as many as the
// executor finds in process — and runs its cells without errors.
func TestRunDQLTarget(t *testing.T) {
	rdfPath := dqlFilm(t)
	ctx := context.Background()
	ecfg := engine.DefaultConfig()
	ecfg.Sync, ecfg.DataDir = false, ""
	db, err := engine.Open(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, err := dgraph.Open(ctx, db, dgraph.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sch, err := os.ReadFile(filepath.Join(filepath.Dir(rdfPath), "goldendata.schema"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Alter(ctx, string(sch)); err != nil {
		t.Fatal(err)
	}
	f, err := rdf.Open(rdfPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := g.LoadRDF(ctx, &lineLimitReader{r: bufio.NewReaderSize(f, 1<<16), left: 2000}, rdfPath, dgraph.DefaultLoadConfig()); err != nil {
		t.Fatal(err)
	}
	s, err := dgraphapi.New(g, dgraphapi.NewExecutor(g), dgraphapi.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	res, err := Run(ctx, Options{Target: srv.URL, Quick: true, Duration: 100 * time.Millisecond, Clients: []int{2}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results.(dqlResults)
	in := &inprocDQL{db: db, exec: exec.New(g)}
	for _, q := range Queries {
		want, err := findRoots(ctx, in, q.RootsPred)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || r.Roots[q.Name] != len(want) {
			t.Errorf("%s: %d roots through the API, %d in process", q.Name, r.Roots[q.Name], len(want))
		}
	}
	if r.Load.Quads != 0 || len(r.Calls) != 0 {
		t.Errorf("a target run loaded %d quads and counted %d queries' calls", r.Load.Quads, len(r.Calls))
	}
	for _, c := range r.Cells {
		if c.Queries == 0 || c.Errors != 0 {
			t.Errorf("cell %s/%d: %d queries, %d errors %v", c.Query, c.Clients, c.Queries, c.Errors, c.ErrorSamples)
		}
	}
	if res.Benchmark != "dql/film-target-http-vertex-quick" {
		t.Errorf("benchmark %q", res.Benchmark)
	}
}
