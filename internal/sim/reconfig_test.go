package sim

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// reconfigConfig is seed's swarm configuration with reconfigurations every
// few hundred ticks; every third seed runs the gatekeepers as separate
// processes (weft cluster, where epochs change).
func reconfigConfig(seed uint64, ops int) Config {
	c := Draw(seed, ops)
	c.ReconfigEvery = 300 + int(seed%4)*200
	c.MoveEvery = 0 // moves and reconfigurations do not mix (Config.MoveEvery)
	if seed%3 == 0 {
		// τ = 1 spends the event budget on announces with five gatekeepers.
		c.AnnounceEvery = []int{10, 100}[seed/3%2]
		c.Notes = false // notes need one process
	}
	return c
}

// TestReconfiguration runs the swarm with configuration epochs changing
// under the workload (issue 5): members replaced, shards added, old-epoch
// commits reaching the store after the new epoch's shards rebuilt from it.
// Every history must be strictly serializable and every shard's graph must
// equal the store after each reconfiguration and at the end.
func TestReconfiguration(t *testing.T) {
	seeds, ops := *flagSeeds/4, *flagOps*2/5
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/10), max(200, ops/3)
	}
	first := uint64(1)
	if *flagSeed != 0 {
		first, seeds = *flagSeed, 1
	}
	var (
		mu    sync.Mutex
		total Stats
		n     int
	)
	t.Run("seeds", func(t *testing.T) {
		for seed := first; seed < first+uint64(seeds); seed++ {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				res, err := Run(reconfigConfig(seed, ops))
				if err != nil {
					t.Fatalf("%v\nreplay: go test ./internal/sim -run TestReconfiguration -sim.seed=%d", err, seed)
				}
				if !res.Valid() {
					t.Fatalf("%s\nreplay: go test ./internal/sim -run TestReconfiguration -sim.seed=%d", res, seed)
				}
				mu.Lock()
				defer mu.Unlock()
				n++
				total.Ops += res.Stats.Ops
				total.Commits += res.Stats.Commits
				total.Info += res.Stats.Info
				total.Reconfigs += res.Stats.Reconfigs
				total.ShardsAdded += res.Stats.ShardsAdded
				total.Zombies += res.Stats.Zombies
				total.Fenced += res.Stats.Fenced
				total.ZombiesLanded += res.Stats.ZombiesLanded
				total.GraphChecks += res.Stats.GraphChecks
			})
		}
	})
	t.Logf("%d seeds: %d operations, %d commits, %d info, %d reconfigurations (%d shards added), %d zombie commits (%d fenced), %d graph checks; no anomalies",
		n, total.Ops, total.Commits, total.Info, total.Reconfigs, total.ShardsAdded, total.Zombies, total.Fenced, total.GraphChecks)
	if total.ZombiesLanded > 0 {
		t.Fatalf("%d old-epoch commits got past the fence", total.ZombiesLanded)
	}
	if n == seeds && seeds >= 5 && (total.Reconfigs == 0 || total.ShardsAdded == 0 || total.Zombies == 0 || total.Fenced == 0 || total.GraphChecks <= n) {
		t.Fatalf("the reconfigurations exercised nothing worth the name: %+v", total)
	}
}

// TestPlantedNoFenceIsCaught: without gatekeeper.CheckFence, a zombie
// commit of an ended epoch lands in the store after the new epoch's shards
// rebuilt from it; the checkers must notice within a few seeds, and the
// same seed with the fence must pass.
func TestPlantedNoFenceIsCaught(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := reconfigConfig(seed, 800)
		cfg.PlantNoFence = true
		res, err := Run(cfg)
		if err == nil && res.Valid() {
			continue
		}
		switch {
		case err != nil:
			t.Logf("caught at seed %d: %v", seed, err)
		default:
			t.Logf("caught at seed %d: %d zombie commits landed; graph-equals-store: %d differences, first: %s; list-append: %s",
				seed, res.Stats.ZombiesLanded, len(res.GraphDiffs), first(res.GraphDiffs), res.Check.String())
		}
		cfg.PlantNoFence = false
		res, err = Run(cfg)
		if err != nil {
			t.Fatalf("seed %d with the fence: %v", seed, err)
		}
		if !res.Valid() {
			t.Fatalf("seed %d fails with the fence too: %s", seed, res)
		}
		return
	}
	t.Fatal("20 seeds of reconfigurations without the epoch fence went unnoticed")
}

func first(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}

// quietWorld is a world whose clients never start: the test drives it.
func quietWorld(t *testing.T, shards int) *world {
	t.Helper()
	w, err := newWorld(Config{Seed: 1, Gatekeepers: 2, Shards: shards, Clients: 1, Keys: 6, Ops: 1, DelayMax: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.srv.st.Close() })
	w.stopping = true
	settle(t, w)
	return w
}

// settle runs w until nothing is in flight.
func settle(t *testing.T, w *world) {
	t.Helper()
	for i := 0; !w.quiescent(); i++ {
		if !w.step() || i > 100000 {
			t.Fatal("the world never settled")
		}
	}
}

// commitBehindShards commits ops on the store through gatekeeper 0's
// shell without handing them to the shards (a zombie's effect): the world
// runs until the commit is durable, its resolve held; the function
// returned lets the resolve go.
func commitBehindShards(t *testing.T, w *world, ops []txn.Op) func() {
	t.Helper()
	var resolve func()
	w.holdResolve = func(fn func()) { resolve = fn }
	defer func() { w.holdResolve = nil }()
	failed := false
	w.srv.gks[0].Commit(ctx, nil, ops, nil, func(_ *txn.Result, _ vclock.Stamp, err error) {
		if err != nil {
			failed = true
		}
	})
	for resolve == nil && !failed {
		if !w.step() {
			t.Fatal("the commit never became durable")
		}
	}
	if failed {
		t.Fatal("the commit failed")
	}
	return resolve
}

