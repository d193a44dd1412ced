package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// PutHook sees the PUTs a replica applies (ReplicaConfig.Hook).
type PutHook interface {
	// Put is called once per applied PUT, after it is durable and before it
	// is acknowledged, with the event's HVC stamp. Calls are serialised and
	// their stamps strictly increase.
	Put(at vclock.HVC, key string, value []byte)
}

// keyPrefix is the Pebble key prefix of a user key's siblings; other
// prefixes are free for later metadata.
const keyPrefix = 'v'

// stripes is the number of per-key lock stripes: PUTs to different keys
// run (and fsync, in one Pebble commit group) concurrently.
const stripes = 64

// Replica is one server's share of the store: the siblings of the keys whose
// preference lists hold this server, in Pebble, and the server's hybrid
// vector clock. It applies PUTs with Apply (read, decide, write with fsync,
// then acknowledge) and stamps every request with the HVC (§III-A), calling
// the hook on each applied PUT.
//
// A Replica is safe for concurrent use: PUTs to one key are serialised by a
// lock stripe, and clock stamping and the hook by one clock lock.
type Replica struct {
	cfg  ReplicaConfig
	db   *pebble.DB
	wopt *pebble.WriteOptions

	life  sync.RWMutex // held shared by requests, exclusively by Close
	locks [stripes]sync.Mutex

	clockMu sync.Mutex
	clock   *vclock.HybridClock
	// The rollback window (window.go), guarded by clockMu: records
	// [histFirst, histNext), the floor below which no rollback reaches,
	// and the rollback generation.
	histFirst, histNext uint64
	floor, gen          uint64
	pauseGen            uint64 // SetPause's, stored
	trimMu              sync.Mutex
	log                 *slog.Logger

	closed atomic.Bool
	stats  replicaCounters

	// The transactional writes' outbox (txn_outbox.go): the next record's
	// sequence number and how many records it holds.
	outNext atomic.Uint64
	outLen  atomic.Int64
}

type replicaCounters struct {
	gets, applied, duplicate, obsolete, rejected, undone atomic.Uint64
}

// OpenReplica opens (or creates) the replica's Pebble store.
func OpenReplica(cfg ReplicaConfig) (*Replica, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clock, err := vclock.NewHybridClock(cfg.Servers, cfg.Self, cfg.Epsilon, cfg.Now)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	po := &pebble.Options{Logger: pebbleLogger{log}}
	if cfg.FS != nil {
		po.FS = cfg.FS
	}
	db, err := pebble.Open(cfg.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", cfg.Dir, err)
	}
	r := &Replica{cfg: cfg, db: db, clock: clock, wopt: pebble.NoSync, log: log}
	if cfg.Sync {
		r.wopt = pebble.Sync
	}
	if err := r.openWindow(); err != nil {
		db.Close()
		return nil, err
	}
	if err := r.openOutbox(); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// Close closes the store. Requests after Close fail with ErrClosed.
func (r *Replica) Close() error {
	r.life.Lock()
	defer r.life.Unlock()
	if r.closed.Swap(true) {
		return nil
	}
	return r.db.Close()
}

// Self is the replica's server number.
func (r *Replica) Self() int { return r.cfg.Self }

// Stats returns the request counters.
func (r *Replica) Stats() kvcore.ReplicaStats {
	return kvcore.ReplicaStats{
		Gets: r.stats.gets.Load(), Applied: r.stats.applied.Load(), Duplicate: r.stats.duplicate.Load(),
		Obsolete: r.stats.obsolete.Load(), Rejected: r.stats.rejected.Load(), Undone: r.stats.undone.Load(),
	}
}

// Get returns key's siblings (none if never written) and the stamp of the
// read event. from is the HVC the client carries (zero: none); merging it
// makes the clock record what the client learnt elsewhere.
func (r *Replica) Get(key string, from vclock.HVC) ([]kvcore.Sibling, vclock.HVC, error) {
	if err := r.checkKey(key); err != nil {
		return nil, vclock.HVC{}, err
	}
	if err := r.checkFrom(from); err != nil {
		return nil, vclock.HVC{}, err
	}
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, vclock.HVC{}, kvcore.ErrClosed
	}
	sibs, err := r.load(key)
	if err != nil {
		return nil, vclock.HVC{}, err
	}
	r.stats.gets.Add(1)
	r.clockMu.Lock()
	at := r.stamp(from)
	r.clockMu.Unlock()
	return sibs, at, nil
}

// Put applies s to key (see Apply), durably before it returns, and returns
// the outcome and the event's stamp. An applied PUT is shown to the hook and
// leaves an undo record in the rollback window (window.go), in the same
// batch as the new siblings.
//
// The stamp is taken (and the hook called) before the write, under the
// clock lock, so that the undo record can carry it and stamps, sequence
// numbers and hook calls share one order; the PUT is acknowledged only
// after the write is durable. If the write then fails the hook has seen a
// PUT that did not happen; that is an I/O failure of the replica, reported
// as ErrUnavailable, and the monitors may report a phantom from it.
func (r *Replica) Put(key string, s kvcore.Sibling, from vclock.HVC) (kvcore.Outcome, vclock.HVC, error) {
	return r.put(key, s, from, nil)
}

