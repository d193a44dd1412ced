package shard

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

var (
	simSeeds = flag.Int("sim.seeds", 12, "seeds of the scheduling simulation")
	simSteps = flag.Int("sim.steps", 2000, "random steps per seed")
	// simPlantComplete plants a bug: gatekeepers claim a complete FIFO
	// while entries are in flight. The checker must catch it (see
	// TestSimCatchesPlantedComplete).
	simPlantComplete = flag.Bool("sim.plant-complete", false, "plant a bug: gatekeepers wrongly claim a complete FIFO")
)

// world is a deterministic single-goroutine run of G gatekeeper cores and S
// shard cores over one in-process Kronos, with FIFO channels whose deliveries
// interleave at random.
type world struct {
	t testing.TB
	// plantComplete plants a bug: gatekeepers claim a complete FIFO.
	plantComplete bool
	rng           *rand.Rand
	oracle        *order.Local
	gks           []*gatekeeper.Core
	shards        []*Core
	chans         map[[2]int][]gatekeeper.Entry // (gk, shard) FIFO in transit
	nops          []NopRequest                  // in transit, with target shard in nopShard
	nopTo         []uint32
	now           int // logical real time
	// ackedClock covers every acknowledged transaction: a gatekeeper merges it
	// before stamping (the engine's rule: a stamp follows everything already
	// acknowledged, which is what real-time order needs).
	ackedClock vclock.Clock
	written    map[string][]int // stamp → shards its transaction wrote

	// history
	execOrder [][]vclock.Stamp // per shard: writes in execution order
	writeAt   map[string]int   // stamp key → shard-local execution index, per shard
	acked     []ackRec
	runs      []runRec
}

type ackRec struct {
	stamp vclock.Stamp
	at    int // real time of the acknowledgement
}

type runRec struct {
	stamp    vclock.Stamp
	shard    int
	executed map[string]bool // writes executed at the shard when the task ran
	invoked  int             // real time the program was stamped
	// atSnapshot marks a read at an existing snapshot (a transaction's own
	// stamp): real-time order does not apply to it, only visibility.
	atSnapshot bool
}

func key(s vclock.Stamp) string { return s.String() }

func newWorld(t testing.TB, seed uint64, g, s int) *world {
	o, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, rng: rand.New(rand.NewPCG(seed, 1)), oracle: o, chans: map[[2]int][]gatekeeper.Entry{},
		execOrder: make([][]vclock.Stamp, s), written: map[string][]int{}}
	for i := 0; i < g; i++ {
		w.gks = append(w.gks, gatekeeper.New(gatekeeper.Config{ID: uint32(i), Gatekeepers: g, Shards: s, Epoch: 1, InflightMax: 100}))
	}
	for i := 0; i < s; i++ {
		c := New(Config{ID: uint32(i), Gatekeepers: g, ReorderMax: 16, TasksMax: 50}, order.NewResolver(o, 1000))
		idx := i
		c.Apply = func(e gatekeeper.Entry) error {
			w.execOrder[idx] = append(w.execOrder[idx], e.Stamp)
			return nil
		}
		c.Run = func(tk Task) error {
			// The shard is multi-versioned: a task sees the executed
			// writes ordered before it, as the engine's read orderer
			// decides (a concurrent write is preferred before the read).
			// Writes may execute past a waiting task; what must never
			// happen is a write ordered before the task that had not
			// executed when it ran (check 2 below).
			r := tk.Payload.(*runRec)
			r.executed = map[string]bool{}
			for _, st := range w.execOrder[idx] {
				seen := vclock.CompareStamps(st, tk.Stamp) == vclock.Equal
				if !seen {
					var err error
					if seen, err = c.Resolver().Prefer(context.Background(), st, tk.Stamp); err != nil {
						return err
					}
				}
				if seen {
					r.executed[key(st)] = true
				}
			}
			w.runs = append(w.runs, *r)
			return nil
		}
		w.shards = append(w.shards, c)
	}
	return w
}

