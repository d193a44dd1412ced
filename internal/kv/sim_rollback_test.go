package kv

import (
	"flag"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

var simRollbackSeeds = flag.Int("kv.sim.rbseeds", 16, "seeds in TestSimRollback (-kv.sim.seed=N replays one)")

// The rollback simulation (§IV driven end to end, deterministically): the
// KV simulation's world (sim_test.go: delay, loss, duplication, partitions,
// crashes) with eventual-consistency clients (N3R1W1: W + R ≤ N), a
// kv.Detector on every replica as its PutHook, a monitor.Set fed from the
// detectors' buffers after every tick (with a Flush heartbeat every
// FlushTicks), and, on each violation, the rollback the watcher runs: pause
// every server (requests answered PAUSED for PauseTicks), ChooseCut over
// the replicas, RestoreMonitored on each as the next generation, a fresh
// monitor set, resume. With a server down the rollback fails, as the
// watcher's does, and changes nothing. With RestoreCrashPermille a replica
// crashes after the pause and before its restore; it comes back paused
// (the stored pause) and the rollback finishes once every server is up,
// with the straddling writes listed again, as the watcher's retry does. A restarted server gets a new
// detector loaded with its stored values, and the monitors start over, as
// the kv server and the watcher do.
//
// The predicate is the paper's conjunctive critical section: client s owns
// a flag key whose first replica is server s (watched there); ¬P is "every
// flag is 1". Clients set their flag to 1 with probability Beta.
//
// The checkers work from the simulation's own log of every applied PUT
// (server, key, sibling, HVC stamp, and a simulation vector clock over
// servers and clients that follows only the answers an Op absorbs, i.e.
// what the HVCs can know), never from the undo window:
//
//	(a) after each restore, every replica holds exactly the replay of its
//	    applications of the writes in the cut C(T) (a write is in it iff
//	    some replica applied it with CutTime < T), T ≤ the violation's
//	    Since, and the cut is causally closed: no kept write depends on a
//	    discarded one (x → y iff an application of x happened before y was
//	    issued);
//	(b) every write some replica applied before T survives (is covered by
//	    the stored siblings) on every replica that had applied it;
//	(c) if ¬P still holds at the restored cut, the next violation reported
//	    is it, with Since < T (the doc's rule: reported again, earlier), or
//	    the rollback it triggers chooses a cut before T (the straddler
//	    case, doc.go); not checked if the monitors reset in between;
//	(d) the monitor never misses what a brute-force search of the logged
//	    local states finds under the ε rule: no violating tuple of states
//	    ended before the detecting tick exists unreported, none remains
//	    unreported at the end, and every reported cut is such a tuple
//	    (no phantom).

// rbBug plants a bug the checkers must catch.
type rbBug int

const (
	bugNone rbBug = iota
	// bugSkipReplica: the restore skips one replica (it keeps the
	// discarded writes).
	bugSkipReplica
	// bugNoStraddlers: the cut is the violation's Since, with no writes
	// kept for having taken effect elsewhere before it (ChooseCut skipped).
	bugNoStraddlers
	// bugFetchSkips: the candidate fetch loses every seventh candidate
	// (a cursor off by one on some pages), so the monitors miss states.
	bugFetchSkips
	// bugRetryForgets: a replica whose restore failed (it crashed) is
	// never restored once it is back.
	bugRetryForgets
)

type rbConfig struct {
	Sim          simConfig
	Beta         float64 // probability that a flag write sets the flag
	FlagPermille int     // share of PUTs that write the client's flag
	FlushTicks   int     // detector heartbeat period
	PauseTicks   int     // how long a rollback keeps the servers paused
	// ResetEvery is the mean ticks between monitor resets (0: none): the
	// monitors start over and every candidate not yet stepped is lost, as
	// when the watcher resets on a server restart. A violation whose states
	// ended before a reset is then found only through later states (with
	// later starts), so its rollback may restore a cut that still violates:
	// checker (c)'s case.
	ResetEvery int
	Epsilon    uint64 // the HVC's and the monitors' ε
	// RestoreCrashPermille is the chance, per rollback, that one replica
	// crashes after the pause and before its restore: the others are
	// restored, it comes back paused (the stored pause) and the watcher
	// redoes its restore once every server is up, listing the straddling
	// writes again, as Watcher.rollback does.
	RestoreCrashPermille int
	Bug                  rbBug
}

func defaultRbConfig(seed uint64) rbConfig {
	sc := simConfig{
		Seed: seed, Quorum: simQuorum(3, 1, 1), Servers: 3, Clients: 4, Keys: 3, OpsPerClient: 300,
		DelayMax: 8, DropPermille: 20, DupPermille: 10, PartitionEvery: 200, PartitionTicks: 80,
		CrashEvery: 400, DownTicks: 40,
		TicksMax: 200_000,
	}
	// Pauses longer than two message delays: a read repair built from an
	// answer given before the pause reaches its server while it is paused.
	return rbConfig{Sim: sc, Beta: 0.5, FlagPermille: 600, FlushTicks: 10, PauseTicks: 3*sc.DelayMax + 1, Epsilon: 1000, ResetEvery: 30,
		RestoreCrashPermille: 200}
}

type rbResult struct {
	Violations, Rollbacks, Undone, Kept, Rechecks, RecheckByCut, States, Tuples, Resets int
	Restarts, RollbackFails, RecheckVoided, RestoreRetries                              int
	Ops, OKPuts, Failed, Paused                                                         int
	Hash                                                                                uint64
}

func (r rbResult) String() string {
	return fmt.Sprintf("ops=%d okPuts=%d failed=%d violations=%d rollbacks=%d undone=%d straddlersKept=%d rechecks=%d (by cut %d, voided by a restart %d) states=%d monitorResets=%d restarts=%d rollbackFails=%d restoreRetries=%d",
		r.Ops, r.OKPuts, r.Failed, r.Violations, r.Rollbacks, r.Undone, r.Kept, r.Rechecks, r.RecheckByCut, r.RecheckVoided, r.States, r.Resets, r.Restarts, r.RollbackFails, r.RestoreRetries)
}

// rbApp is one applied PUT: one replica's application of a logical write.
type rbApp struct {
	server int
	key    string
	sib    kvcore.Sibling
	at     vclock.HVC
	vc     []uint64
}

// rbWrite is a logical write (a PUT, named by its version).
type rbWrite struct {
	client int
	issue  []uint64 // the client's vector clock when it issued the PUT
}

// rbLocal is one ended local state of a server's flag, as the brute force
// sees it: [start, end) with the flag's value.
type rbLocal struct {
	start, end vclock.HVC
	value      string
	tick       int    // when it ended
	epoch      uint64 // the monitors' epoch when it ended (ResetEvery)
}

// rbServerLog is one server's flag history in the current generation.
type rbServerLog struct {
	start vclock.HVC // the current state's start
	value string     // the current state's value
	ended []rbLocal
}

// rbPending is a rollback whose restore of one replica failed (it
// crashed); every server stays paused until the restore is redone.
type rbPending struct {
	server int
	before uint64
	keep   []kvcore.Version
	kept   map[string]bool
}

type rbState struct {
	w     *simWorld
	cfg   rbConfig
	spec  *monitor.Spec
	flags []string // flags[s]: the key watched on server s
	dets  []*Detector
	set   *monitor.Set
	seen  []uint64 // per server: last candidate index taken
	gen   uint64

	pausedUntil int
	vc          [][]uint64 // per process: servers, then clients
	opVC        [][]uint64 // per client: merged answers absorbed by its op

	apps   []rbApp
	eff    [][]int // per server: the apps in effect, in application order
	writes map[string]*rbWrite
	local  []rbServerLog

	pending *rbPending // a rollback waiting to redo one replica's restore
	recheck *uint64    // T of a rollback whose restored cut still violates
	started []bool     // per server: opened once
	epoch   uint64     // monitor resets so far
	res     rbResult
	err     error
}

func newRbState(w *simWorld, cfg rbConfig) *rbState {
	rb := &rbState{w: w, cfg: cfg, writes: map[string]*rbWrite{}}
	n := cfg.Sim.Servers
	rb.flags = flagKeys(w.ring)
	p := monitor.Predicate{Name: "critical-section", Type: monitor.Conjunctive, Clauses: []monitor.Clause{{}}}
	for s, key := range rb.flags {
		p.Clauses[0].Literals = append(p.Clauses[0].Literals, monitor.Literal{Server: s, Key: key, Op: monitor.Eq, Value: "1"})
	}
	rb.spec = &monitor.Spec{Servers: n, Predicates: []monitor.Predicate{p}}
	for s := range n {
		det, err := NewDetector(rb.spec, s, vclock.HVC{}, 1<<20)
		if err != nil {
			w.t.Fatal(err)
		}
		rb.dets = append(rb.dets, det)
	}
	rb.newSet()
	rb.seen = make([]uint64, n)
	rb.eff = make([][]int, n)
	rb.local = make([]rbServerLog, n)
	rb.started = make([]bool, n)
	for range n + cfg.Sim.Clients {
		rb.vc = append(rb.vc, make([]uint64, n+cfg.Sim.Clients))
	}
	rb.opVC = make([][]uint64, cfg.Sim.Clients)
	return rb
}

// flagKeys returns, per server s, the key "f<s>-<k>" with the least k whose
// first replica is s.
func flagKeys(ring *kvcore.Ring) []string {
	out := make([]string, ring.Servers())
	for s := range out {
		for k := 0; ; k++ {
			key := fmt.Sprintf("f%d-%d", s, k)
			if ring.Replicas(nil, key, 1)[0] == s {
				out[s] = key
				break
			}
		}
	}
	return out
}

func (rb *rbState) newSet() {
	mc := monitor.DefaultConfig()
	mc.Epsilon = rb.cfg.Epsilon
	set, err := monitor.NewSet(mc, rb.spec)
	if err != nil {
		rb.w.t.Fatal(err)
	}
	rb.set = set
}

func (rb *rbState) fail(format string, args ...any) {
	if rb.err == nil {
		rb.err = fmt.Errorf("tick %d gen %d: %s", rb.w.tick, rb.gen, fmt.Sprintf(format, args...))
	}
}

// runRollbackSim runs one seed and returns its figures and the first
// checker failure.
func runRollbackSim(t testing.TB, cfg rbConfig) (rbResult, error) {
	w := newSimWorld(t, cfg.Sim)
	w.rb = newRbState(w, cfg)
	w.openAll()
	res, hist := w.run()
	rb := w.rb
	rb.res.Ops, rb.res.OKPuts, rb.res.Failed = res.Ops, res.OKPuts, res.Failed
	if err := checkHistoryValues(hist); err != nil && rb.err == nil {
		rb.err = err
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%x %s", historyHash(hist), rb.res)
	rb.res.Hash = h.Sum64()
	return rb.res, rb.err
}

// checkHistoryValues: every value a GET returned was written by some PUT
// of that key under that version (rollbacks never invent values).
func checkHistoryValues(hist []histOp) error {
	written := map[string]string{}
	for _, h := range hist {
		if h.Kind == kvcore.KindPut {
			written[h.Key+" "+h.Put.Version.String()] = string(h.Put.Value)
		}
	}
	for _, g := range hist {
		for _, s := range g.Got {
			if v, ok := written[g.Key+" "+s.Version.String()]; !ok || v != string(s.Value) {
				return fmt.Errorf("GET %s returned %s=%q, which no PUT wrote", g.Key, s.Version, s.Value)
			}
		}
	}
	return nil
}

// --- hooks called by simWorld ---

func (rb *rbState) replicaConfig(i int, cfg *ReplicaConfig) {
	if rb.started[i] {
		// A restarted server: a new detector (its candidates numbered
		// from 1 again), loaded with the stored values once it is open.
		det, err := NewDetector(rb.spec, i, vclock.HVC{}, 1<<20)
		if err != nil {
			rb.w.t.Fatal(err)
		}
		rb.dets[i], rb.seen[i] = det, 0
	}
	cfg.Epsilon, cfg.Hook = rb.cfg.Epsilon, rb.dets[i]
}

// opened finishes a server's (re)start as the kv server does: the
// detector starts from the stored values and when they were written, in
// the replica's generation; and, as the watcher does when it sees a new
// incarnation, the monitors start over (what they held is lost to them).
func (rb *rbState) opened(i int) {
	if !rb.started[i] {
		rb.started[i] = true
		return
	}
	rep := rb.w.servers[i].rep
	det := rb.dets[i]
	det.SetEpoch(uint64(rb.w.tick), rep.Gen())
	keys := det.Keys()
	vals, err := rep.Values(keys)
	if err != nil {
		rb.w.t.Fatal(err)
	}
	ats, err := rep.LastWrites(keys)
	if err != nil {
		rb.w.t.Fatal(err)
	}
	det.Load(vals, ats)
	rb.res.Restarts++
	rb.resetMonitors()
	rb.local[i] = rb.restoredLocal(i)
}

// resetMonitors starts the monitors over: every candidate not yet stepped
// is lost to them, and the brute force forgets the states that ended.
func (rb *rbState) resetMonitors() {
	if rb.recheck != nil {
		// A restored cut that still violated may now be reported late
		// or not at all (doc.go: a restart resets the monitors): (c)
		// no longer applies to it.
		rb.recheck = nil
		rb.res.RecheckVoided++
	}
	rb.newSet()
	rb.epoch++
	rb.res.Resets++
	for s, det := range rb.dets {
		rb.seen[s] = det.Stats().Emitted
	}
}

// paused: every server while a rollback is in progress (a replica that
// crashed during it comes back paused: the pause is stored) and for
// PauseTicks after.
func (rb *rbState) paused(int) bool { return rb.pending != nil || rb.w.tick < rb.pausedUntil }

func (w *simWorld) clientVC(i int) []uint64 {
	if w.rb == nil {
		return nil
	}
	return slices.Clone(w.rb.vc[w.cfg.Servers+i])
}

// receive merges a request's clock into its server's, ticks it, and returns
// the event's clock (carried by the answer).
func (rb *rbState) receive(server int, from []uint64) []uint64 {
	v := rb.vc[server]
	mergeVC(v, from)
	v[server]++
	return slices.Clone(v)
}

func mergeVC(dst, src []uint64) {
	for k := range src {
		dst[k] = max(dst[k], src[k])
	}
}

func vcLE(a, b []uint64) bool {
	for k := range a {
		if a[k] > b[k] {
			return false
		}
	}
	return true
}

func (rb *rbState) absorb(client int, vc []uint64) {
	if rb.opVC[client] == nil {
		rb.opVC[client] = make([]uint64, len(vc))
	}
	mergeVC(rb.opVC[client], vc)
}

func (rb *rbState) finishOp(client int) {
	if o := rb.opVC[client]; o != nil {
		mergeVC(rb.vc[rb.cfg.Sim.Servers+client], o)
		rb.opVC[client] = nil
	}
}

// startOp chooses and starts client i's next operation: a PUT with
// probability 0.7 (to its flag, if it owns one, with FlagPermille; 1 with
// probability Beta), else a GET of its flag or an ordinary key.
func (rb *rbState) startOp(i int) {
	w := rb.w
	c := w.clients[i]
	own := i < len(rb.flags)
	key := fmt.Sprintf("k%d", w.rng.IntN(w.cfg.Keys))
	put := w.rng.IntN(10) < 7
	value := fmt.Appendf(nil, "c%d-%d", i, c.left)
	if own && (!put || w.rng.IntN(1000) < rb.cfg.FlagPermille) {
		key = rb.flags[i]
		value = []byte("0")
		if w.rng.Float64() < rb.cfg.Beta {
			value = []byte("1")
		}
	}
	self := w.cfg.Servers + i
	rb.vc[self][self]++
	h := histOp{Client: i, Key: key, Start: w.event(), Kind: kvcore.KindGet}
	var err error
	if put {
		h.Kind = kvcore.KindPut
		c.op, err = c.sess.Put(key, value, c.ctx[key], nil)
	} else {
		c.op, err = c.sess.Get(key, nil)
	}
	if err != nil {
		w.t.Fatalf("seed %d: %v", w.cfg.Seed, err)
	}
	if put {
		rb.writes[c.op.PutSibling().Version.String()] = &rbWrite{client: i, issue: slices.Clone(rb.vc[self])}
	}
	w.begin(i, h)
}

// applied logs an applied PUT and, for a watched flag, the state it ends.
func (rb *rbState) applied(server int, key string, s kvcore.Sibling, at vclock.HVC, vc []uint64) {
	rb.eff[server] = append(rb.eff[server], len(rb.apps))
	rb.apps = append(rb.apps, rbApp{server: server, key: key, sib: s, at: at, vc: vc})
	if key == rb.flags[server] {
		rb.endState(server, at, string(s.Value))
	}
}

func (rb *rbState) endState(server int, at vclock.HVC, next string) {
	l := &rb.local[server]
	l.ended = append(l.ended, rbLocal{start: l.start, end: at, value: l.value, tick: rb.w.tick, epoch: rb.epoch})
	l.start, l.value = at, next
	rb.res.States++
}

func (rb *rbState) afterTick() {
	w := rb.w
	if rb.err != nil {
		return
	}
	if rb.pending != nil {
		// The watcher is still in the rollback: it redoes the failed
		// restore once every server answers; candidates wait.
		rb.retryRestore()
		return
	}
	if w.tick%rb.cfg.FlushTicks == 0 {
		rb.flushAll()
	}
	if rb.cfg.ResetEvery > 0 && w.rng.IntN(rb.cfg.ResetEvery) == 0 && rb.recheck == nil {
		// The monitors start over; what the detectors emitted so far,
		// including this tick's heartbeat, is lost to them. (Not while
		// checker (c) waits for a restored violation to be reported
		// again: a reset may lose that report, as the doc says.)
		rb.resetMonitors()
	}
	rb.drain()
}

func (rb *rbState) flushAll() {
	for s, srv := range rb.w.servers {
		if srv.rep == nil {
			continue // down
		}
		srv.rep.Stamp(func(at vclock.HVC) {
			rb.dets[s].Flush(at)
			rb.endState(s, at, rb.local[s].value)
		})
	}
}

// drain steps every detector's new candidates of this generation into the
// monitors, server by server, and handles the first violation found.
func (rb *rbState) drain() {
	for s, det := range rb.dets {
		if rb.w.servers[s].rep == nil {
			continue // down: what it had not sent is lost
		}
		cs, missed := det.Candidates(rb.seen[s], 1<<20)
		if missed > 0 {
			rb.fail("server %d: %d candidates dropped by the detector's buffer", s, missed)
			return
		}
		for _, c := range cs {
			rb.seen[s] = c.Index
			if c.Gen != rb.gen {
				continue // an older generation's, discarded by a rollback
			}
			if rb.cfg.Bug == bugFetchSkips && c.Index%7 == 0 {
				continue
			}
			if err := rb.set.Step(c.Outbound); err != nil {
				rb.fail("monitor refused %v: %v", c.Candidate, err)
				return
			}
			if vs := rb.set.Ready(); len(vs) > 0 {
				vs = slices.Clone(vs)
				rb.set.Advance()
				rb.violation(vs)
				return
			}
		}
	}
}

// violation checks the monitors' reports and rolls back to the earliest
// Since among them.
func (rb *rbState) violation(vs []monitor.Violation) {
	rb.res.Violations += len(vs)
	for _, v := range vs {
		if err := rb.checkReported(v); err != nil {
			rb.fail("%v", err)
			return
		}
	}
	if tuple := rb.bruteForce(rb.w.tick); tuple != nil {
		rb.fail("(d) the monitor missed a violation of states ended before tick %d: %s", rb.w.tick, tuple)
		return
	}
	since := vs[0].Since
	for _, v := range vs {
		since = min(since, v.Since)
	}
	mustBefore := uint64(0)
	if rb.recheck != nil {
		// (c): the restored cut still violated, so this report is that
		// violation again, with an earlier start — or, where a flag's
		// restored value came from a write kept for taking effect
		// elsewhere before T but applied on its home replica after T
		// (its detector state then begins at that late application), the
		// rollback it triggers must reach before T through ChooseCut.
		if since >= *rb.recheck {
			mustBefore = *rb.recheck
			rb.res.RecheckByCut++
		}
		rb.recheck = nil
	}
	rb.rollback(since, mustBefore)
}

// checkReported: the reported cut is a tuple of logged states, one per
// server, all with flag 1 and pairwise concurrent under the ε rule.
func (rb *rbState) checkReported(v monitor.Violation) error {
	if len(v.Cut) != len(rb.flags) {
		return fmt.Errorf("violation with %d states for %d servers", len(v.Cut), len(rb.flags))
	}
	var tuple []rbLocal
	for _, c := range v.Cut {
		k := slices.IndexFunc(rb.local[c.Server].ended, func(l rbLocal) bool {
			return vclock.CompareHVC(l.start, c.Start) == vclock.Equal && vclock.CompareHVC(l.end, c.End) == vclock.Equal
		})
		if k < 0 {
			return fmt.Errorf("reported state %v is no state server %d was in", c, c.Server)
		}
		tuple = append(tuple, rb.local[c.Server].ended[k])
	}
	if !rb.violating(tuple) {
		return fmt.Errorf("(d) phantom: reported cut %v is not a violation under the ε rule", v.Cut)
	}
	if v.Since+rb.cfg.Epsilon < slices.MaxFunc(tuple, func(a, b rbLocal) int { return int(a.start.Own()) - int(b.start.Own()) }).start.Own() {
		return fmt.Errorf("Since %d is more than ε before the latest start of the cut", v.Since)
	}
	return nil
}

// precedes is the ε rule (§V, Fig. 6), written out independently of the
// monitor package.
func (rb *rbState) precedes(a, b rbLocal) bool {
	end, st := a.end.Own(), b.start.Own()
	return end+rb.cfg.Epsilon <= st && vclock.CompareHVC(a.end, b.start) == vclock.Before
}

func (rb *rbState) violating(tuple []rbLocal) bool {
	for i, a := range tuple {
		if a.value != "1" {
			return false
		}
		for j, b := range tuple {
			if i != j && rb.precedes(a, b) {
				return false
			}
		}
	}
	return true
}

// bruteForce searches the current generation's states that ended before
// tick `before` for a violating tuple; nil if there is none.
func (rb *rbState) bruteForce(before int) []rbLocal {
	var cands [][]rbLocal
	for s := range rb.local {
		var c []rbLocal
		for _, l := range rb.local[s].ended {
			if l.tick < before && l.value == "1" && l.epoch == rb.epoch {
				c = append(c, l)
			}
		}
		cands = append(cands, c)
	}
	tuple := make([]rbLocal, 0, len(cands))
	var search func(s int) bool
	search = func(s int) bool {
		if s == len(cands) {
			return true
		}
		for _, l := range cands[s] {
			ok := true
			for _, o := range tuple {
				if rb.precedes(o, l) || rb.precedes(l, o) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			rb.res.Tuples++
			tuple = append(tuple, l)
			if search(s + 1) {
				return true
			}
			tuple = tuple[:len(tuple)-1]
		}
		return false
	}
	if search(0) {
		return tuple
	}
	return nil
}

func (l rbLocal) String() string {
	return fmt.Sprintf("[%d,%d)=%q@%d", l.start.Own(), l.end.Own(), l.value, l.tick)
}

// rollback is the watcher's rollback run inside the simulation: pause,
// choose the cut, restore every replica (and restart its detector) as the
// next generation, fresh monitors, resume after PauseTicks.
func (rb *rbState) rollback(since, mustBefore uint64) {
	w := rb.w
	for _, s := range w.servers {
		if s.rep == nil {
			// The watcher cannot pause a server that is down: the
			// rollback fails and changes nothing. Here the monitors then
			// start over (the real watcher goes on; starting over keeps
			// checker (d)'s brute force comparable).
			rb.res.RollbackFails++
			rb.recheck = nil
			rb.resetMonitors()
			return
		}
	}
	srcs := make([]CutSource, len(w.servers))
	for i, s := range w.servers {
		srcs[i] = s.rep
	}
	before, keep, err := ChooseCut(srcs, since)
	if rb.cfg.Bug == bugNoStraddlers {
		before, keep, err = since, nil, nil
	}
	if err != nil {
		rb.fail("choose cut: %v", err)
		return
	}
	if before > since {
		rb.fail("cut %d after the violation's Since %d", before, since)
		return
	}
	if mustBefore > 0 && before >= mustBefore {
		rb.fail("(c) the restored cut before %d still violated; it was reported again with Since %d and the rollback chose %d: no progress", mustBefore, since, before)
		return
	}
	kept, discarded := rb.cutOf(before)
	if err := rb.checkClosed(kept, discarded); err != nil {
		rb.fail("(a) cut before %d: %v", before, err)
		return
	}
	rb.gen++
	rb.pausedUntil = w.tick + rb.cfg.PauseTicks
	crash := -1
	if rb.cfg.RestoreCrashPermille > 0 && w.rng.IntN(1000) < rb.cfg.RestoreCrashPermille {
		crash = w.rng.IntN(len(w.servers))
	}
	for i, s := range w.servers {
		if rb.cfg.Bug == bugSkipReplica && i == int(rb.gen)%len(w.servers) {
			continue
		}
		if i == crash {
			continue
		}
		res, err := RestoreMonitored(s.rep, rb.dets[i], before, rb.gen, keep)
		if err != nil {
			rb.fail("restore server %d before %d: %v", i, before, err)
			return
		}
		rb.res.Undone += res.Undone
	}
	if crash >= 0 {
		w.crash(crash)
		rb.pending = &rbPending{server: crash, before: before, keep: keep, kept: kept}
		rb.res.RestoreRetries++
		return
	}
	rb.finishRollback(before, kept, len(keep))
}

// retryRestore is the watcher's retry of a failed restore: once every
// server is up again, list the writes that straddle the cut anew, restore
// the replica that crashed, and finish the rollback.
func (rb *rbState) retryRestore() {
	p, w := rb.pending, rb.w
	srcs := make([]CutSource, len(w.servers))
	for i, s := range w.servers {
		if s.rep == nil {
			return // down: the watcher's calls fail; it tries again
		}
		srcs[i] = s.rep
	}
	more, _, err := straddlers(srcs, p.before)
	if err != nil {
		rb.fail("straddlers for the retried restore: %v", err)
		return
	}
	keep := unionVersions(p.keep, more)
	if rb.cfg.Bug != bugRetryForgets {
		res, err := RestoreMonitored(w.servers[p.server].rep, rb.dets[p.server], p.before, rb.gen, keep)
		if err != nil {
			rb.fail("retried restore of server %d before %d: %v", p.server, p.before, err)
			return
		}
		rb.res.Undone += res.Undone
	}
	rb.pending = nil
	rb.pausedUntil = w.tick + rb.cfg.PauseTicks
	rb.finishRollback(p.before, p.kept, len(keep))
}

// finishRollback runs the checkers on the restored replicas and starts the
// new generation.
func (rb *rbState) finishRollback(before uint64, kept map[string]bool, nKeep int) {
	rb.res.Rollbacks++
	rb.res.Kept += nKeep
	before0 := rb.eff
	rb.eff = make([][]int, len(before0))
	for s, apps := range before0 {
		for _, a := range apps {
			if kept[rb.apps[a].sib.Version.String()] {
				rb.eff[s] = append(rb.eff[s], a)
			}
		}
	}
	rb.checkRestored(before, before0)
	rb.newSet()
	rb.startGeneration()
}

// cutOf splits the writes in effect somewhere into those C(T) keeps (some
// replica applied them with CutTime < T) and those it discards.
func (rb *rbState) cutOf(t uint64) (kept, discarded map[string]bool) {
	kept, discarded = map[string]bool{}, map[string]bool{}
	for _, apps := range rb.eff {
		for _, a := range apps {
			if CutTime(rb.apps[a].at) < t {
				kept[rb.apps[a].sib.Version.String()] = true
			}
		}
	}
	for _, apps := range rb.eff {
		for _, a := range apps {
			if v := rb.apps[a].sib.Version.String(); !kept[v] {
				discarded[v] = true
			}
		}
	}
	return kept, discarded
}

// checkClosed: no kept write was issued by a client that had learnt of a
// discarded one (an application of it happened before the issue).
func (rb *rbState) checkClosed(kept, discarded map[string]bool) error {
	var dapps []rbApp
	for _, apps := range rb.eff {
		for _, a := range apps {
			if discarded[rb.apps[a].sib.Version.String()] {
				dapps = append(dapps, rb.apps[a])
			}
		}
	}
	for _, x := range dapps {
		for y := range kept {
			if wy := rb.writes[y]; wy != nil && vcLE(x.vc, wy.issue) {
				return fmt.Errorf("inconsistent cut: kept write %s (client %d) depends on discarded %s (applied on server %d)", y, wy.client, x.sib.Version, x.server)
			}
		}
	}
	return nil
}

// checkRestored runs checkers (a), (b) and prepares (c) after a restore.
func (rb *rbState) checkRestored(t uint64, was [][]int) {
	early := map[string]bool{} // writes some replica applied before T
	for _, apps := range was {
		for _, a := range apps {
			if CutTime(rb.apps[a].at) < t {
				early[rb.apps[a].sib.Version.String()] = true
			}
		}
	}
	for s, srv := range rb.w.servers {
		want := map[string][]kvcore.Sibling{}
		for _, a := range rb.eff[s] {
			app := rb.apps[a]
			next, _, err := kvcore.Apply(want[app.key], app.sib, kvcore.SiblingsLimit)
			if err != nil {
				rb.fail("replaying server %d: %v", s, err)
				return
			}
			want[app.key] = next
		}
		for _, a := range was[s] {
			app := rb.apps[a]
			if early[app.sib.Version.String()] && !kvcore.CoveredBy(app.sib.Version, mustLoad(srv.rep, app.key)) {
				rb.fail("(b) server %d lost write %s of %q, which took effect before the cut %d (here at %d)", s, app.sib.Version, app.key, t, CutTime(app.at))
				return
			}
		}
		keys := map[string]bool{}
		for _, a := range was[s] {
			keys[rb.apps[a].key] = true
		}
		for _, key := range sortedKeys(keys) {
			got, err := srv.rep.load(key)
			if err != nil {
				rb.fail("server %d: load %q: %v", s, key, err)
				return
			}
			if !sameSiblings(got, want[key]) {
				rb.fail("(a) server %d key %q after restore before %d holds %v, the cut C(T) holds %v", s, key, t, got, want[key])
				return
			}
		}
	}
	violated := true
	for s, srv := range rb.w.servers {
		if currentValue(mustLoad(srv.rep, rb.flags[s])) != "1" {
			violated = false
		}
	}
	if violated {
		rb.recheck = &t
		rb.res.Rechecks++
	}
}

func mustLoad(r *Replica, key string) []kvcore.Sibling {
	sibs, err := r.load(key)
	if err != nil {
		panic(err)
	}
	return sibs
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// startGeneration begins the brute force's states of the new generation
// from the restored values: each server's flag state begins when the
// restored value was written there (its last application in effect), as
// the doc says the restored detectors do.
func (rb *rbState) startGeneration() {
	for s := range rb.local {
		rb.local[s] = rb.restoredLocal(s)
	}
}

// restoredLocal is server s's flag state as a restored or restarted
// detector begins it: the stored value, from the stamp of its last write
// in effect (the zero stamp if none).
func (rb *rbState) restoredLocal(s int) rbServerLog {
	l := rbServerLog{}
	for _, a := range rb.eff[s] {
		if app := rb.apps[a]; app.key == rb.flags[s] {
			l.start = app.at
		}
	}
	l.value = currentValue(mustLoad(rb.w.servers[s].rep, rb.flags[s]))
	return l
}

// completePending finishes a rollback that waits for a crashed server
// once the clients are done: the server comes back, and the watcher
// redoes its restore.
func (rb *rbState) completePending() {
	if rb.pending == nil || rb.err != nil {
		return
	}
	for i, s := range rb.w.servers {
		if s.rep == nil {
			rb.w.open(i)
		}
	}
	rb.retryRestore()
}

// finish flushes and drains until the monitors are quiet, then checks that
// nothing is left unreported.
func (rb *rbState) finish() {
	rb.completePending()
	for range 16 {
		if rb.err != nil {
			return
		}
		rolls := rb.res.Rollbacks
		rb.w.tick++
		rb.flushAll()
		rb.drain()
		rb.completePending()
		if rb.res.Rollbacks == rolls {
			break
		}
	}
	if rb.err != nil {
		return
	}
	if tuple := rb.bruteForce(rb.w.tick + 1); tuple != nil {
		rb.fail("(d) the monitor missed a violation: %s", tuple)
	}
	if rb.recheck != nil {
		rb.fail("(c) the restored cut before %d still violated, and it was never reported again", *rb.recheck)
	}
}

// TestSimRollback (§IV): eventual-consistency clients under a monitored
// conjunctive predicate; every violation rolls the store back through the
// real path (ChooseCut, RestoreMonitored) and checkers (a)–(d) run on every
// rollback. A failure prints the seed; -kv.sim.seed=N replays it.
func TestSimRollback(t *testing.T) {
	var total rbResult
	seeds := simSeedList(*simRollbackSeeds)
	for _, seed := range seeds {
		res, err := runRollbackSim(t, defaultRbConfig(seed))
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: go test ./internal/kv -run 'TestSimRollback$' -kv.sim.seed=%d", seed, err, seed)
		}
		total.add(res)
	}
	t.Logf("%d seeds: %s", len(seeds), total)
	if total.Rollbacks < len(seeds) || total.Undone == 0 || total.Kept == 0 || total.Restarts == 0 || total.RestoreRetries == 0 {
		t.Fatalf("the simulation exercised too little (want rollbacks on every seed, undone writes, kept straddlers, restarts, retried restores): %s", total)
	}
	// A restored cut that still violates is rarer (about one seed in two):
	// demanded of the default seed range, not of a replayed seed or the
	// two seeds a -race run takes.
	if len(seeds) >= 8 && total.Rechecks == 0 {
		t.Fatalf("no restored cut still violated, so checker (c) never ran: %s", total)
	}
}

func (r *rbResult) add(o rbResult) {
	r.Violations += o.Violations
	r.Rollbacks += o.Rollbacks
	r.Undone += o.Undone
	r.Kept += o.Kept
	r.Rechecks += o.Rechecks
	r.RecheckByCut += o.RecheckByCut
	r.States += o.States
	r.Tuples += o.Tuples
	r.Resets += o.Resets
	r.Restarts += o.Restarts
	r.RollbackFails += o.RollbackFails
	r.RecheckVoided += o.RecheckVoided
	r.RestoreRetries += o.RestoreRetries
	r.Ops += o.Ops
	r.OKPuts += o.OKPuts
	r.Failed += o.Failed
}

// TestSimRollbackCatchesPlantedBugs: with a planted bug, a checker fails.
func TestSimRollbackCatchesPlantedBugs(t *testing.T) {
	for _, tc := range []struct {
		name string
		bug  rbBug
		want string
	}{
		{"restore-skips-a-replica", bugSkipReplica, "(a)"},
		{"no-straddlers-kept", bugNoStraddlers, "(b)"},
		{"fetch-skips-candidates", bugFetchSkips, "(d)"},
		{"retry-forgets-the-crashed-replica", bugRetryForgets, "(a)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			for seed := uint64(1); seed <= 4 && err == nil; seed++ {
				cfg := defaultRbConfig(seed)
				cfg.Bug = tc.bug
				_, err = runRollbackSim(t, cfg)
			}
			if err == nil {
				t.Fatalf("no checker caught the planted bug in 4 seeds")
			}
			t.Logf("caught: %v", err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("caught, but not by the checker meant for it (%s)", tc.want)
			}
		})
	}
}

// TestSimRollbackReplays: one seed run twice gives the same history and the
// same rollbacks.
func TestSimRollbackReplays(t *testing.T) {
	cfg := defaultRbConfig(7)
	cfg.Sim.OpsPerClient = 60
	a, errA := runRollbackSim(t, cfg)
	b, errB := runRollbackSim(t, cfg)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if a.Hash != b.Hash || a.String() != b.String() {
		t.Fatalf("seed 7 diverged:\n%s %x\n%s %x", a, a.Hash, b, b.Hash)
	}
}
