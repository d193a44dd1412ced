package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Whole-snapshot analyses on a cluster (the shards' partitions scanned to
// the gatekeeper) answer what weft serve answers on the same graph, at a
// fresh snapshot and at an older one.
func TestClusterAnalysesMatchOneProcess(t *testing.T) {
	ctx := context.Background()
	c := startClusterWith(t, LocalClusterConfig{Gatekeepers: 2, Shards: 3})
	db := openTest(t, memConfig())
	rng := rand.New(rand.NewPCG(5, 11))
	const n = 200
	var ops []txn.Op
	for i := range n {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: fmt.Sprintf("v%d", i)})
	}
	for e := range 400 {
		src, dst := fmt.Sprintf("v%d", rng.IntN(n)), fmt.Sprintf("v%d", rng.IntN(n))
		h := fmt.Sprintf("e%d", e)
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: src, Edge: h, Dst: dst},
			txn.Op{Kind: txn.SetEdgeProp, Vertex: src, Edge: h, Key: "w", Value: value.I64(int64(rng.IntN(9) + 1))})
	}
	apis := []API{db, c.Gatekeepers[1]}
	for _, a := range apis {
		if _, err := a.Commit(ctx, nil, ops); err != nil {
			t.Fatal(err)
		}
	}
	run := func(a API, prog string, at *Snapshot) json.RawMessage {
		t.Helper()
		out, err := a.Run(ctx, prog, json.RawMessage(`{}`), at)
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		return out
	}
	compare := func(what string, one, cluster json.RawMessage) {
		t.Helper()
		var a, b map[string]any
		if err := json.Unmarshal(one, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(cluster, &b); err != nil {
			t.Fatal(err)
		}
		if !jsonClose(a, b) {
			t.Fatalf("%s: one process %.300s\ncluster %.300s", what, one, cluster)
		}
	}
	for _, prog := range []string{"pagerank", "wcc", "lcc", "triangles"} {
		compare(prog, run(db, prog, nil), run(c.Gatekeepers[0], prog, nil))
	}
	// An older snapshot: the cluster's analysis at it ignores later writes.
	before, err := c.Gatekeepers[0].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wccBefore := run(c.Gatekeepers[0], "wcc", nil)
	var bridge []txn.Op
	for i := range n - 1 {
		bridge = append(bridge, txn.Op{Kind: txn.CreateEdge, Vertex: fmt.Sprintf("v%d", i), Edge: fmt.Sprintf("b%d", i),
			Dst: fmt.Sprintf("v%d", i+1)})
	}
	if _, err := c.Gatekeepers[1].Commit(ctx, nil, bridge); err != nil {
		t.Fatal(err)
	}
	compare("wcc at the older snapshot", wccBefore, run(c.Gatekeepers[0], "wcc", &before))
	var after struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(run(c.Gatekeepers[0], "wcc", nil), &after); err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, l := range after.Labels {
		labels[l] = true
	}
	if len(after.Labels) != n || len(labels) != 1 {
		t.Fatalf("after chaining every vertex: %d vertices in %d components, want %d in 1", len(after.Labels), len(labels), n)
	}
}

// jsonClose compares decoded JSON, numbers to a relative 1e-9 (the shards'
// vertex order differs, so floating sums may round differently).
func jsonClose(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !jsonClose(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonClose(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(x))
	default:
		return a == b
	}
}
