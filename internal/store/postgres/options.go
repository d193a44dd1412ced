package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"
)

// Serializer says how committers on one schema are kept from overlapping.
type Serializer string

const (
	// SerializeAdvisory takes a session-level advisory lock on the schema
	// before each commit transaction begins, so the transaction's snapshot
	// already includes every earlier commit and committers queue on the
	// server instead of failing. PostgreSQL only. The default.
	SerializeAdvisory Serializer = "advisory"
	// SerializeRow relies on the meta row alone: every commit transaction
	// updates it first, so two that overlap fail one of them with SQLSTATE
	// 40001 and it is retried. For CockroachDB or YugabyteDB, where advisory
	// locks are missing or not cluster-wide; correct on PostgreSQL too,
	// just more retries under contention.
	SerializeRow Serializer = "row"
)

// Options configure Open. Start from DefaultOptions: the zero Options is
// invalid (Validate says so), which keeps a forgotten field from silently
// turning synchronous commit off.
type Options struct {
	// URL is the connection string, postgres://user@host:port/db?... or
	// "key=value ..." (libpq syntax). Required.
	URL string
	// Schema holds the store's tables; created if missing. Several stores
	// (or tests) share one database by using different schemas. It must be
	// a plain identifier: [a-z_][a-z0-9_]*, at most 63 bytes. Default "weft".
	Schema string
	// Sync commits with synchronous_commit = on (the WAL is flushed before a
	// Commit returns), overriding a server or role default of off. False
	// sets it off: a server crash can lose acknowledged commits (never tear
	// them); benchmarks only. Default true.
	Sync bool
	// Serialize is how committers on one schema are kept from overlapping.
	// Default SerializeAdvisory.
	Serialize Serializer
	// ConnsMax bounds the pool of connections used by open Txns (each holds
	// one from Begin to Commit or Discard) and read-only commits. The
	// committer holds one more of its own. Default 32.
	ConnsMax int
	// AcquireTimeout bounds Begin's wait for a pool connection; then it
	// answers store.ErrOverloaded. Default 5s.
	AcquireTimeout time.Duration
	// QueryTimeout bounds each round trip to the server (a read, a scan
	// page, one commit attempt's statements). Default 30s.
	QueryTimeout time.Duration
	// CommitGroupMax bounds the Txns committed by one PostgreSQL
	// transaction (one WAL flush). Default 256.
	CommitGroupMax int
	// GroupBytesMax bounds the buffered write bytes (keys + values) of one
	// group, counted before hooks add theirs; a larger Txn forms a group
	// alone. Default 64 MiB.
	GroupBytesMax int
	// CommitQueueMax bounds the commits waiting for the committer; a full
	// queue answers store.ErrOverloaded. Default 4096.
	CommitQueueMax int
	// TxnBytesMax bounds one Txn's buffered writes (keys + values) plus the
	// keys of its read set, in bytes; beyond it calls return
	// store.ErrTxnTooLarge and the Txn cannot commit. Default 64 MiB.
	TxnBytesMax int
	// ScanPageMax bounds the rows one Scan round trip fetches. Default 512.
	ScanPageMax int
	// RetryMax bounds the attempts of one commit group that fail with a
	// serialization failure (40001), a deadlock (40P01) or a lost
	// connection; then its Txns fail with a retryable error. Default 8.
	RetryMax int
	// RetryBackoff is the pause before the second attempt; it doubles per
	// attempt (with jitter) up to RetryBackoffMax. Defaults 5ms and 1s.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// OutcomeWaitMax bounds how long the committer keeps asking, after a
	// connection broke during COMMIT, whether that commit took effect. If
	// the server cannot say by then, the store fails (store.ErrFailed): the
	// outcome is unknown. Default 60s.
	OutcomeWaitMax time.Duration
	// TombstoneVersions is how many commit versions a deletion stays
	// recorded (a tombstone row) for validation; a Txn whose snapshot is
	// older than that when it commits fails with store.ErrTooOld. Default
	// 1<<18 versions.
	TombstoneVersions int64
	// PruneEvery is how many commit versions pass between two prunings of
	// tombstones older than TombstoneVersions. Default 1024.
	PruneEvery int64
	// StallTimeout is how long PostgreSQL lets a committer session sit idle
	// (between statements of a commit transaction, or between transactions
	// while holding the advisory lock) before ending it: a committer process
	// that is stopped (SIGSTOP, a frozen VM) while holding the lock then
	// stalls the other processes' commits for at most this long instead of
	// until it resumes. It must exceed the longest legitimate pause inside a
	// commit (a commit hook waiting for Kronos: up to 15 s in an election).
	// A committer session the server ended while idle is replaced at the
	// next commit (a reconnect, no failed commit).
	// Servers without the settings (idle_session_timeout is PostgreSQL 14+)
	// ignore what they lack. Default 30s; 0 leaves the server's settings.
	StallTimeout time.Duration
	// Logger receives warnings (say, fsync = off on the server) and retries
	// at Debug. nil discards everything.
	Logger *slog.Logger
}

