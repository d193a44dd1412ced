package bulk

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Epoch is the epoch of every bulk stamp: the first engine.Open of the
// result starts Epoch+1.
const Epoch = 1

// Sentinels.
var (
	// ErrNotEmpty: the target directory exists and holds something.
	ErrNotEmpty = errors.New("bulk: the data directory is not empty (a bulk load builds a new store; load into an existing one online with weft load)")
	// ErrUnsupported answers the engine calls a bulk load has no use for.
	ErrUnsupported = errors.New("bulk: not available while bulk loading")
	// ErrDone answers calls after Finish or Abort.
	ErrDone = errors.New("bulk: the load is finished or aborted")
)

// Config configures Create.
type Config struct {
	// Dir is the data directory to create: absent or empty. Required.
	Dir string
	// Shards is the shard count the store is created with; weft serve must
	// open it with the same (default engine.DefaultConfig's).
	Shards int
	// Gatekeepers is the width of the stamps (default engine.DefaultConfig's).
	Gatekeepers int
	// MemBytesMax bounds the store kept in memory (keys, values and about
	// 96 bytes of overhead per entry): beyond it, after a commit, it is
	// written to Pebble in key order and memory starts empty again.
	// Default 1 GiB.
	MemBytesMax int
	// MemTableBytes and CacheBytes are Pebble's (defaults 64 MiB, 256 MiB).
	MemTableBytes int64
	CacheBytes    int64
}

// DefaultConfig returns the defaults for dir.
func DefaultConfig(dir string) Config {
	e := engine.DefaultConfig()
	return Config{Dir: dir, Shards: e.Shards, Gatekeepers: e.Gatekeepers, MemBytesMax: 1 << 30,
		MemTableBytes: 64 << 20, CacheBytes: 256 << 20}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("bulk: Dir is empty")
	case c.Shards < 1 || c.Shards > 1<<16:
		return fmt.Errorf("bulk: Shards %d out of range [1, 65536]", c.Shards)
	case c.Gatekeepers < 1 || c.Gatekeepers > 64:
		return fmt.Errorf("bulk: Gatekeepers %d out of range [1, 64]", c.Gatekeepers)
	case c.MemBytesMax < 1<<10 || c.MemBytesMax > 1<<31:
		return fmt.Errorf("bulk: MemBytesMax %d out of range [1 KiB, 2 GiB]", c.MemBytesMax)
	case c.MemTableBytes < 1<<20 || c.CacheBytes < 0:
		return errors.New("bulk: MemTableBytes must be at least 1 MiB, CacheBytes not negative")
	}
	return nil
}

// Stats counts a bulk load's work.
type Stats struct {
	Commits  uint64 // transactions committed
	Aborts   uint64 // transactions refused (their writes dropped)
	Vertices int64  // live vertices
	Edges    int64  // live edges
	Spills   uint64 // times memory was written to Pebble (Finish's included)
	// Entries counts the keys written to Pebble (by spills); MemBytesPeak
	// is the largest estimate of memory held before a spill (MemBytesMax
	// bounds it, give or take one transaction).
	Entries      int64
	MemBytesPeak int64
	// Overlapping counts the sorted tables a direct load wrote before its
	// end because its memory was full (Pebble compacts them with the
	// others).
	Overlapping int64
}

// DB is an engine.API building a new store (doc.go).
type DB struct {
	cfg Config
	tmp string
	x   txn.Exec
	// oracle is the commit hook's (gatekeeper.OrderCommit); bulk stamps
	// follow each other by vector clock, so it is never asked.
	oracle order.Oracle
	mu     sync.Mutex
	pdb    *pebble.DB
	kv     *memKV
	seq    uint64
	st     Stats
	done   bool // no more calls: finished, aborted or failed
	// direct and directOver list the SSTables direct Tables wrote
	// (direct.go), disjoint and overlapping, for Finish to ingest;
	// directN numbers them.
	direct     []string
	directOver []string
	directN    int
	// closed is set once Finish or Abort has dealt with the store.
	closed bool
}

var (
	_ engine.API         = (*DB)(nil)
	_ engine.BatchReader = (*DB)(nil)
)

// Create checks that cfg.Dir is absent or empty and opens a new store in a
// temporary directory beside it.
func Create(cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkEmpty(cfg.Dir); err != nil {
		return nil, err
	}
	dir := filepath.Clean(cfg.Dir)
	tmp := fmt.Sprintf("%s.bulk-%d", dir, os.Getpid())
	if _, err := os.Stat(tmp); err == nil {
		return nil, fmt.Errorf("bulk: %s exists (an interrupted bulk load's): remove it first", tmp)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("bulk: %w", err)
	}
	cache := pebble.NewCache(cfg.CacheBytes)
	defer cache.Unref()
	popts := &pebble.Options{Cache: cache, MemTableSize: uint64(cfg.MemTableBytes), DisableWAL: true,
		Logger: quietLogger{}, FS: vfs.Default}
	pdb, err := pebble.Open(tmp, popts)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("bulk: creating the store in %s: %w", tmp, err)
	}
	place, err := txn.NewDirectory(uint32(cfg.Shards), uint32(cfg.Shards))
	if err != nil {
		_ = pdb.Close()
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		_ = pdb.Close()
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return &DB{cfg: cfg, tmp: tmp, x: txn.Exec{Shards: uint32(cfg.Shards), Dir: place}, oracle: oracle, pdb: pdb, kv: newMemKV(pdb, popts, tmp)}, nil
}

// checkEmpty reports ErrNotEmpty when dir exists with entries.
func checkEmpty(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("bulk: %s is not a directory", dir)
	}
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return fmt.Errorf("bulk: %w", err)
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %s holds %s", ErrNotEmpty, dir, names[0])
	}
	return nil
}

