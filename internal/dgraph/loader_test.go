package dgraph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/engine"
)

// TestXIDStableAcrossLoads: loading the same file twice, with fresh loader
// caches, maps every XID to the node of the first load and adds nothing;
// blank nodes are shared across the batches of one load (issue §2).
func TestXIDStableAcrossLoads(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact) .\nfriend: [uid] @reverse @count .")
	text := `
		<x1> <name> "one" .
		<x1> <friend> <x2> .
		<x2> <name> "two" .
		_:b <name> "blank" .
		_:b <friend> <x1> .
		<x3> <friend> _:b .
	`
	cfg := DefaultLoadConfig()
	cfg.BatchQuads = 1 // a transaction per subject
	st, err := g.LoadRDF(ctx, strings.NewReader(text), "first", cfg)
	if err != nil || st.Quads != 6 || st.Batches != 4 || st.Nodes != 4 {
		t.Fatalf("first load: %+v %v", st, err)
	}
	first := dump(t, g)
	uids := map[string]uint64{}
	for _, x := range []string{"x1", "x2", "x3"} {
		uids[x] = uidOf(t, g, x)
	}
	if strings.Count(first, "blank") != 1 {
		t.Fatalf("blank node split across batches:\n%s", first)
	}
	cfg.BatchQuads = 4
	cfg.Loaders = 3
	st, err = g.LoadRDF(ctx, strings.NewReader(strings.ReplaceAll(text, "_:b", "<x4>")), "second", cfg)
	if err != nil || st.Nodes != 1 { // only x4 is new
		t.Fatalf("second load: %+v %v", st, err)
	}
	for x, u := range uids {
		if got := uidOf(t, g, x); got != u {
			t.Errorf("%s moved from %s to %s", x, FormatUID(u), FormatUID(got))
		}
	}
	checkConsistency(t, g)
}

// TestParallelLoadersDoNotCollide: loaders running at once over files that
// share XIDs (with small leases, so they lease often) give each XID exactly
// one node and never hand out a UID twice; every derived structure stays
// consistent. Run with -race.
func TestParallelLoadersDoNotCollide(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact, term) .\nlink: [uid] @reverse @count .\nn: int @index(int) .")
	g.cfg.LeaseSize = 1 << BucketShift // each allocator in its own bucket block
	const files, xids, lines = 4, 60, 150
	var texts []string
	for f := range files {
		r := rand.New(rand.NewPCG(uint64(f), 7))
		var b strings.Builder
		for range lines {
			x, y := r.IntN(xids), r.IntN(xids)
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "<x%d> <link> <x%d> .\n", x, y)
			case 1:
				fmt.Fprintf(&b, "<x%d> <name> \"name %d\" .\n", x, x)
			default:
				fmt.Fprintf(&b, "<x%d> <n> \"%d\" .\n", x, r.IntN(5))
			}
		}
		texts = append(texts, b.String())
	}
	var wg sync.WaitGroup
	errs := make([]error, files)
	for f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := DefaultLoadConfig()
			cfg.BatchQuads = 10
			cfg.Loaders = 2
			_, errs[f] = g.LoadRDF(ctx, strings.NewReader(texts[f]), fmt.Sprintf("file%d", f), cfg)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Each XID names one node, and each node records its own XID.
	seen := map[uint64]string{}
	snap := snapshot(t, g)
	for x := range xids {
		xid := fmt.Sprintf("x%d", x)
		v, err := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: xidAlias(xid), Alias: true}, engine.ReadOptions{Props: true})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Exists {
			continue // never drawn
		}
		u, _ := UIDOfHandle(v.Handle)
		if other, dup := seen[u]; dup {
			t.Fatalf("%s and %s share %s", other, xid, v.Handle)
		}
		seen[u] = xid
		if got := v.Props[XIDPred].Str(); got != xid {
			t.Fatalf("%s records xid %q", v.Handle, got)
		}
	}
	// No node without an XID: a collision would leave an orphan.
	for _, u := range candidates(t, g, snap) {
		n, err := g.ReadNode(ctx, snap, u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n.Exists && seen[u] == "" {
			t.Fatalf("node %s has no xid: %s", FormatUID(u), renderNode(n))
		}
	}
	// Some node got values from a loader other than its creator's, in that
	// loader's bucket.
	moved := 0
	for u := range seen {
		v, _ := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: FormatUID(u)}, engine.ReadOptions{Props: true})
		for p := range v.Props {
			if strings.HasPrefix(p, "|bucket|") {
				moved++
			}
		}
	}
	t.Logf("%d (node, predicate) entries in another loader's bucket", moved)
	checkConsistency(t, g)
}

