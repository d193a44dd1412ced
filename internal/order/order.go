package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/vclock"
)

// Oracle orders stamps whose clocks are concurrent. Assign applies a batch
// atomically with Kronos's semantics (must before prefer; a contradicted must
// rejects the batch with a *kronos.ConflictError; a contradicted prefer is
// reversed and reported). Cleanup reports a gatekeeper's watermark.
type Oracle interface {
	Assign(ctx context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error)
	Cleanup(ctx context.Context, gk uint32, c vclock.Clock) error
}

// Counting is an Oracle that counts the Assign calls and pairs it passes on
// (a cluster gatekeeper's Kronos calls, for its status).
type Counting struct {
	Oracle
	calls, pairs atomic.Uint64
}

// Assign implements Oracle.
func (c *Counting) Assign(ctx context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error) {
	c.calls.Add(1)
	c.pairs.Add(uint64(len(as)))
	return c.Oracle.Assign(ctx, as)
}

// Calls returns the Assign calls and pairs so far.
func (c *Counting) Calls() (calls, pairs uint64) { return c.calls.Load(), c.pairs.Load() }

// Ref names a stamp as a Kronos clock event.
func Ref(s vclock.Stamp) kronos.Ref { return kronos.ClockRef(s.Owner, s.Clock) }

// Local is an in-process Kronos guarded by a mutex.
type Local struct {
	mu    sync.Mutex
	g     *kronos.Graph
	calls atomic.Uint64
	pairs atomic.Uint64
}

// NewLocal returns an in-process oracle.
func NewLocal(cfg kronos.Config) (*Local, error) {
	g, err := kronos.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Local{g: g}, nil
}

// Assign implements Oracle.
func (l *Local) Assign(_ context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error) {
	l.calls.Add(1)
	l.pairs.Add(uint64(len(as)))
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.g.AssignOrder(nil, as)
}

// Query answers the order of a and b without establishing anything (for
// checkers and diagnostics).
func (l *Local) Query(a, b vclock.Stamp) (kronos.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out, err := l.g.QueryOrder(nil, []kronos.Pair{{A: Ref(a), B: Ref(b)}})
	if err != nil {
		return kronos.Unknown, err
	}
	return out[0], nil
}

// Cleanup implements Oracle.
func (l *Local) Cleanup(_ context.Context, gk uint32, c vclock.Clock) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _, err := l.g.Cleanup(gk, c)
	return err
}

// Calls returns the number of Assign calls and pairs so far.
func (l *Local) Calls() (calls, pairs uint64) { return l.calls.Load(), l.pairs.Load() }

// Stats returns the Kronos graph's statistics.
func (l *Local) Stats() kronos.Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.g.Stats()
}

// ErrUnordered reports an oracle answer that is neither before nor after: one
// of the stamps is below the Kronos cleanup watermark, which the engine's
// watermark rule makes impossible for live stamps.
var ErrUnordered = errors.New("order: oracle could not order a pair (stamp below the cleanup watermark)")

// Resolver answers "a before b?" for stamps: vector clocks first, then a
// bounded cache of oracle answers, then the oracle (Assign with Prefer a → b).
type Resolver struct {
	oracle   Oracle
	cache    map[string]bool // key(a,b) → a before b
	cacheMax int
	keyBuf   []byte
	// Calls counts oracle calls made by this resolver.
	Calls uint64
}

// NewResolver returns a Resolver with a cache of at most cacheMax pairs.
func NewResolver(o Oracle, cacheMax int) *Resolver {
	return &Resolver{oracle: o, cache: make(map[string]bool), cacheMax: cacheMax}
}

func (r *Resolver) key(a, b vclock.Stamp) string {
	k := appendStamp(r.keyBuf[:0], a)
	k = append(k, '|')
	k = appendStamp(k, b)
	r.keyBuf = k
	return string(k)
}

func appendStamp(dst []byte, s vclock.Stamp) []byte {
	dst = fmt.Appendf(dst, "%d.%d", s.Clock.Epoch, s.Owner)
	for _, c := range s.Clock.Counters {
		dst = fmt.Appendf(dst, ".%d", c)
	}
	return dst
}

// Cached reports a cached or vector-clock answer without calling the oracle.
func (r *Resolver) Cached(a, b vclock.Stamp) (before, ok bool) {
	switch vclock.CompareStamps(a, b) {
	case vclock.Before:
		return true, true
	case vclock.After, vclock.Equal:
		return false, true
	}
	if v, ok := r.cache[r.key(a, b)]; ok {
		return v, true
	}
	if v, ok := r.cache[r.key(b, a)]; ok {
		return !v, true
	}
	return false, false
}

// Prefer orders a and b, establishing a → b when no order exists yet, and
// reports whether a is before b.
func (r *Resolver) Prefer(ctx context.Context, a, b vclock.Stamp) (bool, error) {
	if v, ok := r.Cached(a, b); ok {
		return v, nil
	}
	r.Calls++
	res, err := r.oracle.Assign(ctx, []kronos.Assignment{{A: Ref(a), Order: kronos.Before, B: Ref(b), Strength: kronos.Prefer}})
	if err != nil {
		return false, fmt.Errorf("order: %s vs %s: %w", a, b, err)
	}
	var before bool
	switch res[0].Order {
	case kronos.Before:
		before = true
	case kronos.After:
	default:
		return false, fmt.Errorf("%w: %s vs %s answered %v", ErrUnordered, a, b, res[0].Order)
	}
	r.put(a, b, before)
	return before, nil
}

func (r *Resolver) put(a, b vclock.Stamp, before bool) {
	if len(r.cache) >= r.cacheMax {
		clear(r.cache) // answers never change, so dropping them only costs a re-ask
	}
	r.cache[r.key(a, b)] = before
}

// Must orders every prev strictly before t in one atomic oracle batch. Pairs
// that vector clocks already order are checked locally: a prev after or equal
// to t fails. It returns a *kronos.ConflictError (wrapped) when Kronos holds
// an opposite order.
func Must(ctx context.Context, o Oracle, prevs []vclock.Stamp, t vclock.Stamp) error {
	var as []kronos.Assignment
	for _, p := range prevs {
		switch vclock.CompareStamps(p, t) {
		case vclock.Before:
			continue
		case vclock.Concurrent:
			as = append(as, kronos.Assignment{A: Ref(p), Order: kronos.Before, B: Ref(t), Strength: kronos.Must})
		default:
			return fmt.Errorf("%w: %s is not after %s", ErrStale, t, p)
		}
	}
	if len(as) == 0 {
		return nil
	}
	if _, err := o.Assign(ctx, as); err != nil {
		var ce *kronos.ConflictError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w: %v", ErrStale, err)
		}
		return err
	}
	return nil
}

// ErrStale reports a timestamp that cannot be ordered after a conflicting
// one: the transaction must retry with a fresh timestamp.
var ErrStale = errors.New("order: timestamp cannot follow a conflicting one")
