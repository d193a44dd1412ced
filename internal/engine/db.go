package engine

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weft-db/weft/internal/shard"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// DB is an embedded Weft: gatekeepers, shards, an in-process Kronos and the
// Pebble store in one process. It implements API and is safe for concurrent use.
type DB struct {
	cfg    Config
	log    *slog.Logger
	st     store.Store
	oracle *order.Local
	reg    *nodeprog.Registry
	epoch  uint64
	gks    []*gkNode
	shards []*shardNode
	// group is the gatekeepers in shared memory: published clocks, read
	// points (gatekeeper.Group).
	group *gatekeeper.Group
	// delivered holds, per gatekeeper, a clock it had when it was idle:
	// every entry it stamped before was in the shards' inboxes, and its
	// later stamps follow the clock. A NOP without a message, read by the
	// shards (shard.Core.Complete); the clock is never modified.
	delivered []atomic.Pointer[vclock.Clock]
	// shardNotes holds, per (gatekeeper, shard) at gk*Shards+shard, a note
	// valid for that shard only: the gatekeeper's in-flight transactions
	// are declared to write elsewhere (gatekeeper.Core.NoteFor).
	shardNotes []atomic.Pointer[vclock.Clock]
	rr         atomic.Uint64 // round-robin gatekeeper choice

	wmMu      sync.Mutex
	watermark vclock.Clock // reads must be at or after it (vector clock)
	samples   []clockSample

	done   chan struct{}
	failed chan struct{} // closed by fail
	// stopped is closed by Close or fail, whichever comes first; closing is
	// set before Close wakes the shards.
	stopped   chan struct{}
	stopOnce  sync.Once
	closing   atomic.Bool
	wg        sync.WaitGroup
	closeOnce sync.Once
	failErr   atomic.Pointer[error]

	commits, aborts, programs, applied, nops atomic.Uint64
	// dir places vertices: the shard count's placement and the units moved
	// since (moves.go); it changes in a move's commit section.
	dir             atomic.Pointer[txn.Directory]
	moves, forwards atomic.Uint64
	// movesInFlight counts moves between the start of their commit
	// sections and their adoption by dir (gkNode.commit reads it).
	movesInFlight atomic.Int64
	// yield, when set (tests), is called at the shells' yield points
	// (schedule.go); set before any goroutine uses the DB.
	yield yielder
}

type clockSample struct {
	at    time.Time
	clock vclock.Clock
}

var _ API = (*DB)(nil)

// Open starts an embedded Weft, rebuilding every shard from the store.
func Open(cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := openStore(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("engine: opening the store: %w", err)
	}
	if cfg.Shards == 0 || cfg.Gatekeepers == 0 {
		shards, gks := MachineTopology()
		if cfg.Shards == 0 {
			if cfg.Shards, err = storedShards(st, shards); err != nil {
				st.Close()
				return nil, err
			}
		}
		if cfg.Gatekeepers == 0 {
			cfg.Gatekeepers = gks
		}
	}
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		st.Close()
		return nil, err
	}
	db := &DB{cfg: cfg, log: log, st: st, oracle: oracle, reg: nodeprog.Builtins(), done: make(chan struct{}), failed: make(chan struct{}), stopped: make(chan struct{}),
		group: gatekeeper.NewGroup(cfg.Gatekeepers, cfg.NoReadPoints, cfg.plants.shell), delivered: make([]atomic.Pointer[vclock.Clock], cfg.Gatekeepers),
		shardNotes: make([]atomic.Pointer[vclock.Clock], cfg.Gatekeepers*cfg.Shards)}
	if db.epoch, err = db.startEpoch(); err != nil {
		st.Close()
		return nil, err
	}
	dir, err := txn.NewDirectory(uint32(cfg.Shards), uint32(cfg.Shards))
	if err != nil {
		st.Close()
		return nil, err
	}
	db.dir.Store(dir) // recover reads the stored one
	for i := 0; i < cfg.Gatekeepers; i++ {
		db.gks = append(db.gks, newGK(db, i))
	}
	for i := 0; i < cfg.Shards; i++ {
		s, err := newShardNode(db, i)
		if err != nil {
			st.Close()
			return nil, err
		}
		db.shards = append(db.shards, s)
	}
	start := time.Now()
	if err := db.recover(); err != nil {
		st.Close()
		return nil, fmt.Errorf("engine: rebuilding shards from the store: %w", err)
	}
	log.Info("weft engine open", "epoch", db.epoch, "shards", cfg.Shards, "gatekeepers", cfg.Gatekeepers,
		"recovery", time.Since(start))
	for _, s := range db.shards {
		s.Publish()
		db.wg.Add(1)
		go func() {
			defer db.wg.Done()
			s.Loop()
		}()
	}
	db.wg.Add(1)
	go db.gcLoop()
	return db, nil
}

