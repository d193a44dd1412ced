package kv

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
)

var (
	simSeed  = flag.Uint64("kv.sim.seed", 0, "replay one seed of the KV simulation (0: the fixed seed range)")
	simSeeds = flag.Int("kv.sim.seeds", 6, "seeds per quorum configuration in TestSimQuorum")
)

// simConfig is one deterministic simulation: servers holding Replicas on
// crashable in-memory Pebble file systems, clients running Sessions and Ops,
// and a simulated network between them, all in one goroutine driven by a
// seeded generator and a tick counter.
type simConfig struct {
	Seed           uint64
	Quorum         kvcore.Quorum
	Servers        int
	Clients        int
	Keys           int
	OpsPerClient   int
	DelayMax       int // message delay is 1..DelayMax ticks
	DropPermille   int // messages lost
	DupPermille    int // messages delivered twice
	CrashEvery     int // mean ticks between server crashes (0: none)
	DownTicks      int // how long a crashed server stays down
	PartitionEvery int // mean ticks between partitions (0: none)
	PartitionTicks int
	TicksMax       int
	// Unsafe turns fsync off and makes crashes lose every unsynced byte:
	// the store then loses acknowledged PUTs, which the checker must see.
	Unsafe bool
}

// simQuorum is N/R/W with rounds of 20 ticks (a round trip takes 2 to 16)
// and read repair.
func simQuorum(n, r, w int) kvcore.Quorum {
	q := quorum(n, r, w)
	q.RoundTicks, q.ReadRepair = 20, true
	return q
}

func defaultSimConfig(seed uint64, q kvcore.Quorum) simConfig {
	return simConfig{
		Seed: seed, Quorum: q, Servers: 5, Clients: 4, Keys: 3, OpsPerClient: 120,
		DelayMax: 8, DropPermille: 20, DupPermille: 10,
		CrashEvery: 150, DownTicks: 60, PartitionEvery: 200, PartitionTicks: 80,
		TicksMax: 200_000,
	}
}

// histOp is one client operation: invoked at event Start, finished at End
// (global event numbers: real-time order).
type histOp struct {
	Client     int
	Kind       kvcore.Kind
	Key        string
	Start, End uint64
	OK         bool
	Put        kvcore.Sibling   // PUT: what it wrote
	Got        []kvcore.Sibling // GET: what it returned
}

type simResult struct {
	Ops, OKGets, OKPuts, Failed     int
	Checked, Stale, StaleGets       int // read-after-acknowledged-write pairs
	Crashes, Partitions, Dropped    int
	Round2, Repairs, SiblingRefusal int
	Hash                            uint64
}

func (r simResult) String() string {
	return fmt.Sprintf("ops=%d okGets=%d okPuts=%d failed=%d (sibling limit %d) checked=%d stale=%d staleGets=%d crashes=%d partitions=%d dropped=%d round2=%d repairs=%d",
		r.Ops, r.OKGets, r.OKPuts, r.Failed, r.SiblingRefusal, r.Checked, r.Stale, r.StaleGets, r.Crashes, r.Partitions, r.Dropped, r.Round2, r.Repairs)
}

type simServer struct {
	fs        *vfs.MemFS
	rep       *Replica
	downUntil int
	skew      uint64
	now       uint64
}

type simClient struct {
	sess      *kvcore.Session
	op        *kvcore.Op
	hist      int // index of the op's histOp
	left      int
	nextStart int
	ctx       map[string][]kvcore.Version
}

type simMsg struct {
	at       int
	seq      uint64
	toServer bool
	server   int
	client   int
	send     kvcore.Send
	reply    kvcore.Reply
	vc       []uint64 // the sender's simulation vector clock (rollback runs only)
}

type simWorld struct {
	t       testing.TB
	cfg     simConfig
	rng     *rand.Rand
	ring    *kvcore.Ring
	servers []*simServer
	clients []*simClient
	queue   []simMsg
	msgSeq  uint64
	events  uint64
	tick    int
	cut     [][]bool // cut[client][server]: partitioned
	cutEnd  int
	hist    []histOp
	res     simResult
	// rb, if set, monitors the run and rolls it back on violations
	// (sim_rollback_test.go).
	rb *rbState
}

func runSim(t testing.TB, cfg simConfig) (simResult, []histOp) {
	w := newSimWorld(t, cfg)
	w.openAll()
	return w.run()
}

