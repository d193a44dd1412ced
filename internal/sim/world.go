package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/shard"
	pstore "github.com/weft-db/weft/internal/store/pebble"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

var ctx = context.Background()

// event is something that happens at a logical time; ties run in the order
// they were scheduled, so a seed replays exactly.
type event struct {
	at  int64
	seq uint64
	fn  func()
}

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].at < e[j].at || (e[i].at == e[j].at && e[i].seq < e[j].seq)
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// world is one simulation: a seeded scheduler, a simulated network, the
// server (one process: gatekeepers, shards, Kronos, the store) and clients.
// Everything runs on the caller's goroutine.
type world struct {
	cfg    Config
	rng    *rand.Rand
	now    int64
	seq    uint64
	queue  events
	events int // events run

	srv   *server
	fs    *vfs.MemFS    // the store's disk; survives crashes as a crash clone
	st    *pstore.Store // the open store (nil while the process is down); reconfigurations keep it
	epoch uint64
	// nshards is the current configuration's shard count: cfg.Shards until a
	// reconfiguration adds shards.
	nshards int
	clients []*client
	rec     check.Recorder
	nextVal int64

	stopping bool // clients start no new operations

	// pgVersion counts commits through the PostgreSQL model (pgstore.go).
	pgVersion int
	// lingering are ended epochs' servers whose processes run on
	// (lease.go).
	lingering []*server

	// Reconfiguration (reconfig.go): old-epoch commits still on their way
	// to the store, whether clients are held for a graph check, the
	// clients held, and the graph-equals-store mismatches found.
	zombies       int
	reconfigArmed bool // a reconfiguration waits for the next commit in flight
	quiescing     bool
	parked        []*client
	graphDiffs    []string

	// holdCritical and holdResolve, when set (tests), take the shells'
	// commit sections and resolves instead of scheduling them.
	holdCritical func(*pendingCommit)
	holdResolve  func(fn func())
	// pointReads counts reads at read points of servers gone.
	pointReads int

	// faults
	faultsOn    bool
	partitioned []bool           // per client: its requests are lost
	deaf        []bool           // per client: replies to it are lost
	clogged     map[[2]int]int64 // link → time it unclogs
	stats       Stats
}

// Stats counts what a run did.
type Stats struct {
	Events, Ops, OK, Fail, Info        int
	Commits, Aborts, Reads, Crashes    int
	Partitions, NopRequests, Notes     int
	Duplicates, KronosCalls, Recovered int
	Programs, ProgramsOK, Clogs        int
	Announces                          int
	// Reconfigurations, old-epoch commits left to the fence (Zombies),
	// commits refused by the fence, zombies that committed anyway (only
	// with PlantNoFence), and graph-equals-store checks run.
	Reconfigs, Zombies, Fenced int
	ZombiesLanded, GraphChecks int
	ShardsAdded                int
	// PointReads are snapshots and programs stamped at a read point.
	PointReads int
	// Moves of placement units committed, moves aborted (the unit changed
	// under them), and reads and program hops a shard passed on because
	// their unit had moved (moves.go; the runner passes hops on).
	Moves, MoveAborts, Forwards int
	// DirReloads are gatekeepers' directory copies read again after a
	// commit found a unit moved (cluster mode).
	DirReloads int
	// Garbage collection (gc.go): passes, watermarks published, reads and
	// programs refused below the watermark.
	GCPasses, Watermarks, TooOld int
	// ReadsAfterAck are read-only transactions started at once after the
	// client's commit was acknowledged, through another gatekeeper.
	ReadsAfterAck int
	// The PostgreSQL store's behaviour (pgstore.go): failed attempts whose
	// hook ran, ambiguous COMMITs retried, commits refused as too old,
	// outcomes unknown (each followed by a restart).
	PgRetries, PgAmbiguous, PgTooOld, PgUnknown int
	// Leases (lease.go): epochs cut off from the coordinator, answers
	// refused because a lease lapsed, and answers given by a gatekeeper of
	// an epoch that had ended (0 unless a lease bug is planted), and
	// refusals by those (clients pinned to an ended epoch turned away).
	LeaseCuts, LeaseRefusals, LingerAnswers, LingerRefusals int
	// Single roles failing in cluster mode (rolefail.go), and the
	// members the coordinator replaced for them.
	GatekeeperCrashes, ShardCrashes, LinkCuts, Replacements int
}

