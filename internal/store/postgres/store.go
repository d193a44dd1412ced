package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/groupcommit"
	"github.com/weft-db/weft/internal/store/txnset"
)

// Store is the PostgreSQL-wire implementation of store.Store. It is safe for
// concurrent use.
type Store struct {
	opts    Options
	log     *slog.Logger
	pool    *pgxpool.Pool
	cc      *pgx.ConnConfig // the committer's connections
	q       queries
	lockKey int64

	// ctx bounds every statement; Close cancels it last.
	ctx    context.Context
	cancel context.CancelFunc

	queue *groupcommit.Queue[*request] // bounded by Options.CommitQueueMax
	// quit is canceled by Close: the committer stops waiting for the
	// advisory lock, drains the queue and exits.
	quit    context.Context
	quitNow context.CancelFunc
	done    chan struct{} // closed when the committer has exited

	// gate counts the calls that may touch a connection or the queue: once
	// Close has shut it and waited, none does.
	gate groupcommit.Gate

	mu     sync.Mutex
	held   map[*txn]struct{} // open Txns holding a pool connection
	failed error             // set when a commit's outcome could not be learned

	st    counters
	knobs knobs
}

// knobs are fault-injection points for tests; all nil otherwise. Set them
// before the first commit.
type knobs struct {
	beforeCommit func(pid uint32)      // just before COMMIT is sent, with the backend's pid
	afterCommit  func(err error) error // replaces COMMIT's result
}

var _ store.Store = (*Store)(nil)

// Open connects to the server named by o.URL, creates the schema's tables if
// missing, and starts the committer.
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pc, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: URL: %v", errBadOptions, err)
	}
	pc.MaxConns = int32(o.ConnsMax)
	pc.MinConns = 0
	pc.ConnConfig.RuntimeParams["application_name"] = "weft"
	cc := pc.ConnConfig.Copy()
	cctx, cancel := context.WithTimeout(ctx, o.QueryTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, pc.ConnConfig.Copy())
	if err != nil {
		return nil, classify("connect", err) // refused or timed out: retryable; bad password: not
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(cctx, `SELECT version()`).Scan(&version); err != nil {
		return nil, classify("version", err)
	}
	if o.Serialize == SerializeAdvisory && !advisoryLocks(version) {
		// Their advisory locks are stubs or missing: the meta row alone
		// serializes committers (with retries), which is correct anyway.
		log.Info("store/postgres: no cluster-wide advisory locks on this server: serializing commits on the meta row",
			"role", "store", "server", version)
		o.Serialize = SerializeRow
	}
	if err := createSchema(cctx, conn, o.Schema, o.Serialize == SerializeAdvisory); err != nil {
		return nil, fmt.Errorf("store/postgres: schema %s: %w", o.Schema, err)
	}
	warnUnsafe(cctx, conn, log)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: pool: %w", err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	qctx, qcancel := context.WithCancel(context.Background())
	s := &Store{
		opts: o, log: log, pool: pool, cc: cc, q: newQueries(o.Schema), lockKey: lockKey(o.Schema),
		ctx: sctx, cancel: scancel, quit: qctx, quitNow: qcancel,
		queue: groupcommit.NewQueue[*request](o.CommitQueueMax),
		done:  make(chan struct{}),
		held:  make(map[*txn]struct{}),
	}
	go s.run()
	return s, nil
}

// warnUnsafe logs a warning when the server would lose acknowledged
// commits in a crash whatever the store does.
func warnUnsafe(ctx context.Context, conn *pgx.Conn, log *slog.Logger) {
	var fsync string
	if err := conn.QueryRow(ctx, `SHOW fsync`).Scan(&fsync); err == nil && fsync == "off" {
		log.Warn("store/postgres: the server runs with fsync = off: a crash of its machine can lose acknowledged commits", "role", "store")
	}
}

// bound returns a context for one round trip.
func (s *Store) bound() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.opts.QueryTimeout)
}