// newSimWorld builds the world; openAll then opens the servers.
func newSimWorld(t testing.TB, cfg simConfig) *simWorld {
	w := &simWorld{t: t, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6b76))}
	var err error
	if w.ring, err = kvcore.NewRing(cfg.Servers, 16); err != nil {
		t.Fatal(err)
	}
	for range cfg.Servers {
		w.servers = append(w.servers, &simServer{fs: vfs.NewCrashableMem(), skew: w.rng.Uint64N(500)})
	}
	for i := range cfg.Clients {
		sess, err := kvcore.NewSession(w.ring, uint64(i+1)<<32|w.rng.Uint64N(1<<32), cfg.Quorum)
		if err != nil {
			t.Fatal(err)
		}
		w.clients = append(w.clients, &simClient{sess: sess, left: cfg.OpsPerClient, ctx: map[string][]kvcore.Version{}})
	}
	w.cut = make([][]bool, cfg.Clients)
	for i := range w.cut {
		w.cut[i] = make([]bool, cfg.Servers)
	}
	return w
}

func (w *simWorld) openAll() {
	for i := range w.servers {
		w.open(i)
	}
}

func (w *simWorld) run() (simResult, []histOp) {
	t, cfg := w.t, w.cfg
	for w.tick = 0; w.tick < cfg.TicksMax && !w.finished(); w.tick++ {
		if w.rb != nil && w.rb.err != nil {
			return w.res, w.hist // a checker failed: stop here
		}
		w.nemesis()
		w.deliver()
		for i := range w.clients {
			w.stepClient(i)
		}
		if w.rb != nil {
			w.rb.afterTick()
		}
	}
	if !w.finished() {
		t.Fatalf("seed %d: not finished after %d ticks", cfg.Seed, cfg.TicksMax)
	}
	if w.rb != nil {
		w.rb.finish()
	}
	for _, s := range w.servers {
		if s.rep != nil {
			s.rep.Close()
		}
	}
	w.res.Hash = historyHash(w.hist)
	return w.res, w.hist
}

func (w *simWorld) open(i int) {
	s := w.servers[i]
	cfg := DefaultReplicaConfig()
	cfg.Dir, cfg.FS, cfg.Servers, cfg.Self = "kv", s.fs, w.cfg.Servers, i
	cfg.SiblingsMax = 4
	cfg.Sync = !w.cfg.Unsafe
	cfg.Now = func() uint64 { return uint64(w.tick)*1000 + s.skew }
	if w.rb != nil {
		w.rb.replicaConfig(i, &cfg)
	}
	rep, err := OpenReplica(cfg)
	if err != nil {
		w.t.Fatalf("seed %d: open server %d: %v", w.cfg.Seed, i, err)
	}
	s.rep = rep
	if w.rb != nil {
		w.rb.opened(i)
	}
}

func (w *simWorld) finished() bool {
	for _, c := range w.clients {
		if c.left > 0 || c.op != nil {
			return false
		}
	}
	return true
}

// nemesis crashes and restarts servers and cuts and heals partitions.
func (w *simWorld) nemesis() {
	for i, s := range w.servers {
		if s.rep == nil && w.tick >= s.downUntil {
			w.open(i)
		}
	}
	if w.cfg.CrashEvery > 0 && w.rng.IntN(w.cfg.CrashEvery) == 0 {
		w.crash(w.rng.IntN(len(w.servers)))
	}
	if w.cutEnd > 0 && w.tick >= w.cutEnd {
		for _, row := range w.cut {
			clear(row)
		}
		w.cutEnd = 0
	}
	if w.cutEnd == 0 && w.cfg.PartitionEvery > 0 && w.rng.IntN(w.cfg.PartitionEvery) == 0 {
		// A random minority of servers is cut off from a random half of the clients.
		for range 1 + w.rng.IntN(len(w.servers)/2) {
			s := w.rng.IntN(len(w.servers))
			for c := range w.clients {
				if c%2 == int(w.tick%2) || w.rng.IntN(2) == 0 {
					w.cut[c][s] = true
				}
			}
		}
		w.cutEnd = w.tick + 1 + w.rng.IntN(w.cfg.PartitionTicks)
		w.res.Partitions++
	}
}

