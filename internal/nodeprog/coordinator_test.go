package nodeprog_test

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// TestCoordinatorReportsOutOfOrder: a consumer's report arriving before its
// producer's must not end the program (a plain counter of outstanding
// batches would reach zero there).
func TestCoordinatorReportsOutOfOrder(t *testing.T) {
	c, bs := startBatch(t, 1, "bfs", `{"src":"a"}`, func(string) int { return 0 })
	start := bs[0].ID
	b1 := nodeprog.BatchID{Shard: 0, Seq: 1}
	b2 := nodeprog.BatchID{Shard: 1, Seq: 1}
	// shard 1 ran b1 (produced by shard 0) and produced nothing; its report
	// overtakes shard 0's
	steps := []struct {
		r    nodeprog.Report
		done bool
	}{
		{nodeprog.Report{Prog: 1, Shard: 1, Consumed: []nodeprog.BatchID{b1}}, false},
		{nodeprog.Report{Prog: 1, Shard: 0, Consumed: []nodeprog.BatchID{start}, Produced: []nodeprog.BatchID{b1, b2}}, false},
		{nodeprog.Report{Prog: 1, Shard: 1, Consumed: []nodeprog.BatchID{b2}}, true},
	}
	for i, s := range steps {
		if err := c.Step(s.r); err != nil {
			t.Fatal(err)
		}
		if c.Done() != s.done {
			t.Fatalf("after report %d: done = %v, want %v (outstanding %d)", i, c.Done(), s.done, c.Outstanding())
		}
	}
}

// TestCoordinatorTerminationShuffled runs programs with batches and reports
// delivered in many seeded random orders; the harness fails if the
// coordinator finishes with anything in flight, or waits with nothing.
func TestCoordinatorTerminationShuffled(t *testing.T) {
	g := gridGraph(7, 7)
	var want string
	for seed := uint64(1); seed <= 40; seed++ {
		c := progtest.NewCluster(g, reg, progtest.Options{Shards: 1 + int(seed%6), Seed: seed, Wire: seed%2 == 0, Runner: nodeprog.Config{BatchHopsMax: 1 + int(seed%3)}})
		res, _, err := c.Run("shortest_path", `{"src":"0,0","weight":"w"}`)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got := mustJSON(res); want == "" {
			want = got
		} else if got != want {
			t.Fatalf("seed %d: %s\nwant %s", seed, got, want)
		}
	}
}

// TestCoordinatorEarlyAnswer: pathless_reachability is done as soon as the
// destination answers, with work still in flight; the harness then
// finishes the program everywhere, delivers the late batches (which must be
// refused) and checks no state is left.
func TestCoordinatorEarlyAnswer(t *testing.T) {
	g := gridGraph(20, 20)
	c := progtest.NewCluster(g, reg, progtest.Options{Shards: 4})
	res, st, err := c.Run("pathless_reachability", `{"src":"0,0","dest":"1,1"}`)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res, `{"reachable":true}`)
	if st.Hops >= 400 {
		t.Fatalf("early answer still ran %d hops over a 400-vertex grid", st.Hops)
	}
	res, _, err = c.Run("pathless_reachability", `{"src":"1,1","dest":"0,0"}`)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res, `{"reachable":false}`)
}

// TestCoordinatorFailure: a failure on any shard ends the program with the
// error, mapped back from its wire code.
func TestCoordinatorFailure(t *testing.T) {
	g := lineGraph(6)
	g.AddEdge("neg", "v3", "v5", props("w", -1))
	err := runErr(t, g, "shortest_path", `{"src":"v0","weight":"w"}`)
	if !errors.Is(err, nodeprog.ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	c, _ := startBatch(t, 3, "bfs", `{"src":"v0"}`, func(string) int { return 0 })
	if err := c.Step(nodeprog.Report{Prog: 4}); err == nil {
		t.Fatal("report of another program accepted")
	}
	err = c.Step(nodeprog.Report{Prog: 3, Code: "overloaded", Err: "shard 2 is full"})
	if !errors.Is(err, nodeprog.ErrOverloaded) || err.Error() != "shard 2 is full" {
		t.Fatalf("err = %v, want ErrOverloaded with the shard's text", err)
	}
	if _, rerr := c.Result(); !errors.Is(rerr, nodeprog.ErrOverloaded) {
		t.Fatalf("Result: %v", rerr)
	}
}

// TestCoordinatorNotDone: Result before the end is ErrNotDone.
func TestCoordinatorNotDone(t *testing.T) {
	c, _ := startBatch(t, 1, "bfs", `{"src":"v0"}`, func(string) int { return 0 })
	if _, err := c.Result(); !errors.Is(err, nodeprog.ErrNotDone) {
		t.Fatalf("err = %v", err)
	}
}

// TestCoordinatorOutstandingMax bounds batches in flight.
func TestCoordinatorOutstandingMax(t *testing.T) {
	g := progtest.NewGraph()
	for i := range 50 {
		g.AddEdge("e"+v(i), "hub", v(i), nil)
	}
	_, _, err := progtest.NewCluster(g, reg, progtest.Options{Shards: 8, Runner: nodeprog.Config{BatchHopsMax: 1},
		Coordinator: nodeprog.CoordinatorConfig{OutstandingMax: 5}}).Run("bfs", `{"src":"hub"}`)
	if !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}