// server is the process: it dies with a crash and comes back in a new epoch.
type server struct {
	epoch   uint64
	nshards int // the configuration's shard count (txn.ShardOf)
	// dir places vertices: the base placement on nshards shards and the
	// units moved since (moves.go), read from the store at boot and
	// changed by each move's commit section.
	dir *txn.Directory
	// movesInFlight counts moves stamped whose commit section has not run
	// (or not yet put them in dir): commits read the directory records
	// while it is not zero (gatekeeper.OrderCommit's current).
	movesInFlight int
	// pending are commits executed and declared whose store critical
	// section is a later event (only with reconfigurations: the window in
	// which an epoch change leaves them in flight).
	pending []*pendingCommit
	st      *pstore.Store
	oracle  *order.Local
	// gks are the gatekeepers' shells; group their shared memory in one
	// process (nil with AnnounceEvery: separate processes).
	gks   []*gatekeeper.Shell
	group *gatekeeper.Group
	// copies are the gatekeepers' own directory copies in cluster mode
	// (gatekeeper.DirCopy, as a cluster's gatekeeper has); nil in one
	// process, where they share dir.
	copies []*gatekeeper.DirCopy
	// stores are what each gatekeeper commits on: the Pebble store, or
	// with Config.Postgres the PostgreSQL model over it (pgstore.go).
	stores []gatekeeper.Beginner
	// Leases (lease.go): each gatekeeper's lease and the coordinator's
	// instant of its last grant; cut: the members are cut off from the
	// coordinator; lingering: the epoch ended and its processes run on.
	leases         []*coord.LeaseState
	lastGrant      []int64
	cut, lingering bool
	// Single roles failing (rolefail.go): nodes crashed alone, links cut
	// (by node ids), a replacement under way, and the gatekeeper (+1) the
	// coordinator condemned (0: none).
	down      map[int]bool
	cuts      map[[2]int]bool
	replacing bool
	condemned int
	shards    []*shardNode
	// inTransit counts entries sent and not yet delivered, per
	// (gatekeeper, shard): a note may only be sent on an empty channel.
	inTransit map[[2]int]int
	// Cluster mode (AnnounceEvery > 0): whether an announce is scheduled.
	announcing []bool
	w          *world
	// Garbage collection (gc.go): the clock samples and the watermark.
	samples   []gcSample
	watermark vclock.Clock
	nextRead  uint64
}

// shardNode is a shard: the engine's shard shell (shard.Shell) with the
// simulation's host, and what the simulation counts of it.
type shardNode struct {
	*shard.Shell
	id int
	// notes are the gatekeepers' notes that reached the shard, per
	// gatekeeper (the shell reads them at its next round: Host.Notes).
	notes []*vclock.Clock
	// sent counts write entries the gatekeepers emitted for this shard,
	// applied those it applied: equal once nothing is in flight to it.
	sent, applied int
}

func newWorld(cfg Config) (*world, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &world{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x51)), fs: vfs.NewCrashableMem(), nshards: cfg.Shards,
		faultsOn: true, partitioned: make([]bool, cfg.Clients), deaf: make([]bool, cfg.Clients), clogged: map[[2]int]int64{}}
	if err := w.start(); err != nil {
		return nil, err
	}
	if err := w.setup(); err != nil {
		return nil, err
	}
	for i := 0; i < cfg.Clients; i++ {
		c := &client{w: w, id: i, pinned: i%2 == 1}
		w.clients = append(w.clients, c)
		w.after(int64(w.rng.IntN(5)), c.next)
	}
	w.scheduleFaults()
	w.scheduleMoves()
	return w, nil
}

// after schedules fn d ticks from now.
func (w *world) after(d int64, fn func()) {
	w.seq++
	heap.Push(&w.queue, &event{at: w.now + d, seq: w.seq, fn: fn})
}