func (w *world) pump(gk int) {
	for _, d := range w.gks[gk].Ready() {
		k := [2]int{gk, int(d.Shard)}
		w.chans[k] = append(w.chans[k], d.Entry)
	}
	for _, st := range w.gks[gk].Acked() {
		// Half the time, the client reads its own write at once, at the
		// transaction's stamp, on a shard it wrote (API: CommitResult.Snapshot).
		if shards := w.written[key(st)]; len(shards) > 0 && w.rng.IntN(2) == 0 {
			s := shards[w.rng.IntN(len(shards))]
			tk := Task{Stamp: st, Payload: &runRec{stamp: st, shard: s, invoked: w.now, atSnapshot: true}}
			if err := w.shards[s].Submit(tk); err != nil && err != ErrOverloaded {
				w.t.Fatal(err)
			}
		}
		w.acked = append(w.acked, ackRec{stamp: st, at: w.now})
		if w.ackedClock.Counters == nil {
			w.ackedClock = st.Clock.Clone()
		} else {
			w.ackedClock.Merge(st.Clock)
		}
	}
}

// noteComplete tells every shard that gatekeeper gk has delivered
// everything it stamped so far, where that holds: the gatekeeper is idle and
// its channel to the shard is empty (the engine's rule in one process). The
// planted bug tells them regardless.
func (w *world) noteComplete(gk int) {
	g := w.gks[gk]
	for s, sh := range w.shards {
		if w.plantComplete || (g.Idle() && len(w.chans[[2]int{gk, s}]) == 0) {
			sh.Complete(uint32(gk), g.Clock())
		}
	}
}

