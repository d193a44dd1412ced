package api_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/value"
)

func TestDemoLoadsOnceAndIsIdempotent(t *testing.T) {
	f := apitest.New()
	loaded, err := api.LoadDemo(context.Background(), f)
	if err != nil || !loaded {
		t.Fatalf("first load: %v %v", loaded, err)
	}
	st, _ := f.Status(context.Background())
	if st.Vertices != 51 || st.Edges < 150 || st.Edges > 260 {
		t.Fatalf("demo graph has %d vertices (want 50 + the marker) and %d edges", st.Vertices, st.Edges)
	}
	again, err := api.LoadDemo(context.Background(), f)
	if err != nil || again {
		t.Fatalf("second load: %v %v", again, err)
	}
	if st2, _ := f.Status(context.Background()); st2.Vertices != st.Vertices || st2.Commits != 1 {
		t.Fatalf("second load changed the graph: %+v", st2)
	}
	snap, _ := f.Begin(context.Background())
	alice, err := f.GetVertex(context.Background(), snap, engine.VertexRef{Name: "alice@example.com", Alias: true}, engine.DefaultReadOptions())
	if err != nil || !alice.Exists || alice.Handle != "person/alice" {
		t.Fatalf("alice by e-mail: %+v %v", alice, err)
	}
	if alice.Props["kind"].Str() != "person" || alice.Props["joined"].Kind() != value.Datetime ||
		alice.Props["interests"].Kind() != value.List || len(alice.Aliases) != 2 {
		t.Fatalf("alice = %+v", alice)
	}
	var knows int
	for _, e := range alice.Edges {
		if e.Props["type"].Str() == "knows" {
			knows++
			if w := e.Props["weight"]; w.Kind() != value.Float || w.Float() <= 0 || w.Float() > 1 {
				t.Errorf("knows edge %s weight %v", e.Handle, w)
			}
		}
	}
	if knows < 1 {
		t.Fatalf("alice knows nobody: %+v", alice.Edges)
	}
}

// Concurrent loaders: exactly one loads, the others find it loaded.
func TestDemoConcurrentLoaders(t *testing.T) {
	f := apitest.New()
	var wg sync.WaitGroup
	var loads atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := api.LoadDemo(context.Background(), f)
			if err != nil {
				t.Error(err)
			}
			if ok {
				loads.Add(1)
			}
		}()
	}
	wg.Wait()
	if st, _ := f.Status(context.Background()); loads.Load() != 1 || st.Vertices != 51 {
		t.Fatalf("%d loads, %d vertices", loads.Load(), st.Vertices)
	}
}

func TestDemoOpsDeterministic(t *testing.T) {
	a, b := api.DemoOps(), api.DemoOps()
	if len(a) != len(b) || len(a) > 10000 {
		t.Fatalf("%d and %d ops", len(a), len(b))
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Vertex != b[i].Vertex || a[i].Edge != b[i].Edge || !value.Equal(a[i].Value, b[i].Value) && !a[i].Value.IsNull() {
			t.Fatalf("op %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
}