func (w *world) delay() int64 { return 1 + int64(w.rng.IntN(w.cfg.DelayMax)) }

// resolveDelay is the time between a commit becoming durable and its
// resolve: a few ticks, or up to ResolveDelayMax for one commit in four.
func (w *world) resolveDelay() int64 {
	if w.cfg.ResolveDelayMax > 0 && w.rng.IntN(4) == 0 {
		return int64(w.rng.IntN(w.cfg.ResolveDelayMax + 1))
	}
	return int64(w.rng.IntN(3))
}

// Node ids for links inside the server.
func gkNode(g int) int  { return g }
func shardID(s int) int { return 1000 + s }

// linkDelay is the delay of a message from node a to node b: the network's
// random delay, or, while the link is clogged, until it unclogs (the
// message is held, as TCP holds bytes through a partition).
func (w *world) linkDelay(a, b int) int64 {
	d := w.delay()
	if until, ok := w.clogged[[2]int{a, b}]; ok && until > w.now+d {
		d = until - w.now + int64(w.rng.IntN(w.cfg.DelayMax))
	}
	return d
}

// link runs fn on node b of s after a message from node a took its
// delay, unless s's processes stopped or the message was lost: either
// node crashed alone, or the link between them is cut (rolefail.go).
func (w *world) link(s *server, a, b int, fn func()) { w.linkAt(s, a, b, w.linkDelay(a, b), fn) }

// linkAt is link with the message's delay given.
func (w *world) linkAt(s *server, a, b int, delay int64, fn func()) {
	w.after(delay, func() {
		if w.up(s) && !s.linkDown(a, b) {
			fn()
		}
	})
}

// swizzle is FoundationDB's swizzle-clog: clog a random subset of the
// server's internal links one after another, then unclog them in a random
// order (each link's clog ends at its own random time).
func (w *world) swizzle() {
	if !w.faultsOn {
		return
	}
	w.stats.Clogs++
	var links [][2]int
	for g := 0; g < w.cfg.Gatekeepers; g++ {
		for s := 0; s < w.nshards; s++ {
			links = append(links, [2]int{gkNode(g), shardID(s)}, [2]int{shardID(s), gkNode(g)})
		}
	}
	for s := 0; s < w.nshards; s++ {
		for t := 0; t < w.nshards; t++ {
			if s != t {
				links = append(links, [2]int{shardID(s), shardID(t)})
			}
		}
	}
	w.rng.Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
	links = links[:1+w.rng.IntN(len(links))]
	start := w.now
	for i, l := range links {
		w.clogged[l] = start + int64(i*w.rng.IntN(10)) + 50 + int64(w.rng.IntN(400))
	}
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: fmt.Sprintf("swizzle-clog %d links", len(links)), Time: w.now})
	w.after(int64(1+w.rng.IntN(2*w.cfg.ClogEvery)), w.swizzle)
}

// step runs the next event; false when nothing is scheduled.
func (w *world) step() bool {
	if len(w.queue) == 0 {
		return false
	}
	e := heap.Pop(&w.queue).(*event)
	w.now = e.at
	w.events++
	e.fn()
	if w.quiescing && w.quiescent() {
		w.resume()
	}
	return true
}

// start opens the store on the (crash-cloned) disk and rebuilds the
// shards from it in a new epoch, as weft serve does on restart.
func (w *world) start() error {
	w.epoch++
	o := pstore.DefaultOptions()
	o.FS, o.Sync = w.fs, !w.cfg.PlantNoSync
	o.CacheBytes, o.MemTableBytes = 1<<20, 1<<20
	st, err := pstore.Open("db", o)
	if err != nil {
		return fmt.Errorf("sim: opening the store: %w", err)
	}
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		return err
	}
	return w.boot(st, oracle)
}

