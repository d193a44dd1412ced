package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/value"
)

// Errors. A query the executor cannot run fails with an error wrapping one
// of these (or dgraph's ErrNoIndex, ErrBusy, ErrLimit from its lookups, or a
// dql parse error). Their messages keep the prefix "dqlexec:" that the
// Dgraph face's clients have always seen.
var (
	// ErrInvalid is a query that parses but cannot run as written (a value
	// that does not convert to its predicate's type, a bad variable use).
	ErrInvalid = errors.New("dqlexec: invalid query")
	// ErrUnsupported is valid DQL this executor does not run (doc.go lists it).
	ErrUnsupported = errors.New("dqlexec: not supported")
	// ErrLimit is a query that would read more than Config allows.
	ErrLimit = errors.New("dqlexec: limit reached")
)

// Config bounds one query's work.
type Config struct {
	// ReadsParallelMax bounds the concurrent vertex reads of one batch
	// (default 16).
	ReadsParallelMax int
	// EdgesMax is the most out-edges read with one node (default 1<<20);
	// a node with more fails the query with ErrLimit rather than answer
	// from a truncated edge list.
	EdgesMax int
	// NodesMax bounds the distinct nodes one query reads (default 1<<21).
	NodesMax int
	// RecurseDepthMax bounds @recurse and shortest-path depth (default 64).
	RecurseDepthMax int
	// PathsMax bounds the paths a shortest block returns (default 100).
	PathsMax int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{ReadsParallelMax: 16, EdgesMax: 1 << 20, NodesMax: 1 << 21, RecurseDepthMax: 64, PathsMax: 100}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	if c.ReadsParallelMax < 1 || c.EdgesMax < 1 || c.NodesMax < 1 || c.RecurseDepthMax < 1 || c.PathsMax < 1 {
		return errors.New("dqlexec: every Config field must be positive")
	}
	return nil
}

// Executor runs DQL queries and upsert blocks over a dgraph.Graph. It holds
// no per-query state and is safe for concurrent use.
type Executor struct {
	g   *dgraph.Graph
	cfg Config
}

// New returns an executor over g with DefaultConfig.
func New(g *dgraph.Graph) *Executor { return &Executor{g: g, cfg: DefaultConfig()} }

// NewWithConfig returns an executor over g with cfg.
func NewWithConfig(g *dgraph.Graph, cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Executor{g: g, cfg: cfg}, nil
}

// Placement is the placement of the graph the executor reads
// (dgraph.PlacementVertex or dgraph.PlacementPredicate).
func (e *Executor) Placement() string { return e.g.Placement() }

// Result is a query's answer.
type Result struct {
	// Data is Dgraph's "data" object, e.g. {"me":[{"name":"x"}]}.
	Data json.RawMessage
	// UIDVars are the uid variables the query defined, each sorted.
	UIDVars map[string][]uint64
	// ValueVars are the value variables the query defined.
	ValueVars map[string]map[uint64]value.Value
	// Stats says what the query read.
	Stats Stats
}

// Stats counts a query's node reads (index lookups not included).
type Stats struct {
	// Batches is the number of node batches: about one per level.
	Batches int
	// Nodes is the number of distinct nodes read.
	Nodes int
}

// Query parses text with the GraphQL variables vars and runs it, reading
// through r.
func (e *Executor) Query(ctx context.Context, r dgraph.Reader, text string, vars map[string]string) (*Result, error) {
	q, err := dql.ParseWithVars(text, vars)
	if err != nil {
		return nil, err
	}
	return e.Run(ctx, r, q)
}