// Begin implements store.Store: it takes a pool connection and opens a
// REPEATABLE READ READ ONLY transaction on it, whose snapshot the Txn reads,
// along with the commit version that snapshot includes.
func (s *Store) Begin() (store.Txn, error) {
	if err := s.gate.Enter(); err != nil {
		return nil, err
	}
	defer s.gate.Exit()
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	if failed != nil {
		return nil, failed
	}
	actx, cancel := context.WithTimeout(s.ctx, s.opts.AcquireTimeout)
	conn, err := s.pool.Acquire(actx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && s.pool.Stat().AcquiredConns() >= int32(s.opts.ConnsMax) {
			return nil, fmt.Errorf("%w: all %d connections held by open transactions for %v", store.ErrOverloaded,
				s.opts.ConnsMax, s.opts.AcquireTimeout)
		}
		return nil, classify("connect", err)
	}
	t := &txn{Txn: txnset.Txn{BytesMax: s.opts.TxnBytesMax}, s: s, conn: conn}
	ctx, cancel := s.bound()
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(s.q.snapshot).QueryRow(func(r pgx.Row) error { return r.Scan(&t.snap, &t.floor) })
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		conn.Release() // in a transaction or broken: the pool destroys it
		return nil, classify("begin", err)
	}
	s.mu.Lock()
	s.held[t] = struct{}{}
	s.mu.Unlock()
	s.st.Begins.Add(1)
	return t, nil
}

// Close implements store.Store. It waits for calls in progress (a Scan
// waits for its callback), lets the committer finish the group it holds,
// fails queued commits with store.ErrClosed, closes the connections still
// held by open Txns and then the pool.
func (s *Store) Close() error {
	if err := s.gate.Close(); err != nil {
		return err
	}
	s.quitNow()
	<-s.done
	s.mu.Lock()
	conns := make([]*pgxpool.Conn, 0, len(s.held))
	for t := range s.held {
		conns = append(conns, t.conn)
		t.conn = nil
	}
	s.held = nil
	s.mu.Unlock()
	for _, c := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.Conn().Close(ctx) // ends its transaction; Release then destroys it
		cancel()
		c.Release()
	}
	s.cancel()
	s.pool.Close()
	return nil
}

// Stats implements store.Store.
func (s *Store) Stats() store.Stats { return s.st.Stats() }

// Counters are the PostgreSQL-specific counts since Open.
type Counters struct {
	Retries    uint64 // commit attempts retried (serialization failure, deadlock, lost connection)
	Reconnects uint64 // committer connections opened after the first
	Ambiguous  uint64 // commits whose connection broke during COMMIT, outcome then looked up
	Splits     uint64 // groups retried one Txn at a time after a statement error
	LockWaits  uint64 // advisory lock acquisitions by the committer
	Pruned     uint64 // tombstone prunings
}

// Counters returns the PostgreSQL-specific counters.
func (s *Store) Counters() Counters {
	return Counters{
		Retries:    s.st.retries.Load(),
		Reconnects: s.st.reconnects.Load(),
		Ambiguous:  s.st.ambiguous.Load(),
		Splits:     s.st.splits.Load(),
		LockWaits:  s.st.locks.Load(),
		Pruned:     s.st.pruned.Load(),
	}
}

// fail stops the store: a commit's outcome is unknown.
func (s *Store) fail(err error) error {
	ferr := fmt.Errorf("%w: %w", store.ErrFailed, err)
	s.mu.Lock()
	if s.failed == nil {
		s.failed = ferr
	}
	s.mu.Unlock()
	return ferr
}

func (s *Store) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// counters are the shared counts and the PostgreSQL-specific ones.
type counters struct {
	groupcommit.Counters
	retries, reconnects, ambiguous, splits, locks, pruned atomic.Uint64
}

// advisoryLocks reports whether the server named by a version() string has
// PostgreSQL's session-level advisory locks: CockroachDB's are no-op stubs
// (or missing), YugabyteDB's are not in every release.
func advisoryLocks(version string) bool {
	return !strings.Contains(version, "CockroachDB") && !strings.Contains(version, "-YB-")
}
