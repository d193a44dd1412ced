package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/gnutella"
	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

func readLines(t *testing.T, name string, fn func(fields []string)) {
	t.Helper()
	f, err := gnutella.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			fn(fs)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestGnutellaThroughTheEngine loads SNAP's p2p-Gnutella31 through ordinary
// transactions and checks bfs and shortest paths from vertex 6 and the weakly
// connected components against another engine's reference results: the
// whole path (store, gatekeepers, shards, programs across shards) computes
// the right answers on a real graph.
func TestGnutellaThroughTheEngine(t *testing.T) {
	if testing.Short() || invariants.On {
		t.Skip("loads 210k elements; skipped in -short and invariants builds (the plain and -race runs cover it)")
	}
	ctx := context.Background()
	db := openTest(t, memConfig())
	var ops []txn.Op
	flush := func() {
		if len(ops) > 0 {
			commit(t, db, ops...)
			ops = ops[:0]
		}
	}
	readLines(t, "p2p-31.v", func(fs []string) {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: fs[0]})
		if len(ops) == 5000 {
			flush()
		}
	})
	flush()
	n := 0
	readLines(t, "p2p-31.e", func(fs []string) {
		w, _ := strconv.ParseInt(fs[2], 10, 64)
		e := "e" + strconv.Itoa(n)
		n++
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: fs[0], Dst: fs[1], Edge: e},
			txn.Op{Kind: txn.SetEdgeProp, Vertex: fs[0], Edge: e, Key: "weight", Value: value.I64(w)})
		if len(ops) >= 5000 {
			flush()
		}
	})
	flush()
	st := waitStatus(t, db, func(st *Status) bool { return st.Vertices == 62586 && st.Edges == 147892 })
	if st.Vertices != 62586 || st.Edges != 147892 {
		t.Fatalf("loaded %d vertices, %d edges", st.Vertices, st.Edges)
	}
	out, err := db.Run(ctx, "bfs", json.RawMessage(`{"src":"6"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var bfs struct {
		Depths map[string]int `json:"depths"`
	}
	if err := json.Unmarshal(out, &bfs); err != nil {
		t.Fatal(err)
	}
	reached := 0
	readLines(t, "p2p-31-BFS-directed", func(fs []string) {
		got, ok := bfs.Depths[fs[0]]
		if fs[1] == "9223372036854775807" {
			if ok {
				t.Fatalf("vertex %s reached at depth %d; the reference cannot reach it", fs[0], got)
			}
			return
		}
		want, _ := strconv.Atoi(fs[1])
		if !ok || got != want {
			t.Fatalf("vertex %s: depth %d (reached %v), reference %d", fs[0], got, ok, want)
		}
		reached++
	})
	if reached != len(bfs.Depths) || reached < 1000 {
		t.Fatalf("bfs reached %d vertices, reference %d", len(bfs.Depths), reached)
	}
	out, err = db.Run(ctx, "shortest_path", json.RawMessage(`{"src":"6","weight":"weight"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var sssp struct {
		Costs map[string]float64 `json:"costs"`
	}
	if err := json.Unmarshal(out, &sssp); err != nil {
		t.Fatalf("%.200s: %v", out, err)
	}
	readLines(t, "p2p-31-SSSP-directed", func(fs []string) {
		got, ok := sssp.Costs[fs[0]]
		if fs[1] == "infinity" {
			if ok {
				t.Fatalf("sssp reached %s; the reference cannot", fs[0])
			}
			return
		}
		want, _ := strconv.ParseFloat(fs[1], 64)
		if !ok || got != want {
			t.Fatalf("vertex %s: cost %v (reached %v), reference %v", fs[0], got, ok, want)
		}
	})
	out, err = db.Run(ctx, "wcc", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wcc struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(out, &wcc); err != nil {
		t.Fatalf("%.200s: %v", out, err)
	}
	// Same partition: the reference labels differ, so map label to label.
	fwd, back := map[string]string{}, map[string]string{}
	readLines(t, "p2p-31-WCC", func(fs []string) {
		got, ok := wcc.Labels[fs[0]]
		if !ok {
			t.Fatalf("wcc has no component for %s", fs[0])
		}
		if prev, ok := fwd[fs[1]]; ok && prev != got {
			t.Fatalf("vertex %s: component %s, but reference component %s maps to %s", fs[0], got, fs[1], prev)
		}
		if prev, ok := back[got]; ok && prev != fs[1] {
			t.Fatalf("vertex %s: component %s joins reference components %s and %s", fs[0], got, prev, fs[1])
		}
		fwd[fs[1]], back[got] = got, fs[1]
	})
}

// waitStatus polls Status (its sizes trail commits: shards apply after the
// acknowledgement) until ok or a minute passes.
func waitStatus(t *testing.T, db *DB, ok func(*Status) bool) *Status {
	t.Helper()
	var st *Status
	for i := 0; i < 6000; i++ {
		var err error
		if st, err = db.Status(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return st
}
