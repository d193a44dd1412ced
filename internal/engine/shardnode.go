package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

var ctxBackground = context.Background()

// shardNode runs one shard: its scheduling core, its partition of the graph,
// its alias index and its node-program runner, on one goroutine fed by an
// inbox. Pushing to the inbox never blocks (gatekeepers push while holding
// their lock); its size is bounded by admission control upstream: in-flight
// transactions per gatekeeper, programs per gatekeeper, hops per program.
type shardNode struct {
	host   shardHost
	id     int
	core   *shard.Core
	g      *graph.Graph
	alias  *graph.AliasIndex
	runner *nodeprog.Runner
	// units is the shard's history of moved placement units (its
	// forwarding pointers), and dir the current placement directory; both
	// nil where units never move (a cluster's shard process).
	units *shard.Units
	dir   func() *txn.Directory

	mu     sync.Mutex
	inbox  []any
	signal chan struct{}

	statsMu sync.Mutex
	stats   graph.Stats
	// notes are the delivered notes last given to the core, per gatekeeper.
	notes, shardNotes []*vclock.Clock
	// pos is, per gatekeeper queue, a stamp no later than any entry the
	// queue will still execute (its head, else its last entry): the GC
	// watermark may not pass it.
	pos []vclock.Stamp
	// collected is the watermark the partition was last collected at
	// (gcMsg); a read or program batch at a stamp not at or after it is
	// refused (run), since versions it would see may be gone.
	collected vclock.Clock
	// refuseBelow is false only where a bug is planted on purpose
	// (plants.noShardWatermark).
	refuseBelow bool
}

// shardHost is what a shard needs from the rest of the system: in weft
// serve the DB (localHost), in a cluster the shard process's links to
// gatekeepers and other shards.
type shardHost interface {
	// requestNop asks gatekeeper gk to move its queue at this shard past
	// c; true means it answered with a note already published (notes), so
	// the shard should run another round.
	requestNop(gk, shard int, c vclock.Clock) (noted bool)
	// notes returns gatekeeper gk's published notes, global and for this
	// shard (nil: none; only one process has them).
	notes(gk, shard int) (global, forShard *vclock.Clock)
	// report hands a shard's report on a program batch to the program's
	// coordinator at gatekeeper gk; sentTo are the batches it sends on.
	report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch)
	// hop sends a program batch on to its shard.
	hop(gk int, stamp vclock.Stamp, b nodeprog.Batch)
	shardOf(h string) int
	// applied counts a transaction applied; fail stops the system after a
	// shard's fatal error; stopping reports that the shard should return.
	applied()
	fail(err error)
	stopping() bool
}

// localHost is the shards' host in one process: the DB itself.
type localHost struct{ db *DB }

func (h localHost) requestNop(gk, shard int, c vclock.Clock) bool {
	return h.db.gks[gk].requestNop(uint32(shard), c)
}

func (h localHost) notes(gk, shard int) (*vclock.Clock, *vclock.Clock) {
	return h.db.delivered[gk].Load(), h.db.shardNotes[gk*h.db.cfg.Shards+shard].Load()
}

func (h localHost) report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch) {
	h.db.gks[gk].report(rep, sentTo)
}

func (h localHost) hop(gk int, stamp vclock.Stamp, b nodeprog.Batch) {
	h.db.shards[b.Shard].push(progMsg{gk: gk, stamp: stamp, batch: b})
}

func (h localHost) shardOf(v string) int { return h.db.shardOf(v) }
func (h localHost) applied()             { h.db.applied.Add(1) }
func (h localHost) fail(err error)       { h.db.fail(err) }
func (h localHost) stopping() bool       { return h.db.closing.Load() }

// Inbox messages besides gatekeeper.Entry.
type (
	progMsg struct {
		gk    int
		stamp vclock.Stamp
		batch nodeprog.Batch
	}
	finishMsg struct{ prog nodeprog.ProgID }
	readMsg   struct {
		stamp vclock.Stamp
		fn    func(r *reader) // runs on the shard goroutine when runnable
		w     *waiter         // told when fn ran, or why it could not
		// name, when set, must be this shard's at stamp: else fn does
		// not run and w gets a *movedError naming the shard to ask.
		name string
	}
	gcMsg struct{ watermark vclock.Stamp }
)

// reader is what a read task sees: the shard's graph at one stamp.
type reader struct {
	s   *shardNode
	ord *shard.ReadOrderer
}

// lookup is how a program sees this shard's vertices at s.
func (r *reader) lookup(s vclock.Stamp) func(string) (nodeprog.Vertex, bool) {
	return func(h string) (nodeprog.Vertex, bool) {
		v, ok := r.s.g.View(h, s, r.ord)
		if !ok {
			return nil, false
		}
		return shard.ProgramVertex(v), true
	}
}

