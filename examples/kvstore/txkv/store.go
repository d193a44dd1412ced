package txkv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/client/kronos"
)

// Key names a value; keys are 0..Config.Keys-1.
type Key uint32

// ErrRetriesExhausted is returned when a transaction aborted RetriesMax times.
var ErrRetriesExhausted = errors.New("txkv: transaction aborted too many times")

// Config configures a Store.
type Config struct {
	// Keys is the number of keys, 0..Keys-1. Required.
	Keys int
	// Partitions splits the keys into this many contiguous ranges, one
	// partition server (and Kronos client) each. Default 3.
	Partitions int
	// Initial is every key's value before any transaction.
	Initial int64
	// RetriesMax bounds the attempts of one transaction. Default 100.
	RetriesMax int
	// JitterMax bounds a random pause before each request to a partition,
	// standing in for network delay; it makes partitions see concurrent
	// transactions in different orders. Default 0.
	JitterMax time.Duration
	// Seed seeds jitter and retry backoff.
	Seed uint64
}

func (c *Config) defaults() error {
	if c.Partitions == 0 {
		c.Partitions = 3
	}
	if c.RetriesMax == 0 {
		c.RetriesMax = 100
	}
	switch {
	case c.Keys <= 0:
		return errors.New("txkv: need at least one key")
	case c.Partitions < 0 || c.Partitions > c.Keys:
		return fmt.Errorf("txkv: %d partitions for %d keys", c.Partitions, c.Keys)
	case c.RetriesMax < 0 || c.JitterMax < 0:
		return errors.New("txkv: negative RetriesMax or JitterMax")
	}
	return nil
}

// Commit is one committed transaction, as the store executed it.
type Commit struct {
	Event    uint64  // the committed attempt's Kronos event
	Keys     []Key   // keys read, and written when Wrote is set
	Read     []int64 // the value read from each key
	Wrote    []int64 // the value written to each key; nil if none
	Attempts int     // 1 + aborts before this commit
}

// Stats counts transaction outcomes.
type Stats struct {
	Commits, Aborts int64
}

// Store is the transactional store: partitions plus a coordinator.
type Store struct {
	cfg     Config
	parts   []*partition
	clients []*kronos.Client

	cmu   sync.Mutex // guards pool; one CreateEvents in flight on coord
	coord *kronos.Client
	pool  []uint64 // events created ahead, handed to attempts

	rmu sync.Mutex
	rng *rand.Rand // guarded by rmu

	commits, aborts atomic.Int64
}

// Open dials Kronos at addr once per partition and once for the coordinator.
func Open(addr string, cfg Config) (*Store, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0))}
	for i := 0; i <= cfg.Partitions; i++ {
		kc, err := kronos.Dial([]string{addr})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.clients = append(s.clients, kc)
	}
	s.coord = s.clients[cfg.Partitions]
	for i := range cfg.Partitions {
		lo, hi := Key(i*cfg.Keys/cfg.Partitions), Key((i+1)*cfg.Keys/cfg.Partitions)
		s.parts = append(s.parts, newPartition(lo, hi, cfg.Initial, s.clients[i]))
	}
	return s, nil
}

// Close closes the Kronos clients.
func (s *Store) Close() {
	for _, kc := range s.clients {
		kc.Close()
	}
}

// Keys is the number of keys.
func (s *Store) Keys() int { return s.cfg.Keys }

// Initial is every key's value before any transaction.
func (s *Store) Initial() int64 { return s.cfg.Initial }

// Stats returns the outcome counts so far.
func (s *Store) Stats() Stats { return Stats{Commits: s.commits.Load(), Aborts: s.aborts.Load()} }

// Update runs fn as one serializable transaction over keys (distinct). fn
// gets the values read, aligned with keys, and returns the values to write
// or nil to write nothing. fn runs once: an attempt aborts only before it
// reads.
func (s *Store) Update(ctx context.Context, keys []Key, fn func(read []int64) []int64) (Commit, error) {
	return s.run(ctx, keys, fn)
}

// View reads keys (distinct) in one serializable read-only transaction.
func (s *Store) View(ctx context.Context, keys []Key) (Commit, error) {
	return s.run(ctx, keys, nil)
}

// group is the part of a transaction on one partition: its keys and their
// indexes in the transaction's key list.
type group struct {
	p    *partition
	keys []Key
	idx  []int
}

