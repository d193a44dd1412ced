package nodeprog

import "github.com/weft-db/weft/internal/value"

// Vertex is a program's read-only view of one vertex at the program's
// timestamp. The shard implements it over its multi-version graph; only
// versions visible at the stamp are shown. A Vertex is used only during the
// Step that received it.
type Vertex interface {
	Handle() string
	Prop(key string) (value.Value, bool)
	// Props calls fn for every property until fn returns false.
	Props(fn func(key string, v value.Value) bool)
	Aliases() []string
	// Edges calls fn for every out-edge visible at the program's stamp, in an
	// order that is the same every time the same snapshot is read, until fn
	// returns false. The Edge is valid only during its call (implementations
	// reuse one value): copy what you need.
	Edges(fn func(e Edge) bool)
	EdgeCount() int
}

// Edge is a program's view of one out-edge. Dst may name a vertex that is
// not visible at the stamp; a hop there is skipped.
type Edge interface {
	Handle() string
	Dst() string
	Prop(key string) (value.Value, bool)
	Props(fn func(key string, v value.Value) bool)
}

// Snapshot enumerates every vertex visible at one timestamp, across all
// shards, with its out-edges. Whole-graph analyses run over it. The order of
// enumeration does not matter (analyses sort by handle); each vertex must be
// enumerated once.
type Snapshot interface {
	Vertices(fn func(v Vertex) bool)
}