func newShardNode(db *DB, id int) (*shardNode, error) {
	return newShardNodeWith(localHost{db}, db.reg, id, db.cfg, newResolver(db))
}

// newShardNodeWith makes shard id of a system of cfg.Gatekeepers
// gatekeepers, ordering through res.
func newShardNodeWith(host shardHost, reg *nodeprog.Registry, id int, cfg Config, res *order.Resolver) (*shardNode, error) {
	r, err := nodeprog.NewRunner(reg, id, nodeprog.Config{})
	if err != nil {
		return nil, err
	}
	gcfg := graph.DefaultConfig()
	gcfg.KeepHistory = cfg.KeepHistory
	s := &shardNode{
		host: host, id: id, g: graph.New(gcfg), alias: graph.NewAliasIndex(gcfg), runner: r,
		signal: make(chan struct{}, 1), pos: make([]vclock.Stamp, cfg.Gatekeepers),
		notes: make([]*vclock.Clock, cfg.Gatekeepers), shardNotes: make([]*vclock.Clock, cfg.Gatekeepers),
		refuseBelow: !cfg.plants.noShardWatermark,
	}
	s.core = shard.New(shard.Config{ID: uint32(id), Gatekeepers: cfg.Gatekeepers, ReorderMax: 1 << 16, TasksMax: cfg.ShardTasksMax},
		res)
	s.core.Apply = s.apply
	s.core.Run = s.run
	return s, nil
}

func (s *shardNode) push(m any) {
	s.mu.Lock()
	s.inbox = append(s.inbox, m)
	s.mu.Unlock()
	s.wake()
}

// wake makes the shard run a round: drain its inbox, read the delivered
// notes, step its core.
func (s *shardNode) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// loop processes the inbox until the host stops.
func (s *shardNode) loop() {
	var batch []any
	for {
		<-s.signal // Close sets closing, then wakes every shard
		if s.host.stopping() {
			return
		}
		s.loadNotes()
		s.mu.Lock()
		batch, s.inbox = s.inbox, batch[:0]
		s.mu.Unlock()
		for i, m := range batch {
			if err := s.handle(m); err != nil {
				s.host.fail(fmt.Errorf("shard %d: %w", s.id, err))
				return
			}
			batch[i] = nil
		}
		if err := s.step(); err != nil {
			s.host.fail(fmt.Errorf("shard %d: %w", s.id, err))
			return
		}
		s.publish()
	}
}

// loadNotes gives the core the gatekeepers' delivered notes. They are read
// before the inbox is drained, so the entries they cover are in the batch
// (see gkNode.noteDelivered).
func (s *shardNode) loadNotes() {
	for gk := range s.notes {
		global, forShard := s.host.notes(gk, s.id)
		if c := global; c != nil && c != s.notes[gk] {
			s.notes[gk] = c
			s.core.Complete(uint32(gk), *c)
		}
		if c := forShard; c != nil && c != s.shardNotes[gk] {
			s.shardNotes[gk] = c
			s.core.Complete(uint32(gk), *c)
		}
	}
}

// step runs the core once and sends its NOP requests. An idle gatekeeper
// answers with a note instead of a NOP; the shard then wakes itself, and
// the next round reads the note before draining the inbox, so entries the
// gatekeeper pushed before the note reach the core first.
func (s *shardNode) step() error {
	if err := s.core.Step(ctxBackground); err != nil {
		return err
	}
	for _, r := range s.core.NopRequests() {
		if s.host.requestNop(int(r.GK), s.id, r.Clock) {
			s.wake()
		}
	}
	return nil
}

func (s *shardNode) handle(m any) error {
	switch m := m.(type) {
	case gatekeeper.Entry:
		return s.core.Deliver(m)
	case progMsg:
		if err := s.core.Submit(shard.Task{Stamp: m.stamp, Payload: m}); err != nil {
			// Overload fails the program, not the shard.
			s.host.report(m.gk, nodeprog.FailReport(m.batch, s.id, fmt.Errorf("%w: shard %d: %v", nodeprog.ErrOverloaded, s.id, err)), nil)
		}
	case readMsg:
		if err := s.core.Submit(shard.Task{Stamp: m.stamp, Payload: m}); err != nil {
			m.w.err = fmt.Errorf("%w: shard %d: %v", ErrOverloaded, s.id, err)
			m.w.ch <- struct{}{}
		}
	case wireHopMsg:
		b, err := s.runner.DecodeBatch(m.data)
		if errors.Is(err, nodeprog.ErrFinished) {
			return nil // a late batch of a finished program
		}
		if err != nil {
			// Tell the coordinator, if the batch says whose it is.
			var hdr struct {
				ID   nodeprog.BatchID `json:"id"`
				Prog nodeprog.ProgID  `json:"prog"`
			}
			if json.Unmarshal(m.data, &hdr) == nil {
				s.host.report(m.gk, nodeprog.FailReport(nodeprog.Batch{ID: hdr.ID, Prog: hdr.Prog}, s.id,
					fmt.Errorf("%w: shard %d: %v", nodeprog.ErrFailed, s.id, err)), nil)
			}
			return nil
		}
		return s.handle(progMsg{gk: m.gk, stamp: m.stamp, batch: b})
	case finishMsg:
		s.runner.Finish(m.prog)
	case gcMsg:
		s.g.Collect(m.watermark)
		s.alias.Collect(m.watermark)
		s.collected = m.watermark.Clock
	default:
		return fmt.Errorf("unknown message %T", m)
	}
	return nil
}

