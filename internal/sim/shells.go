package sim

import (
	"fmt"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// The gatekeepers are the engine's own shells (gatekeeper.Shell): the code
// weft serve runs for clock sync, stamps, read points, commits and their
// commit sections, resolve and hand-off, NOPs and notes, node programs and
// moves. Only their links are the simulation's: gkEnv schedules every
// yield point of the shell as an event (so a sync's loads, a commit's
// commit section and its resolve happen at times the seed draws, with
// other events in between), and carries entries, batches, notes and
// announces over the simulated network.

// gkEnv is gatekeeper g of server s's links.
type gkEnv struct {
	w *world
	s *server
	g int
}

var _ gatekeeper.Env = gkEnv{}

// Go runs the shell's next step at a time the seed draws: a sync's next
// load up to SyncLagMax/gatekeepers ticks later (one in eight up to
// SyncLagMax: a goroutine preempted inside its sync), its stamp after the
// last load at once or (one in four) as long after, a commit section after its
// commit delay (or at once without one; an epoch change may come first,
// reconfig.go), a resolve after resolveDelay. A step of a process that died
// is dropped, as the goroutine running it would be.
func (e gkEnv) Go(p gatekeeper.Point, _, _ int, next gatekeeper.Step) {
	w, s := e.w, e.s
	fn := next.Run
	live := func() {
		if w.up(s) && !s.gkDown(e.g) {
			fn()
		}
	}
	switch p {
	case gatekeeper.PointStamp:
		if w.rng.IntN(4) != 0 {
			fn() // most stamps follow their last load at once
			return
		}
		w.after(int64(w.rng.IntN(w.cfg.SyncLagMax/w.cfg.Gatekeepers+1)), live)
	case gatekeeper.PointSyncLoad:
		lag := w.cfg.SyncLagMax / w.cfg.Gatekeepers
		if w.rng.IntN(8) == 0 {
			lag = w.cfg.SyncLagMax
		}
		w.after(int64(w.rng.IntN(lag+1)), live)
	case gatekeeper.PointCritical:
		pc := &pendingCommit{s: s, fn: fn}
		if w.holdCritical != nil {
			w.holdCritical(pc)
			return
		}
		if w.cfg.ReconfigEvery == 0 && w.cfg.CommitDelayMax == 0 {
			w.critical(pc) // in the same event, as before reconfigurations existed
			return
		}
		// On its way to the store: an epoch change may come first (reconfig).
		w.addPending(s, pc)
		w.after(int64(w.rng.IntN(max(w.cfg.DelayMax, w.cfg.CommitDelayMax))), func() {
			if !pc.zombie {
				w.critical(pc)
			}
		})
	case gatekeeper.PointResolve:
		if w.holdResolve != nil {
			w.holdResolve(live)
			return
		}
		w.after(w.resolveDelay(), live)
	case gatekeeper.PointGCInflight:
		w.after(int64(w.rng.IntN(w.cfg.DelayMax+1)), live) // other events come between two reads of the pass
	default:
		fn()
	}
}

func (e gkEnv) Deliver(shard uint32, en gatekeeper.Entry) {
	e.w.sendEntry(e.s, e.g, gatekeeper.Delivery{Shard: shard, Entry: en})
}

// Batch sends a program's batch from the gatekeeper to its shard.
func (e gkEnv) Batch(stamp vclock.Stamp, b nodeprog.Batch) {
	e.w.sendBatch(e.s, gkNode(e.g), shard.ProgMsg{GK: e.g, Stamp: stamp, Batch: b})
}

// Finish tells a shard's runner that a program is over.
func (e gkEnv) Finish(sh int, prog nodeprog.ProgID) {
	w, s := e.w, e.s
	n := s.shards[sh]
	w.link(s, gkNode(e.g), shardID(sh), func() {
		n.Push(shard.FinishMsg{Prog: prog})
		w.stepShard(s, n)
	})
}

// Noted sends a note to a shard (every shard when sh < 0) whose channel
// from this gatekeeper has nothing in transit: the entries sent before it
// have all arrived, and later ones follow its clock. Notes are a one-process
// optimisation: only with Config.Notes.
func (e gkEnv) Noted(sh int, c *vclock.Clock) {
	w, s := e.w, e.s
	if !w.cfg.Notes {
		return
	}
	for _, n := range s.shards {
		if sh >= 0 && n.id != sh || s.inTransit[[2]int{e.g, n.id}] > 0 {
			continue
		}
		w.stats.Notes++
		w.link(s, gkNode(e.g), shardID(n.id), func() {
			n.notes[e.g] = c
			w.stepShard(s, n)
		})
	}
}

// Announce: answers wait for the peers' clocks (cluster mode).
func (e gkEnv) Announce() { e.w.announceSoon(e.s, e.g) }

// Placement: the server's directory.

func (s *server) Dir() *txn.Directory { return s.dir }

// Checked refuses nothing: the gatekeepers share the directory, and the
// commit section asks Current.
func (*server) Checked(store.Txn, *txn.Directory, *txn.Result) error { return nil }

func (s *server) Current(d *txn.Directory) bool { return s.movesInFlight == 0 && s.dir == d }

func (s *server) BeginMove() { s.movesInFlight++ }

func (s *server) EndMove(u txn.Unit, home *txn.Home) {
	s.movesInFlight--
	if home == nil {
		return
	}
	d, err := s.dir.With(u, *home)
	if err != nil {
		panic(fmt.Sprintf("sim: move %s: %v", u, err))
	}
	s.dir = d
	s.w.stats.Moves++
}

// copyPlacement is a gatekeeper's own directory copy in cluster mode (the
// cluster's gatekeeper.DirCopy, which routes, checks and adopts); the
// server's dir, what the checkers compare the shards with and the
// shards' placement, follows the store's directory as moves commit.
type copyPlacement struct {
	*gatekeeper.DirCopy
	s *server
}

func (p copyPlacement) BeginMove() { p.DirCopy.BeginMove(); p.s.BeginMove() }

func (p copyPlacement) EndMove(u txn.Unit, home *txn.Home) {
	p.DirCopy.EndMove(u, home)
	p.s.EndMove(u, home)
}

// dirOf is the directory gatekeeper g routes by: its own copy in cluster
// mode, else the server's.
func (s *server) dirOf(g int) *txn.Directory {
	if s.copies != nil {
		return s.copies[g].Dir()
	}
	return s.dir
}

// reloadCopy reads the store's directory into gatekeeper g's copy, as a
// cluster's gatekeeper does when a commit finds a unit moved.
func (s *server) reloadCopy(g int) {
	t, err := s.st.Begin()
	if err != nil {
		panic(err)
	}
	defer t.Discard()
	if err := s.copies[g].Reload(t, s.nshards); err != nil {
		panic(fmt.Sprintf("sim: reading the directory: %v", err))
	}
	s.w.stats.DirReloads++
}

// storeFailed is a gatekeeper shell's Failed: a commit's outcome is
// unknown, so its process stops and comes back in a new epoch whose shards
// rebuild from the store — weft serve restarted by its supervisor, a
// cluster's gatekeeper replaced by the coordinator (here the whole epoch
// restarts) — some ticks later, while the other gatekeepers go on.
func (w *world) storeFailed(s *server) {
	w.after(30+int64(w.rng.IntN(170)), func() {
		if w.srv == s {
			w.crash()
		}
	})
}

// shellPlants are the planted bugs of cfg that live in the gatekeeper
// shells.
func shellPlants(cfg Config) gatekeeper.Plants {
	return gatekeeper.Plants{BadDeclare: cfg.PlantBadDeclare, NoFence: cfg.PlantNoFence, NoUnitCheck: cfg.PlantNoUnitCheck,
		PartialSync: cfg.PlantPartialSync, OwnCounterPoints: cfg.PlantPartialSync, StalePoints: cfg.PlantStalePoint,
		NoPointRecheck: cfg.PlantNoPointRecheck, NoHomeCheck: cfg.PlantNoHomeCheck, UnknownAsAbort: cfg.PlantUnknownAsAbort}
}

// newShells makes server s's gatekeepers: in one process a group in shared
// memory (clock sync, read points, notes); with AnnounceEvery, each alone
// in its process, answering once its peers merged (PeerAck).
func (w *world) newShells(s *server) {
	onePro := w.cfg.AnnounceEvery == 0
	plants := shellPlants(w.cfg)
	if onePro {
		s.group = gatekeeper.NewGroup(w.cfg.Gatekeepers, !w.cfg.ReadPoints, plants)
	}
	shared := new(bool) // one process: one store for every gatekeeper
	for i := 0; i < w.cfg.Gatekeepers; i++ {
		var st gatekeeper.Beginner = s.st
		if w.cfg.Postgres {
			failed := shared
			if !onePro {
				failed = new(bool) // a connection of its own
			}
			st = &pgStore{w: w, s: s, st: s.st, failed: failed}
		}
		s.stores = append(s.stores, st)
		var place gatekeeper.Placement = s
		if !onePro {
			c := gatekeeper.NewDirCopy(nil, plants) // read at boot
			s.copies = append(s.copies, c)
			place = copyPlacement{c, s}
		}
		s.gks = append(s.gks, gatekeeper.NewShell(gatekeeper.ShellConfig{
			Core: gatekeeper.Config{ID: uint32(i), Gatekeepers: w.cfg.Gatekeepers, Shards: s.nshards, Epoch: s.epoch,
				InflightMax: 64, PeerAck: !onePro && !w.cfg.PlantNoPeerAck, ReadPoints: w.cfg.ReadPoints && onePro},
			Group: s.group, Store: st, Oracle: s.oracle, Env: gkEnv{w: w, s: s, g: i}, Placement: place,
			Fence: true, Plants: plants, Failed: func(error) { w.storeFailed(s) }, Serving: w.serving(s, i),
		}))
		s.announcing = append(s.announcing, false)
	}
}

// sendBatch delivers a program batch to its shard.
func (w *world) sendBatch(s *server, from int, m shard.ProgMsg) {
	n := s.shards[m.Batch.Shard]
	w.link(s, from, shardID(n.id), func() {
		n.Push(m)
		w.stepShard(s, n)
	})
}

// stampNow takes a fresh stamp at gatekeeper g of the current server,
// running the world until the shell's sync is done (tests).
func (w *world) stampNow(g int) vclock.Stamp {
	var st vclock.Stamp
	done := false
	w.srv.gks[g].Stamp(func(s vclock.Stamp) { st, done = s, true })
	for !done {
		if !w.step() {
			panic("sim: a stamp never came")
		}
	}
	return st
}