// crash crashes server i, if it is up, for up to DownTicks.
func (w *simWorld) crash(i int) {
	s := w.servers[i]
	if s.rep == nil {
		return
	}
	// Keep a random share of the unsynced bytes: acknowledged PUTs were
	// synced, so none of them may be lost whatever is kept.
	keep := w.rng.IntN(101)
	if w.cfg.Unsafe {
		keep = 0
	}
	img := s.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: keep, RNG: rand.New(rand.NewPCG(w.rng.Uint64(), 1))})
	s.rep.Close()
	s.rep, s.fs, s.downUntil = nil, img, w.tick+1+w.rng.IntN(w.cfg.DownTicks)
	w.res.Crashes++
}

// post puts a message on the network: lost, delayed, maybe duplicated.
func (w *simWorld) post(m simMsg) {
	if w.rng.IntN(1000) < w.cfg.DropPermille {
		w.res.Dropped++
		return
	}
	copies := 1
	if w.rng.IntN(1000) < w.cfg.DupPermille {
		copies = 2
	}
	for range copies {
		m.at = w.tick + 1 + w.rng.IntN(w.cfg.DelayMax)
		w.msgSeq++
		m.seq = w.msgSeq
		w.queue = append(w.queue, m)
	}
}

func (w *simWorld) deliver() {
	var due []simMsg
	rest := w.queue[:0]
	for _, m := range w.queue {
		if m.at <= w.tick {
			due = append(due, m)
		} else {
			rest = append(rest, m)
		}
	}
	w.queue = rest
	slices.SortFunc(due, func(a, b simMsg) int { return int(a.seq) - int(b.seq) })
	for _, m := range due {
		if w.cut[m.client][m.server] {
			w.res.Dropped++
			continue
		}
		if m.toServer {
			w.serve(m)
		} else {
			w.answer(m)
		}
	}
}

// serve runs a request on its server, if it is up, and posts the reply.
func (w *simWorld) serve(m simMsg) {
	s := w.servers[m.server]
	if s.rep == nil {
		w.res.Dropped++
		return
	}
	r := kvcore.Reply{From: m.server, Op: m.send.Op, Round: m.send.Round}
	var vc []uint64
	if w.rb != nil {
		vc = w.rb.receive(m.server, m.vc)
	}
	switch {
	case w.rb != nil && w.rb.paused(m.server):
		r.Err = kvcore.ErrPaused
	case m.send.Kind == kvcore.KindGet:
		r.Siblings, r.HVC, r.Err = s.rep.Get(m.send.Key, m.send.HVC)
	case m.send.Kind == kvcore.KindPut:
		r.Outcome, r.HVC, r.Err = s.rep.Put(m.send.Key, m.send.Sibling, m.send.HVC)
		if w.rb != nil && r.Err == nil && r.Outcome == kvcore.Applied {
			w.rb.applied(m.server, m.send.Key, m.send.Sibling, r.HVC, vc)
		}
		if m.send.Repair {
			w.res.Repairs++
			return
		}
	}
	w.post(simMsg{toServer: false, server: m.server, client: m.client, reply: r, vc: vc})
}

func (w *simWorld) answer(m simMsg) {
	c := w.clients[m.client]
	if c.op == nil || c.op.ID() != m.reply.Op {
		return
	}
	acks := c.op.Acks()
	c.op.Step(m.reply)
	if w.rb != nil && c.op.Acks() > acks {
		w.rb.absorb(m.client, m.vc) // the op took this answer (and its HVC)
	}
	w.flush(m.client)
}

func (w *simWorld) stepClient(i int) {
	c := w.clients[i]
	if c.op != nil {
		c.op.Tick()
		w.flush(i)
		return
	}
	if c.left == 0 || w.tick < c.nextStart {
		return
	}
	c.left--
	if w.rb != nil {
		w.rb.startOp(i)
		return
	}
	key := fmt.Sprintf("k%d", w.rng.IntN(w.cfg.Keys))
	h := histOp{Client: i, Key: key, Start: w.event()}
	var err error
	if w.rng.IntN(2) == 0 {
		h.Kind = kvcore.KindGet
		c.op, err = c.sess.Get(key, nil)
	} else {
		h.Kind = kvcore.KindPut
		var ctx []kvcore.Version
		if w.rng.IntN(10) < 8 { // mostly read-modify-write; some blind writes make siblings
			ctx = c.ctx[key]
		}
		c.op, err = c.sess.Put(key, fmt.Appendf(nil, "c%d-%d", i, c.left), ctx, nil)
	}
	if err != nil {
		w.t.Fatalf("seed %d: %v", w.cfg.Seed, err)
	}
	w.begin(i, h)
}

