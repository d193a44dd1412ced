package dgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Config configures a Graph.
type Config struct {
	// LeaseSize is the number of UIDs one lease reserves (default 1<<14,
	// one bucket block). A crash wastes at most one lease per allocator.
	LeaseSize uint64
	// AttemptsMax bounds the attempts of one mutation, lease or alter step
	// on retryable conflicts (default 30).
	AttemptsMax int
	// ReadsParallelMax bounds the concurrent engine reads of one mutation or
	// lookup (default 8).
	ReadsParallelMax int
	// EdgesFirstMax is how many out-edges are read with a mutated node
	// (default 256); the rest are read when a mutation needs them.
	EdgesFirstMax int
	// EdgesMax bounds the out-edges read from one vertex when all are
	// needed (a wildcard delete, a has-set or directory); beyond it the
	// operation fails with ErrLimit (default 1<<22).
	EdgesMax int
	// KnownMax bounds the cache of index and has-set vertices known to
	// exist (default 1<<20 names); a full cache is cleared.
	KnownMax int
	// BuildBatchMax is the number of nodes per transaction when an alter
	// builds or drops an index, reverse edges or counts (default 200).
	BuildBatchMax int
	// Logger receives progress of index builds (default: discard).
	Logger *slog.Logger
	// Placement is where a node's data lives: PlacementVertex (all of a
	// node on its vertex) or PlacementPredicate (each predicate's data on
	// its own placement group, doc.go). Chosen when the store is created
	// ("": PlacementVertex); Open refuses a store created with the other
	// one, and "" opens a store in whichever it has.
	Placement string
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{LeaseSize: 1 << 14, AttemptsMax: 30, ReadsParallelMax: 8, EdgesFirstMax: 256,
		EdgesMax: 1 << 22, KnownMax: 1 << 20, BuildBatchMax: 200}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.LeaseSize < 1 || c.LeaseSize > 1<<40:
		return fmt.Errorf("dgraph: LeaseSize %d out of range [1, 2^40]", c.LeaseSize)
	case c.AttemptsMax < 1:
		return errors.New("dgraph: AttemptsMax must be positive")
	case c.ReadsParallelMax < 1:
		return errors.New("dgraph: ReadsParallelMax must be positive")
	case c.EdgesFirstMax < 1 || c.EdgesMax < c.EdgesFirstMax:
		return errors.New("dgraph: need 1 <= EdgesFirstMax <= EdgesMax")
	case c.KnownMax < 1 || c.BuildBatchMax < 1:
		return errors.New("dgraph: KnownMax and BuildBatchMax must be positive")
	case CheckPlacement(c.Placement) != nil:
		return CheckPlacement(c.Placement)
	}
	return nil
}

// Graph is the Dgraph face of a Weft engine: Dgraph's model (nodes with
// UIDs, predicates, facets, language tags, reverse edges, counts, indexes)
// mapped onto vertices, edges, properties and aliases (doc.go). It is safe
// for concurrent use; any number of Graphs, in any processes, may share one
// engine.
type Graph struct {
	db    engineapi.API // the engine as the mapping sees it (placedAPI in the predicate placement)
	raw   engineapi.API // the engine itself
	cfg   Config
	log   *slog.Logger
	mu    sync.Mutex
	st    *schemaState // the newest schema seen
	alloc *Allocator   // for online mutations
	known *knownSet
	// leased caches the largest "next" of LeaseVertex seen, for the check
	// that an explicit uid in a mutation was leased.
	leased atomic.Uint64
}

// schemaState is the schema at one version of SchemaVertex. Immutable.
type schemaState struct {
	sch  *schema.Schema
	meta meta
	read txn.Read
}

// meta is the index bookkeeping stored beside the schema text.
type meta struct {
	Layout  int    `json:"layout"`
	NextGen uint64 `json:"next_gen"`
	// Placement is PlacementPredicate or empty (PlacementVertex).
	Placement string `json:"placement,omitempty"`
	// Index maps "pred|tokenizer" to the generation naming its vertices.
	Index map[string]uint64 `json:"index,omitempty"`
	// Work lists alter work not finished yet (builds and drops).
	Work []workItem `json:"work,omitempty"`
}

// workItem is one piece of alter work. Kinds: index, drop_index, reverse,
// drop_reverse, count, drop_count.
type workItem struct {
	Kind string `json:"kind"`
	Pred string `json:"pred"`
	Tok  string `json:"tok,omitempty"`
	Gen  uint64 `json:"gen,omitempty"`
}

const layoutVersion = 1