// put is Put with extra writes committed in the same batch as the PUT
// (whatever its outcome): the transactional mode's markers (txn_store.go).
func (r *Replica) put(key string, s kvcore.Sibling, from vclock.HVC, extra func(b *pebble.Batch, at vclock.HVC)) (kvcore.Outcome, vclock.HVC, error) {
	if err := r.checkPut(key, s, from); err != nil {
		return 0, vclock.HVC{}, err
	}
	r.life.RLock()
	defer r.life.RUnlock()
	mu := &r.locks[kvcore.KeyHash(key)%stripes]
	mu.Lock()
	defer mu.Unlock()
	if r.closed.Load() {
		return 0, vclock.HVC{}, kvcore.ErrClosed
	}
	stored, err := r.load(key)
	if err != nil {
		return 0, vclock.HVC{}, err
	}
	next, o, err := kvcore.Apply(stored, s, r.cfg.SiblingsMax)
	if err != nil {
		r.stats.rejected.Add(1)
		return 0, vclock.HVC{}, err
	}
	r.clockMu.Lock()
	at := r.stamp(from)
	seq := r.histNext
	if o == kvcore.Applied {
		r.histNext++
		if r.cfg.Hook != nil {
			r.cfg.Hook.Put(at, key, s.Value)
		}
	}
	r.clockMu.Unlock()
	switch o {
	case kvcore.Applied:
		if err := r.write(key, next, histRecord{At: at, Key: key, Prev: stored, Sib: s}, seq, extra); err != nil {
			return 0, vclock.HVC{}, err
		}
		r.stats.applied.Add(1)
	case kvcore.Duplicate:
		r.stats.duplicate.Add(1)
	case kvcore.Obsolete:
		r.stats.obsolete.Add(1)
	}
	if o != kvcore.Applied && extra != nil {
		b := r.db.NewBatch()
		defer b.Close()
		extra(b, at)
		if err := b.Commit(r.wopt); err != nil {
			return 0, vclock.HVC{}, fmt.Errorf("%w: write %q: %v", kvcore.ErrUnavailable, key, err)
		}
	}
	return o, at, nil
}

// write stores key's new siblings and the PUT's undo record in one batch.
func (r *Replica) write(key string, next []kvcore.Sibling, rec histRecord, seq uint64, extra func(*pebble.Batch, vclock.HVC)) error {
	b := r.db.NewBatch()
	defer b.Close()
	if extra != nil {
		extra(b, rec.At)
	}
	_ = b.Set(pebbleKey(key), kvcore.AppendSiblings(nil, next), nil)
	if r.cfg.WindowMax > 0 {
		_ = b.Set(histKey(seq), appendHistRecord(nil, rec), nil)
	}
	if err := b.Commit(r.wopt); err != nil {
		return fmt.Errorf("%w: write %q: %v", kvcore.ErrUnavailable, key, err)
	}
	if r.cfg.WindowMax > 0 {
		r.trimWindow()
	}
	return nil
}

// Stamp records a local event (a detector heartbeat) and runs f with its
// stamp under the clock lock, so f's stamps interleave in order with the
// hook's.
func (r *Replica) Stamp(f func(at vclock.HVC)) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	f(r.clock.Tick())
}

// Clock returns the HVC of the replica's last event.
func (r *Replica) Clock() vclock.HVC {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.clock.Current()
}

// stamp ticks the clock, merging from if given. Caller holds clockMu.
func (r *Replica) stamp(from vclock.HVC) vclock.HVC {
	if from.IsZero() {
		return r.clock.Tick()
	}
	at, err := r.clock.Receive(from)
	assert(err == nil, "Receive of a checked clock: %v", err)
	return at
}

// load reads key's siblings.
func (r *Replica) load(key string) ([]kvcore.Sibling, error) {
	v, closer, err := r.db.Get(pebbleKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %q: %v", kvcore.ErrUnavailable, key, err)
	}
	defer closer.Close()
	sibs, err := kvcore.DecodeSiblings(v)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", key, err)
	}
	return sibs, nil
}

func (r *Replica) checkKey(key string) error {
	if len(key) == 0 || len(key) > r.cfg.KeyBytesMax {
		return fmt.Errorf("%w: key of %d bytes (want 1 to %d)", kvcore.ErrInvalid, len(key), r.cfg.KeyBytesMax)
	}
	return nil
}

func (r *Replica) checkFrom(from vclock.HVC) error {
	if from.IsZero() {
		return nil
	}
	if len(from.Entries) != r.cfg.Servers || int(from.Self) >= len(from.Entries) {
		return fmt.Errorf("%w: client clock has %d entries, the ring %d servers", kvcore.ErrInvalid, len(from.Entries), r.cfg.Servers)
	}
	if from.Epsilon != r.cfg.Epsilon {
		return fmt.Errorf("%w: client clock has ε=%d, the servers ε=%d", kvcore.ErrInvalid, from.Epsilon, r.cfg.Epsilon)
	}
	return nil
}

func (r *Replica) checkPut(key string, s kvcore.Sibling, from vclock.HVC) error {
	if err := r.checkKey(key); err != nil {
		return err
	}
	if len(s.Value) > r.cfg.ValueBytesMax {
		return fmt.Errorf("%w: value of %d bytes (at most %d)", kvcore.ErrInvalid, len(s.Value), r.cfg.ValueBytesMax)
	}
	if err := s.Version.Validate(); err != nil {
		return err
	}
	return r.checkFrom(from)
}

func pebbleKey(key string) []byte {
	b := make([]byte, 0, len(key)+1)
	b = append(b, keyPrefix)
	return append(b, key...)
}

// pebbleLogger routes Pebble's messages to slog: errors at Error, the rest at
// Debug (formatted only when enabled).
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "role", "kv")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "role", "kv")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
