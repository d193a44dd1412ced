package sim

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Reconfiguration (issue 5): the coordinator posts a new configuration
// epoch — a member replaced by a backup, or a shard added — and the store
// survives (unlike a crash). The old epoch's gatekeepers stop stamping;
// each commit of theirs that has not reached the store's critical section
// either makes it within the drain (before the new epoch's fence) or is
// left to the fence: a zombie, whose critical section runs only after the
// new epoch raised the fence and its shards rebuilt from the store, under
// the new shard count. gatekeeper.CheckFence refuses it (an abort: nothing
// written); without the check (PlantNoFence) it lands in the store where no
// shard of the new epoch will ever see it. After each reconfiguration,
// once the zombies are decided, the clients pause until nothing is in
// flight, and every shard's graph is compared with the store
// (graphVersusStore); the same check ends every run.

const (
	// zombieDelayMax bounds how long (ticks) after the epoch change a
	// zombie's critical section runs: from at once (before any new-epoch
	// commit touched its vertices, the dangerous case) to well after.
	zombieDelayMax = 200
	// shardsAddMax bounds how many shards reconfigurations add to a run.
	shardsAddMax = 3
	// graphDiffsMax bounds the mismatches a run keeps.
	graphDiffsMax = 10
)

// addPending records a commit on its way to the store, dropping the decided
// ones (bounded by the gatekeepers' InflightMax). A reconfiguration waiting
// for a commit in flight happens now, before its critical section.
func (w *world) addPending(s *server, p *pendingCommit) {
	if len(s.pending) >= 32 {
		s.pending = slices.DeleteFunc(s.pending, func(p *pendingCommit) bool { return p.done })
	}
	s.pending = append(s.pending, p)
	if w.reconfigArmed {
		w.reconfigArmed = false
		w.after(0, w.reconfigNow) // scheduled first: it runs before the critical section
	}
}

// scheduleReconfig plans the next reconfiguration.
func (w *world) scheduleReconfig() {
	w.after(int64(1+w.rng.IntN(2*w.cfg.ReconfigEvery)), w.reconfig)
}

// reconfig is the coordinator's decision to change the epoch. Commits are
// in flight only briefly in a small simulated cluster, so half the time
// the change waits for the next commit on its way to the store: the
// interleaving the fence exists for is then common rather than rare.
func (w *world) reconfig() {
	if !w.faultsOn {
		return
	}
	defer w.scheduleReconfig()
	if w.srv == nil {
		return // the process is down: the restart starts a new epoch anyway
	}
	if w.rng.IntN(2) == 0 && !slices.ContainsFunc(w.srv.pending, func(p *pendingCommit) bool { return !p.done }) {
		w.reconfigArmed = true
		return
	}
	w.reconfigNow()
}

// reconfigNow moves the world to a new configuration epoch on the same
// store.
func (w *world) reconfigNow() {
	old := w.srv
	if !w.faultsOn || old == nil {
		return
	}
	w.reconfigArmed = false
	if w.leasesOn() {
		if !old.cut {
			w.stats.Reconfigs++
			w.cutFromCoordinator()
		}
		return
	}
	w.stats.Reconfigs++
	w.replaceEpoch(old, true)
}

// replaceEpoch ends old's epoch, whose members all heard of it, and starts
// the next (with a shard more, sometimes, when mayAdd).
func (w *world) replaceEpoch(old *server, mayAdd bool) {
	// The old gatekeepers stop: a commit not yet at the store drains (its
	// critical section runs now, before the fence) or is left undecided.
	for _, p := range old.pending {
		if p.done {
			continue
		}
		if w.rng.IntN(2) == 0 {
			w.critical(p)
			continue
		}
		p.zombie = true
		w.stats.Zombies++
		w.zombies++
		w.after(1+int64(w.rng.IntN(zombieDelayMax)), func() {
			w.zombies--
			w.critical(p)
		})
	}
	old.pending = nil
	w.newEpoch(old, mayAdd && w.nshards < min(64, w.cfg.Shards+shardsAddMax) && w.rng.IntN(2) == 0)
	// Once every zombie is decided, check the graphs against the store.
	w.after(zombieDelayMax+1, w.quiesce)
}

// newEpoch starts the next configuration epoch on old's store, with one
// more shard when add: gatekeepers with fresh clocks, shards that raise the
// fence and rebuild their partitions under the new count.
func (w *world) newEpoch(old *server, add bool) {
	what := "replace a member"
	if add {
		w.nshards++
		w.stats.ShardsAdded++
		what = "add a shard"
	}
	w.epoch++
	// Kronos is a service of its own: it survives the change.
	if err := w.boot(old.st, old.oracle); err != nil {
		panic(err) // a new epoch that cannot start on a live store is a bug worth stopping for
	}
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info,
		F: fmt.Sprintf("reconfigure: %s, epoch %d, %d shards", what, w.epoch, w.nshards), Time: w.now})
}

// quiesce holds clients back from new operations until nothing is in
// flight (step then runs the graph check and resumes them).
func (w *world) quiesce() {
	if !w.stopping {
		w.quiescing = true
	}
}

