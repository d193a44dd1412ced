package main

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/examples/internal/exweft"
	"github.com/weft-db/weft/examples/robobrain/brain"
)

// The example against a real server (an in-process engine behind the gRPC
// front end), twice on the same server; what it printed is checked against
// the generator and against independent reads of the final graph.
func TestRoboBrain(t *testing.T) {
	addr, c := exweft.Serve(t)

	for i := range 2 {
		cfg := defaults()
		cfg.Addr = addr
		cfg.Seed = uint64(1 + i)
		var out bytes.Buffer
		r, err := run(t.Context(), &out, cfg)
		t.Logf("run %d output:\n%s", i, out.String())
		if err != nil {
			t.Fatal(err)
		}
		checkRun(t, c, &out, r)
	}
}

type relKey struct{ src, kind, dst string }

// checkRun checks one run's report and output against the generator and
// independent reads.
func checkRun(t *testing.T, c *weft.Client, out *bytes.Buffer, r *report) {
	t.Helper()
	ctx := t.Context()
	k := r.K
	g := brain.New(c, r.Prefix)
	if len(r.Merged) != len(k.Merges) || len(r.Split) != len(k.Splits) {
		t.Fatalf("%d merges and %d splits done, %d and %d planned", len(r.Merged), len(r.Split), len(k.Merges), len(k.Splits))
	}
	// Where each original concept's relations of a kind are now: each
	// concept was restructured at most once.
	mergedInto, splitInto := map[string]string{}, map[string][2]string{}
	for p, m := range r.Merged {
		mergedInto[p[0]], mergedInto[p[1]] = m.Handle, m.Handle
	}
	for n, h := range r.Split {
		splitInto[n] = h
	}
	cur := func(name, kind string) string {
		if h, ok := mergedInto[name]; ok {
			return h
		}
		if h, ok := splitInto[name]; ok {
			if brain.SplitsUse(kind) {
				return h[1]
			}
			return h[0]
		}
		return g.Concept(name)
	}
	// The final relations the generator implies: moved, deduplicated at the
	// higher confidence, those between merged concepts dropped.
	want := map[relKey]float64{}
	for _, x := range k.Relations {
		s, d := cur(k.Concepts[x.Src].Name, x.Kind), cur(k.Concepts[x.Dst].Name, x.Kind)
		if s == d {
			continue
		}
		key := relKey{s, x.Kind, d}
		want[key] = math.Max(want[key], x.Confidence)
	}
	if len(want) != len(k.Relations)-r.Dropped {
		t.Errorf("the generator implies %d relations at the end; %d loaded − %d dropped = %d",
			len(want), len(k.Relations), r.Dropped, len(k.Relations)-r.Dropped)
	}
	// The live concepts the generator implies.
	live := map[string]bool{}
	for _, x := range k.Concepts {
		for _, kind := range []string{brain.IsA, brain.HasAffordance} {
			live[cur(x.Name, kind)] = true
		}
	}
	if len(live) != len(k.Concepts)+len(k.Splits)-len(k.Merges) {
		t.Fatalf("%d live concepts implied, want %d", len(live), len(k.Concepts)+len(k.Splits)-len(k.Merges))
	}
	// Read every live concept independently, at one snapshot.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[relKey]float64{}
	mirrors := 0
	for h := range live {
		v, err := tx.GetVertex(ctx, weft.Handle(h))
		if err != nil || !v.Exists {
			t.Fatalf("live concept %s: %+v %v", h, v, err)
		}
		for _, e := range v.Edges {
			kind, _ := e.Props["kind"].(string)
			conf, _ := e.Props["confidence"].(float64)
			if strings.HasPrefix(e.Handle, "out:") {
				got[relKey{h, kind, e.Dst}] = conf
			} else {
				mirrors++
				if want[relKey{e.Dst, kind, h}] != conf {
					t.Errorf("mirror %s of %s: confidence %v, want %v", e.Handle, h, conf, want[relKey{e.Dst, kind, h}])
				}
			}
		}
	}
	if mirrors != len(want) {
		t.Errorf("%d mirror edges, want %d", mirrors, len(want))
	}
	for key, conf := range want {
		if got[key] != conf {
			t.Errorf("relation %v: confidence %v in the graph, %v implied", key, got[key], conf)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d relations in the graph, %d implied", len(got), len(want))
	}
	// The originals of merges and splits are gone; the names find their
	// new holders.
	for p, m := range r.Merged {
		for _, n := range p {
			if ok, err := g.Exists(ctx, g.Concept(n)); err != nil || ok {
				t.Errorf("merged %s still exists (%v)", n, err)
			}
			v, ok, err := g.Read(ctx, n)
			if err != nil || !ok || v.Handle != m.Handle {
				t.Errorf("name %s finds %q (%v, %v), want %s", n, v.Handle, ok, err, m.Handle)
			}
		}
	}
	for n, h := range r.Split {
		if ok, err := g.Exists(ctx, g.Concept(n)); err != nil || ok {
			t.Errorf("split %s still exists (%v)", n, err)
		}
		if v, ok, err := g.Read(ctx, n); err != nil || !ok || v.Handle != h[0] {
			t.Errorf("name %s finds %q (%v, %v), want %s", n, v.Handle, ok, err, h[0])
		}
		if v, ok, err := g.Read(ctx, n+":use"); err != nil || !ok || v.Handle != h[1] {
			t.Errorf("name %s:use finds %q (%v, %v), want %s", n, v.Handle, ok, err, h[1])
		}
	}
	// The sample merged concept has the union of both originals'
	// relations (as they were when read before the restructurings, each
	// other end moved to where it is now).
	union := map[string]bool{}
	for _, v := range r.Before {
		for _, x := range v.Rels {
			if x.Other == g.Concept(k.Merges[0][0]) || x.Other == g.Concept(k.Merges[0][1]) {
				continue
			}
			other := cur(strings.TrimPrefix(x.Other, r.Prefix+"/c/"), x.Kind)
			union[fmt.Sprint(x.Out, x.Kind, other)] = true
		}
	}
	var after []string
	for _, x := range r.After.Rels {
		after = append(after, fmt.Sprint(x.Out, x.Kind, x.Other))
	}
	var unionL []string
	for s := range union {
		unionL = append(unionL, s)
	}
	sort.Strings(after)
	sort.Strings(unionL)
	if strings.Join(after, ";") != strings.Join(unionL, ";") {
		t.Errorf("merged %s relations\n%v\nunion of the originals'\n%v", r.After.Handle, after, unionL)
	}
	if r.After.Handle != r.Merged[k.Merges[0]].Handle {
		t.Errorf("sample after is %s, merged into %s", r.After.Handle, r.Merged[k.Merges[0]].Handle)
	}
	// Every reader snapshot held the invariant, and saw a consistent
	// count pair.
	if len(r.Checks) == 0 {
		t.Fatal("no reader checks")
	}
	for _, ck := range r.Checks {
		if len(ck.Violations) > 0 {
			t.Errorf("snapshot %s: %v", ck.Snapshot, ck.Violations)
		}
		if ck.StatsC < int64(len(k.Concepts)-len(k.Merges)) || ck.StatsC > int64(len(k.Concepts)+len(k.Splits)) ||
			ck.StatsR < int64(len(want)) || ck.StatsR > int64(len(k.Relations)) {
			t.Errorf("snapshot %s: counts %d/%d out of range", ck.Snapshot, ck.StatsC, ck.StatsR)
		}
	}
	if r.Final.Concepts != len(live) || r.Final.Relations != len(want) || len(r.Final.Violations) > 0 {
		t.Errorf("final check %+v; want %d concepts, %d relations", r.Final, len(live), len(want))
	}
	for _, s := range []string{
		fmt.Sprintf("loaded %d concepts, %d relations", len(k.Concepts), len(k.Relations)),
		fmt.Sprintf("%d merges and %d splits", len(k.Merges), len(k.Splits)),
		fmt.Sprintf("at %d snapshots meanwhile", len(r.Checks)),
		": 0 violations",
		fmt.Sprintf("now: %d concepts", len(live)),
		fmt.Sprintf("%d relations; final check: 0 violations", len(want)),
		fmt.Sprintf("names %s, %s", k.Merges[0][0], k.Merges[0][1]),
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the output lacks %q", s)
		}
	}
}

