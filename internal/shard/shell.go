package shard

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
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// The shard's shell (one per role, STYLE.md): the code around the Core that
// weft serve, a cluster's shard process and the simulation all run — an
// inbox of FIFO entries, reads, program batches, finishes and watermarks;
// rounds that read the gatekeepers' notes, drain the inbox into the core
// and step it; applying entries to the partition; running reads and
// program batches at their stamps (refused below the collected watermark,
// forwarded for units that moved); NOP requests, reports and hops through
// the Host. Push never blocks; a round runs on one goroutine at a time
// (Loop's, or the simulation's).

// Host is what a shard needs from the rest of its system: in weft serve
// the DB, in a cluster the shard process's links, in the simulation its
// network. Calls come from the round's goroutine.
type Host interface {
	// RequestNop asks gatekeeper gk to move its queue at this shard past
	// c; true means it answered with a note already published (Notes), so
	// the shard should run another round.
	RequestNop(gk, shard int, c vclock.Clock) (noted bool)
	// Notes returns gatekeeper gk's published notes, global and for this
	// shard (nil: none).
	Notes(gk, shard int) (global, forShard *vclock.Clock)
	// Report hands a shard's report on a program batch to the program's
	// coordinator at gatekeeper gk; sentTo are the batches it sends on.
	Report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch)
	// SendHop sends a program batch on to its shard.
	SendHop(gk int, stamp vclock.Stamp, b nodeprog.Batch)
	ShardOf(h string) int
	// Applied counts a transaction applied; Fail stops the system after a
	// shard's fatal error; Stopping reports that Loop should return.
	Applied()
	Fail(err error)
	Stopping() bool
}

// Errors a read's waiter may get (besides *MovedError).
var (
	// ErrTooOld: the versions below the read's stamp were collected.
	ErrTooOld = errors.New("shard: snapshot too old (its versions were garbage collected)")
)

// Inbox messages besides gatekeeper.Entry.
type (
	// ProgMsg is a program batch to run at Stamp, coordinated by GK.
	ProgMsg struct {
		GK    int
		Stamp vclock.Stamp
		Batch nodeprog.Batch
	}
	// WireHopMsg is a batch that arrived over the network: the round
	// decodes it (the runner compiles the program on first sight).
	WireHopMsg struct {
		GK    int
		Stamp vclock.Stamp
		Data  []byte
	}
	// FinishMsg releases a finished program's state.
	FinishMsg struct{ Prog nodeprog.ProgID }
	// ReadMsg runs Fn on the shard at Stamp once runnable, and tells W.
	// With Name set, Name must be this shard's at Stamp: else Fn does not
	// run and W gets a *MovedError naming the shard to ask.
	ReadMsg struct {
		Stamp vclock.Stamp
		Fn    func(r *Reader)
		W     *Waiter
		Name  string
	}
	// GCMsg collects the versions below Watermark.
	GCMsg struct{ Watermark vclock.Stamp }
)

// Waiter is how a shard tells a reader that its read ran (Err nil) or
// could not (Err set): one send on a one-slot channel, or a call of Then
// when set (the simulation). Waiters from NewWaiter are reused once their
// send has been received (PutWaiter).
type Waiter struct {
	Ch   chan struct{}
	Err  error
	Then func(err error)
}

func (w *Waiter) finish(err error) {
	if w.Then != nil {
		w.Then(err)
		return
	}
	w.Err = err
	w.Ch <- struct{}{}
}

var waiters = sync.Pool{New: func() any { return &Waiter{Ch: make(chan struct{}, 1)} }}

// NewWaiter returns a channel waiter from the pool.
func NewWaiter() *Waiter { return waiters.Get().(*Waiter) }

// PutWaiter returns a waiter whose send was received to the pool.
func PutWaiter(w *Waiter) {
	w.Err = nil
	waiters.Put(w)
}

// MovedError answers a read sent to a shard that did not have the name's
// unit at the read's stamp.
type MovedError struct{ Shard int }

func (e *MovedError) Error() string { return fmt.Sprintf("shard: moved to shard %d", e.Shard) }