// quiescent: the process is up, no zombie is undecided, no commit is in a
// gatekeeper's hands, and every write entry sent to a shard was applied.
// Then the graphs must equal the store.
func (w *world) quiescent() bool {
	s := w.srv
	if s == nil || w.zombies > 0 {
		return false
	}
	for _, g := range s.gks {
		if !g.Idle() {
			return false
		}
	}
	for _, n := range s.shards {
		if n.sent != n.applied {
			return false
		}
	}
	return true
}

// resume runs the graph check and lets the held clients go on.
func (w *world) resume() {
	w.quiescing = false
	w.checkGraphs()
	for _, c := range w.parked {
		w.after(int64(w.rng.IntN(5)), c.next)
	}
	w.parked = nil
}

// checkGraphs runs graphVersusStore on the current process and keeps what
// it finds.
func (w *world) checkGraphs() {
	w.stats.GraphChecks++
	diffs, err := graphVersusStore(w.srv)
	if err != nil {
		panic(err) // the store cannot be read: the harness is broken
	}
	for _, d := range diffs {
		if len(w.graphDiffs) < graphDiffsMax {
			w.graphDiffs = append(w.graphDiffs, fmt.Sprintf("t=%d epoch %d: %s", w.now, w.epoch, d))
		}
	}
}

// graphVersusStore is the graph-equals-store checker: every shard's graph
// at the latest stamp must hold exactly what the store says the shard owns
// (a rebuild from the store by shard.Recover under the current shard
// count): the same visible vertices with the same last write, properties,
// aliases and edges (with their properties); deleted is absent. And every
// vertex visible on a shard must be placed there by txn.ShardOf. It returns
// the differences, one line each.
func graphVersusStore(s *server) ([]string, error) {
	t, err := s.st.Begin()
	if err != nil {
		return nil, err
	}
	defer t.Discard()
	gks := len(s.gks)
	gcfg := graph.DefaultConfig()
	want := make([]shard.Partition, s.nshards)
	for i := range want {
		want[i] = shard.Partition{Graph: graph.New(gcfg), Alias: graph.NewAliasIndex(gcfg)}
	}
	// The rebuild happens after every write of this epoch (Load refuses a
	// last write after its load stamp), and the reads after the rebuild.
	start := vclock.Stamp{Clock: vclock.New(s.epoch+1, gks)}
	// The directory as the store holds it places the expected partitions;
	// the process's own copy must agree with it.
	dir, err := txn.ReadDirectory(t, s.dir.Base(), s.dir.Shards())
	if err != nil {
		return nil, fmt.Errorf("sim: graph check: reading the directory: %w", err)
	}
	var diffs []string
	if got, exp := fmt.Sprint(s.dir.Units()), fmt.Sprint(dir.Units()); got != exp {
		diffs = append(diffs, fmt.Sprintf("the process's directory %s differs from the store's %s", got, exp))
	}
	if err := shard.Recover(t, start, func(h string) shard.Partition {
		return want[dir.ShardOf(h)]
	}); err != nil {
		return nil, fmt.Errorf("sim: graph check: reading the store: %w", err)
	}
	// A stamp of a later epoch follows every stamp of this one by vector
	// clock: no pair is concurrent, so no orderer is needed.
	latest := vclock.Stamp{Clock: vclock.New(s.epoch+2, gks)}
	for i, n := range s.shards {
		got, exp := describe(n.G, latest), describe(want[i].Graph, latest)
		for h, g := range got {
			if o := dir.ShardOf(h); int(o) != i {
				diffs = append(diffs, fmt.Sprintf("shard %d holds %s, which shard %d of %d owns", i, h, o, s.nshards))
			}
			if e, ok := exp[h]; !ok {
				diffs = append(diffs, fmt.Sprintf("shard %d: %s is in the graph (%s) but not in the store", i, h, g))
			} else if e != g {
				diffs = append(diffs, fmt.Sprintf("shard %d: %s differs: graph %s, store %s", i, h, g, e))
			}
		}
		for h, e := range exp {
			if _, ok := got[h]; !ok {
				diffs = append(diffs, fmt.Sprintf("shard %d: %s is in the store (%s) but not in the graph", i, h, e))
			}
		}
	}
	slices.Sort(diffs) // maps: the order must not depend on iteration
	return diffs, nil
}

// describe renders every vertex visible in g at r canonically (sorted
// properties, aliases and edges), by handle.
func describe(g *graph.Graph, r vclock.Stamp) map[string]string {
	out := map[string]string{}
	for v := range g.Vertices(r, nil) {
		h := v.Handle()
		var b strings.Builder
		fmt.Fprintf(&b, "last=%s props=%s aliases=[", g.LastWrite(h, r, nil), props(v.Props()))
		var as []string
		for a := range v.Aliases() {
			as = append(as, a)
		}
		slices.Sort(as)
		b.WriteString(strings.Join(as, " "))
		b.WriteString("] edges=[")
		var es []string
		for e := range v.Edges() {
			es = append(es, fmt.Sprintf("%s→%s%s", e.Handle(), e.Dst(), props(e.Props())))
		}
		slices.Sort(es)
		b.WriteString(strings.Join(es, " "))
		b.WriteString("]")
		out[h] = b.String()
	}
	return out
}

// props renders properties sorted by key.
func props(seq iter.Seq2[string, value.Value]) string {
	var ps []string
	for k, v := range seq {
		ps = append(ps, k+"="+v.String())
	}
	slices.Sort(ps)
	return "{" + strings.Join(ps, " ") + "}"
}
