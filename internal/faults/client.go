package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// definiteCodes are the server answers that reject a commit before anything
// is applied (docs/api.md §5): a commit answered with one certainly did not
// happen. Every other commit error, a transport failure above all, leaves
// the outcome unknown. TOO_LARGE is not here: without a server detail the
// client also reports a gRPC message over its size bound with it, which can
// be the answer's.
var definiteCodes = map[weft.Code]bool{
	weft.CodeAborted:         true,
	weft.CodeSnapshotTooOld:  true,
	weft.CodeOverloaded:      true,
	weft.CodeNotFound:        true,
	weft.CodeAlreadyExists:   true,
	weft.CodeInvalidArgument: true,
}

// CommitOutcome classifies the error of a commit that was sent: Fail when
// the server certainly rejected it, Info when it may have committed.
func CommitOutcome(err error) check.Type {
	var e *weft.Error
	if errors.As(err, &e) && definiteCodes[e.Code] {
		return check.Fail
	}
	return check.Info
}

// errCode names an error for the report's error counts.
func errCode(err error) string {
	var e *weft.Error
	switch {
	case errors.As(err, &e):
		return string(e.Code)
	case errors.Is(err, errInsufficient):
		return "insufficient-funds"
	case errors.Is(err, errBrokenRing):
		return "broken-ring"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "other"
}

// worker is one client: its own connection, its own seeded generator, and
// a Jepsen process number that changes after every indeterminate operation
// (the old process may still be running it).
type worker struct {
	h       *harness
	stats   *clientStats
	c       *weft.Client
	rng     *rand.Rand
	proc    int
	stride  int           // added to proc to retire it
	timeout time.Duration // bounds one operation
	next    time.Time     // the earliest start of the next operation (Config.Rate)
	// book and addr: the addresses the client may use and the one it is
	// connected to; nil book: the client stays on its connection.
	book *addrBook
	addr string
	// client numbers the workload clients for the recovery measurement;
	// -1 (the final reader) is not measured.
	client int
}

// clientStats counts one client's outcomes.
type clientStats struct {
	mu        sync.Mutex
	ok        int
	fail      int
	info      int
	okHealed  int            // ok operations invoked once every fault was healed
	aborted   int            // attempts that aborted (retryable errors), retried or not
	errors    map[string]int // error codes of fail and info outcomes
	lastError string
}

func (s *clientStats) add(t check.Type, healed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch t {
	case check.OK:
		s.ok++
		if healed {
			s.okHealed++
		}
	case check.Fail:
		s.fail++
	default:
		s.info++
	}
	if err != nil {
		if s.errors == nil {
			s.errors = map[string]int{}
		}
		s.errors[errCode(err)]++
		s.lastError = err.Error()
	}
}

func (s *clientStats) abort() {
	s.mu.Lock()
	s.aborted++
	s.mu.Unlock()
}

// op records one operation in rec: the invocation (value inv, after the
// sideband writer's index when after is set), runs it under the operation
// timeout and records the completion run returns. It returns the outcome
// and the completion's index.
func (w *worker) op(rec *check.Recorder, f string, inv any, after *int,
	run func(ctx context.Context) (any, check.Type, error)) (check.Type, int) {
	w.throttle()
	healed := w.h.healed.Load()
	invoked := w.h.now()
	rec.Record(check.Op{Process: w.proc, Type: check.Invoke, F: f, Value: inv, Time: invoked, After: after})
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	val, t, err := run(ctx)
	cancel()
	if t != check.OK {
		val = inv
	}
	done := w.h.now()
	idx := rec.Complete(w.proc, t, f, val, done)
	w.completed(t, healed, invoked, done, err)
	if t == check.Info || unreachable(err) {
		w.pause(50*time.Millisecond, 250*time.Millisecond) // do not spin on a server that is down
	}
	return t, idx
}

// throttle waits for the client's next slot under Config.Rate.
func (w *worker) throttle() {
	if w.h.cfg.Rate <= 0 {
		return
	}
	now := time.Now()
	if w.next.After(now) {
		time.Sleep(w.next.Sub(now))
		now = w.next
	}
	w.next = now.Add(time.Duration(float64(time.Second) / w.h.cfg.Rate))
}

// opN is op for one operation recorded in several histories (a read of
// several set-full generations at one snapshot): run returns one completion
// value per recorder.
func (w *worker) opN(recs []*check.Recorder, f string, run func(ctx context.Context) ([]any, check.Type, error)) check.Type {
	healed := w.h.healed.Load()
	invoked := w.h.now()
	for _, rec := range recs {
		rec.Invoke(w.proc, f, nil, w.h.now())
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	vals, t, err := run(ctx)
	cancel()
	done := w.h.now()
	for i, rec := range recs {
		var v any
		if t == check.OK {
			v = vals[i]
		}
		rec.Complete(w.proc, t, f, v, done)
	}
	w.completed(t, healed, invoked, done, err)
	return t
}

// completed accounts for an operation's outcome: the stats, the recovery
// measurement, a new process after an indeterminate one, and a move to
// another address when the server may be gone.
func (w *worker) completed(t check.Type, healed bool, invoked, done int64, err error) {
	w.stats.add(t, healed, err)
	w.h.ops.Add(1)
	switch t {
	case check.OK:
		w.h.sawOK(w.client, invoked, done)
	case check.Info:
		w.proc += w.stride
	}
	if t != check.OK && w.book != nil && !w.pinned() && (unreachable(err) || !w.book.has(w.addr)) {
		w.failover()
	}
}

// pinned reports whether the client stays on its first gatekeeper
// (ClusterConfig.PinnedClients).
func (w *worker) pinned() bool {
	cc := w.h.cfg.Cluster
	return cc != nil && w.client >= 0 && w.client%max(w.h.cfg.Clients, 1) < cc.PinnedClients
}

// failover reconnects the client to the next address of its book (a
// cluster's next gatekeeper), after an error that says its server may be
// gone or once its address left the book (a gatekeeper restarted as a
// backup answers, but holds no slot); with one address it stays where it
// is. The operation that failed is already recorded: the next one starts
// afresh.
func (w *worker) failover() {
	next := w.book.next(w.addr)
	if next == w.addr {
		return
	}
	c, err := weft.Dial(next, weft.Options{CallTimeout: w.h.cfg.OpTimeout, Attempts: 1})
	if err != nil {
		return // stay: the next failure tries again
	}
	_ = w.c.Close()
	w.c, w.addr = c, next
}

// txn runs body in a transaction and commits it, again in a fresh
// transaction while attempts abort, up to AttemptsMax attempts. body must
// start from scratch on every call. Errors before the commit is sent are
// Fail (nothing can have committed); commit errors are classified by
// CommitOutcome.
func (w *worker) txn(ctx context.Context, body func(ctx context.Context, tx *weft.Tx) error) (check.Type, error) {
	var err error
	for attempt := range w.h.cfg.AttemptsMax {
		if attempt > 0 && !w.backoff(ctx, attempt) {
			return check.Fail, err
		}
		var tx *weft.Tx
		if tx, err = w.c.Begin(ctx); err == nil {
			err = body(ctx, tx)
			if err == nil {
				if _, err = tx.Commit(ctx); err == nil {
					return check.OK, nil
				}
				if t := CommitOutcome(err); t == check.Info {
					return t, err // never retried: it may have committed
				}
			}
		}
		if !weft.IsRetryable(err) {
			return check.Fail, err
		}
		w.stats.abort()
	}
	return check.Fail, err
}

// backoff waits before retry attempt (1-based): 1ms doubling to 64ms, half
// to all of it. It reports false when ctx ends first.
func (w *worker) backoff(ctx context.Context, attempt int) bool {
	d := time.Millisecond << min(attempt-1, 6)
	return sleep(ctx, d/2+time.Duration(w.rng.Int64N(int64(d/2)+1)))
}

func (w *worker) pause(lo, hi time.Duration) { time.Sleep(draw(w.rng, lo, hi)) }

// unreachable reports whether err suggests the server cannot be reached.
func unreachable(err error) bool {
	switch errCode(err) {
	case string(weft.CodeUnavailable), string(weft.CodeInternal), "timeout", "cancelled", "other":
		return err != nil
	}
	return false
}

// garbage stands in a read for a value that no client writes (a property
// of the wrong type): the checkers report it as a garbage read, or for the
// bank and the ring as a broken invariant.
const garbage = -2

// readInts converts a list property (nil: absent) to []int64; anything
// else reads as [garbage].
func readInts(v any) []int64 {
	if v == nil {
		return []int64{}
	}
	l, ok := v.([]any)
	if !ok {
		return []int64{garbage}
	}
	out := make([]int64, len(l))
	for i, x := range l {
		n, ok := x.(int64)
		if !ok {
			return []int64{garbage}
		}
		out[i] = n
	}
	return out
}

// counter hands out unique values.
type counter struct{ n atomic.Int64 }

func (c *counter) next() int64 { return c.n.Add(1) }

func handle(prefix string, n int64) string { return fmt.Sprintf("%s/%d", prefix, n) }

// handles are prefix/0..n-1.
func handles(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = handle(prefix, int64(i))
	}
	return out
}