// boot starts the server of epoch w.epoch on an open store: gatekeepers
// with fresh clocks, shards with the configuration's count, which raise the
// store's epoch fence (gatekeeper.RaiseFence, as the engine's shards and
// gatekeepers do before they read the store) and rebuild from it. A
// restart after a crash and a reconfiguration both come here.
func (w *world) boot(st *pstore.Store, oracle *order.Local) error {
	s := &server{epoch: w.epoch, nshards: w.nshards, st: st, oracle: oracle, inTransit: map[[2]int]int{}, w: w}
	var shardOracle order.Oracle = oracle
	if w.cfg.PlantSkipRefine {
		shardOracle = skipRefine{Oracle: oracle, rng: w.rng}
	}
	w.newShells(s)
	for i := 0; i < s.nshards; i++ {
		n := &shardNode{id: i, notes: make([]*vclock.Clock, w.cfg.Gatekeepers)}
		sh, err := shard.NewShell(shard.ShellConfig{ID: i, Gatekeepers: w.cfg.Gatekeepers, Host: shardHost{w: w, s: s, n: n},
			Registry: registry, Resolver: order.NewResolver(shardOracle, max(1, w.cfg.OracleCacheMax)),
			Graph: graph.DefaultConfig(), ReorderMax: 1 << 12, TasksMax: 1 << 12, NoRefuseBelow: w.cfg.PlantNoRefuseBelow})
		if err != nil {
			return err
		}
		n.Shell = sh
		s.shards = append(s.shards, n)
	}
	// The fence first: an old-epoch commit either is in the store the
	// rebuild reads, or never commits (unless PlantNoFence skips the check).
	if err := gatekeeper.RaiseFence(ctx, st, w.epoch); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	t, err := st.Begin()
	if err != nil {
		return err
	}
	defer t.Discard()
	start := vclock.Stamp{Clock: vclock.New(w.epoch, w.cfg.Gatekeepers)}
	// The directory's base is the shard count: runs with moves never
	// reconfigure, and a reconfiguration re-places everything by count.
	if s.dir, err = txn.ReadDirectory(t, uint32(s.nshards), uint32(s.nshards)); err != nil {
		return fmt.Errorf("sim: reading the directory: %w", err)
	}
	for _, c := range s.copies { // each gatekeeper's own, read as a cluster's is
		if err := c.Reload(t, s.nshards); err != nil {
			return fmt.Errorf("sim: reading the directory: %w", err)
		}
	}
	if err := shard.Recover(t, start, func(h string) shard.Partition {
		w.stats.Recovered++
		return s.shards[s.dir.ShardOf(h)].Partition()
	}); err != nil {
		return fmt.Errorf("sim: recovery: %w", err)
	}
	for _, n := range s.shards {
		n.Units = shard.RecoveredUnits(uint32(n.id), s.dir, start)
		n.Dir = func() *txn.Directory { return s.dir }
	}
	w.retire(w.srv)
	w.srv, w.st = s, st
	w.startLeases(s)
	w.scheduleGC(s)
	if w.cfg.AnnounceEvery > 0 {
		for g := range s.gks {
			w.after(int64(w.rng.IntN(w.cfg.AnnounceEvery)), func() { w.announce(s, g) })
		}
	}
	return nil
}

// announce is gatekeeper g sending its clock to every peer (each copy over
// its own link, so they arrive at different times), every AnnounceEvery
// ticks while its process lives.
func (w *world) announce(s *server, g int) {
	if !w.up(s) {
		return
	}
	w.announceAll(s, g, false)
	w.after(int64(w.cfg.AnnounceEvery), func() { w.announce(s, g) })
}

// announceAll sends g's clock to every peer; with reply, each answers at
// once with its own (so g learns they merged it: answers held for
// stability go out a round trip later instead of up to τ later).
func (w *world) announceAll(s *server, g int, reply bool) {
	for j := range s.gks {
		if j != g {
			w.announceTo(s, g, j, reply)
		}
	}
}

func (w *world) announceTo(s *server, g, j int, reply bool) {
	w.stats.Announces++
	c := s.gks[g].Clock()
	w.link(s, gkNode(g), gkNode(j), func() {
		s.gks[j].PeerClock(uint32(g), c)
		if reply {
			w.announceTo(s, j, g, false)
		}
	})
}

// announceSoon schedules one announce-with-replies by g in the next tick,
// unless one is scheduled already.
func (w *world) announceSoon(s *server, g int) {
	if s.announcing[g] {
		return
	}
	s.announcing[g] = true
	w.after(1, func() {
		if w.up(s) {
			s.announcing[g] = false
			w.announceAll(s, g, true)
		}
	})
}