// DefaultOptions returns the defaults documented on Options, for url.
func DefaultOptions(url string) Options {
	return Options{
		URL:               url,
		Schema:            "weft",
		Sync:              true,
		Serialize:         SerializeAdvisory,
		ConnsMax:          32,
		AcquireTimeout:    5 * time.Second,
		QueryTimeout:      30 * time.Second,
		CommitGroupMax:    256,
		GroupBytesMax:     64 << 20,
		CommitQueueMax:    4096,
		TxnBytesMax:       64 << 20,
		ScanPageMax:       512,
		RetryMax:          8,
		RetryBackoff:      5 * time.Millisecond,
		RetryBackoffMax:   time.Second,
		OutcomeWaitMax:    60 * time.Second,
		TombstoneVersions: 1 << 18,
		PruneEvery:        1024,
		StallTimeout:      30 * time.Second,
	}
}

var (
	errBadOptions = errors.New("store/postgres: bad options")
	identRE       = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
)

// Validate reports the first bad field.
func (o Options) Validate() error {
	switch {
	case o.URL == "":
		return fmt.Errorf("%w: URL is empty", errBadOptions)
	case !identRE.MatchString(o.Schema):
		return fmt.Errorf("%w: Schema %q is not a plain identifier ([a-z_][a-z0-9_]*, at most 63 bytes)", errBadOptions, o.Schema)
	case o.Serialize != SerializeAdvisory && o.Serialize != SerializeRow:
		return fmt.Errorf("%w: Serialize %q is neither %q nor %q", errBadOptions, o.Serialize, SerializeAdvisory, SerializeRow)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"ConnsMax", int64(o.ConnsMax)},
		{"AcquireTimeout", int64(o.AcquireTimeout)},
		{"QueryTimeout", int64(o.QueryTimeout)},
		{"CommitGroupMax", int64(o.CommitGroupMax)},
		{"GroupBytesMax", int64(o.GroupBytesMax)},
		{"CommitQueueMax", int64(o.CommitQueueMax)},
		{"TxnBytesMax", int64(o.TxnBytesMax)},
		{"ScanPageMax", int64(o.ScanPageMax)},
		{"RetryMax", int64(o.RetryMax)},
		{"RetryBackoff", int64(o.RetryBackoff)},
		{"RetryBackoffMax", int64(o.RetryBackoffMax)},
		{"OutcomeWaitMax", int64(o.OutcomeWaitMax)},
		{"TombstoneVersions", o.TombstoneVersions},
		{"PruneEvery", o.PruneEvery},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%w: %s = %d must be > 0 (start from DefaultOptions)", errBadOptions, f.name, f.v)
		}
	}
	if o.StallTimeout < 0 || (o.StallTimeout > 0 && o.StallTimeout < time.Second) {
		return fmt.Errorf("%w: StallTimeout = %v must be 0 (off) or at least 1s", errBadOptions, o.StallTimeout)
	}
	if o.ConnsMax > 1<<15 {
		return fmt.Errorf("%w: ConnsMax = %d is more than a server accepts", errBadOptions, o.ConnsMax)
	}
	return nil
}
