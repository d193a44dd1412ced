package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// The gatekeeper's shell (one per role, STYLE.md): the code around the
// pure Core that weft serve and the simulation both run — clock sync,
// stamping, read points, a commit's execution on the store, its commit
// section (fence, order after last accesses, directory checks), resolve
// and the FIFO hand-off, NOPs and notes, node-program coordination, moves
// of placement units, what holds the garbage-collection watermark.
//
// The shell never blocks and starts no goroutine. Every step that another
// goroutine's work may come before — loading a peer's clock, entering the
// commit section, resolving — goes through Env.Go, which runs the rest of
// the work now (weft serve, where real goroutines interleave there) or
// later (the simulation, which schedules it as an event and so explores
// the interleavings). Answers are continuations: a commit's done is called
// once its entries are handed to the shards (and, with PeerAck, once every
// peer merged its stamp). Continuations may run on any goroutine, some with
// the shell's lock held: they must hand their result on (a channel send, a
// scheduled event) and not call the shell themselves.

// Point names a yield point of the shell (Env.Go).
type Point uint8

const (
	// PointSyncLoad: about to load a peer's published clock (Arg: the peer).
	PointSyncLoad Point = iota + 1
	// PointStamp: the peers' clocks merged, about to stamp (peers may stamp
	// in between: the concurrent stamps Kronos refines).
	PointStamp
	// PointCritical: a transaction executed and declared, about to enter
	// the store's commit section.
	PointCritical
	// PointResolve: a transaction durable, about to be resolved.
	PointResolve
	// PointGCInflight: a watermark pass about to read a gatekeeper's stamps
	// in flight (Arg: the gatekeeper; gk is -1).
	PointGCInflight
)

// Env is what a shell needs from its process: where work continues after a
// yield point, and the links to the shards and peers. Deliver, Batch,
// Finish, Noted and Announce are called with the shell's lock held and must
// not block or call the shell.
type Env interface {
	// Go runs next after yield point p of gatekeeper gk (arg qualifies
	// p): now, or later. It may never run if the process dies first.
	Go(p Point, gk, arg int, next Step)
	// Deliver hands an entry to shard's FIFO channel from this gatekeeper,
	// in the order of the calls.
	Deliver(shard uint32, e Entry)
	// Batch sends a node-program batch at stamp to its shard; Finish tells
	// shard that program prog is over.
	Batch(stamp vclock.Stamp, b nodeprog.Batch)
	Finish(shard int, prog nodeprog.ProgID)
	// Noted offers a note (a clock below everything this gatekeeper will
	// still send; shard.Core.Complete) to shard, or to every shard when
	// shard is negative. Only a process whose deliveries reach a shard
	// before the note may pass it on; it may drop it.
	Noted(shard int, c *vclock.Clock)
	// Announce asks for an announce of the clock to every peer with
	// replies (PeerAck: answers are waiting for them).
	Announce()
}

// Step is the rest of a shell's operation after a yield point (Env.Go).
// Hot paths pass a value the operation already holds, so that a yield
// costs no allocation.
type Step interface{ Run() }

// StepFunc is a Step that calls the function.
type StepFunc func()

// Run calls f.
func (f StepFunc) Run() { f() }

// Placement is the placement directory the shell routes by, shared by the
// gatekeepers of a process, and the bookkeeping of moves in flight.
type Placement interface {
	Dir() *txn.Directory
	// Checked, called once a transaction executed on st routed by d, may
	// refuse it before its commit section (ErrUnitMoved; CheckHomes).
	Checked(st store.Txn, d *txn.Directory, res *txn.Result) error
	// Current, called inside a commit section, reports whether d holds
	// every move begun (none in flight, none adopted since d): d's homes
	// are then the store's (OrderCommit's current).
	Current(d *txn.Directory) bool
	// BeginMove counts a move in, before its commit section; EndMove
	// counts it out, adopting home for u first when the move committed.
	BeginMove()
	EndMove(u txn.Unit, home *txn.Home)
}