// storedShards is the shard count the store was created with, or def for
// a new store.
func storedShards(st store.Store, def int) (int, error) {
	t, err := st.Begin()
	if err != nil {
		return 0, err
	}
	defer t.Discard()
	b, ok, err := t.Get(txn.MetaKey("shards"))
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return def, nil
	case len(b) != 8 || binary.BigEndian.Uint64(b) < 1 || binary.BigEndian.Uint64(b) > 1024:
		return 0, fmt.Errorf("engine: the store's shard count is malformed (%x)", b)
	}
	return int(binary.BigEndian.Uint64(b)), nil
}

func newResolver(db *DB) *order.Resolver { return order.NewResolver(db.oracle, db.cfg.OracleCacheMax) }

// startEpoch bumps the epoch stored in the store (every stamp of this run
// follows every stamp of earlier runs by vector clock) and checks the shard
// count.
func (db *DB) startEpoch() (uint64, error) {
	for attempt := 0; ; attempt++ {
		t, err := db.st.Begin()
		if err != nil {
			return 0, err
		}
		var epoch uint64
		if b, ok, err := t.Get(txn.MetaKey("epoch")); err != nil {
			t.Discard()
			return 0, err
		} else if ok && len(b) == 8 {
			epoch = binary.BigEndian.Uint64(b)
		}
		if b, ok, err := t.Get(txn.MetaKey("shards")); err != nil {
			t.Discard()
			return 0, err
		} else if ok && len(b) == 8 && binary.BigEndian.Uint64(b) != uint64(db.cfg.Shards) {
			t.Discard()
			return 0, fmt.Errorf("engine: the store was created with %d shards, not %d", binary.BigEndian.Uint64(b), db.cfg.Shards)
		}
		epoch++
		_ = t.Set(txn.MetaKey("epoch"), binary.BigEndian.AppendUint64(nil, epoch))
		_ = t.Set(txn.MetaKey("shards"), binary.BigEndian.AppendUint64(nil, uint64(db.cfg.Shards)))
		err = t.Commit(context.Background(), nil)
		t.Discard()
		if err == nil {
			return epoch, nil
		}
		if !store.IsRetryable(err) || attempt > 10 {
			return 0, err
		}
	}
}

func (db *DB) shardOf(h string) int { return int(db.dir.Load().ShardOf(h)) }

func (db *DB) gk() *gkNode { return db.gks[db.rr.Add(1)%uint64(len(db.gks))] }

// fail records a fatal internal error (a shard could not apply a committed
// transaction) and stops serving.
func (db *DB) fail(err error) {
	if db.failErr.CompareAndSwap(nil, &err) {
		db.log.Error("weft engine failed", "err", err)
		close(db.failed)
		db.stopOnce.Do(func() { close(db.stopped) })
	}
}

func (db *DB) check() error {
	if p := db.failErr.Load(); p != nil {
		return fmt.Errorf("engine failed: %w", *p)
	}
	select {
	case <-db.done:
		return ErrClosed
	default:
	}
	return nil
}

// Close stops every role and closes the store.
func (db *DB) Close() error {
	var err error
	db.closeOnce.Do(func() {
		db.closing.Store(true)
		close(db.done)
		db.stopOnce.Do(func() { close(db.stopped) })
		for _, s := range db.shards {
			s.Wake()
		}
		db.wg.Wait()
		err = db.st.Close()
	})
	return err
}

// Snapshot tokens.

func encodeSnapshot(s vclock.Stamp) Snapshot {
	return Snapshot{Token: base64.RawURLEncoding.EncodeToString(txn.EncodeStamp(s))}
}

func decodeSnapshot(s Snapshot, gatekeepers int) (vclock.Stamp, error) {
	b, err := base64.RawURLEncoding.DecodeString(s.Token)
	if err != nil || len(b) == 0 {
		return vclock.Stamp{}, fmt.Errorf("%w: malformed snapshot token", ErrBadRequest)
	}
	st, err := txn.DecodeStamp(b)
	if err != nil || int(st.Owner) >= gatekeepers {
		return vclock.Stamp{}, fmt.Errorf("%w: malformed snapshot token", ErrBadRequest)
	}
	return st, nil
}