// TestLeasesDisjoint: concurrent leases never overlap.
func TestLeasesDisjoint(t *testing.T) {
	g := newGraph(t, "")
	var mu sync.Mutex
	got := map[uint64]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := g.NewAllocator()
			for range 40 {
				u, err := a.Next(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if got[u] {
					t.Errorf("uid %d handed out twice", u)
				}
				got[u] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != 320 || slices.Min(slices.Collect(maps.Keys(got))) < 1 {
		t.Fatalf("%d uids", len(got))
	}
	s, e, err := g.Lease(context.Background(), 5)
	if err != nil || e-s != 5 || got[s] {
		t.Fatalf("lease [%d, %d) %v", s, e, err)
	}
}

// TestLoadReportsBadLines: a bad line stops a load with its file:line, or
// is skipped and listed with SkipInvalid; out-of-range values are always
// skipped.
func TestLoadReportsBadLines(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "age: int .")
	text := "<a> <age> \"1\" .\n<b> <age> \"x\" .\n<c> <when> \"1200-01-01\"^^<xs:dateTime> .\n<d> <age> \"2\" .\n"
	_, err := g.LoadRDF(ctx, strings.NewReader(text), "f.rdf", DefaultLoadConfig())
	if err == nil || !strings.Contains(err.Error(), "f.rdf:2") {
		t.Fatalf("load error %v, want f.rdf:2", err)
	}
	cfg := DefaultLoadConfig()
	cfg.SkipInvalid = true
	st, err := g.LoadRDF(ctx, strings.NewReader(text), "f.rdf", cfg)
	if err != nil || st.Quads != 2 || st.Skipped != 2 || st.SkippedLines[0].Where != "f.rdf:3" || st.SkippedLines[1].Where != "f.rdf:2" {
		t.Fatalf("skipping load: %+v %v", st, err)
	}
	_, err = g.LoadRDF(ctx, strings.NewReader("<a> <age> \"1\" \n"), "g.rdf", cfg)
	if err != nil {
		t.Fatalf("a syntax error with SkipInvalid: %v", err)
	}
	_, err = g.LoadRDF(ctx, strings.NewReader("<a> <age> \"1\" \n"), "g.rdf", DefaultLoadConfig())
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "g.rdf:1") {
		t.Fatalf("a syntax error: %v", err)
	}
}

// TestLoadJSONFile loads Dgraph's JSON format, streamed.
func TestLoadJSONFile(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact) .\nfriend: [uid] .")
	text := `[{"uid": "_:a", "name": "A", "friend": [{"uid": "_:b"}]},
	          {"uid": "_:b", "name": "B", "friend": {"name": "C"}}]`
	cfg := DefaultLoadConfig()
	cfg.BatchQuads = 1
	st, err := g.LoadJSON(ctx, strings.NewReader(text), "f.json", cfg)
	if err != nil || st.Quads != 5 || st.Nodes != 3 {
		t.Fatalf("json load %+v %v", st, err)
	}
	d := dump(t, g)
	if strings.Count(d, "friend->") != 2 || !strings.Contains(d, "name=C") {
		t.Fatalf("json load result:\n%s", d)
	}
	checkConsistency(t, g)
}