// Plants are bugs planted in the shell on purpose, so that tests and the
// simulation show that their checks catch them. All false in production.
type Plants struct {
	// BadDeclare declares every transaction to write no shard, so NOPs and
	// notes overtake its writes.
	BadDeclare bool
	// NoFence skips the epoch fence in the commit section.
	NoFence bool
	// NoUnitCheck tells OrderCommit the routing directory is current even
	// while a move is in flight or adopted since.
	NoUnitCheck bool
	// PartialSync merges only each peer's own counter of its published
	// clock (the sync before clocks were published whole).
	PartialSync bool
	// OwnCounterPoints accepts a read point that matches each
	// gatekeeper's newest hand-off on that gatekeeper's own counter only.
	OwnCounterPoints bool
	// StalePoints uses a read point without the coverage check at all.
	StalePoints bool
	// NoPointRecheck keeps a read point registered while a watermark pass
	// overlapped its choice.
	NoPointRecheck bool
	// NoHomeCheck lets a gatekeeper's own directory copy (DirCopy) commit
	// a transaction without reading the homes of its units: routed by a
	// stale copy, its writes reach a shard the unit has left.
	NoHomeCheck bool
	// UnknownAsAbort resolves a commit whose outcome the store could not
	// tell (store.ErrFailed) as one that wrote nothing, and carries on: if
	// it landed, the shards never see it while the store and other
	// gatekeepers' transactions do.
	UnknownAsAbort bool
}

// ShellConfig configures a Shell.
type ShellConfig struct {
	Core Config
	// Group is the process's gatekeepers in shared memory (one process:
	// clock sync and read points); nil for a gatekeeper alone in its
	// process, which learns its peers' clocks from announces (PeerClock).
	Group *Group
	// Store begins the store transactions commits and moves run on.
	Store     Beginner
	Oracle    order.Oracle
	Env       Env
	Placement Placement
	// Registry compiles node programs; ProgramsMax bounds the programs
	// coordinated at once (beyond it RunProgram answers ErrOverloaded).
	Registry    *nodeprog.Registry
	ProgramsMax int
	// Fence checks the store's epoch fence in every commit section (a
	// process whose configuration epoch can end under it).
	Fence  bool
	Plants Plants
	// Failed is called once, when the store could not tell whether a
	// commit took effect (store.ErrFailed, outcomeUnknown): the process
	// must stop serving, and its configuration epoch end, before anything
	// after that commit may be read.
	Failed func(error)
	// Serving, if set, says whether the process may answer now (a
	// cluster member's lease, docs/cluster.md "Leases"): the shell asks it
	// before it takes a commit or a move and before it acknowledges a
	// commit (ErrUnacknowledged when it refuses then); the process asks
	// it (Shell.Serving) before it answers a read or a program.
	Serving func() error
}

// ErrUnacknowledged: a commit durable on the store whose acknowledgement
// ShellConfig.Serving refused (the lease lapsed meanwhile). Its outcome is
// unknown to the client.
var ErrUnacknowledged = errors.New("gatekeeper: committed on the store but not acknowledged")

// Serving is ShellConfig.Serving's answer (nil without one).
func (s *Shell) Serving() error {
	if s.cfg.Serving == nil {
		return nil
	}
	return s.cfg.Serving()
}

// Beginner begins transactions on the backing store.
type Beginner interface {
	Begin() (store.Txn, error)
}

// ErrProgramsFull reports too many node programs in flight.
var ErrProgramsFull = errors.New("gatekeeper: too many node programs in flight")

// Shell is one gatekeeper's shell. It is safe for concurrent use.
type Shell struct {
	cfg ShellConfig
	id  int
	mu  sync.Mutex
	// core is the state machine; guarded by mu, like everything below
	// except the atomics.
	core *Core
	// acks are the continuations of commits waiting for their hand-off, by
	// stamp sequence; holds the other answers waiting for stability.
	acks     map[uint64]func()
	holds    map[uint64]func()
	nextHold uint64
	progs    map[nodeprog.ProgID]*progRun
	nextProg uint64
	// reading holds the stamps of reads and programs in flight (the GC
	// watermark stays below them), by key.
	reading  map[uint64]vclock.Stamp
	nextRead uint64
	// handed is the clock of the newest transaction handed to the shards,
	// set before its entries are delivered; point is the core's read point
	// (nil: none). Read by the Group without mu; never modified.
	handed atomic.Pointer[vclock.Clock]
	point  atomic.Pointer[vclock.Stamp]
	// failed is the store's error once a commit's outcome was unknown:
	// nothing more is stamped for commits or moves.
	failed error
}