// readable reports whether reads at s are still served: s is at or after the
// watermark by vector clock.
func (db *DB) readable(s vclock.Stamp) bool {
	db.wmMu.Lock()
	defer db.wmMu.Unlock()
	return db.watermark.Counters == nil || vclock.LessEq(db.watermark, s.Clock)
}

// Begin implements API.
func (db *DB) Begin(ctx context.Context) (Snapshot, error) {
	if err := db.check(); err != nil {
		return Snapshot{}, err
	}
	g := db.gk()
	s, key := g.stampRead()
	g.endRead(key)
	return encodeSnapshot(s), nil
}

// atSnapshot resolves a snapshot (nil: a fresh one) to a stamp held in flight
// until release is called.
func (db *DB) atSnapshot(snap *Snapshot) (vclock.Stamp, func(), error) {
	if snap == nil || snap.Token == "" {
		g := db.gk()
		s, key := g.stampRead()
		return s, func() { g.endRead(key) }, nil
	}
	s, err := decodeSnapshot(*snap, len(db.gks))
	if err != nil {
		return s, nil, err
	}
	if s.Clock.Epoch != db.epoch {
		return s, nil, fmt.Errorf("%w: the snapshot is from an earlier run of the server", ErrSnapshotTooOld)
	}
	g := db.gks[s.Owner]
	key := uint64(1)<<63 | db.rr.Add(1)
	if !g.holdRead(s, key) {
		return s, nil, ErrSnapshotTooOld
	}
	return s, func() { g.endRead(key) }, nil
}

// read runs fn on shard sh at stamp s and waits for it.
func (db *DB) read(ctx context.Context, sh int, s vclock.Stamp, fn func(r *reader)) error {
	return db.readOn(ctx, sh, "", s, fn)
}

// readName runs fn at stamp s on the shard that had name's placement unit
// at s: the directory's, or where shards forward the read (moves.go).
func (db *DB) readName(ctx context.Context, name string, s vclock.Stamp, fn func(r *reader)) error {
	sh := db.shardOf(name)
	for hops := 0; ; hops++ {
		err := db.readOn(ctx, sh, name, s, fn)
		var mv *shard.MovedError
		if !errors.As(err, &mv) {
			return err
		}
		if hops >= forwardsMax {
			return fmt.Errorf("engine: a read of %q at %s was forwarded %d times", name, s, hops)
		}
		db.forwards.Add(1)
		sh = mv.Shard
	}
}

// readOn runs fn on shard sh at stamp s (refused with a *shard.MovedError when
// name is set and not sh's at s) and waits for it.
func (db *DB) readOn(ctx context.Context, sh int, name string, s vclock.Stamp, fn func(r *reader)) error {
	w := shard.NewWaiter()
	db.shards[sh].Push(shard.ReadMsg{Stamp: s, Fn: fn, W: w, Name: name})
	var cancel <-chan struct{}
	if ctx != nil {
		cancel = ctx.Done()
	}
	select {
	case <-w.Ch:
		err := w.Err
		shard.PutWaiter(w) // the shard is done with it
		return shardErr(err)
	case <-cancel:
		return ctx.Err() // the shard may still use w: it is not reused
	case <-db.stopped:
		if err := db.check(); err != nil {
			return err
		}
		return ErrClosed
	}
}

// Programs implements API.
func (db *DB) Programs() []ProgramInfo {
	out := programsOf(db.reg)
	for _, n := range db.reg.Analyses() {
		out = append(out, programInfo(db.reg, n, "analysis"))
	}
	return out
}

