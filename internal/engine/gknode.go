package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// gkNode is one gatekeeper: its core behind a mutex, the programs it
// coordinates, and the commits waiting for their FIFO hand-off.
type gkNode struct {
	db   *DB
	id   int
	mu   sync.Mutex
	core *gatekeeper.Core
	// acks maps the sequence number of a stamped transaction to the channel
	// closed when its entries have been handed to the shards.
	acks  map[uint64]chan struct{}
	progs map[nodeprog.ProgID]*progRun
	// reading counts in-flight reads per stamp sequence (snapshot reads and
	// programs); the GC watermark stays below them.
	reading map[uint64]vclock.Stamp
	nextID  uint64
	// pointReads numbers the reads at a read point (keys of reading with
	// bit 62 set: a point is shared, its sequence number is not a key).
	pointReads uint64
	// handed is the clock of the newest transaction this gatekeeper handed
	// to the shards, set before its entries are pushed: a read point that
	// does not follow it must not be used (DB.readPoint). Never modified.
	handed atomic.Pointer[vclock.Clock]
	// point is the core's read point (nil: nothing in flight), set under mu
	// whenever the in-flight transactions change, for DB.readPoint.
	point atomic.Pointer[vclock.Stamp]
}

type progRun struct {
	coord  *nodeprog.Coordinator
	stamp  vclock.Stamp
	done   chan struct{}
	err    error
	res    any
	shards uint64 // shards that may hold state for it (bit per shard < 64)
	more   []bool // the same for shard counts above 64
}

// step takes a shard's report (with the shards it sent batches to) and says
// whether the program is over.
func (r *progRun) step(rep nodeprog.Report, sentTo []int) (done bool, err error) {
	r.touch(rep.Shard)
	for _, sh := range sentTo {
		r.touch(sh)
	}
	err = r.coord.Step(rep)
	return err != nil || r.coord.Done(), err
}

// settle records the program's outcome: err, else its gathered result.
func (r *progRun) settle(err error) {
	if err != nil {
		r.err = err
		return
	}
	r.res, r.err = r.coord.Result()
}

func (r *progRun) touch(shard int) {
	if shard < 64 {
		r.shards |= 1 << shard
		return
	}
	for len(r.more) <= shard-64 {
		r.more = append(r.more, false)
	}
	r.more[shard-64] = true
}

func (r *progRun) touched(shard int) bool {
	if shard < 64 {
		return r.shards&(1<<shard) != 0
	}
	return shard-64 < len(r.more) && r.more[shard-64]
}

func newGK(db *DB, id int) *gkNode {
	return &gkNode{
		db: db, id: id,
		core: gatekeeper.New(gatekeeper.Config{ID: uint32(id), Gatekeepers: db.cfg.Gatekeepers, Shards: db.cfg.Shards,
			Epoch: db.epoch, InflightMax: 1 << 14, ReadPoints: !db.cfg.NoReadPoints}),
		acks: map[uint64]chan struct{}{}, progs: map[nodeprog.ProgID]*progRun{}, reading: map[uint64]vclock.Stamp{},
	}
}

// sync merges the clock of every gatekeeper's latest stamp, so the next
// stamp follows everything any gatekeeper has stamped — in particular every
// acknowledged transaction and finished program, which is what real-time
// order needs. The clocks are loaded one at a time (another gatekeeper may
// stamp between two loads), but each is whole: whatever entry of the
// result came from gatekeeper j's clock, the result follows j's stamp as a
// vector clock, and so everything j's stamp followed (the property the
// read-point rule relies on, readpoint.go). Called with mu held.
func (g *gkNode) sync() {
	for j := range g.db.gks {
		if j != g.id {
			g.db.yieldAt(yieldSyncLoad, g.id, j)
			c := g.db.published[j].Load()
			if c != nil && g.db.plant.partialSync {
				own := vclock.New(c.Epoch, len(c.Counters))
				own.Counters[j] = c.Counters[j]
				c = &own
			}
			if c != nil {
				g.core.Merge(*c)
			}
		}
	}
}

func (g *gkNode) publish(s vclock.Stamp) { g.db.published[g.id].Store(&s.Clock) }

// noteDelivered publishes c, the core's current clock, when the core is
// idle. Called with mu held, after dispatch: the pushes happen before the
// store, so a shard that loads the note before draining its inbox finds
// those entries in it.
func (g *gkNode) noteDelivered(c *vclock.Clock) {
	if g.core.Idle() {
		g.db.delivered[g.id].Store(c)
	}
}

// dispatch hands the core's deliveries to the shards in order and releases
// the commits whose entries went out. Called with mu held, so that two
// dispatches of one gatekeeper never interleave (FIFO per shard).
func (g *gkNode) dispatch() {
	for _, d := range g.core.Ready() {
		if !d.Entry.Nop {
			if h := g.handed.Load(); h == nil || d.Entry.Stamp.Clock.Counters[g.id] > h.Counters[g.id] {
				g.handed.Store(&d.Entry.Stamp.Clock) // before any shard can run a read that sees it
			}
		}
		g.db.shards[d.Shard].push(d.Entry)
	}
	g.refreshPoint()
	for _, s := range g.core.Acked() {
		if ch, ok := g.acks[s.Seq()]; ok {
			close(ch)
			delete(g.acks, s.Seq())
		}
	}
}