// NewShell returns gatekeeper cfg.Core.ID's shell.
func NewShell(cfg ShellConfig) *Shell {
	if cfg.ProgramsMax <= 0 {
		cfg.ProgramsMax = 4096
	}
	s := &Shell{cfg: cfg, id: int(cfg.Core.ID), core: New(cfg.Core),
		acks: map[uint64]func(){}, holds: map[uint64]func(){}, progs: map[nodeprog.ProgID]*progRun{},
		reading: map[uint64]vclock.Stamp{}}
	if cfg.Group != nil {
		cfg.Group.join(s)
	}
	return s
}

// ID is the gatekeeper's number.
func (s *Shell) ID() int { return s.id }

// Clock returns the core's clock.
func (s *Shell) Clock() vclock.Clock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.core.Clock()
}

// Idle reports that everything stamped is resolved and handed off.
func (s *Shell) Idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.core.Idle()
}

// sync merges the clock of every peer's latest stamp (one process), one
// load at a time with a yield point before each and one before the stamp
// that follows, then runs then. Each clock is whole: whatever entry of the
// result came from peer j's clock, the result follows j's stamp as a
// vector clock, and so everything j's stamp followed (the property read
// points rely on, ChooseReadPoint). Alone in its process (no Group) a
// gatekeeper learns its peers' clocks from announces instead, and then
// runs at once.
func (s *Shell) sync(y *syncer, then Step) {
	y.s, y.j, y.then = s, 0, then
	if s.cfg.Group == nil {
		then.Run()
		return
	}
	y.next()
}

// syncer is a sync in progress: the next peer to load.
type syncer struct {
	s    *Shell
	j    int
	then Step
}

func (y *syncer) next() {
	s := y.s
	n := len(s.cfg.Group.published)
	for y.j < n && y.j == s.id {
		y.j++
	}
	if y.j >= n {
		s.cfg.Env.Go(PointStamp, s.id, 0, y.then)
		return
	}
	s.cfg.Env.Go(PointSyncLoad, s.id, y.j, y)
}

// Run loads peer y.j's published clock and goes on with the next.
func (y *syncer) Run() {
	s, j := y.s, y.j
	if c := s.cfg.Group.published[j].Load(); c != nil {
		if s.cfg.Plants.PartialSync {
			own := vclock.New(c.Epoch, len(c.Counters))
			own.Counters[j] = c.Counters[j]
			c = &own
		}
		s.mu.Lock()
		s.core.Merge(*c)
		s.mu.Unlock()
	}
	y.j++
	y.next()
}

// publish makes c, the clock of this gatekeeper's latest stamp, the one
// its peers' syncs load. Called with mu held.
func (s *Shell) publish(c vclock.Clock) { s.publishPtr(&c) }

func (s *Shell) publishPtr(c *vclock.Clock) {
	if g := s.cfg.Group; g != nil {
		g.published[s.id].Store(c)
	}
}

// dispatch hands the core's deliveries to the shards in order and runs
// the answers that may go out. Called with mu held, so that two dispatches
// never interleave (FIFO per shard).
func (s *Shell) dispatch() {
	for _, d := range s.core.Ready() {
		if !d.Entry.Nop {
			if h := s.handed.Load(); h == nil || d.Entry.Stamp.Clock.Counters[s.id] > h.Counters[s.id] {
				s.handed.Store(&d.Entry.Stamp.Clock) // before any shard can run a read that sees it
			}
		}
		s.cfg.Env.Deliver(d.Shard, d.Entry)
	}
	s.refreshPoint()
	for _, st := range s.core.Acked() {
		if fn, ok := s.acks[st.Seq()]; ok {
			delete(s.acks, st.Seq())
			fn()
		}
	}
	for _, id := range s.core.Released() {
		if fn, ok := s.holds[id]; ok {
			delete(s.holds, id)
			fn()
		}
	}
	if s.core.WantAnnounce() {
		s.cfg.Env.Announce()
	}
}