// step performs one random action.
func (w *world) step(ctx context.Context, pending *[]pendingTx) {
	w.now++
	a := w.rng.IntN(10)
	if pending == nil {
		a = 9 // draining: deliveries only
	}
	switch {
	case a < 3 && len(*pending) < 5: // stamp a transaction
		gk := w.rng.IntN(len(w.gks))
		w.gks[gk].Merge(w.ackedClock)
		st, err := w.gks[gk].BeginCommit()
		if err != nil {
			return
		}
		*pending = append(*pending, pendingTx{gk: gk, stamp: st})
	case a < 5 && len(*pending) > 0: // resolve one (commit or abort)
		i := w.rng.IntN(len(*pending))
		p := (*pending)[i]
		*pending = append((*pending)[:i], (*pending)[i+1:]...)
		var ops []txn.ShardOp
		if w.rng.IntN(5) > 0 {
			for s := range w.shards {
				if w.rng.IntN(2) == 0 {
					ops = append(ops, txn.ShardOp{Shard: uint32(s), Kind: txn.OpCreateVertex, Vertex: "x"})
				}
			}
		}
		for _, op := range ops {
			w.written[key(p.stamp)] = append(w.written[key(p.stamp)], int(op.Shard))
		}
		if err := w.gks[p.gk].Resolve(p.stamp, ops); err != nil {
			w.t.Fatal(err)
		}
		w.pump(p.gk)
	case a < 7: // a program at a fresh stamp on a random shard
		gk := w.rng.IntN(len(w.gks))
		w.gks[gk].Merge(w.ackedClock)
		st := w.gks[gk].Stamp()
		s := w.rng.IntN(len(w.shards))
		tk := Task{Stamp: st, Payload: &runRec{stamp: st, shard: s, invoked: w.now}}
		if err := w.shards[s].Submit(tk); err != nil && err != ErrOverloaded {
			w.t.Fatal(err)
		}
	case a < 8 && w.rng.IntN(2) == 0: // announce
		from, to := w.rng.IntN(len(w.gks)), w.rng.IntN(len(w.gks))
		w.gks[to].Merge(w.gks[from].Clock())
	case a < 8: // a gatekeeper notes that it has delivered everything
		w.noteComplete(w.rng.IntN(len(w.gks)))
	default: // deliver one message on a random channel, or a NOP request
		if len(w.nops) > 0 && w.rng.IntN(2) == 0 {
			r, to := w.nops[0], w.nopTo[0]
			w.nops, w.nopTo = w.nops[1:], w.nopTo[1:]
			// Half the time an idle gatekeeper whose channel to the shard
			// is empty answers with a note, as the engine's do.
			if len(w.chans[[2]int{int(r.GK), int(to)}]) == 0 && w.rng.IntN(2) == 0 {
				if c, ok := w.gks[r.GK].Note(r.Clock); ok {
					w.shards[to].Complete(r.GK, c)
					w.stepShards(ctx)
					return
				}
			}
			w.gks[r.GK].RequestNop(to, r.Clock)
			w.pump(int(r.GK))
			return
		}
		keys := make([][2]int, 0, len(w.chans))
		for g := range w.gks {
			for s := range w.shards {
				if len(w.chans[[2]int{g, s}]) > 0 {
					keys = append(keys, [2]int{g, s})
				}
			}
		}
		if len(keys) == 0 {
			return
		}
		// Deliver a burst, so that queues hold several entries (NOPs
		// followed by writes) when the shards step.
		for n := 1 + w.rng.IntN(4); n > 0; n-- {
			k := keys[w.rng.IntN(len(keys))]
			if len(w.chans[k]) == 0 {
				continue
			}
			e := w.chans[k][0]
			w.chans[k] = w.chans[k][1:]
			if err := w.shards[k[1]].Deliver(e); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	w.stepShards(ctx)
}

// stepShards steps every shard and collects its NOP requests.
func (w *world) stepShards(ctx context.Context) {
	for s, c := range w.shards {
		if err := c.Step(ctx); err != nil {
			w.t.Fatal(err)
		}
		for _, r := range c.NopRequests() {
			w.nops = append(w.nops, r)
			w.nopTo = append(w.nopTo, uint32(s))
		}
	}
}

type pendingTx struct {
	gk    int
	stamp vclock.Stamp
}

// order checks that a → b is consistent with everything Kronos (and vector
// clocks) hold, establishing it when it is free: the checker builds its serial
// witness with the system's own oracle, so a pair the system ordered the other
// way shows up as a reversed prefer.
func (w *world) order(a, b vclock.Stamp, what string) {
	res, err := w.oracle.Assign(context.Background(), []kronos.Assignment{{A: order.Ref(a), Order: kronos.Before, B: order.Ref(b), Strength: kronos.Prefer}})
	if err != nil {
		w.t.Fatal(err)
	}
	if res[0].Order != kronos.Before {
		for si, ex := range w.execOrder {
			if len(ex) > 8 {
				ex = ex[len(ex)-8:]
			}
			w.t.Logf("shard %d executed (last 8) %v", si, ex)
		}
		for _, r := range w.runs {
			if key(r.stamp) == key(b) || key(r.stamp) == key(a) {
				var seen []string
				for k := range r.executed {
					seen = append(seen, k)
				}
				w.t.Logf("run %s at shard %d invoked %d saw %v", r.stamp, r.shard, r.invoked, seen)
			}
		}
		w.t.Fatalf("%s: %s must precede %s, but the order holds %v", what, a, b, res[0].Order)
	}
}

func (w *world) check() {
	// 1. Every shard executes writes in one global order.
	for s, ex := range w.execOrder {
		for i := 1; i < len(ex); i++ {
			w.order(ex[i-1], ex[i], fmt.Sprintf("shard %d execution order", s))
		}
	}
	// 2. A task saw exactly the writes of its shard that precede it.
	for _, run := range w.runs {
		for _, st := range w.execOrder[run.shard] {
			if key(st) == key(run.stamp) {
				if !run.executed[key(st)] {
					w.t.Fatalf("a read at %s on shard %d ran before the write at that stamp", st, run.shard)
				}
			} else if run.executed[key(st)] {
				w.order(st, run.stamp, "task visibility (seen)")
			} else {
				w.order(run.stamp, st, "task visibility (not seen)")
			}
		}
	}
	// 3. Every write acknowledged before a task was invoked precedes it.
	for _, run := range w.runs {
		if run.atSnapshot {
			continue
		}
		for _, a := range w.acked {
			if a.at < run.invoked && key(a.stamp) != key(run.stamp) {
				w.order(a.stamp, run.stamp, "real-time order")
			}
		}
	}
}

// TestSchedulingIsStrictlySerializable drives gatekeeper and shard cores with
// random interleavings and checks §3.5.3's two theorems on the history.
func TestSchedulingIsStrictlySerializable(t *testing.T) {
	ctx := context.Background()
	seeds, steps := *simSeeds, *simSteps
	if raceEnabled || invariants.On {
		seeds, steps = max(1, seeds/4), max(100, steps/4)
	}
	if invariants.On {
		// Kronos checks its whole graph on every call in this build, and
		// the checker asks it about every pair a task could see.
		seeds, steps = 1, min(steps, 300)
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runSeed(ctx, t, seed, steps, *simPlantComplete)
		})
	}
	if completeSkips.Load() == 0 {
		t.Fatal("no task ran on a gatekeeper's Complete note: the path went untested")
	}
	t.Logf("%d queue checks answered by Complete notes", completeSkips.Load())
}