func (s *Store) run(ctx context.Context, keys []Key, fn func([]int64) []int64) (Commit, error) {
	groups, err := s.split(keys)
	if err != nil {
		return Commit{}, err
	}
	for attempt := 1; attempt <= s.cfg.RetriesMax; attempt++ {
		ev, err := s.createEvent(ctx)
		if err != nil {
			return Commit{}, err
		}
		ok, err := s.orderAll(ctx, ev, groups, fn != nil)
		if err != nil {
			return Commit{}, err
		}
		if !ok {
			s.aborts.Add(1)
			if err := s.backoff(ctx, attempt); err != nil {
				return Commit{}, err
			}
			continue
		}
		c, err := s.execute(ctx, ev, keys, groups, fn)
		if err != nil {
			return Commit{}, err
		}
		c.Attempts = attempt
		s.commits.Add(1)
		return c, nil
	}
	return Commit{}, fmt.Errorf("%w (%d attempts)", ErrRetriesExhausted, s.cfg.RetriesMax)
}

// split groups keys by partition, rejecting duplicates and strangers.
func (s *Store) split(keys []Key) ([]group, error) {
	if len(keys) == 0 {
		return nil, errors.New("txkv: a transaction needs a key")
	}
	seen := map[Key]bool{}
	byPart := make([]*group, len(s.parts))
	var groups []group
	for i, k := range keys {
		if int(k) >= s.cfg.Keys || seen[k] {
			return nil, fmt.Errorf("txkv: key %d is out of range or repeated", k)
		}
		seen[k] = true
		pi := 0
		for s.parts[pi].hi <= k {
			pi++
		}
		if byPart[pi] == nil {
			byPart[pi] = &group{p: s.parts[pi]}
		}
		byPart[pi].keys = append(byPart[pi].keys, k)
		byPart[pi].idx = append(byPart[pi].idx, i)
	}
	for _, g := range byPart {
		if g != nil {
			groups = append(groups, *g)
		}
	}
	return groups, nil
}

// eventBatch is how many events the coordinator creates per call. Which
// event an attempt gets does not matter: only the edges partitions add
// order it.
const eventBatch = 32

func (s *Store) createEvent(ctx context.Context) (uint64, error) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if len(s.pool) == 0 {
		ids, err := s.coord.CreateEvents(ctx, eventBatch)
		if err != nil {
			return 0, err
		}
		s.pool = ids
	}
	ev := s.pool[0]
	s.pool = s.pool[1:]
	return ev, nil
}

// orderAll runs phase one on every partition in parallel. It reports false
// if the attempt aborted on a must conflict; either way a failed attempt
// leaves only finished no-op entries behind.
func (s *Store) orderAll(ctx context.Context, ev uint64, groups []group, writer bool) (bool, error) {
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.jitter(ctx); errs[i] == nil {
				errs[i] = g.p.order(ctx, ev, g.keys, writer)
			}
		}()
	}
	wg.Wait()
	var failed error
	conflict := false
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, kronos.ErrMustConflict):
			conflict = true
		default:
			failed = err
		}
	}
	if failed == nil && !conflict {
		return true, nil
	}
	for i, g := range groups {
		if errs[i] == nil {
			g.p.finish(ev, g.keys, nil)
		}
	}
	return false, failed
}

// execute runs phase two: read every key, run fn, write, finish.
func (s *Store) execute(ctx context.Context, ev uint64, keys []Key, groups []group, fn func([]int64) []int64) (Commit, error) {
	read := make([]int64, len(keys))
	for _, g := range groups {
		err := s.jitter(ctx)
		var vals []int64
		if err == nil {
			vals, err = g.p.read(ctx, ev, g.keys)
		}
		if err != nil {
			// Nothing was written: finishing as no-ops aborts cleanly.
			for _, g := range groups {
				g.p.finish(ev, g.keys, nil)
			}
			return Commit{}, err
		}
		for j, v := range vals {
			read[g.idx[j]] = v
		}
	}
	var wrote []int64
	if fn != nil {
		wrote = fn(append([]int64(nil), read...))
		if wrote != nil && len(wrote) != len(keys) {
			panic(fmt.Sprintf("txkv: %d values written for %d keys", len(wrote), len(keys)))
		}
	}
	for _, g := range groups {
		var w []int64
		if wrote != nil {
			w = make([]int64, len(g.keys))
			for j, i := range g.idx {
				w[j] = wrote[i]
			}
		}
		g.p.finish(ev, g.keys, w)
	}
	return Commit{Event: ev, Keys: append([]Key(nil), keys...), Read: read, Wrote: wrote}, nil
}

func (s *Store) jitter(ctx context.Context) error {
	if s.cfg.JitterMax <= 0 {
		return ctx.Err()
	}
	return s.sleep(ctx, s.cfg.JitterMax)
}

// backoff pauses before retry attempt+1, up to 5ms.
func (s *Store) backoff(ctx context.Context, attempt int) error {
	return s.sleep(ctx, min(time.Duration(attempt)*200*time.Microsecond, 5*time.Millisecond))
}

// sleep pauses for a random duration below dmax.
func (s *Store) sleep(ctx context.Context, dmax time.Duration) error {
	s.rmu.Lock()
	d := time.Duration(s.rng.Int64N(int64(dmax)))
	s.rmu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