// busy reports whether mutations of pred must wait for alter work.
func (m meta) busy(pred string) bool {
	for _, w := range m.Work {
		if w.Pred == pred && w.Kind != "drop_index" {
			return true
		}
	}
	return false
}

func (m meta) clone() meta {
	out := m
	out.Index = make(map[string]uint64, len(m.Index))
	for k, v := range m.Index {
		out.Index[k] = v
	}
	out.Work = append([]workItem(nil), m.Work...)
	return out
}

// Schema property keys of SchemaVertex and LeaseVertex.
const (
	schemaTextKey = "text"
	schemaMetaKey = "meta"
	leaseNextKey  = "next"
)

// Open returns the Dgraph face of db, creating the stored schema (Dgraph's
// initial one) and the UID lease record on first use, and finishing any
// alter work a crash interrupted.
func Open(ctx context.Context, db engineapi.API, cfg Config) (*Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	db = unplaced(db)
	g := &Graph{db: db, raw: db, cfg: cfg, log: cfg.Logger, known: &knownSet{max: cfg.KnownMax, m: map[string]struct{}{}}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.alloc = g.NewAllocator()
	if err := g.retry(ctx, func(int) error { return g.initStore(ctx) }); err != nil {
		return nil, fmt.Errorf("dgraph: initialising the store: %w", err)
	}
	snap, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, err
	}
	if have, want := normPlacement(st.meta.Placement), cfg.Placement; want != "" && have != want {
		return nil, fmt.Errorf("%w: the Dgraph data was created with the %s placement; open it with that placement "+
			"(weft serve/load --dgraph-placement %s), not %s", ErrPlacement, have, have, want)
	}
	g.cfg.Placement = normPlacement(st.meta.Placement) // namespaces opened from g take it too
	if g.cfg.Placement == PlacementPredicate {
		g.db = &placedAPI{inner: db, g: g}
	}
	if len(st.meta.Work) > 0 {
		if err := g.runWork(ctx); err != nil {
			return nil, fmt.Errorf("dgraph: finishing an interrupted alter: %w", err)
		}
	}
	return g, nil
}

// initStore creates SchemaVertex and LeaseVertex when absent.
func (g *Graph) initStore(ctx context.Context) error {
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return err
	}
	sv, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: SchemaVertex}, engineapi.ReadOptions{})
	if err != nil {
		return err
	}
	lv, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: LeaseVertex}, engineapi.ReadOptions{})
	if err != nil {
		return err
	}
	var ops []txn.Op
	if !lv.Exists {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: LeaseVertex},
			txn.Op{Kind: txn.SetVertexProp, Vertex: LeaseVertex, Key: leaseNextKey, Value: value.I64(1)})
	}
	if !sv.Exists {
		sch := schema.Initial()
		m := meta{Layout: layoutVersion, NextGen: 1, Index: map[string]uint64{}}
		if normPlacement(g.cfg.Placement) == PlacementPredicate {
			m.Placement = PlacementPredicate
		}
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: SchemaVertex})
		for _, p := range sch.Predicates() {
			for _, t := range p.Index {
				if index.Get(t.Name) != nil {
					ops = append(ops, m.newGen(p.Name, t.Name)...)
				}
			}
		}
		ops = append(ops, schemaOps(sch, m)...)
		if m.Placement == PlacementPredicate { // the directories go to their groups (g.db is not placed yet)
			for i := range ops {
				ops[i].Vertex = placedInternal(ops[i].Vertex)
			}
		}
	}
	if len(ops) == 0 {
		return nil
	}
	_, err = g.db.Commit(ctx, []txn.Read{sv.Read, lv.Read}, ops)
	return err
}

// newGen assigns the next generation to index pred|tok and returns the
// operations creating its directory vertices.
func (m *meta) newGen(pred, tok string) []txn.Op {
	gen := m.NextGen
	m.NextGen++
	m.Index[pred+"|"+tok] = gen
	ops := make([]txn.Op, 0, Buckets)
	for b := range Buckets {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: dirVertexIn(m.Placement, pred, gen, b)})
	}
	return ops
}

// schemaOps writes a schema and its meta to SchemaVertex.
func schemaOps(sch *schema.Schema, m meta) []txn.Op {
	mb, err := json.Marshal(m)
	if err != nil {
		panic("dgraph: encoding meta: " + err.Error()) // plain data: cannot fail
	}
	return []txn.Op{
		{Kind: txn.SetVertexProp, Vertex: SchemaVertex, Key: schemaTextKey, Value: value.Str(sch.String())},
		{Kind: txn.SetVertexProp, Vertex: SchemaVertex, Key: schemaMetaKey, Value: value.Str(string(mb))},
	}
}