// retire counts what a server that is going away did.
func (w *world) retire(s *server) {
	if s != nil && s.group != nil {
		w.pointReads += int(s.group.PointReads())
	}
}

// crash kills the process: memory is lost, the disk keeps what was synced
// (and, of what was not, a random part).
func (w *world) crash() {
	if w.srv == nil {
		return
	}
	w.stats.Crashes++
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: "crash", Time: w.now})
	clone := w.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: w.rng.IntN(101),
		RNG: rand.New(rand.NewPCG(w.rng.Uint64(), 0))})
	_ = w.srv.st.Close() // its goroutines stop; what it wrote after the clone is gone with it
	w.endLingering()
	w.retire(w.srv)
	w.srv, w.st, w.fs = nil, nil, clone
	w.after(20+int64(w.rng.IntN(100)), w.restart)
}

func (w *world) restart() {
	if w.srv != nil {
		return
	}
	if err := w.start(); err != nil {
		panic(err) // a store that does not reopen after a crash is a bug worth stopping for
	}
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: "restart", Time: w.now})
}

// scheduleFaults plans the next crash and partition while faults are on.
func (w *world) scheduleFaults() {
	if w.cfg.CrashEvery > 0 {
		w.after(int64(w.rng.IntN(2*w.cfg.CrashEvery)), func() {
			if w.faultsOn {
				w.crash()
				w.scheduleCrashOnly()
			}
		})
	}
	if w.cfg.PartitionEvery > 0 {
		w.after(int64(w.rng.IntN(2*w.cfg.PartitionEvery)), w.partition)
	}
	if w.cfg.ClogEvery > 0 {
		w.after(int64(w.rng.IntN(2*w.cfg.ClogEvery)), w.swizzle)
	}
	if w.cfg.ReconfigEvery > 0 {
		w.scheduleReconfig()
	}
	w.scheduleRoleFault()
}

func (w *world) scheduleCrashOnly() {
	w.after(int64(1+w.rng.IntN(2*w.cfg.CrashEvery)), func() {
		if w.faultsOn {
			w.crash()
			w.scheduleCrashOnly()
		}
	})
}

// partition cuts a random set of clients off for a while.
func (w *world) partition() {
	if !w.faultsOn {
		return
	}
	w.stats.Partitions++
	var cut []int
	dir := []string{"both ways", "client→server", "server→client"}[w.rng.IntN(3)]
	for i := range w.partitioned {
		if w.rng.IntN(2) == 0 {
			w.partitioned[i] = dir != "server→client"
			w.deaf[i] = dir != "client→server"
			cut = append(cut, i)
		}
	}
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: fmt.Sprintf("partition %s %v", dir, cut), Time: w.now})
	w.after(50+int64(w.rng.IntN(300)), func() {
		for i := range w.partitioned {
			w.partitioned[i], w.deaf[i] = false, false
		}
		w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: "heal", Time: w.now})
		w.after(int64(w.rng.IntN(2*w.cfg.PartitionEvery)), w.partition)
	})
}

// heal ends all faults for the liveness phase.
func (w *world) heal() {
	w.faultsOn = false
	for i := range w.partitioned {
		w.partitioned[i], w.deaf[i] = false, false
	}
	clear(w.clogged)
	if w.srv == nil {
		w.restart()
	}
}

// toServer delivers fn on the server after a network delay, unless the
// client is partitioned or the server is down (then the request is lost).
func (w *world) toServer(c int, fn func(s *server)) {
	if w.partitioned[c] {
		return
	}
	if cl := w.clients[c]; cl.pinned && w.up(cl.srv) && cl.srv != w.srv {
		s := cl.srv // pinned to an epoch that ended without its knowing (lease.go)
		w.after(w.delay(), func() {
			if w.up(s) {
				fn(s)
			}
		})
		return
	}
	epoch := w.epoch
	w.after(w.delay(), func() {
		if s := w.srv; s != nil && s.epoch == epoch {
			w.clients[c].srv = s
			fn(s)
		}
	})
}