// requestNop answers a shard waiting for this gatekeeper's queue to pass
// clock c. An idle gatekeeper answers with a delivered note (its clock
// after merging c; noted is true and the shard reads it with its next
// inbox); a busy one queues a NOP behind its in-flight transactions.
func (g *gkNode) requestNop(shard uint32, c vclock.Clock) (noted bool) {
	g.db.nops.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	if note, ok := g.core.NoteFor(shard, c); ok {
		g.db.shardNotes[g.id*g.db.cfg.Shards+int(shard)].Store(&note)
		return true
	}
	g.core.RequestNop(shard, c)
	g.publish(vclock.Stamp{Clock: g.core.Clock(), Owner: uint32(g.id)})
	g.dispatch()
	return false
}

// refreshPoint publishes the core's read point. Called with mu held after
// every change to the transactions in flight.
func (g *gkNode) refreshPoint() {
	p, ok := g.core.ReadPoint()
	cur := g.point.Load()
	switch {
	case !ok:
		if cur != nil {
			g.point.Store(nil)
		}
	case cur == nil || cur.Clock.Counters[g.id] != p.Clock.Counters[g.id]:
		g.point.Store(&p)
	}
}

// stampRead returns a stamp for a snapshot or program, registered as in
// flight until endRead(key): a read point when one may be used
// (DB.readPoint), else a fresh stamp.
func (g *gkNode) stampRead() (s vclock.Stamp, key uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key = 1<<62 | (g.pointReads + 1)
	if p, ok := g.db.pointHeld(g.id, func(p vclock.Stamp) { g.reading[key] = p }, func() { delete(g.reading, key) }); ok {
		g.pointReads++
		return p, key
	}
	s = g.freshRead()
	g.reading[s.Seq()] = s
	return s, s.Seq()
}

// freshRead ticks a stamp for a read: after everything any gatekeeper has
// stamped. Called with mu held.
func (g *gkNode) freshRead() vclock.Stamp {
	g.sync()
	s := g.core.Stamp()
	g.publish(s)
	g.noteDelivered(&s.Clock)
	return s
}

// holdRead registers an existing snapshot stamp as in flight; ok is false
// when the watermark already passed it.
func (g *gkNode) holdRead(s vclock.Stamp, key uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.db.readable(s) {
		return false
	}
	g.reading[key] = s
	return true
}

func (g *gkNode) endRead(key uint64) {
	g.mu.Lock()
	delete(g.reading, key)
	g.mu.Unlock()
}

// beginCommit stamps a transaction (a commit or a move): the others'
// clocks merged, the stamp published and the read point refreshed.
func (g *gkNode) beginCommit() (vclock.Stamp, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sync()
	ts, err := g.core.BeginCommit()
	if err != nil {
		return ts, fmt.Errorf("%w: %v", ErrOverloaded, err)
	}
	g.publish(ts)
	g.refreshPoint()
	return ts, nil
}

// commit runs one transaction: stamp, execute on a store transaction, order
// after the last access of everything it touched (Kronos when concurrent),
// make it durable, hand its writes to the shards, and answer once handed.
func (g *gkNode) commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error) {
	st, err := g.db.st.Begin()
	if err != nil {
		return nil, mapStoreErr(err)
	}
	defer st.Discard()
	ts, err := g.beginCommit()
	if err != nil {
		return nil, err
	}
	dir := g.db.dir.Load()
	res, err := txn.Exec{Shards: uint32(g.db.cfg.Shards), Dir: dir}.Run(st, ts, reads, ops)
	if err == nil {
		// The shards it writes are known now, before the durable commit:
		// reads on the others need not wait for its fsync.
		g.mu.Lock()
		derr := g.core.Declare(ts, txn.ShardsOf(res.Ops))
		g.dispatch()
		g.mu.Unlock()
		if derr != nil {
			panic(derr) // programmer error: ts is in flight
		}
		g.db.yieldAt(yieldCritical, g.id, 0)
		err = st.Commit(ctx, func(c store.Critical) error {
			// Moves raise movesInFlight before their commit sections and
			// lower it once the directory has them: read here, in this
			// commit section, it says whether dir is the store's.
			current := g.db.movesInFlight.Load() == 0 && g.db.dir.Load() == dir
			return gatekeeper.OrderCommit(ctx, g.db.oracle, c, ts, res, dir, current)
		})
	}
	if err != nil {
		g.resolve(ts, nil)
		g.db.aborts.Add(1)
		return nil, mapStoreErr(err)
	}
	g.db.yieldAt(yieldResolve, g.id, 0)
	ack := g.resolve(ts, res.Ops)
	<-ack // never blocks for long: earlier stamps resolve in bounded time
	g.db.commits.Add(1)
	return &CommitResult{Handles: res.Handles, Snapshot: encodeSnapshot(ts)}, nil
}