// refreshPoint publishes the core's read point. Called with mu held after
// every change to the transactions in flight.
func (s *Shell) refreshPoint() {
	p, ok := s.core.ReadPoint()
	cur := s.point.Load()
	switch {
	case !ok:
		if cur != nil {
			s.point.Store(nil)
		}
	case cur == nil || cur.Clock.Counters[s.id] != p.Clock.Counters[s.id]:
		s.point.Store(&p)
	}
}

// answer runs fn once st, a stamp of this gatekeeper, may be answered:
// at once, or with PeerAck once every peer merged it. Called with mu held.
func (s *Shell) answer(st vclock.Stamp, fn func()) {
	if !s.cfg.Core.PeerAck {
		fn()
		return
	}
	s.nextHold++
	s.holds[s.nextHold] = fn
	s.core.Hold(s.nextHold, st)
	s.dispatch()
}

// Answer is answer for the process: fn runs once st may be answered.
func (s *Shell) Answer(st vclock.Stamp, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer(st, fn)
}

// PeerClock merges the clock peer j announced (gatekeepers in separate
// processes) and runs the answers it made stable.
func (s *Shell) PeerClock(j uint32, c vclock.Clock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.core.PeerClock(j, c)
	s.dispatch()
}

// RequestNop answers a shard waiting for this gatekeeper's queue to pass
// clock c. When noteOK (the process delivers a note after every entry sent
// before it) and the core can, it answers with a note for the shard
// instead (Env.Noted; noted is true); else it queues a NOP behind the
// transactions in flight that may write the shard.
func (s *Shell) RequestNop(shard uint32, c vclock.Clock, noteOK bool) (noted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if noteOK {
		if note, ok := s.core.NoteFor(shard, c); ok {
			s.cfg.Env.Noted(int(shard), &note)
			return true
		}
	}
	s.core.RequestNop(shard, c)
	s.publish(s.core.Clock())
	s.dispatch()
	return false
}

// freshStamp ticks a stamp for a read: after everything merged. Called
// with mu held, after sync.
func (s *Shell) freshStamp() vclock.Stamp {
	st := s.core.Stamp()
	c := &st.Clock // one copy, published and noted: never modified
	s.publishPtr(c)
	if s.core.Idle() {
		s.cfg.Env.Noted(-1, c)
	}
	return st
}

// Stamp takes a fresh stamp (after sync), unregistered: an announce, an
// epoch's barrier.
func (s *Shell) Stamp(done func(vclock.Stamp)) {
	s.sync(new(syncer), StepFunc(func() {
		s.mu.Lock()
		st := s.freshStamp()
		s.mu.Unlock()
		done(st)
	}))
}

// StampRead stamps a snapshot or a program's read, registered as in
// flight until EndRead(key): a read point when one may be used
// (PointRead), else a fresh stamp after sync.
func (s *Shell) StampRead(done func(st vclock.Stamp, key uint64)) {
	if st, key, ok := s.PointRead(); ok {
		done(st, key)
		return
	}
	s.stampFresh(done)
}

