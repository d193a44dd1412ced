package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weft-db/weft/internal/shard"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// gkNode is one gatekeeper of weft serve: the shell every gatekeeper runs
// (gatekeeper.Shell, which the simulation runs too), over links in shared
// memory (gkEnv) and the DB's placement directory. What is left here is
// waiting for the shell's answers and mapping its errors to the API's.
type gkNode struct {
	db    *DB
	id    int
	shell *gatekeeper.Shell
}

func newGK(db *DB, id int) *gkNode {
	g := &gkNode{db: db, id: id}
	g.shell = gatekeeper.NewShell(gatekeeper.ShellConfig{
		Core: gatekeeper.Config{ID: uint32(id), Gatekeepers: db.cfg.Gatekeepers, Shards: db.cfg.Shards,
			Epoch: db.epoch, InflightMax: 1 << 14, ReadPoints: !db.cfg.NoReadPoints},
		Group: db.group, Store: liveStore{db}, Oracle: db.oracle, Env: gkEnv{db: db, id: id},
		Placement: placement{db}, Registry: db.reg, ProgramsMax: db.cfg.ProgramsMax, Plants: db.cfg.plants.shell,
		Failed: func(err error) {
			db.fail(fmt.Errorf("gatekeeper %d: the outcome of a commit is unknown (restart to rebuild from the store): %w", id, err))
		},
	})
	return g
}

// gkEnv is a gatekeeper's links in one process: shards' inboxes and notes
// in shared memory; a yield point lets the test scheduler in (schedule.go)
// and then goes on, on the same goroutine.
type gkEnv struct {
	db *DB
	id int
}

func (e gkEnv) Go(p gatekeeper.Point, gk, arg int, next gatekeeper.Step) {
	e.db.yieldAt(p, gk, arg)
	next.Run()
}

func (e gkEnv) Deliver(sh uint32, en gatekeeper.Entry) { e.db.shards[sh].Push(en) }

func (e gkEnv) Batch(stamp vclock.Stamp, b nodeprog.Batch) {
	e.db.shards[b.Shard].Push(shard.ProgMsg{GK: e.id, Stamp: stamp, Batch: b})
}

func (e gkEnv) Finish(sh int, prog nodeprog.ProgID) {
	e.db.shards[sh].Push(shard.FinishMsg{Prog: prog})
}

// Noted publishes a note for the shards to read before their next inbox
// (shard.Shell.loadNotes): the pushes it follows happened before the store,
// so a shard that loads the note finds those entries in its inbox.
func (e gkEnv) Noted(sh int, c *vclock.Clock) {
	if sh < 0 {
		e.db.delivered[e.id].Store(c)
		return
	}
	e.db.shardNotes[e.id*e.db.cfg.Shards+sh].Store(c)
}

func (gkEnv) Announce() {} // one process: no peers to announce to

// placement is the DB's directory for the shells.
type placement struct{ db *DB }

func (p placement) Dir() *txn.Directory { return p.db.dir.Load() }

// Checked refuses nothing: in one process the commit section asks Current.
func (placement) Checked(store.Txn, *txn.Directory, *txn.Result) error { return nil }

// Current: moves raise movesInFlight before their commit sections and
// lower it once the directory has them, so read in a commit section it
// says whether d is the store's directory.
func (p placement) Current(d *txn.Directory) bool {
	return p.db.movesInFlight.Load() == 0 && p.db.dir.Load() == d
}

func (p placement) BeginMove() { p.db.movesInFlight.Add(1) }

func (p placement) EndMove(u txn.Unit, home *txn.Home) {
	if home != nil {
		gatekeeper.AdoptMove(&p.db.dir, u, *home)
		p.db.moves.Add(1)
	}
	p.db.movesInFlight.Add(-1)
}

// liveStore begins transactions on the DB's current store (tests swap it
// for one that holds commits).
type liveStore struct{ db *DB }

func (s liveStore) Begin() (store.Txn, error) { return s.db.st.Begin() }