func mustDiffs(t *testing.T, w *world) []string {
	t.Helper()
	d, err := graphVersusStore(w.srv)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGraphVersusStore: the checker agrees with a settled world and names
// a write the shards never saw, a vertex on the wrong shard, and a delete
// the shards missed.
func TestGraphVersusStore(t *testing.T) {
	w := quietWorld(t, 3)
	if d := mustDiffs(t, w); len(d) != 0 {
		t.Fatalf("a settled world differs from its store: %v", d)
	}

	// A property write and a new vertex behind the shards' back.
	hand := commitBehindShards(t, w, []txn.Op{
		{Kind: txn.SetVertexProp, Vertex: vertexOf(2), Key: propKey, Value: value.ListOf(value.I64(7))},
		{Kind: txn.CreateVertex, Vertex: "zombie"},
	})
	d := mustDiffs(t, w)
	if len(d) != 2 || !strings.Contains(strings.Join(d, "\n"), vertexOf(2)+" differs") ||
		!strings.Contains(strings.Join(d, "\n"), "zombie is in the store") {
		t.Fatalf("want k2 differing and zombie missing from the graph, got %q", d)
	}
	hand()
	settle(t, w)
	if d := mustDiffs(t, w); len(d) != 0 {
		t.Fatalf("after the hand-off: %v", d)
	}

	// A vertex on a shard that does not own it.
	h := "stray"
	owner := int(txn.ShardOf(h, uint32(w.srv.nshards)))
	wrong := w.srv.shards[(owner+1)%w.srv.nshards]
	if err := wrong.G.CreateVertex(h, w.stampNow(1)); err != nil {
		t.Fatal(err)
	}
	d = mustDiffs(t, w)
	if len(d) != 2 || !strings.Contains(d[0]+d[1], fmt.Sprintf("holds stray, which shard %d of 3 owns", owner)) {
		t.Fatalf("want the stray vertex named, got %q", d)
	}
	if err := wrong.G.DeleteVertex(h, w.stampNow(1)); err != nil {
		t.Fatal(err)
	}
	if d := mustDiffs(t, w); len(d) != 0 {
		t.Fatalf("a deleted vertex must be absent: %v", d)
	}

	// A delete the shards never saw: the store says absent, the graph present.
	commitBehindShards(t, w, []txn.Op{{Kind: txn.DeleteVertex, Vertex: "zombie"}})
	d = mustDiffs(t, w)
	if len(d) != 1 || !strings.Contains(d[0], "zombie is in the graph") {
		t.Fatalf("want the deleted vertex named, got %q", d)
	}
}

// TestReconfigurationZombie: an old-epoch commit whose critical section
// runs after a reconfiguration that added a shard is refused by the fence
// (a definite failure, nothing written), and the new epoch's graphs, placed
// under the new count, equal the store. Without the fence it lands, and the
// graph-equals-store checker names the vertex.
func TestReconfigurationZombie(t *testing.T) {
	for _, plant := range []bool{false, true} {
		t.Run(fmt.Sprintf("PlantNoFence=%v", plant), func(t *testing.T) {
			w := quietWorld(t, 2)
			w.cfg.PlantNoFence = plant
			old := w.srv
			for _, g := range old.gks {
				g.SetPlants(shellPlants(w.cfg))
			}
			var replies []check.Type
			var p *pendingCommit
			w.holdCritical = func(pc *pendingCommit) { p = pc }
			ops := []txn.Op{{Kind: txn.SetVertexProp, Vertex: vertexOf(1), Key: propKey, Value: value.ListOf(value.I64(1))}}
			old.gks[0].Commit(ctx, nil, ops, func(vclock.Stamp) { w.durable(old) }, func(_ *txn.Result, _ vclock.Stamp, err error) {
				if err != nil {
					w.aborted(err)
					replies = append(replies, check.Fail)
					return
				}
				replies = append(replies, check.OK)
			})
			for p == nil {
				if !w.step() {
					t.Fatal("the commit never reached its commit section")
				}
			}
			w.holdCritical = nil
			p.zombie = true

			w.newEpoch(old, true)
			if w.srv.nshards != 3 || len(w.srv.shards) != 3 {
				t.Fatalf("the new epoch has %d shards, want 3", len(w.srv.shards))
			}
			w.critical(p) // the zombie reaches the store's critical section
			settle(t, w)
			d := mustDiffs(t, w)
			if !plant {
				if w.stats.Fenced != 1 || w.stats.ZombiesLanded != 0 || len(replies) != 1 || replies[0] != check.Fail {
					t.Fatalf("the fence must refuse the zombie: fenced %d, landed %d, replies %v", w.stats.Fenced, w.stats.ZombiesLanded, replies)
				}
				if len(d) != 0 {
					t.Fatalf("graph ≠ store with the fence: %v", d)
				}
				for k := range 6 {
					h := vertexOf(int64(k))
					sh := txn.ShardOf(h, 3)
					if _, ok := w.srv.shards[sh].G.View(h, w.stampNow(0), nil); !ok {
						t.Fatalf("%s is not on shard %d of 3 after the rebuild", h, sh)
					}
				}
				return
			}
			if w.stats.ZombiesLanded != 1 || len(replies) != 0 {
				t.Fatalf("without the fence the zombie lands (and its client never hears): landed %d, replies %v", w.stats.ZombiesLanded, replies)
			}
			if len(d) != 1 || !strings.Contains(d[0], vertexOf(1)+" differs") {
				t.Fatalf("want k1 named by the checker, got %q", d)
			}
		})
	}
}
