package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/value"
)

// run is the state of one query: the schema at the reader's snapshot, the
// nodes read so far (each node is read once per query) and the variables.
// Only fetch is concurrent; everything else runs on the caller's goroutine.
type run struct {
	ctx     context.Context
	cfg     Config
	r       dgraph.Reader
	rd      *dgraph.Reads
	sch     *schema.Schema
	nodes   map[uint64]*dgraph.Node
	uidVars map[string][]uint64
	valVars map[string]map[uint64]value.Value
	funcs   map[*dql.Func]*compiled
	// edgeLists keeps, per uid-valued field, each parent's children, for
	// aggregating and summing value variables defined below a level.
	edgeLists map[*dql.Field]map[uint64][]uint64
	// batches counts the batches of reads (levels), for tests and metrics.
	batches int
	// placed is set in the predicate placement: nodes are read per
	// predicate (fetchPlaced), and partial holds, for a node read only in
	// part, the predicates read so far (a node of nodes not in partial is
	// whole).
	placed  bool
	partial map[uint64]map[string]bool
}

func (e *Executor) newRun(ctx context.Context, r dgraph.Reader) (*run, error) {
	rd := e.g.ReadsThrough(r)
	sch, err := rd.Schema(ctx)
	if err != nil {
		return nil, err
	}
	return &run{ctx: ctx, cfg: e.cfg, r: r, rd: rd, sch: sch, nodes: map[uint64]*dgraph.Node{},
		uidVars: map[string][]uint64{}, valVars: map[string]map[uint64]value.Value{},
		funcs: map[*dql.Func]*compiled{}, edgeLists: map[*dql.Field]map[uint64][]uint64{},
		placed: e.g.Placement() == dgraph.PlacementPredicate, partial: map[uint64]map[string]bool{}}, nil
}

// emptyNode stands for a uid never read (it has no data).
var emptyNode = &dgraph.Node{Values: map[string]value.Value{}, Facets: map[string]map[string]value.Value{},
	Edges: map[string][]dgraph.Edge{}, Counts: map[string]int64{}}

// node returns a fetched node (emptyNode when it was not fetched).
func (x *run) node(u uint64) *dgraph.Node {
	if n, ok := x.nodes[u]; ok {
		return n
	}
	return emptyNode
}

// fetch reads the whole nodes of uids not read yet, as one batch: a
// bounded pool of ReadsParallelMax goroutines, each reading whole vertices
// (values and edges) through the reader. With vertex placement one read
// per node is all a level needs; with predicate placement the batch is
// split per (predicate, shard) (fetchPlaced).
func (x *run) fetch(uids []uint64) error { return x.fetchPreds(uids, nil) }

// fetchPreds is fetch for a caller that reads only the predicates preds of
// the nodes (nil: all of them; "~p" is p's): with vertex placement the
// same, with predicate placement only those predicates are read.
func (x *run) fetchPreds(uids []uint64, preds []string) error {
	var missing []uint64
	for _, u := range uids {
		if _, ok := x.nodes[u]; !ok || x.placed && x.lacks(u, preds) {
			missing = append(missing, u)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	fresh := 0
	for _, u := range missing {
		if _, ok := x.nodes[u]; !ok {
			fresh++
		}
	}
	if len(x.nodes)+fresh > x.cfg.NodesMax {
		return fmt.Errorf("%w: the query reads more than %d nodes", ErrLimit, x.cfg.NodesMax)
	}
	x.batches++
	if x.placed {
		return x.fetchPlaced(missing, preds)
	}
	got := make([]*dgraph.Node, len(missing))
	err := dgraph.Parallel(x.ctx, len(missing), x.cfg.ReadsParallelMax, func(i int) error {
		v, err := x.r.GetVertex(x.ctx, engineapi.VertexRef{Name: dgraph.FormatUID(missing[i])},
			engineapi.ReadOptions{Props: true, Edges: true, EdgesMax: x.cfg.EdgesMax})
		if err != nil {
			return err
		}
		if v.EdgesTruncated {
			return fmt.Errorf("%w: node %s has more than %d edges", ErrLimit, v.Handle, x.cfg.EdgesMax)
		}
		got[i] = dgraph.DecodeVertex(v)
		return nil
	})
	if err != nil {
		return err
	}
	for i, u := range missing {
		got[i].UID = u
		x.nodes[u] = got[i]
	}
	return nil
}

// sortedUnion merges uid lists into one sorted, distinct list.
func sortedUnion(lists ...[]uint64) []uint64 {
	var out []uint64
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersect keeps the elements of sorted a that are in sorted b.
func intersect(a, b []uint64) []uint64 {
	var out []uint64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
