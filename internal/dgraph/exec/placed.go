package exec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/engineapi"
)

// The predicate placement (dgraph.PlacementPredicate) keeps node u's data
// of predicate p on the vertex dgraph.PlacedVertex(p, u), in p's placement
// group, so that one predicate's data is on one shard. The executor reads
// as Dgraph's query processor does: per level, for each predicate the
// level needs, the placed vertices of all the level's nodes in one batched
// read — one engine request per (predicate, shard). A node read only in
// part is in run.partial with the predicates read so far; a caller that
// needs all of a node (expand, @recurse, filters, ordering...) fetches
// the rest first, through the node vertex's list of its predicates.

// placedPred is the predicate whose placed vertex holds attribute a ("~p":
// p's reverse edges are on p's placed vertex).
func placedPred(a string) string { return strings.TrimPrefix(a, "~") }

// lacks reports whether node u (already in x.nodes) misses a predicate of
// preds (nil: any of its predicates).
func (x *run) lacks(u uint64, preds []string) bool {
	have, ok := x.partial[u]
	if !ok {
		return false // whole
	}
	if preds == nil {
		return true
	}
	for _, p := range preds {
		if !have[placedPred(p)] {
			return true
		}
	}
	return false
}

// levelPreds is what a level's fields read of its nodes: the predicates of
// its value, edge, count and checkpwd fields; nil (everything) for
// @recurse and for anything else (expand, @groupby aggregates).
func levelPreds(sel *dql.Selection, recurse bool) []string {
	if recurse {
		return nil
	}
	set := map[string]bool{}
	for _, f := range sel.Fields {
		switch f.Kind {
		case dql.FieldCountUID, dql.FieldVal, dql.FieldMath:
		case dql.FieldAgg:
			if f.ValVar == "" {
				return nil
			}
		case dql.FieldPred:
			if f.Attr != "uid" {
				set[placedPred(f.Attr)] = true
			}
		case dql.FieldCount, dql.FieldCheckpwd:
			set[placedPred(f.Attr)] = true
		default:
			return nil
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// orderPreds is what ordering by order reads of the nodes: the ordering
// predicates (value variables read no node).
func orderPreds(order []dql.Order) []string {
	out := []string{}
	for _, o := range order {
		if o.Var == "" {
			out = append(out, placedPred(o.Attr))
		}
	}
	return out
}

// fetchPlaced reads the nodes uids (sorted, distinct) in the predicate
// placement: with preds nil, the node vertices of those not read whole
// (each one's list of placed predicates) in one batched read, then every
// predicate they lack; else only the predicates of preds they lack. Each
// predicate's placed vertices of all the nodes are one batched read (one
// engine request per (predicate, shard)), the predicates concurrently.
// Every read goes through the reader (recorded for OCC).
func (x *run) fetchPlaced(uids []uint64, preds []string) error {
	need := make([][]string, len(uids)) // per node, the predicates to read
	if preds == nil {
		refs := make([]engineapi.VertexRef, len(uids))
		for i, u := range uids {
			refs[i] = engineapi.VertexRef{Name: dgraph.FormatUID(u)}
		}
		nodes, err := x.readBatch(refs, engineapi.ReadOptions{Props: true})
		if err != nil {
			return err
		}
		for i, nv := range nodes {
			need[i] = dgraph.PlacedPreds(nv)
		}
	} else {
		for i := range uids {
			for _, p := range preds {
				need[i] = append(need[i], placedPred(p))
			}
			slices.Sort(need[i])
			need[i] = slices.Compact(need[i])
		}
	}
	byPred := map[string][]int{} // predicate → indexes of the nodes to read it for
	for i, u := range uids {
		for _, p := range need[i] {
			if have, partial := x.partial[u]; !have[p] && (partial || x.nodes[u] == nil) {
				byPred[p] = append(byPred[p], i)
			}
		}
	}
	all := slices.Sorted(maps.Keys(byPred))
	opts := engineapi.ReadOptions{Props: true, Edges: true, EdgesMax: x.cfg.EdgesMax}
	got := make([][]*engineapi.Vertex, len(all))
	err := dgraph.Parallel(x.ctx, len(all), x.cfg.ReadsParallelMax, func(j int) error {
		p := all[j]
		refs := make([]engineapi.VertexRef, len(byPred[p]))
		for k, i := range byPred[p] {
			refs[k] = engineapi.VertexRef{Name: dgraph.PlacedVertex(p, uids[i])}
		}
		vs, err := x.readBatch(refs, opts)
		got[j] = vs
		return err
	})
	if err != nil {
		return err
	}
	parts := make([][]*engineapi.Vertex, len(uids))
	for j, p := range all { // predicate order: deterministic merges
		for k, i := range byPred[p] {
			parts[i] = append(parts[i], got[j][k])
		}
	}
	for i, u := range uids {
		node := &engineapi.Vertex{Handle: dgraph.FormatUID(u), Exists: true}
		v := dgraph.MergePlaced(node, parts[i], opts)
		if v.EdgesTruncated {
			return fmt.Errorf("%w: node %s has more than %d edges", ErrLimit, v.Handle, x.cfg.EdgesMax)
		}
		x.addNode(u, dgraph.DecodeVertex(v), need[i], preds == nil)
	}
	return nil
}

// addNode merges the predicates read of node u (read) into what was read
// before: whole when preds was nil, else partial with read added.
func (x *run) addNode(u uint64, n *dgraph.Node, read []string, whole bool) {
	n.UID = u
	if old, ok := x.nodes[u]; ok { // predicates are disjoint: each is read once
		maps.Copy(old.Values, n.Values)
		maps.Copy(old.Facets, n.Facets)
		maps.Copy(old.Edges, n.Edges)
		maps.Copy(old.Counts, n.Counts)
		n = old
	}
	x.nodes[u] = n
	if whole {
		delete(x.partial, u)
		return
	}
	have := x.partial[u]
	if have == nil {
		have = map[string]bool{}
		x.partial[u] = have
	}
	for _, p := range read {
		have[p] = true
	}
}

// readBatch reads refs through the reader: one batched read when it is a
// dgraph.BatchReader, else vertex by vertex (ReadsParallelMax at a time).
func (x *run) readBatch(refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error) {
	return dgraph.ReadVertices(x.ctx, x.r, refs, opts, x.cfg.ReadsParallelMax)
}