// begin records client i's new op and starts it.
func (w *simWorld) begin(i int, h histOp) {
	c := w.clients[i]
	if h.Kind == kvcore.KindPut {
		h.Put = c.op.PutSibling()
	}
	c.hist = len(w.hist)
	w.hist = append(w.hist, h)
	c.op.Start()
	w.flush(i)
}

// flush posts the op's messages and, once it is done, records its result.
func (w *simWorld) flush(i int) {
	c := w.clients[i]
	for _, s := range c.op.Ready() {
		w.post(simMsg{toServer: true, server: s.To, client: i, send: s, vc: w.clientVC(i)})
	}
	c.op.Advance()
	res, done := c.op.Done()
	if !done {
		return
	}
	h := &w.hist[c.hist]
	h.End, h.OK = w.event(), res.Err == nil
	w.res.Ops++
	if res.Round == 2 {
		w.res.Round2++
	}
	switch {
	case res.Err != nil:
		w.res.Failed++
		if errors.Is(res.Err, kvcore.ErrTooManySiblings) {
			w.res.SiblingRefusal++
		}
	case h.Kind == kvcore.KindGet:
		w.res.OKGets++
		h.Got = res.Siblings
		c.ctx[h.Key] = kvcore.Versions(res.Siblings)
	default:
		w.res.OKPuts++
		if w.rb != nil {
			c.ctx[h.Key] = []kvcore.Version{h.Put.Version} // read-modify-write on its own writes
		}
	}
	if w.rb != nil {
		w.rb.finishOp(i)
	}
	// Post read repairs (Ready again: succeed may have queued them).
	for _, s := range c.op.Ready() {
		w.post(simMsg{toServer: true, server: s.To, client: i, send: s, vc: w.clientVC(i)})
	}
	c.op.Advance()
	c.sess.Finish(res)
	c.op = nil
	c.nextStart = w.tick + w.rng.IntN(4)
}

func (w *simWorld) event() uint64 { w.events++; return w.events }

// checkHistory is the register check per key: every successful GET returns,
// for every PUT acknowledged before the GET began, its version or one that
// descends from it (Checked pairs, Stale misses, StaleGets GETs with a
// miss); and every value a GET returns was written by a PUT of that key,
// under that version, begun before the GET ended (no value from nowhere).
func checkHistory(hist []histOp, res *simResult) error {
	type written struct {
		start uint64
		value []byte
	}
	byVersion := map[string]map[string]written{} // key → version → put
	for _, h := range hist {
		if h.Kind != kvcore.KindPut {
			continue
		}
		if byVersion[h.Key] == nil {
			byVersion[h.Key] = map[string]written{}
		}
		byVersion[h.Key][h.Put.Version.String()] = written{h.Start, h.Put.Value}
	}
	for _, g := range hist {
		if g.Kind != kvcore.KindGet || !g.OK {
			continue
		}
		for _, s := range g.Got {
			p, ok := byVersion[g.Key][s.Version.String()]
			if !ok || p.start > g.End || string(p.value) != string(s.Value) {
				return fmt.Errorf("GET %s by c%d returned %s=%q, which no earlier PUT wrote", g.Key, g.Client, s.Version, s.Value)
			}
		}
		stale := false
		for _, p := range hist {
			if p.Kind != kvcore.KindPut || !p.OK || p.Key != g.Key || p.End >= g.Start {
				continue
			}
			res.Checked++
			if !kvcore.CoveredBy(p.Put.Version, g.Got) {
				res.Stale++
				stale = true
			}
		}
		if stale {
			res.StaleGets++
		}
	}
	return nil
}

func historyHash(hist []histOp) uint64 {
	h := fnv.New64a()
	for _, o := range hist {
		fmt.Fprintf(h, "%d %s %s %d %d %v %s %q|", o.Client, o.Kind, o.Key, o.Start, o.End, o.OK, o.Put.Version, o.Put.Value)
		for _, s := range o.Got {
			fmt.Fprintf(h, "%s=%q,", s.Version, s.Value)
		}
	}
	return h.Sum64()
}