// Finish commits the last batch, records the epoch and shard count, flushes
// the store to its tables, closes it and renames it onto cfg.Dir.
func (db *DB) Finish() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrDone
	}
	if db.done {
		return errors.New("bulk: a write to the store failed: only Abort is left")
	}
	db.done, db.closed = true, true
	err := db.finish()
	if err != nil {
		_ = os.RemoveAll(db.tmp)
	}
	return err
}

func (db *DB) finish() error {
	_ = db.kv.Set(txn.MetaKey("epoch"), binary.BigEndian.AppendUint64(nil, Epoch))
	_ = db.kv.Set(txn.MetaKey("shards"), binary.BigEndian.AppendUint64(nil, uint64(db.cfg.Shards)))
	if err := db.spill(); err != nil {
		_ = db.pdb.Close()
		return fmt.Errorf("bulk: writing the store: %w", err)
	}
	if err := db.ingestDirect(); err != nil {
		_ = db.pdb.Close()
		return fmt.Errorf("bulk: ingesting the direct tables: %w", err)
	}
	if err := db.pdb.Flush(); err != nil {
		_ = db.pdb.Close()
		return fmt.Errorf("bulk: flushing: %w", err)
	}
	if err := db.pdb.Close(); err != nil {
		return fmt.Errorf("bulk: closing: %w", err)
	}
	dir := filepath.Clean(db.cfg.Dir)
	if err := checkEmpty(dir); err != nil { // made non-empty during the load
		return err
	}
	_ = os.Remove(dir) // empty or absent: rename needs it gone on some systems
	if err := os.Rename(db.tmp, dir); err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	return syncDir(filepath.Dir(dir))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("bulk: syncing %s: %w", dir, err)
	}
	return nil
}

// Abort closes the store and removes the temporary directory: cfg.Dir is
// left as it was. Safe after Finish (it does nothing then).
func (db *DB) Abort() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.done, db.closed = true, true
	err := db.pdb.Close()
	return errors.Join(err, os.RemoveAll(db.tmp))
}

// TempDir is where the store is built until Finish.
func (db *DB) TempDir() string { return db.tmp }

// Stats returns the counters so far.
func (db *DB) Stats() Stats {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.st
}

// stamp returns the next commit stamp.
func (db *DB) stamp() vclock.Stamp {
	db.seq++
	c := vclock.New(Epoch, db.cfg.Gatekeepers)
	c.Counters[0] = db.seq
	return vclock.Stamp{Clock: c, Owner: 0}
}

// Begin implements engine.API: every snapshot is the latest state.
func (db *DB) Begin(context.Context) (engine.Snapshot, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return engine.Snapshot{}, ErrDone
	}
	return engine.Snapshot{Token: "bulk"}, nil
}

// Commit implements engine.API: txn.Exec on the in-memory store, undone
// when Exec refuses the transaction, followed by the access stamps; a spill
// to Pebble when memory is full.
func (db *DB) Commit(_ context.Context, reads []txn.Read, ops []txn.Op) (*engine.CommitResult, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return nil, ErrDone
	}
	ts := db.stamp()
	db.kv.begin()
	res, err := db.x.Run(db.kv, ts, reads, ops)
	if err != nil {
		db.kv.rollback()
		db.st.Aborts++
		return nil, err
	}
	// The gatekeeper's commit hook, on the same records (access stamps,
	// population stamps); nothing moves during a bulk load, so the
	// directory the execution routed by is the store's.
	if err := gatekeeper.OrderCommit(context.Background(), db.oracle, db.kv, ts, res, db.x.Dir, true); err != nil {
		db.kv.rollback()
		db.st.Aborts++
		return nil, err
	}
	db.kv.commit()
	for _, op := range res.Ops {
		switch op.Kind {
		case txn.OpCreateVertex:
			db.st.Vertices++
		case txn.OpDeleteVertex:
			db.st.Vertices--
		case txn.OpCreateEdge:
			db.st.Edges++
		case txn.OpDeleteEdge:
			db.st.Edges--
		}
	}
	db.st.Commits++
	if db.kv.bytes >= db.cfg.MemBytesMax {
		if err := db.spill(); err != nil {
			db.done = true // the store is in an unknown state: only Abort is left
			return nil, fmt.Errorf("bulk: writing to the store: %w", err)
		}
	}
	return &engine.CommitResult{Handles: res.Handles, Snapshot: engine.Snapshot{Token: "bulk"}}, nil
}

func (db *DB) spill() error {
	db.st.MemBytesPeak = max(db.st.MemBytesPeak, int64(db.kv.bytes))
	n := int64(db.kv.live())
	if err := db.kv.spill(); err != nil {
		return err
	}
	db.st.Spills++
	db.st.Entries += n
	return nil
}

// Run implements engine.API: node programs need the engine.
func (db *DB) Run(context.Context, string, json.RawMessage, *engine.Snapshot) (json.RawMessage, error) {
	return nil, fmt.Errorf("%w: node programs", ErrUnsupported)
}

// Programs implements engine.API: none.
func (db *DB) Programs() []engine.ProgramInfo { return nil }

// Status implements engine.API.
func (db *DB) Status(context.Context) (*engine.Status, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return &engine.Status{Gatekeepers: db.cfg.Gatekeepers, Shards: db.cfg.Shards, Vertices: db.st.Vertices,
		Edges: db.st.Edges, Epoch: Epoch, Commits: db.st.Commits, Aborts: db.st.Aborts}, nil
}

// quietLogger drops Pebble's informational messages; errors surface as
// returned errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("bulk: pebble: "+format, args...))
}