// The readers' check catches a restructuring done in two transactions
// instead of one: after the first half (the merged concept created and
// registered with cup's out-relations, but no mirrors, the originals still
// there, the stats not updated), CheckAt reports violations.
func TestCheckCatchesHalfRestructuring(t *testing.T) {
	_, c := exweft.Serve(t)
	ctx := t.Context()
	k := brain.Generate(1, 60, 5, 0, 0)
	g := brain.New(c, "half")
	if _, err := g.Load(ctx, k, 500); err != nil {
		t.Fatal(err)
	}
	if ck, err := g.CheckAt(ctx, []string{"cup", "mug"}); err != nil || len(ck.Violations) > 0 {
		t.Fatalf("after the load: %v %v", ck.Violations, err)
	}
	rtx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := rtx.GetVertex(ctx, weft.Handle(g.Concept("cup")))
	if err != nil || len(v.Edges) == 0 {
		t.Fatalf("cup: %+v %v", v, err)
	}
	// Half a merge: the new concept with cup's out-relations, registered,
	// but neither mirrors nor the originals' removal nor the stats yet.
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex("half/c/cup+mug")
		tx.CreateEdge(weft.Handle("half/registry"), "c:half/c/cup+mug", weft.Handle("half/c/cup+mug"))
		for _, e := range v.Edges {
			if strings.HasPrefix(e.Handle, "out:") {
				tx.CreateEdge(weft.Handle("half/c/cup+mug"), e.Handle, weft.Handle(e.Dst))
				tx.SetEdgeProp(weft.Handle("half/c/cup+mug"), e.Handle, "kind", e.Props["kind"])
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ck, err := g.CheckAt(ctx, []string{"cup", "mug"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ck.Violations) == 0 {
		t.Fatal("no violation seen after half a merge")
	}
	t.Logf("after half a merge: %d violations, e.g. %s", len(ck.Violations), ck.Violations[0])
}