// Reader is what a read task sees: the shard's graph at one stamp.
type Reader struct {
	S   *Shell
	Ord *ReadOrderer
}

// Lookup is how a program sees this shard's vertices at s.
func (r *Reader) Lookup(s vclock.Stamp) func(string) (nodeprog.Vertex, bool) {
	return func(h string) (nodeprog.Vertex, bool) {
		v, ok := r.S.G.View(h, s, r.Ord)
		if !ok {
			return nil, false
		}
		return ProgramVertex(v), true
	}
}

// ShellConfig configures a Shell.
type ShellConfig struct {
	ID, Gatekeepers int
	Host            Host
	Registry        *nodeprog.Registry
	Resolver        *order.Resolver
	// Graph is the partition's configuration (history kept or not).
	Graph graph.Config
	// ReorderMax and TasksMax bound the core's held entries and waiting
	// tasks (Config).
	ReorderMax, TasksMax int
	// NoRefuseBelow runs tasks below the collected watermark: a bug
	// planted on purpose (tests only).
	NoRefuseBelow bool
}

// Shell runs one shard: its scheduling core, its partition of the graph,
// its alias index and its node-program runner, one round at a time, fed by
// an inbox. Pushing to the inbox never blocks (gatekeepers push while
// holding their lock); its size is bounded by admission control upstream:
// in-flight transactions per gatekeeper, programs per gatekeeper, hops per
// program.
type Shell struct {
	host   Host
	id     int
	core   *Core
	G      *graph.Graph
	Alias  *graph.AliasIndex
	runner *nodeprog.Runner
	// Units is the shard's history of moved placement units (its
	// forwarding pointers), and Dir the current placement directory; both
	// nil where units never move. Set before the first round.
	Units *Units
	Dir   func() *txn.Directory

	mu     sync.Mutex
	inbox  []any
	batch  []any
	signal chan struct{}

	statsMu sync.Mutex
	stats   graph.Stats
	// pos is, per gatekeeper queue, a stamp no later than any entry the
	// queue will still execute (its head, else its last entry): the GC
	// watermark may not pass it.
	pos []vclock.Stamp
	// notes are the delivered notes last given to the core, per gatekeeper.
	notes, shardNotes []*vclock.Clock
	// collected is the watermark the partition was last collected at
	// (GCMsg); a read or program batch at a stamp not at or after it is
	// refused (run), since versions it would see may be gone.
	collected   vclock.Clock
	refuseBelow bool
}

// NewShell makes shard cfg.ID of a system of cfg.Gatekeepers gatekeepers.
func NewShell(cfg ShellConfig) (*Shell, error) {
	r, err := nodeprog.NewRunner(cfg.Registry, cfg.ID, nodeprog.Config{})
	if err != nil {
		return nil, err
	}
	s := &Shell{
		host: cfg.Host, id: cfg.ID, G: graph.New(cfg.Graph), Alias: graph.NewAliasIndex(cfg.Graph), runner: r,
		signal: make(chan struct{}, 1), pos: make([]vclock.Stamp, cfg.Gatekeepers),
		notes: make([]*vclock.Clock, cfg.Gatekeepers), shardNotes: make([]*vclock.Clock, cfg.Gatekeepers),
		refuseBelow: !cfg.NoRefuseBelow,
	}
	s.core = New(Config{ID: uint32(cfg.ID), Gatekeepers: cfg.Gatekeepers, ReorderMax: cfg.ReorderMax, TasksMax: cfg.TasksMax},
		cfg.Resolver)
	s.core.Apply = s.apply
	s.core.Run = s.run
	return s, nil
}

// ID is the shard's number.
func (s *Shell) ID() int { return s.id }

// Core is the shard's scheduling core (tests and the simulation's checks
// read it).
func (s *Shell) Core() *Core { return s.core }

// Runner is the shard's node-program runner.
func (s *Shell) Runner() *nodeprog.Runner { return s.runner }

// Partition is the shard's graph and alias index.
func (s *Shell) Partition() Partition { return Partition{Graph: s.G, Alias: s.Alias} }