// requestNop answers a shard waiting for this gatekeeper's queue to pass
// clock c: a note published for the shard (true; the shard reads it with
// its next inbox) or a NOP queued behind the transactions in flight.
func (g *gkNode) requestNop(sh uint32, c vclock.Clock) (noted bool) {
	g.db.nops.Add(1)
	return g.shell.RequestNop(sh, c, true)
}

// stampRead returns a stamp for a snapshot or program, registered as in
// flight until endRead(key): a read point when one may be used, else a
// fresh stamp.
func (g *gkNode) stampRead() (vclock.Stamp, uint64) {
	if s, key, ok := g.shell.PointRead(); ok {
		return s, key
	}
	s, key, ok := g.shell.FreshRead()
	if !ok {
		panic("engine: a read stamp was deferred by the in-process links") // gkEnv.Go runs at once
	}
	return s, key
}

// holdRead registers an existing snapshot stamp as in flight; ok is false
// when the watermark already passed it.
func (g *gkNode) holdRead(s vclock.Stamp, key uint64) bool {
	return g.shell.HoldRead(s, key, g.db.readable)
}

func (g *gkNode) endRead(key uint64) { g.shell.EndRead(key) }

// commit runs one transaction through the shell and answers once its
// writes are handed to the shards.
func (g *gkNode) commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error) {
	type outcome struct {
		res *txn.Result
		ts  vclock.Stamp
		err error
	}
	ch := make(chan outcome, 1)
	g.shell.Commit(ctx, reads, ops, nil, func(res *txn.Result, ts vclock.Stamp, err error) { ch <- outcome{res, ts, err} })
	o := <-ch // never blocks for long: earlier stamps resolve in bounded time
	if o.err != nil {
		if errors.Is(o.err, gatekeeper.ErrOverloaded) {
			return nil, fmt.Errorf("%w: %v", ErrOverloaded, o.err)
		}
		if !o.ts.IsZero() {
			g.db.aborts.Add(1)
		}
		return nil, mapStoreErr(o.err)
	}
	g.db.commits.Add(1)
	return &CommitResult{Handles: o.res.Handles, Snapshot: encodeSnapshot(o.ts)}, nil
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

// runProgram runs a node program at stamp at (nil: a read point or a fresh
// stamp, registered with the program) and waits for its result.
func (g *gkNode) runProgram(ctx context.Context, name string, comp nodeprog.Compiled, params json.RawMessage, at *vclock.Stamp) (any, error) {
	return awaitProgram(ctx, g.shell, name, comp, params, at, g.db.stopped, func() error { return cmp.Or(g.db.check(), ErrClosed) })
}

// awaitProgram runs a node program through a gatekeeper shell and waits
// for its result: ctx's end cancels it (the shell answers), and stopped
// closing ends the wait with stoppedErr's error.
func awaitProgram(ctx context.Context, sh *gatekeeper.Shell, name string, comp nodeprog.Compiled, params json.RawMessage, at *vclock.Stamp,
	stopped <-chan struct{}, stoppedErr func() error) (any, error) {
	type outcome struct {
		res any
		err error
	}
	ch := make(chan outcome, 1)
	id, err := sh.RunProgram(name, comp, params, at, func(res any, err error) { ch <- outcome{res, err} })
	if err != nil {
		return nil, ErrOverloaded
	}
	for cancel := ctx.Done(); ; cancel = nil {
		select {
		case o := <-ch:
			return o.res, o.err
		case <-cancel:
			sh.Cancel(id, ctx.Err())
		case <-stopped:
			return nil, stoppedErr()
		}
	}
}

// report takes a shard's report for one of this gatekeeper's programs, with
// the batches it sent on.
func (g *gkNode) report(rep nodeprog.Report, sentTo []nodeprog.Batch) { g.shell.Report(rep, sentTo) }

// inflightMin folds this gatekeeper's in-flight stamps (unresolved commits,
// reads, programs) and its clock into m, entry-wise minimum.
func (g *gkNode) inflightMin(m *vclock.Clock) { g.shell.InflightMin(m) }

func minInto(m *vclock.Clock, c vclock.Clock) { gatekeeper.MinInto(m, c) }