// Run runs a parsed query, reading through r.
func (e *Executor) Run(ctx context.Context, r dgraph.Reader, q *dql.Query) (*Result, error) {
	x, err := e.newRun(ctx, r)
	if err != nil {
		return nil, err
	}
	if q.Schema != nil {
		return x.schemaBlock(q.Schema)
	}
	outs, err := x.blocks(q.Blocks)
	if err != nil {
		return nil, err
	}
	var buf []byte
	buf = append(buf, '{')
	first := true
	for i, b := range q.Blocks {
		if outs[i] == nil {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendString(buf, outs[i].key)
		buf = append(buf, ':')
		buf = appendJSON(buf, outs[i].val)
		_ = b
	}
	buf = append(buf, '}')
	return &Result{Data: buf, UIDVars: x.uidVars, ValueVars: x.valVars,
		Stats: Stats{Batches: x.batches, Nodes: len(x.nodes)}}, nil
}

// blockOut is one block's entry in "data".
type blockOut struct {
	key string
	val any
}

// blocks runs the blocks in an order where each runs after the blocks
// defining the variables it uses (dql rejects cycles), and returns their
// outputs in text order (nil for var blocks).
func (x *run) blocks(bs []*dql.Block) ([]*blockOut, error) {
	defs := make([][]string, len(bs))
	uses := make([][]string, len(bs))
	definedBy := map[string]int{}
	for i, b := range bs {
		defs[i], uses[i] = b.Vars()
		for _, d := range defs[i] {
			definedBy[d] = i
		}
	}
	outs := make([]*blockOut, len(bs))
	done := make([]bool, len(bs))
	for left := len(bs); left > 0; {
		progress := false
		for i, b := range bs {
			if done[i] || !ready(i, uses[i], definedBy, done) {
				continue
			}
			out, err := x.block(b)
			if err != nil {
				return nil, fmt.Errorf("block %s: %w", b.Name, err)
			}
			if b.Name != "var" {
				outs[i] = out
			}
			done[i], progress = true, true
			left--
		}
		if !progress {
			return nil, fmt.Errorf("%w: the blocks' variables depend on each other in a cycle", ErrInvalid)
		}
	}
	return outs, nil
}

// ready reports whether block i's variables are all defined by blocks that
// ran (or by block i itself).
func ready(i int, uses []string, definedBy map[string]int, done []bool) bool {
	for _, u := range uses {
		d, ok := definedBy[u]
		if ok && d != i && !done[d] {
			return false
		}
	}
	return true
}

// schemaBlock answers schema {...} queries: predicates (with the fields
// asked for) and types.
func (x *run) schemaBlock(sq *dql.SchemaQuery) (*Result, error) {
	want := func(f string) bool { return len(sq.Fields) == 0 || slices.Contains(sq.Fields, f) }
	var preds []any
	for _, p := range x.sch.Predicates() {
		if len(sq.Preds) > 0 && !slices.Contains(sq.Preds, p.Name) {
			continue
		}
		if len(sq.Types) > 0 {
			continue
		}
		o := &object{}
		o.add("predicate", value.Str(p.Name), false)
		if want("type") {
			o.add("type", value.Str(p.Type.String()), false)
		}
		if want("index") && len(p.Index) > 0 {
			o.add("index", value.Boolean(true), false)
		}
		if want("tokenizer") && len(p.Index) > 0 {
			var ts []value.Value
			for _, t := range p.Index {
				ts = append(ts, value.Str(t.Name))
			}
			o.add("tokenizer", value.ListOf(ts...), false)
		}
		for _, b := range []struct {
			name string
			on   bool
		}{{"reverse", p.Reverse}, {"count", p.Count}, {"list", p.List}, {"lang", p.Lang}, {"upsert", p.Upsert}, {"unique", p.Unique}} {
			if want(b.name) && b.on {
				o.add(b.name, value.Boolean(true), false)
			}
		}
		preds = append(preds, o)
	}
	var types []any
	for _, t := range x.sch.Types() {
		if len(sq.Preds) > 0 || len(sq.Types) > 0 && !slices.Contains(sq.Types, t.Name) {
			continue
		}
		o := &object{}
		var fs []*object
		for _, f := range t.Fields {
			fo := &object{}
			fo.add("name", value.Str(f), false)
			fs = append(fs, fo)
		}
		o.add("fields", fs, false)
		o.add("name", value.Str(t.Name), false)
		types = append(types, o)
	}
	top := &object{}
	if len(preds) > 0 {
		top.add("schema", anyObjects(preds), false)
	}
	if len(types) > 0 {
		top.add("types", anyObjects(types), false)
	}
	return &Result{Data: appendJSON(nil, top), UIDVars: map[string][]uint64{}, ValueVars: map[string]map[uint64]value.Value{}}, nil
}

func anyObjects(xs []any) []*object {
	out := make([]*object, len(xs))
	for i, o := range xs {
		out[i] = o.(*object)
	}
	return out
}

// predOf returns pred's schema, with ok false when the schema lacks it.
func (x *run) predOf(pred string) (schema.Predicate, bool) { return x.sch.Predicate(pred) }