// PointRead takes a read point for a read when one may be used (one
// process: Group.ReadPoint), registered as in flight until EndRead(key);
// ok is false when none may (the read takes a fresh stamp, StampRead).
func (s *Shell) PointRead() (st vclock.Stamp, key uint64, ok bool) {
	g := s.cfg.Group
	if g == nil {
		return st, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextRead++
	key = 1<<62 | s.nextRead
	st, ok = g.pointHeld(func(p vclock.Stamp) { s.reading[key] = p }, func() { delete(s.reading, key) })
	return st, key, ok
}

func (s *Shell) stampFresh(done func(vclock.Stamp, uint64)) {
	r := &freshRead{done: done}
	s.sync(&r.syncer, r)
}

// FreshRead is StampRead's fresh stamp for a process whose Env.Go runs the
// next step at once (weft serve): the same steps, its result returned
// instead of passed on; ok is false if a yield deferred it.
func (s *Shell) FreshRead() (st vclock.Stamp, key uint64, ok bool) {
	r := &freshRead{}
	s.sync(&r.syncer, r)
	return r.st, r.key, r.ran
}

// freshRead is a read's fresh stamp in progress: its sync, then the stamp.
type freshRead struct {
	syncer
	done func(vclock.Stamp, uint64)
	st   vclock.Stamp
	key  uint64
	ran  bool
}

// Run stamps the read once synced, registered under the stamp's sequence.
func (r *freshRead) Run() {
	s := r.s
	s.mu.Lock()
	r.st = s.freshStamp()
	r.key = r.st.Seq()
	s.reading[r.key] = r.st
	s.mu.Unlock()
	r.ran = true
	if r.done != nil {
		r.done(r.st, r.key)
	}
}

// HoldRead registers an existing snapshot stamp as in flight under key;
// false when readable says the watermark already passed it.
func (s *Shell) HoldRead(st vclock.Stamp, key uint64, readable func(vclock.Stamp) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !readable(st) {
		return false
	}
	s.reading[key] = st
	return true
}

// EndRead ends a read registered by StampRead or HoldRead.
func (s *Shell) EndRead(key uint64) {
	s.mu.Lock()
	delete(s.reading, key)
	s.mu.Unlock()
}

// beginCommit stamps a transaction (a commit or a move) after sync: the
// stamp published and the read point refreshed.
func (s *Shell) beginCommit(done func(vclock.Stamp, error)) {
	s.sync(new(syncer), StepFunc(func() {
		s.mu.Lock()
		var ts vclock.Stamp
		err := s.failed
		if err == nil {
			ts, err = s.core.BeginCommit()
		}
		if err == nil {
			s.publish(ts.Clock)
			s.refreshPoint()
		}
		s.mu.Unlock()
		done(ts, err)
	}))
}

// Commit runs one transaction: stamp, execute on a store transaction,
// declare the shards it writes, order it after the last access of
// everything it touched inside the commit section (Kronos when concurrent;
// the epoch fence and the placement directory checked there too), hand
// its writes to the shards, and call done once handed (err nil: res is the
// execution's result and ts its stamp). durable, if set, is called when
// the commit section succeeded. ErrOverloaded (this package's) means too
// many transactions in flight; store and txn errors come as they are.
func (s *Shell) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op, durable func(ts vclock.Stamp),
	done func(res *txn.Result, ts vclock.Stamp, err error)) {
	if err := s.Serving(); err != nil {
		done(nil, vclock.Stamp{}, err)
		return
	}
	st, err := s.cfg.Store.Begin()
	if err != nil {
		done(nil, vclock.Stamp{}, err)
		return
	}
	s.beginCommit(func(ts vclock.Stamp, err error) {
		if err != nil {
			st.Discard()
			done(nil, ts, err)
			return
		}
		dir := s.cfg.Placement.Dir()
		res, err := txn.Exec{Shards: uint32(s.cfg.Core.Shards), Dir: dir}.Run(st, ts, reads, ops)
		if err == nil {
			err = s.cfg.Placement.Checked(st, dir, res)
		}
		if err != nil {
			st.Discard()
			s.abort(ts)
			done(nil, ts, err)
			return
		}
		// The shards it writes are known now, before the durable commit:
		// reads on the others need not wait for its fsync.
		s.declare(ts, txn.ShardsOf(res.Ops))
		s.cfg.Env.Go(PointCritical, s.id, 0, StepFunc(func() {
			err := st.Commit(ctx, func(c store.Critical) error {
				if err := s.checkFence(c); err != nil {
					return err
				}
				// Read here, in the commit section: whether dir is the
				// store's directory.
				current := s.cfg.Plants.NoUnitCheck || s.cfg.Placement.Current(dir)
				return OrderCommit(ctx, s.cfg.Oracle, c, ts, res, dir, current)
			})
			st.Discard()
			if err != nil {
				if !s.outcomeUnknown(err) {
					s.abort(ts)
				}
				done(nil, ts, err)
				return
			}
			if durable != nil {
				durable(ts)
			}
			s.cfg.Env.Go(PointResolve, s.id, 0, StepFunc(func() {
				s.resolve(ts, res.Ops, func() {
					if err := s.Serving(); err != nil {
						done(nil, ts, fmt.Errorf("%w: %w", ErrUnacknowledged, err))
						return
					}
					done(res, ts, nil)
				})
			}))
		}))
	})
}