// Push adds a message to the inbox (gatekeeper.Entry or one of the
// messages above) and wakes the shard.
func (s *Shell) Push(m any) {
	s.mu.Lock()
	s.inbox = append(s.inbox, m)
	s.mu.Unlock()
	s.Wake()
}

// Wake makes the shard run a round: read the delivered notes, drain the
// inbox, step the core.
func (s *Shell) Wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// Loop runs rounds whenever woken, until the host stops.
func (s *Shell) Loop() {
	for {
		<-s.signal // Close sets stopping, then wakes every shard
		if s.host.Stopping() {
			return
		}
		if err := s.Round(); err != nil {
			s.host.Fail(fmt.Errorf("shard %d: %w", s.id, err))
			return
		}
	}
}

// Round runs the shard once: the gatekeepers' notes, then the inbox, then
// the core, then the published stats and positions. An error is fatal for
// the shard.
func (s *Shell) Round() error {
	s.loadNotes()
	s.mu.Lock()
	s.batch, s.inbox = s.inbox, s.batch[:0]
	s.mu.Unlock()
	for i, m := range s.batch {
		if err := s.handle(m); err != nil {
			return err
		}
		s.batch[i] = nil
	}
	if err := s.step(); err != nil {
		return err
	}
	s.Publish()
	return nil
}