// toClient delivers a reply to client c after a network delay, unless
// replies to it are cut off by then.
func (w *world) toClient(c int, fn func()) {
	w.after(w.delay(), func() {
		if !w.deaf[c] {
			fn()
		}
	})
}

func (w *world) sendEntry(s *server, g int, d gatekeeper.Delivery) {
	if !d.Entry.Nop {
		s.shards[d.Shard].sent++
	}
	key := [2]int{g, int(d.Shard)}
	s.inTransit[key]++
	deliver := func(first bool) {
		if first {
			s.inTransit[key]--
		}
		n := s.shards[d.Shard]
		n.Push(d.Entry)
		w.stepShard(s, n)
	}
	w.link(s, gkNode(g), shardID(int(d.Shard)), func() { deliver(true) })
	if w.rng.Float64() < w.cfg.Duplicate {
		w.stats.Duplicates++
		w.linkAt(s, gkNode(g), shardID(int(d.Shard)), w.linkDelay(gkNode(g), shardID(int(d.Shard)))+int64(w.rng.IntN(w.cfg.DelayMax)), func() { deliver(false) })
	}
}

// stepShard runs a round of the shard's shell: its notes, its inbox, its
// core (the NOP requests go out through shardHost).
func (w *world) stepShard(s *server, n *shardNode) {
	if err := n.Round(); err != nil {
		panic(fmt.Sprintf("sim: shard %d at %d: %v\n%s", n.id, w.now, err, n.Core()))
	}
}

// shardHost is a shard's links in the simulation.
type shardHost struct {
	w *world
	s *server
	n *shardNode
}

// RequestNop sends the request to the gatekeeper over the network; the
// answer (a NOP or a note) comes back as a message.
func (h shardHost) RequestNop(gk, _ int, c vclock.Clock) bool {
	w, s, n := h.w, h.s, h.n
	w.stats.NopRequests++
	w.link(s, shardID(n.id), gkNode(gk), func() { w.nopRequest(s, gk, n, c) })
	return false
}

func (h shardHost) Notes(gk, _ int) (*vclock.Clock, *vclock.Clock) { return nil, h.n.notes[gk] }

// Report carries a batch's report back to the program's gatekeeper.
func (h shardHost) Report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch) {
	w, s, n := h.w, h.s, h.n
	g := s.gks[gk]
	w.link(s, shardID(n.id), gkNode(gk), func() { g.Report(rep, sentTo) })
}

// SendHop carries a batch to its shard.
func (h shardHost) SendHop(gk int, stamp vclock.Stamp, b nodeprog.Batch) {
	h.w.sendBatch(h.s, shardID(h.n.id), shard.ProgMsg{GK: gk, Stamp: stamp, Batch: b})
}

func (h shardHost) ShardOf(v string) int { return int(h.s.dir.ShardOf(v)) }
func (h shardHost) Applied()             { h.n.applied++ }
func (h shardHost) Stopping() bool       { return false }

// Fail: a shard's fatal error is a failure of the seed.
func (h shardHost) Fail(err error) { panic(fmt.Sprintf("sim: shard %d: %v", h.n.id, err)) }

// nopRequest is gatekeeper g answering shard n: with a note when it can
// and nothing of its is in flight to n (Notes), else with a NOP.
func (w *world) nopRequest(s *server, g int, n *shardNode, c vclock.Clock) {
	s.gks[g].RequestNop(uint32(n.id), c, w.cfg.Notes && s.inTransit[[2]int{g, n.id}] == 0)
}

// skipRefine is the planted bug PlantSkipRefine: a shard breaks ties
// between concurrent stamps on its own (a coin, drawn from the seed)
// instead of asking Kronos, so shards may disagree on the order.
type skipRefine struct {
	order.Oracle
	rng *rand.Rand
}

func (s skipRefine) Assign(_ context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error) {
	out := make([]kronos.AssignResult, len(as))
	for i := range as {
		out[i].Order = kronos.Before
		if s.rng.IntN(2) == 0 {
			out[i].Order = kronos.After
		}
	}
	return out, nil
}

var errLiveness = errors.New("sim: liveness")