// runSeed runs one seed: random steps, a drain, then the checks.
func runSeed(ctx context.Context, t testing.TB, seed uint64, steps int, plant bool) {
	w := newWorld(t, seed, 1+int(seed%3), 1+int(seed%4))
	w.plantComplete = plant
	var pending []pendingTx
	for i := 0; i < steps; i++ {
		w.step(ctx, &pending)
	}
	// Drain: resolve everything, deliver everything, until quiet.
	for len(pending) > 0 {
		p := pending[0]
		pending = pending[1:]
		if err := w.gks[p.gk].Resolve(p.stamp, nil); err != nil {
			t.Fatal(err)
		}
		w.pump(p.gk)
	}
	for i := 0; i < 100000 && w.inTransit(); i++ {
		w.step(ctx, nil)
	}
	for si, c := range w.shards {
		for _, q := range c.q {
			for _, e := range q.fifo {
				if !e.Nop {
					t.Fatalf("liveness: shard %d still holds write %s after the drain\n%s", si, e.Stamp, c)
				}
			}
		}
	}
	if w.waiting() {
		for _, c := range w.shards {
			t.Log(c.String())
		}
		for _, g := range w.gks {
			t.Log(g.Inflight())
		}
		t.Fatalf("tasks still waiting after drain")
	}
	if len(w.runs) == 0 || len(w.acked) == 0 {
		t.Fatalf("vacuous run: %d tasks, %d writes", len(w.runs), len(w.acked))
	}
	w.check()
	for _, c := range w.shards {
		completeSkips.Add(c.CompleteSkips)
	}
}

// completeSkips counts, over all seeds run, queue checks that Complete
// answered: the path must be exercised, not only compiled.
var completeSkips atomic.Uint64

// TestSimCatchesPlantedComplete plants a bug — gatekeepers tell shards that
// their FIFO is complete when entries are still in flight, so a read can run
// before a write stamped earlier arrives — and requires the checker to catch it
// within the first five seeds.
func TestSimCatchesPlantedComplete(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 5; seed++ {
		c := &catcher{TB: t}
		func() {
			defer func() {
				if r := recover(); r != nil && r != errCaught {
					panic(r)
				}
			}()
			runSeed(ctx, c, seed, 500, true)
		}()
		if c.msg != "" {
			t.Logf("seed %d caught the planted bug: %s", seed, c.msg)
			return
		}
	}
	t.Fatal("five seeds ran a planted scheduling bug without the checker noticing")
}

var errCaught = errors.New("caught")

// catcher is a testing.TB whose Fatal records the failure and unwinds.
type catcher struct {
	testing.TB
	msg string
}

func (c *catcher) Fatalf(f string, a ...any) { c.msg = fmt.Sprintf(f, a...); panic(errCaught) }
func (c *catcher) Fatal(a ...any)            { c.msg = fmt.Sprint(a...); panic(errCaught) }
func (c *catcher) Logf(string, ...any)       {}
func (c *catcher) Log(...any)                {}

func (w *world) inTransit() bool {
	if len(w.nops) > 0 {
		return true
	}
	for _, q := range w.chans {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

func (w *world) waiting() bool {
	for _, c := range w.shards {
		if c.Waiting() > 0 {
			return true
		}
	}
	return false
}
