package nodeprog_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// shardByName places v<i> on shard i%2 (the tests below pick placements
// by hand).
func twoShards(h string) int {
	if len(h) > 1 && (h[len(h)-1]-'0')%2 == 1 {
		return 1
	}
	return 0
}

func mustRunner(t *testing.T, shard int, cfg nodeprog.Config) *nodeprog.Runner {
	t.Helper()
	r, err := nodeprog.NewRunner(reg, shard, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func startBatch(t *testing.T, id nodeprog.ProgID, name, params string, shardOf func(string) int) (*nodeprog.Coordinator, []nodeprog.Batch) {
	t.Helper()
	c, bs, err := nodeprog.NewCoordinator(reg, id, name, json.RawMessage(params), shardOf, nodeprog.CoordinatorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return c, bs
}

// TestRunnerLocalHopsInOneRun: on one shard a whole traversal is one Run:
// no batches out, one report, every emit in it.
func TestRunnerLocalHopsInOneRun(t *testing.T) {
	g := lineGraph(20)
	r := mustRunner(t, 0, nodeprog.Config{})
	one := func(string) int { return 0 }
	c, bs := startBatch(t, 1, "bfs", `{"src":"v0"}`, one)
	out, rep, err := r.Run(bs, g.Lookup, one)
	if err != nil || len(out) != 0 || len(rep.Produced) != 0 {
		t.Fatalf("out %v, report %+v, err %v", out, rep, err)
	}
	if rep.Steps != 20 || len(rep.Emits) != 20 {
		t.Fatalf("steps %d, emits %d; want 20, 20", rep.Steps, len(rep.Emits))
	}
	if err := c.Step(rep); err != nil || !c.Done() {
		t.Fatalf("step: %v, done %v", err, c.Done())
	}
	if s := r.Stats(); s.StateEntries != 20 || s.Programs != 1 {
		t.Fatalf("before Finish: %+v", s)
	}
	r.Finish(1)
	if s := r.Stats(); s.StateEntries != 0 || s.Programs != 0 {
		t.Fatalf("after Finish: %+v", s)
	}
}

// TestRunnerRemoteBatches: hops to another shard leave as batches for that
// shard, ids from this shard, split at BatchHopsMax.
func TestRunnerRemoteBatches(t *testing.T) {
	g := progtest.NewGraph()
	for _, d := range []string{"a1", "b1", "c1", "d1", "e1", "a2"} {
		g.AddEdge("x"+d, "s0", d, nil)
	}
	r := mustRunner(t, 0, nodeprog.Config{BatchHopsMax: 2})
	_, bs := startBatch(t, 1, "bfs", `{"src":"s0"}`, twoShards)
	out, rep, err := r.Run(bs, g.Lookup, twoShards)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d batches, want 3 (5 hops to shard 1 in batches of 2)", len(out))
	}
	for i, b := range out {
		if b.Shard != 1 || b.ID.Shard != 0 || b.Prog != 1 || b.Name != "bfs" || len(b.Hops) > 2 {
			t.Fatalf("batch %d: %+v", i, b)
		}
		if rep.Produced[i] != b.ID {
			t.Fatalf("report names %v, batch %d is %v", rep.Produced[i], i, b.ID)
		}
	}
	if rep.Steps != 2 { // s0 and the local a2
		t.Fatalf("steps %d, want 2", rep.Steps)
	}
}

// TestRunnerSkipsMissingVertices: a hop to a vertex not visible at the
// stamp is counted but runs nothing.
func TestRunnerSkipsMissingVertices(t *testing.T) {
	g := lineGraph(5).RemoveVertex("v2")
	res := runAll(t, g, "bfs", `{"src":"v0"}`)
	jsonEq(t, res, `{"depths":{"v0":0,"v1":1}}`)
	res = runAll(t, g, "get_node", `{"node":"v2"}`)
	if res != nil {
		t.Fatalf("get_node of a missing vertex: %v", res)
	}
}

// TestRunnerStateEntriesMax: a program that needs more state than the
// runner may hold fails with ErrOverloaded, and Finish frees what it took.
func TestRunnerStateEntriesMax(t *testing.T) {
	g := lineGraph(50)
	c := progtest.NewCluster(g, reg, progtest.Options{Shards: 2, Runner: nodeprog.Config{StateEntriesMax: 10}})
	_, _, err := c.Run("bfs", `{"src":"v0"}`)
	if !errors.Is(err, nodeprog.ErrOverloaded) {
		t.Fatalf("err = %v, want ErrOverloaded", err)
	}
	for _, r := range c.Runners() {
		if s := r.Stats(); s.StateEntries != 0 {
			t.Fatalf("state left after failure: %+v", s)
		}
	}
	// the same runner then serves a small program
	if _, _, err := c.Run("bfs", `{"src":"v45"}`); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerHopsMax: a program executing more hops than a runner allows
// fails with ErrTooLarge; so does one past the coordinator's total.
func TestRunnerHopsMax(t *testing.T) {
	g := ringGraph(30)
	_, _, err := progtest.NewCluster(g, reg, progtest.Options{Runner: nodeprog.Config{HopsMax: 10}}).Run("bfs", `{"src":"r0"}`)
	if !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("runner bound: err = %v, want ErrTooLarge", err)
	}
	_, _, err = progtest.NewCluster(g, reg, progtest.Options{Shards: 3, Coordinator: nodeprog.CoordinatorConfig{HopsMax: 10}}).Run("bfs", `{"src":"r0"}`)
	if !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("coordinator bound: err = %v, want ErrTooLarge", err)
	}
	_, _, err = progtest.NewCluster(g, reg, progtest.Options{Shards: 3, Coordinator: nodeprog.CoordinatorConfig{ResultsMax: 5}}).Run("bfs", `{"src":"r0"}`)
	if !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("results bound: err = %v, want ErrTooLarge", err)
	}
}