// loadNotes gives the core the gatekeepers' delivered notes. They are read
// before the inbox is drained, so the entries they cover are in the batch
// (gatekeeper.Env.Noted).
func (s *Shell) loadNotes() {
	for gk := range s.notes {
		global, forShard := s.host.Notes(gk, s.id)
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
func (s *Shell) step() error {
	if err := s.core.Step(context.Background()); err != nil {
		return err
	}
	for _, r := range s.core.NopRequests() {
		if s.host.RequestNop(int(r.GK), s.id, r.Clock) {
			s.Wake()
		}
	}
	return nil
}

func (s *Shell) handle(m any) error {
	switch m := m.(type) {
	case gatekeeper.Entry:
		return s.core.Deliver(m)
	case ProgMsg:
		if err := s.core.Submit(Task{Stamp: m.Stamp, Payload: m}); err != nil {
			// Overload fails the program, not the shard.
			s.host.Report(m.GK, nodeprog.FailReport(m.Batch, s.id, fmt.Errorf("%w: shard %d: %v", nodeprog.ErrOverloaded, s.id, err)), nil)
		}
	case ReadMsg:
		if err := s.core.Submit(Task{Stamp: m.Stamp, Payload: m}); err != nil {
			m.W.finish(fmt.Errorf("shard %d: %w", s.id, err))
		}
	case WireHopMsg:
		return s.handleWireHop(m)
	case FinishMsg:
		s.runner.Finish(m.Prog)
	case GCMsg:
		s.G.Collect(m.Watermark)
		s.Alias.Collect(m.Watermark)
		// Watermarks may arrive out of order (over a network): the
		// refusal follows the newest, as the graph's own check does.
		if s.collected.Counters == nil || vclock.LessEq(s.collected, m.Watermark.Clock) {
			s.collected = m.Watermark.Clock
		}
	default:
		return fmt.Errorf("unknown message %T", m)
	}
	return nil
}

func (s *Shell) handleWireHop(m WireHopMsg) error {
	b, err := s.runner.DecodeBatch(m.Data)
	if errors.Is(err, nodeprog.ErrFinished) {
		return nil // a late batch of a finished program
	}
	if err != nil {
		// Tell the coordinator, if the batch says whose it is.
		var hdr struct {
			ID   nodeprog.BatchID `json:"id"`
			Prog nodeprog.ProgID  `json:"prog"`
		}
		if json.Unmarshal(m.Data, &hdr) == nil {
			s.host.Report(m.GK, nodeprog.FailReport(nodeprog.Batch{ID: hdr.ID, Prog: hdr.Prog}, s.id,
				fmt.Errorf("%w: shard %d: %v", nodeprog.ErrFailed, s.id, err)), nil)
		}
		return nil
	}
	return s.handle(ProgMsg{GK: m.GK, Stamp: m.Stamp, Batch: b})
}

// Publish makes the partition's counts and the queues' positions what
// Stats and Positions answer.
func (s *Shell) Publish() {
	st := s.G.Counts()
	s.statsMu.Lock()
	s.stats = st
	s.core.Positions(s.pos)
	s.statsMu.Unlock()
}

// Stats returns the partition's counts as of the last round.
func (s *Shell) Stats() graph.Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// Positions folds the queues' positions as of the last round into m
// (gatekeeper.MinInto); false when a queue never moved (nothing is safe
// to collect yet).
func (s *Shell) Positions(m *vclock.Clock) bool {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	for _, p := range s.pos {
		if p.IsZero() {
			return false
		}
		gatekeeper.MinInto(m, p.Clock)
	}
	return true
}

// Position returns queue gk's position as of the last round (tests).
func (s *Shell) Position(gk int) vclock.Stamp {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.pos[gk]
}

// apply executes one transaction's operations for this shard.
func (s *Shell) apply(e gatekeeper.Entry) error {
	var err error
	if s.Units != nil {
		err = ApplyPartition(Partition{Graph: s.G, Alias: s.Alias}, s.Units, e.Ops, e.Stamp)
	} else {
		err = Apply(s.G, s.Alias, e.Ops, e.Stamp)
	}
	if err != nil {
		return err
	}
	s.host.Applied()
	return nil
}

// run executes a runnable task at its stamp, unless the stamp is below
// the watermark the partition was collected at: the task then fails with
// ErrTooOld. Gatekeepers keep the watermark below every read they
// registered, so only a read whose registration raced with the watermark
// (or a snapshot token older than the history kept) gets here.
func (s *Shell) run(t Task) error {
	if s.collected.Counters != nil && s.refuseBelow && !vclock.LessEq(s.collected, t.Stamp.Clock) {
		s.refuse(t)
		return nil
	}
	ord := &ReadOrderer{Res: s.core.Resolver(), T: t.Stamp}
	switch m := t.Payload.(type) {
	case ReadMsg:
		if m.Name != "" {
			if to := s.Locate(m.Name, t.Stamp, ord); to != s.id {
				m.W.finish(&MovedError{Shard: to})
				break
			}
		}
		m.Fn(&Reader{S: s, Ord: ord})
		m.W.finish(nil)
	case ProgMsg:
		s.runProgram(m, ord)
	}
	if ord.Err != nil {
		return ord.Err // the oracle failed: the shard cannot order safely
	}
	return nil
}

// refuse answers a task below the collected watermark.
func (s *Shell) refuse(t Task) {
	switch m := t.Payload.(type) {
	case ReadMsg:
		m.W.finish(fmt.Errorf("%w: shard %d collected the versions below %s", ErrTooOld, s.id, t.Stamp))
	case ProgMsg:
		s.host.Report(m.GK, nodeprog.FailReport(m.Batch, s.id,
			fmt.Errorf("%w: shard %d collected the versions below %s", nodeprog.ErrSnapshotTooOld, s.id, t.Stamp)), nil)
	}
}

func (s *Shell) runProgram(m ProgMsg, ord *ReadOrderer) {
	lookup := reusedVertex(s.G, m.Stamp, ord)
	shardOf := s.host.ShardOf
	if s.Units != nil {
		shardOf = func(h string) int { return s.Locate(h, m.Stamp, ord) }
	}
	out, rep, err := s.runner.Run([]nodeprog.Batch{m.Batch}, lookup, shardOf)
	if errors.Is(err, nodeprog.ErrFinished) {
		return
	}
	// Report before sending: the coordinator learns the destinations first,
	// so a program that ends early still finishes on every shard it reached.
	s.host.Report(m.GK, rep, out)
	for _, b := range out {
		s.host.SendHop(m.GK, m.Stamp, b)
	}
}

// Locate is the shard that answers for name h at stamp t (Units.Locate;
// the host's placement where units never move).
func (s *Shell) Locate(h string, t vclock.Stamp, ord *ReadOrderer) int {
	if s.Units == nil {
		return s.host.ShardOf(h)
	}
	return int(s.Units.Locate(h, t, ord, s.Dir()))
}