func (s *shardNode) publish() {
	st := s.g.Counts()
	s.statsMu.Lock()
	s.stats = st
	s.core.Positions(s.pos)
	s.statsMu.Unlock()
}

// apply executes one transaction's operations for this shard.
func (s *shardNode) apply(e gatekeeper.Entry) error {
	var err error
	if s.units != nil {
		err = shard.ApplyPartition(shard.Partition{Graph: s.g, Alias: s.alias}, s.units, e.Ops, e.Stamp)
	} else {
		err = shard.Apply(s.g, s.alias, e.Ops, e.Stamp)
	}
	if err != nil {
		return err
	}
	s.host.applied()
	return nil
}

// run executes a runnable task at its stamp, unless the stamp is below
// the watermark the partition was collected at: the task then fails with
// ErrSnapshotTooOld. Gatekeepers keep the watermark below every read they
// registered, so only a read whose registration raced with the watermark
// (or a snapshot token older than the history kept) gets here.
func (s *shardNode) run(t shard.Task) error {
	if s.collected.Counters != nil && s.refuseBelow && !vclock.LessEq(s.collected, t.Stamp.Clock) {
		s.refuse(t)
		return nil
	}
	ord := &shard.ReadOrderer{Res: s.core.Resolver(), T: t.Stamp}
	switch m := t.Payload.(type) {
	case readMsg:
		if m.name != "" {
			if to := s.locate(m.name, t.Stamp, ord); to != s.id {
				m.w.err = &movedError{shard: to}
				m.w.ch <- struct{}{}
				break
			}
		}
		m.fn(&reader{s: s, ord: ord})
		m.w.ch <- struct{}{}
	case progMsg:
		s.runProgram(m, ord)
	}
	if ord.Err != nil {
		return ord.Err // the oracle failed: the shard cannot order safely
	}
	return nil
}

// refuse answers a task below the collected watermark.
func (s *shardNode) refuse(t shard.Task) {
	switch m := t.Payload.(type) {
	case readMsg:
		m.w.err = fmt.Errorf("%w: shard %d collected the versions below %s", ErrSnapshotTooOld, s.id, t.Stamp)
		m.w.ch <- struct{}{}
	case progMsg:
		s.host.report(m.gk, nodeprog.FailReport(m.batch, s.id,
			fmt.Errorf("%w: shard %d collected the versions below %s", nodeprog.ErrSnapshotTooOld, s.id, t.Stamp)), nil)
	}
}

func (s *shardNode) runProgram(m progMsg, ord *shard.ReadOrderer) {
	lookup := func(h string) (nodeprog.Vertex, bool) {
		v, ok := s.g.View(h, m.stamp, ord)
		if !ok {
			return nil, false
		}
		return shard.ProgramVertex(v), true
	}
	shardOf := s.host.shardOf
	if s.units != nil {
		shardOf = func(h string) int { return s.locate(h, m.stamp, ord) }
	}
	out, rep, err := s.runner.Run([]nodeprog.Batch{m.batch}, lookup, shardOf)
	if errors.Is(err, nodeprog.ErrFinished) {
		return
	}
	// Report before sending: the coordinator learns the destinations first,
	// so a program that ends early still finishes on every shard it reached.
	s.host.report(m.gk, rep, out)
	for _, b := range out {
		s.host.hop(m.gk, m.stamp, b)
	}
}

// locate is the shard that answers for name h at stamp t
// (shard.Units.Locate; the host's placement where units never move).
func (s *shardNode) locate(h string, t vclock.Stamp, ord *shard.ReadOrderer) int {
	if s.units == nil {
		return s.host.shardOf(h)
	}
	return int(s.units.Locate(h, t, ord, s.dir()))
}

// movedError answers a read sent to a shard that did not have the name's
// unit at the read's stamp.
type movedError struct{ shard int }

func (e *movedError) Error() string { return fmt.Sprintf("engine: moved to shard %d", e.shard) }