// TestRunnerFinishedDropsLateBatches: after Finish a batch of the program
// is refused with ErrFinished and creates no state.
func TestRunnerFinishedDropsLateBatches(t *testing.T) {
	g := lineGraph(5)
	r := mustRunner(t, 0, nodeprog.Config{FinishedMax: 2})
	one := func(string) int { return 0 }
	_, bs := startBatch(t, 7, "bfs", `{"src":"v0"}`, one)
	r.Finish(7)
	if _, _, err := r.Run(bs, g.Lookup, one); !errors.Is(err, nodeprog.ErrFinished) {
		t.Fatalf("err = %v, want ErrFinished", err)
	}
	data, _ := json.Marshal(bs[0])
	if _, err := r.DecodeBatch(data); !errors.Is(err, nodeprog.ErrFinished) {
		t.Fatalf("decode: err = %v, want ErrFinished", err)
	}
	if s := r.Stats(); s.Programs != 0 || s.StateEntries != 0 {
		t.Fatalf("state after a late batch: %+v", s)
	}
	// the memory of finished programs is bounded: 7 is forgotten after two more
	r.Finish(8)
	r.Finish(9)
	if _, _, err := r.Run(bs, g.Lookup, one); err != nil {
		t.Fatalf("after eviction: %v", err)
	}
}

// TestRunnerProgramsMax: a runner holding ProgramsMax programs refuses a
// new one with ErrOverloaded, and the report carries the code.
func TestRunnerProgramsMax(t *testing.T) {
	g := lineGraph(5)
	r := mustRunner(t, 0, nodeprog.Config{ProgramsMax: 2})
	one := func(string) int { return 0 }
	for id := range nodeprog.ProgID(3) {
		_, bs := startBatch(t, id+1, "bfs", `{"src":"v0"}`, one)
		_, rep, err := r.Run(bs, g.Lookup, one)
		if id < 2 && err != nil {
			t.Fatal(err)
		}
		if id == 2 {
			if !errors.Is(err, nodeprog.ErrOverloaded) || !errors.Is(rep.Failed(), nodeprog.ErrOverloaded) {
				t.Fatalf("third program: err %v, report %+v", err, rep)
			}
		}
	}
}

// TestRunnerInterleavedPrograms: two programs on the same runners, batches
// interleaved, keep separate state and answer as if alone.
func TestRunnerInterleavedPrograms(t *testing.T) {
	g := gridGraph(6, 6)
	shardOf := progtest.NewCluster(g, reg, progtest.Options{Shards: 3}).ShardOf
	runners := []*nodeprog.Runner{mustRunner(t, 0, nodeprog.Config{}), mustRunner(t, 1, nodeprog.Config{}), mustRunner(t, 2, nodeprog.Config{})}
	lookup := func(s int) func(string) (nodeprog.Vertex, bool) {
		return func(h string) (nodeprog.Vertex, bool) {
			if shardOf(h) != s {
				return nil, false
			}
			return g.Lookup(h)
		}
	}
	ca, qa := startBatch(t, 1, "bfs", `{"src":"0,0"}`, shardOf)
	cb, qb := startBatch(t, 2, "shortest_path", `{"src":"0,0","dest":"5,5","weight":"w"}`, shardOf)
	coords := map[nodeprog.ProgID]*nodeprog.Coordinator{1: ca, 2: cb}
	queue := append(qa, qb...)
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		out, rep, err := runners[b.Shard].Run([]nodeprog.Batch{b}, lookup(b.Shard), shardOf)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
		if err := coords[b.Prog].Step(rep); err != nil {
			t.Fatal(err)
		}
	}
	for id, c := range coords {
		if !c.Done() {
			t.Fatalf("program %d not done with nothing in flight", id)
		}
		for _, r := range runners {
			r.Finish(id)
		}
	}
	ra, _ := ca.Result()
	rb, _ := cb.Result()
	jsonEq(t, ra, mustJSON(runAll(t, g, "bfs", `{"src":"0,0"}`)))
	jsonEq(t, rb, mustJSON(runAll(t, g, "shortest_path", `{"src":"0,0","dest":"5,5","weight":"w"}`)))
	for _, r := range runners {
		if s := r.Stats(); s.Programs != 0 || s.StateEntries != 0 {
			t.Fatalf("runner not empty: %+v", s)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestRunnerDeterministic: the same batches give the same output, byte for
// byte, on fresh runners.
func TestRunnerDeterministic(t *testing.T) {
	g := godsGraph()
	var outs []string
	for range 3 {
		r := mustRunner(t, 0, nodeprog.Config{})
		_, bs := startBatch(t, 1, "traverse_props", `{"src":"hercules","node_props":[{},{},{}],"edge_props":[{},{}],"collect_nodes":true,"collect_edges":true}`, twoShards)
		out, rep, err := r.Run(bs, g.Lookup, twoShards)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, mustJSON(out)+mustJSON(rep))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Fatalf("outputs differ:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
}

// TestRunnerConfigValidate rejects negative bounds.
func TestRunnerConfigValidate(t *testing.T) {
	if _, err := nodeprog.NewRunner(reg, 0, nodeprog.Config{HopsMax: -1}); err == nil {
		t.Fatal("negative HopsMax accepted")
	}
}