// resolve ends a stamped transaction (ops nil: aborted) and returns the
// channel closed when its entries are handed to the shards.
func (g *gkNode) resolve(ts vclock.Stamp, ops []txn.ShardOp) chan struct{} {
	ch := make(chan struct{})
	g.mu.Lock()
	defer g.mu.Unlock()
	if ops != nil {
		g.acks[ts.Seq()] = ch
	} else {
		close(ch)
	}
	if err := g.core.Resolve(ts, ops); err != nil {
		panic(err) // programmer error: every stamp is resolved once
	}
	g.dispatch()
	return ch
}

func mapStoreErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrClosed):
		return ErrClosed
	case errors.Is(err, store.ErrOverloaded):
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	case store.IsRetryable(err):
		return fmt.Errorf("%w: %v", txn.ErrAborted, err)
	}
	return err
}

// runProgram starts a node program at stamp at (nil: a fresh stamp, taken
// under the same lock that registers the program) and waits for its result.
func (g *gkNode) runProgram(ctx context.Context, name string, comp nodeprog.Compiled, params json.RawMessage, at *vclock.Stamp) (any, error) {
	g.mu.Lock()
	if len(g.progs) >= g.db.cfg.ProgramsMax {
		g.mu.Unlock()
		return nil, ErrOverloaded
	}
	g.nextID++
	id := nodeprog.ProgID(uint64(g.id)<<48 | g.nextID)
	run := &progRun{done: make(chan struct{})}
	// The program is registered with its stamp before it runs (the GC
	// watermark stays below g.progs' stamps); a read point is registered
	// and then checked (DB.pointHeld).
	var ts vclock.Stamp
	if at != nil {
		ts = *at
	} else if p, ok := g.db.pointHeld(g.id, func(p vclock.Stamp) { run.stamp = p; g.progs[id] = run },
		func() { delete(g.progs, id) }); ok {
		ts = p
	} else {
		ts = g.freshRead()
	}
	run.stamp = ts
	coord, batches := nodeprog.NewCoordinatorFor(comp, id, name, params, g.db.shardOf, nodeprog.CoordinatorConfig{})
	run.coord = coord
	if coord.Done() {
		delete(g.progs, id)
		run.res, run.err = coord.Result()
		g.mu.Unlock()
		return run.res, run.err
	}
	g.progs[id] = run
	for _, b := range batches {
		run.touch(b.Shard)
	}
	g.mu.Unlock()
	for _, b := range batches {
		g.db.shards[b.Shard].push(progMsg{gk: g.id, stamp: ts, batch: b})
	}
	select {
	case <-run.done:
	case <-ctx.Done():
		g.finish(id, run, ctx.Err())
		<-run.done
	case <-g.db.done:
		return nil, ErrClosed
	case <-g.db.failed:
		return nil, g.db.check()
	}
	return run.res, run.err
}

// report takes a shard's report for one of this gatekeeper's programs, with
// the shards it sent batches to (so that finishing reaches them).
func (g *gkNode) report(rep nodeprog.Report, sentTo []nodeprog.Batch) {
	g.mu.Lock()
	run, ok := g.progs[rep.Prog]
	if !ok {
		g.mu.Unlock()
		// The program is over (an early answer, a failure, a cancel): tell
		// the shards its late batches go to before the batches arrive, so
		// they keep no state for it.
		for _, b := range sentTo {
			g.db.shards[b.Shard].push(finishMsg{prog: rep.Prog})
		}
		return
	}
	shards := make([]int, len(sentTo))
	for i, b := range sentTo {
		shards[i] = b.Shard
	}
	done, err := run.step(rep, shards)
	g.mu.Unlock()
	if done {
		g.finish(rep.Prog, run, err)
	}
}

// finish ends a program once: result or error to the caller, state released
// on every shard.
func (g *gkNode) finish(id nodeprog.ProgID, run *progRun, err error) {
	g.mu.Lock()
	if _, ok := g.progs[id]; !ok {
		g.mu.Unlock()
		return
	}
	delete(g.progs, id)
	run.settle(err)
	g.mu.Unlock()
	for i, s := range g.db.shards {
		if run.touched(i) {
			s.push(finishMsg{prog: id})
		}
	}
	close(run.done)
}

// inflightMin folds this gatekeeper's in-flight stamps (unresolved commits,
// reads, programs) and its clock into m, entry-wise minimum.
func (g *gkNode) inflightMin(m *vclock.Clock) {
	g.mu.Lock()
	defer g.mu.Unlock()
	minInto(m, g.core.Clock())
	if p, ok := g.core.ReadPoint(); ok {
		minInto(m, p.Clock) // a read may still be stamped with it
	}
	for _, s := range g.core.Inflight() {
		minInto(m, s.Clock)
	}
	for _, s := range g.reading {
		minInto(m, s.Clock)
	}
	for _, r := range g.progs {
		minInto(m, r.stamp.Clock)
	}
}

func minInto(m *vclock.Clock, c vclock.Clock) {
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
