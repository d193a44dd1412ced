package engine

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Config configures an embedded Weft: every role in one process.
type Config struct {
	// Store selects the backing store: StorePebble (default; embedded, in
	// DataDir) or StorePostgres (a PostgreSQL-wire server at PostgresURL,
	// which gatekeepers of several processes can share). "" means Pebble.
	Store string
	// DataDir is the Pebble store's directory. Empty: an in-memory store
	// (tests and demos only; nothing survives Close).
	DataDir string
	// PostgresURL is the connection string of the PostgreSQL store
	// (postgres://user@host:port/db), required when Store is StorePostgres.
	PostgresURL string
	// PostgresSchema is the schema holding the PostgreSQL store's tables,
	// created if missing (default "weft").
	PostgresSchema string
	// Sync fsyncs every commit group before acknowledging (default true).
	Sync bool
	// Gatekeepers is the number of gatekeepers (default 2; 0: the
	// machine's, MachineTopology).
	Gatekeepers int
	// Shards is the number of shards vertices are hashed to (default 4). It is
	// fixed when the store is created; reopening with another value is an
	// error. 0 takes the store's, or for a new store the machine's
	// (MachineTopology).
	Shards int
	// HistoryRetention keeps old versions readable for at least this long
	// (default 30s); reads at older snapshots fail with ErrSnapshotTooOld.
	HistoryRetention time.Duration
	// KeepHistory disables garbage collection of old versions entirely.
	KeepHistory bool
	// NoReadPoints stamps every read after all transactions in flight, so
	// that it waits for their durable commits on its shards, instead of at
	// the read point before the oldest of them (gatekeeper.Config.ReadPoints).
	// For comparisons; the default (false) uses read points.
	NoReadPoints bool
	// GCEvery is how often the garbage-collection watermark advances
	// (default 1s).
	GCEvery time.Duration
	// ProgramsMax bounds node programs in flight per gatekeeper (default 4096);
	// beyond it Run answers ErrOverloaded.
	ProgramsMax int
	// ShardTasksMax bounds the program batches and reads waiting at one shard
	// (default 1<<20); beyond it they fail with ErrOverloaded.
	ShardTasksMax int
	// OracleCacheMax bounds each shard's cache of Kronos answers (default 1<<16 pairs).
	OracleCacheMax int
	// StoreCacheBytes is the embedded store's block cache (Pebble; default
	// 256 MiB). The graph lives in the shards' memory, but commits read the
	// store (vertex records, last-access stamps): with 64 or 128 MiB,
	// loading the 4M-edge TAO graph took 2-2.5 times as long as with 256.
	StoreCacheBytes int64
	// Logger receives operational logs (default: discard).
	Logger *slog.Logger
	// plants are bugs planted on purpose by tests (schedule.go).
	plants plants
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		Store:            StorePebble,
		PostgresSchema:   "weft",
		Sync:             true,
		Gatekeepers:      2,
		Shards:           4,
		HistoryRetention: 30 * time.Second,
		GCEvery:          time.Second,
		ProgramsMax:      4096,
		OracleCacheMax:   1 << 16,
		ShardTasksMax:    1 << 20,
		StoreCacheBytes:  256 << 20,
	}
}

// MachineTopology is the shards and gatekeepers of a store created with
// Shards and Gatekeepers 0 (weft serve's defaults), from the CPUs this
// process may use (GOMAXPROCS): a shard per two CPUs and a gatekeeper per
// four, at least one of each. On two CPUs one shard and one gatekeeper
// answered the two-hop count 17-22% faster than 4 × 2, with one client and
// with eight, at ~35% less server CPU per query, and loaded as fast
// (docs/benchmarks.md, "Two-hop"): more shards than cores only add batches
// between them.
func MachineTopology() (shards, gatekeepers int) {
	n := runtime.GOMAXPROCS(0)
	return max(1, n/2), max(1, n/4)
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.Store != "" && c.Store != StorePebble && c.Store != StorePostgres:
		return fmt.Errorf("engine: Store %q is neither %q nor %q", c.Store, StorePebble, StorePostgres)
	case c.Store == StorePostgres && c.PostgresURL == "":
		return fmt.Errorf("engine: Store %q needs PostgresURL", StorePostgres)
	case c.Gatekeepers < 0 || c.Gatekeepers > 64:
		return fmt.Errorf("engine: Gatekeepers %d out of range [1, 64] (0: the machine's)", c.Gatekeepers)
	case c.Shards < 0 || c.Shards > 1024:
		return fmt.Errorf("engine: Shards %d out of range [1, 1024] (0: the store's or the machine's)", c.Shards)
	case c.GCEvery <= 0:
		return fmt.Errorf("engine: GCEvery must be positive")
	case c.HistoryRetention < 0:
		return fmt.Errorf("engine: HistoryRetention must not be negative")
	case c.ProgramsMax < 1:
		return fmt.Errorf("engine: ProgramsMax must be positive")
	case c.ShardTasksMax < 1:
		return fmt.Errorf("engine: ShardTasksMax must be positive")
	case c.OracleCacheMax < 1:
		return fmt.Errorf("engine: OracleCacheMax must be positive")
	}
	return nil
}