func simSeedList(n int) []uint64 {
	if *simSeed != 0 {
		return []uint64{*simSeed}
	}
	if raceEnabled {
		n = min(n, 2)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// TestSimQuorum is the deterministic simulation of §II-B's consistency
// claim, under message delay, loss and duplication, client–server
// partitions and server crashes (kill -9 with unsynced bytes lost):
//
//   - with W + R > N and W > N/2 (N3R2W2, N3R1W3, N2R1W2, N5R3W3), every GET
//     returns every PUT acknowledged before it began, or a descendant: zero
//     stale reads, over thousands of checked (PUT, GET) pairs;
//   - with W + R ≤ N (N3R1W1, the paper's eventual setting) stale reads
//     happen, and the test reports how often.
//
// A failure prints the seed; -kv.sim.seed=N replays it exactly.
func TestSimQuorum(t *testing.T) {
	for _, q := range []kvcore.Quorum{simQuorum(3, 2, 2), simQuorum(3, 1, 3), simQuorum(2, 1, 2), simQuorum(5, 3, 3), simQuorum(3, 1, 1)} {
		t.Run(q.String(), func(t *testing.T) {
			var total simResult
			for _, seed := range simSeedList(*simSeeds) {
				res, hist := runSim(t, defaultSimConfig(seed, q))
				if err := checkHistory(hist, &res); err != nil {
					t.Fatalf("seed %d: %v\nreplay: go test ./internal/kv -run 'TestSimQuorum/%s' -kv.sim.seed=%d", seed, err, q, seed)
				}
				if q.Sequential() && res.Stale > 0 {
					t.Fatalf("seed %d: %d stale reads with %s (W+R>N)\nreplay: go test ./internal/kv -run 'TestSimQuorum/%s' -kv.sim.seed=%d",
						seed, res.Stale, q, q, seed)
				}
				addResult(&total, res)
			}
			t.Logf("%s: %s; stale GETs %.2f%% of successful GETs", q, total, 100*float64(total.StaleGets)/float64(max(1, total.OKGets)))
			if total.Checked < 1000*len(simSeedList(*simSeeds))/6 || total.Crashes == 0 || total.Partitions == 0 {
				t.Fatalf("the simulation checked too little: %s", total)
			}
			if !q.Sequential() && *simSeed == 0 && total.StaleGets == 0 {
				t.Fatalf("%s (W+R≤N) never read stale data: the simulation does not exercise it", q)
			}
		})
	}
}

// TestSimCheckerSeesLostWrites: the same simulation with fsync off, where a
// crash loses acknowledged PUTs, must report stale reads even with N3R2W2:
// the register check can fail.
func TestSimCheckerSeesLostWrites(t *testing.T) {
	var total simResult
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := defaultSimConfig(seed, simQuorum(3, 2, 2))
		cfg.Unsafe, cfg.CrashEvery, cfg.DownTicks = true, 40, 10
		res, hist := runSim(t, cfg)
		if err := checkHistory(hist, &res); err != nil {
			t.Fatal(err)
		}
		addResult(&total, res)
	}
	if total.Stale == 0 {
		t.Fatalf("no stale read detected although crashes lost unsynced PUTs: %s", total)
	}
	t.Logf("without fsync: %s", total)
}

// TestSimReplays: one seed run twice gives the same history, bit for bit.
func TestSimReplays(t *testing.T) {
	cfg := defaultSimConfig(42, simQuorum(3, 2, 2))
	cfg.OpsPerClient = 40
	a, _ := runSim(t, cfg)
	b, _ := runSim(t, cfg)
	if a.Hash != b.Hash || a.String() != b.String() {
		t.Fatalf("seed 42 diverged:\n%s %x\n%s %x", a, a.Hash, b, b.Hash)
	}
}

func addResult(t *simResult, r simResult) {
	t.Ops += r.Ops
	t.OKGets += r.OKGets
	t.OKPuts += r.OKPuts
	t.Failed += r.Failed
	t.Checked += r.Checked
	t.Stale += r.Stale
	t.StaleGets += r.StaleGets
	t.Crashes += r.Crashes
	t.Partitions += r.Partitions
	t.Dropped += r.Dropped
	t.Round2 += r.Round2
	t.Repairs += r.Repairs
	t.SiblingRefusal += r.SiblingRefusal
}