// schemaAt returns the schema as of snap, from the cache when SchemaVertex
// has not changed. Its read goes into every mutation's read set, so a
// mutation commits only under the schema it was checked against.
func (g *Graph) schemaAt(ctx context.Context, snap engineapi.Snapshot) (*schemaState, error) {
	v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: SchemaVertex}, engineapi.ReadOptions{})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	cur := g.st
	g.mu.Unlock()
	if cur != nil && bytes.Equal(cur.read.Version, v.Read.Version) {
		return cur, nil
	}
	v, err = g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: SchemaVertex}, engineapi.ReadOptions{Props: true})
	if err != nil {
		return nil, err
	}
	if !v.Exists {
		return nil, fmt.Errorf("%w: no schema vertex %q (was the store initialised by Open?)", ErrCorrupt, SchemaVertex)
	}
	st := &schemaState{read: v.Read}
	if st.sch, err = schema.Parse(v.Props[schemaTextKey].Str()); err != nil {
		return nil, fmt.Errorf("%w: stored schema: %v", ErrCorrupt, err)
	}
	if err := json.Unmarshal([]byte(v.Props[schemaMetaKey].Str()), &st.meta); err != nil {
		return nil, fmt.Errorf("%w: stored index metadata: %v", ErrCorrupt, err)
	}
	if st.meta.Layout != layoutVersion {
		return nil, fmt.Errorf("%w: layout version %d, this build reads %d", ErrCorrupt, st.meta.Layout, layoutVersion)
	}
	if st.meta.Index == nil {
		st.meta.Index = map[string]uint64{}
	}
	g.mu.Lock()
	g.st = st
	g.mu.Unlock()
	return st, nil
}

// Schema returns the current schema (read at a fresh snapshot).
func (g *Graph) Schema(ctx context.Context) (*schema.Schema, error) {
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, err
	}
	return st.sch, nil
}

// Engine returns the engine under the Graph.
func (g *Graph) Engine() engineapi.API { return g.raw }

// Placement is the store's placement: PlacementVertex or PlacementPredicate.
func (g *Graph) Placement() string {
	if _, ok := g.db.(*placedAPI); ok {
		return PlacementPredicate
	}
	return PlacementVertex
}

// retryable reports whether an attempt failed on a race worth retrying: a
// conflict, or an operation that found the store changed under it (an index
// vertex created by a concurrent transaction: those are not in read sets).
func retryable(err error) bool {
	return errors.Is(err, engineapi.ErrAborted) || errors.Is(err, txn.ErrExists) || errors.Is(err, txn.ErrNotFound) ||
		errors.Is(err, engineapi.ErrOverloaded) || errors.Is(err, engineapi.ErrSnapshotTooOld)
}

// retry runs fn until it succeeds, fails for good, or AttemptsMax attempts
// failed on retryable errors, backing off between attempts.
func (g *Graph) retry(ctx context.Context, fn func(attempt int) error) error {
	for attempt := 0; ; attempt++ {
		err := fn(attempt)
		if err == nil || !retryable(err) {
			return err
		}
		if attempt+1 >= g.cfg.AttemptsMax {
			return fmt.Errorf("dgraph: giving up after %d attempts: %w", attempt+1, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

// backoff is the pause before attempt+1: exponential from 1ms to 250ms,
// with jitter so that conflicting writers spread out.
func backoff(attempt int) time.Duration {
	d := time.Millisecond << min(attempt, 8)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// knownSet caches the internal vertices (index tokens, has-sets) known to
// exist at a committed snapshot. They are deleted only when their index
// generation is dropped, and a dropped generation is never used again, so
// an entry never goes stale.
type knownSet struct {
	mu  sync.Mutex
	max int
	m   map[string]struct{}
}

func (k *knownSet) has(h string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[h]
	return ok
}

func (k *knownSet) add(hs ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m)+len(hs) > k.max {
		clear(k.m)
	}
	for _, h := range hs {
		k.m[h] = struct{}{}
	}
}

// parallel is Parallel without a context (the mapping's own batches).
func parallel(n, max int, fn func(i int) error) error {
	return Parallel(context.Background(), n, max, fn)
}

// Parallel runs fn(0..n-1) on at most max goroutines; it stops handing out
// work after the first error or once ctx ends, and returns that error. The
// DQL executor reads its batches with it too.
func Parallel(ctx context.Context, n, max int, fn func(i int) error) error {
	if n == 0 {
		return nil
	}
	if n == 1 || max <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range min(n, max) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first == nil && ctx.Err() != nil {
					first = ctx.Err()
				}
				i, stop := next, first != nil
				next++
				mu.Unlock()
				if stop || i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