// Run implements API.
func (db *DB) Run(ctx context.Context, program string, params json.RawMessage, at *Snapshot) (json.RawMessage, error) {
	if err := db.check(); err != nil {
		return nil, err
	}
	isProg, params, err := lookupProgram(db.reg, program, params)
	if err != nil {
		return nil, err
	}
	db.programs.Add(1)
	var res any
	var comp nodeprog.Compiled
	if isProg {
		if comp, err = db.reg.Compile(program, params); err != nil {
			return nil, mapProgErr(err)
		}
	}
	switch {
	case isProg && nodeprog.IsLocal(comp):
		res, err = db.runLocal(ctx, program, comp, at)
	case isProg && (at == nil || at.Token == ""):
		// A fresh stamp is taken and registered in one step: the program's
		// own registration holds the GC watermark below it.
		res, err = db.gk().runProgram(ctx, program, comp, params, nil)
	default:
		s, release, err2 := db.atSnapshot(at)
		if err2 != nil {
			return nil, err2
		}
		if isProg {
			res, err = db.gks[s.Owner].runProgram(ctx, program, comp, params, &s)
		} else {
			res, err = db.analyze(ctx, program, params, s)
		}
		release()
	}
	if err != nil {
		return nil, mapProgErr(err)
	}
	return encodeResult(program, res)
}

// lookupProgram says whether program is a node program (else a
// whole-snapshot analysis) and defaults empty params to {}; an unknown name
// is ErrUnknownProgram.
func lookupProgram(reg *nodeprog.Registry, program string, params json.RawMessage) (isProg bool, _ json.RawMessage, _ error) {
	_, isProg = reg.Program(program)
	if _, isAnalysis := reg.Analysis(program); !isProg && !isAnalysis {
		return false, nil, fmt.Errorf("%w: %q (GET /v1/programs lists them)", ErrUnknownProgram, program)
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	return isProg, params, nil
}

// encodeResult is a program's result as JSON.
func encodeResult(program string, res any) ([]byte, error) {
	var b []byte
	var err error
	if a, ok := res.(nodeprog.JSONAppender); ok {
		b, err = a.AppendJSON(nil)
	} else {
		b, err = json.Marshal(res)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: encoding the result of %s: %w", program, err)
	}
	return b, nil
}

func mapProgErr(err error) error {
	switch {
	case errors.Is(err, nodeprog.ErrBadParams), errors.Is(err, nodeprog.ErrUnknownProgram):
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	case errors.Is(err, nodeprog.ErrOverloaded):
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	case errors.Is(err, nodeprog.ErrSnapshotTooOld):
		return fmt.Errorf("%w: %v", ErrSnapshotTooOld, err)
	}
	return err
}

// runLocal runs a Local program (one vertex read) as a snapshot read on the
// vertex's shard: no coordinator, no runner state to release.
func (db *DB) runLocal(ctx context.Context, name string, comp nodeprog.Compiled, at *Snapshot) (any, error) {
	h, err := nodeprog.LocalStart(comp)
	if err != nil {
		return nil, err
	}
	s, release, err := db.atSnapshot(at)
	if err != nil {
		return nil, err
	}
	defer release()
	var res any
	var progErr error
	err = db.readName(ctx, h.To, s, func(r *reader) {
		res, progErr = nodeprog.RunLocal(comp, name, h, r.Lookup(s))
	})
	if err != nil {
		return nil, err
	}
	return res, progErr
}

// analyze copies every shard's partition at s and runs a whole-snapshot
// analysis over the union.
func (db *DB) analyze(ctx context.Context, name string, params json.RawMessage, s vclock.Stamp) (any, error) {
	job, err := db.reg.CompileAnalysis(name, params)
	if err != nil {
		return nil, err
	}
	snap := &snapshot{parts: make([][]*snapVertex, len(db.shards))}
	for i := range db.shards {
		err := db.read(ctx, i, s, func(r *reader) {
			for v := range r.S.G.Vertices(s, r.Ord) {
				snap.parts[i] = append(snap.parts[i], copyVertex(v))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return job.Run(snap, nodeprog.SnapshotLimits{})
}

// Commit implements API.
func (db *DB) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error) {
	if err := db.check(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: a commit needs at least one operation (read-only transactions need no commit)", ErrBadRequest)
	}
	return db.gk().commit(ctx, reads, ops)
}

// Status implements API.
func (db *DB) Status(ctx context.Context) (*Status, error) {
	st := &Status{Gatekeepers: len(db.gks), Shards: len(db.shards), Epoch: db.epoch,
		Commits: db.commits.Load(), Aborts: db.aborts.Load(), Programs: db.programs.Load(), NopRequests: db.nops.Load(),
		PointReads: db.group.PointReads()}
	st.KronosCalls, _ = db.oracle.Calls()
	for _, s := range db.shards {
		c := s.Stats()
		st.Vertices += int64(c.Vertices)
		st.Edges += int64(c.Edges)
	}
	if err := db.check(); err != nil {
		return st, err
	}
	return st, nil
}