// declare narrows an in-flight transaction to the shards it writes.
func (s *Shell) declare(ts vclock.Stamp, shards []uint32) {
	if s.cfg.Plants.BadDeclare {
		shards = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.core.Declare(ts, shards); err != nil {
		panic(err) // programmer error: ts is in flight
	}
	s.dispatch()
}

func (s *Shell) checkFence(c store.Critical) error {
	if !s.cfg.Fence || s.cfg.Plants.NoFence {
		return nil
	}
	return CheckFence(c, s.cfg.Core.Epoch)
}

// resolve ends a stamped transaction with its operations; acked runs once
// they are handed to the shards (and, with PeerAck, the stamp is stable).
func (s *Shell) resolve(ts vclock.Stamp, ops []txn.ShardOp, acked func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ops == nil {
		// Nothing to hand on: answered once stable.
		if err := s.core.Resolve(ts, nil); err != nil {
			panic(err)
		}
		s.dispatch()
		s.answer(ts, acked)
		return
	}
	s.acks[ts.Seq()] = acked
	if err := s.core.Resolve(ts, ops); err != nil {
		panic(err) // programmer error: every stamp is resolved once
	}
	s.dispatch()
}

// outcomeUnknown reports whether err leaves a commit's outcome unknown
// (store.ErrFailed: the PostgreSQL store lost its connection during COMMIT
// and could not learn the outcome, or a write failed). Such a commit may
// be durable, so it is neither handed to the shards nor resolved as
// having written nothing: either could let a read miss it while the store,
// and the transactions of other gatekeepers that execute on it, see it. It
// stays in flight, holding back NOPs and notes to the shards it declared,
// so nothing after it becomes readable there; the shell stamps no more
// commits, and Failed tells the process to stop. A new epoch's shards
// rebuild from the store, which decides.
func (s *Shell) outcomeUnknown(err error) bool {
	if !errors.Is(err, store.ErrFailed) || s.cfg.Plants.UnknownAsAbort {
		return false
	}
	s.mu.Lock()
	first := s.failed == nil
	if first {
		s.failed = err
	}
	s.mu.Unlock()
	if first && s.cfg.Failed != nil {
		s.cfg.Failed(err)
	}
	return true
}

// abort resolves a stamped transaction that wrote nothing.
func (s *Shell) abort(ts vclock.Stamp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.core.Resolve(ts, nil); err != nil {
		panic(err)
	}
	s.dispatch()
}

// Move moves a placement unit as a transaction of this gatekeeper: stamp,
// read the unit at a snapshot of its own (read), declare both shards,
// commit (OrderMove: nothing of the unit changed since it was read; the
// directory says mv.To from the stamp on), adopt the new home, and hand
// MoveOut and MoveIn to the shards; done is called once handed. read
// returns what the move's commit section must find unchanged.
//
// st is the move's store transaction, begun before the caller read the
// unit's home in it (its read set then holds the directory record); Move
// discards it.
func (s *Shell) Move(ctx context.Context, st store.Txn, mv *txn.UnitMove, home txn.Home, read func() (MoveSeen, error), done func(ts vclock.Stamp, err error)) {
	if err := s.Serving(); err != nil {
		st.Discard()
		done(vclock.Stamp{}, err)
		return
	}
	base := s.cfg.Placement.Dir().Base()
	s.beginCommit(func(ts vclock.Stamp, err error) {
		if err != nil {
			st.Discard()
			done(ts, err)
			return
		}
		// In flight from before its commit section until the directory
		// has it (or it failed): commits meanwhile read the records.
		s.cfg.Placement.BeginMove()
		seen, err := read()
		if err != nil {
			st.Discard()
			s.cfg.Placement.EndMove(mv.Unit, nil)
			s.abort(ts)
			done(ts, err)
			return
		}
		s.declare(ts, []uint32{mv.From, mv.To})
		s.cfg.Env.Go(PointCritical, s.id, 0, StepFunc(func() {
			err := st.Commit(ctx, func(c store.Critical) error {
				if err := s.checkFence(c); err != nil {
					return err
				}
				return OrderMove(ctx, s.cfg.Oracle, c, ts, mv, seen, base)
			})
			st.Discard()
			if err != nil {
				s.cfg.Placement.EndMove(mv.Unit, nil)
				if !s.outcomeUnknown(err) {
					s.abort(ts)
				}
				done(ts, err)
				return
			}
			h := MovedHome(home, mv, ts)
			s.cfg.Placement.EndMove(mv.Unit, &h)
			s.cfg.Env.Go(PointResolve, s.id, 0, StepFunc(func() {
				s.resolve(ts, MoveOps(mv), func() { done(ts, nil) })
			}))
		}))
	})
}

// MovedHome is the home a committed move mv at ts gives its unit, which
// was at home.
func MovedHome(home txn.Home, mv *txn.UnitMove, ts vclock.Stamp) txn.Home {
	held := append(slices.Clone(home.Held), mv.To)
	slices.Sort(held)
	return txn.Home{Shard: mv.To, From: mv.From, Stamp: ts, Held: held}
}

// MoveOps are a committed move's entries: MoveOut to the shard it left,
// MoveIn to the new one.
func MoveOps(mv *txn.UnitMove) []txn.ShardOp {
	return []txn.ShardOp{{Shard: mv.From, Kind: txn.OpUnitOut, Move: mv}, {Shard: mv.To, Kind: txn.OpUnitIn, Move: mv}}
}

// InflightMin folds this gatekeeper's in-flight stamps (unresolved
// transactions, the read point a read may still take, registered reads,
// programs) and its clock into m, entry-wise minimum.
func (s *Shell) InflightMin(m *vclock.Clock) { s.InflightMinThen(m, nil) }

// InflightMinThen is InflightMin, then calls publish (if set) with the
// shell's lock held: a HoldRead either runs before the fold, and is in m,
// or after publish, and its readable sees what publish recorded (a
// process that sends m on as its low, so that a read older than the low
// is refused and not lost to the shards' collection).
func (s *Shell) InflightMinThen(m *vclock.Clock, publish func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if publish != nil {
		defer publish()
	}
	MinInto(m, s.core.Clock())
	if p, ok := s.core.ReadPoint(); ok {
		MinInto(m, p.Clock)
	}
	for _, st := range s.core.Inflight() {
		MinInto(m, st.Clock)
	}
	for _, st := range s.reading {
		MinInto(m, st.Clock)
	}
	for _, r := range s.progs {
		MinInto(m, r.stamp.Clock)
	}
}

// MinInto lowers m entry-wise to c (m unset: c); a clock of an older
// epoch replaces m.
func MinInto(m *vclock.Clock, c vclock.Clock) {
	if m.Counters == nil {
		*m = c.Clone()
		return
	}
	if c.Epoch != m.Epoch {
		if c.Epoch < m.Epoch {
			*m = c.Clone()
		}
		return
	}
	for i := range m.Counters {
		if i < len(c.Counters) && c.Counters[i] < m.Counters[i] {
			m.Counters[i] = c.Counters[i]
		}
	}
}

// SetPlants plants bugs (tests only; before the shell is used).
func (s *Shell) SetPlants(p Plants) { s.cfg.Plants = p }

// OfferedPoint is the read point this gatekeeper offers now (nil: none).
func (s *Shell) OfferedPoint() *vclock.Stamp { return s.point.Load() }
