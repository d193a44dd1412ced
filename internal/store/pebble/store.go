package pebble

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/groupcommit"
	"github.com/weft-db/weft/internal/store/txnset"
)

// Store is the embedded Pebble implementation of store.Store. It is safe for
// concurrent use.
type Store struct {
	opts    Options
	db      *pebble.DB
	syncOpt *pebble.WriteOptions

	queue *groupcommit.Queue[*request] // bounded by Options.CommitQueueMax
	quit  chan struct{}                // closed by Close: the committer drains and exits
	done  chan struct{}                // closed when the committer has exited

	// gate counts the calls that may touch Pebble or the queue: once Close
	// has shut it and waited, none does.
	gate groupcommit.Gate

	// mu guards the fields below. The committer is the only writer of hist
	// and version and reads them without mu; others read them under RLock.
	mu      sync.RWMutex
	hist    history
	version uint64                 // latest published commit group
	cur     *snapshot              // the snapshot at version, handed to Begin
	snaps   map[*snapshot]struct{} // every open Pebble snapshot, for Close
	failed  error                  // set when a batch failed to apply

	st groupcommit.Counters
}

// snapshot is a Pebble snapshot taken right after commit group version was
// applied, shared by every Txn begun until the next group. refs counts the
// Txns plus one for the Store while it is cur.
type snapshot struct {
	version uint64
	ps      *pebble.Snapshot
	refs    atomic.Int64
	closed  bool // guarded by Store.mu
}

var _ store.Store = (*Store)(nil)

// Open opens (or creates) the store in dir.
func Open(dir string, o Options) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cache := pebble.NewCache(o.CacheBytes)
	defer cache.Unref() // Pebble holds its own reference while open
	po := &pebble.Options{Logger: pebbleLogger{log}, Cache: cache, MemTableSize: uint64(o.MemTableBytes)}
	if o.FS != nil {
		po.FS = o.FS
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("store/pebble: open %s: %w", dir, err)
	}
	s := &Store{
		opts:    o,
		db:      db,
		syncOpt: pebble.NoSync,
		queue:   groupcommit.NewQueue[*request](o.CommitQueueMax),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		hist:    newHistory(o.RecentWritesMax, o.RecentWriteBytesMax),
		snaps:   make(map[*snapshot]struct{}),
	}
	if o.Sync {
		s.syncOpt = pebble.Sync
	}
	s.cur = s.newSnapshot(0)
	go s.run()
	return s, nil
}

// newSnapshot snapshots Pebble's current state as version; the caller
// publishes it.
func (s *Store) newSnapshot(version uint64) *snapshot {
	sn := &snapshot{version: version, ps: s.db.NewSnapshot()}
	sn.refs.Store(1)
	s.mu.Lock()
	s.snaps[sn] = struct{}{}
	s.mu.Unlock()
	return sn
}

// release drops one reference to sn, closing it with the last.
func (s *Store) release(sn *snapshot) {
	if sn.refs.Add(-1) > 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sn.closed {
		sn.closed = true
		delete(s.snaps, sn)
		_ = sn.ps.Close() // only fails on a closed DB, which closed it
	}
}

// Begin implements store.Store.
func (s *Store) Begin() (store.Txn, error) {
	if err := s.gate.Enter(); err != nil {
		return nil, err
	}
	defer s.gate.Exit()
	s.mu.RLock()
	sn, failed := s.cur, s.failed
	if failed == nil {
		sn.refs.Add(1)
	}
	s.mu.RUnlock()
	if failed != nil {
		return nil, failed
	}
	s.st.Begins.Add(1)
	return &txn{Txn: txnset.Txn{BytesMax: s.opts.TxnBytesMax}, s: s, snap: sn}, nil
}

// Close implements store.Store. It waits for calls in progress (a Scan
// waits for its callback), lets the committer finish the group it holds,
// fails queued commits with store.ErrClosed, closes every snapshot still
// held by open Txns, and closes Pebble, which flushes.
func (s *Store) Close() error {
	if err := s.gate.Close(); err != nil {
		return err
	}
	close(s.quit)
	<-s.done
	s.mu.Lock()
	for sn := range s.snaps {
		sn.closed = true
		_ = sn.ps.Close()
	}
	s.snaps = nil
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store/pebble: close: %w", err)
	}
	return nil
}

// Stats implements store.Store.
func (s *Store) Stats() store.Stats {
	st := s.st.Stats()
	s.mu.RLock()
	st.HistoryKeys = uint64(s.hist.keys)
	st.HistoryEvicts = s.hist.evicts
	s.mu.RUnlock()
	return st
}

// commitReadOnly validates a Txn without writes or hook against the history
// up to the latest published group: its reads are then current as of that
// group, so it serializes there, with no batch and no fsync.
func (s *Store) commitReadOnly(t *txn) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.failed != nil {
		return s.failed
	}
	return s.hist.check(t.snap.version, &t.Reads)
}

// pebbleLogger routes Pebble's messages to slog: errors at Error, the rest
// at Debug (formatted only when enabled).
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "role", "store")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "role", "store")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
