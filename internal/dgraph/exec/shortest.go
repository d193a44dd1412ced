package exec

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/value"
)

// step is one hop of a path: the predicate followed to reach uid.
type step struct {
	pred string
	uid  uint64
}

type partial struct {
	cost  float64
	steps []step // steps[0] is the source (pred "")
}

type pathHeap []*partial

func (h pathHeap) Len() int { return len(h) }
func (h pathHeap) Less(i, j int) bool {
	if h[i].cost != h[j].cost {
		return h[i].cost < h[j].cost
	}
	return len(h[i].steps) < len(h[j].steps)
}
func (h pathHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pathHeap) Push(v any)   { *h = append(*h, v.(*partial)) }
func (h *pathHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// shortest answers a shortest block: the numpaths cheapest loopless paths
// from → to over the block's predicates, an edge weighing its facet when
// the predicate asks @facets(key), else 1. Best-first search over partial
// paths (cheapest first), so paths come out in order of cost; the search
// expands at most Config.NodesMax partial paths.
func (x *run) shortest(b *dql.Block) (*blockOut, error) {
	s := b.Shortest
	from, okf := x.refUID(s.From)
	to, okt := x.refUID(s.To)
	if !okf || !okt {
		return nil, nil
	}
	k := 1
	if s.NumPaths != nil {
		k = int(min(max(*s.NumPaths, 1), int64(x.cfg.PathsMax)))
	}
	depth := x.cfg.RecurseDepthMax
	if s.Depth != nil {
		depth = int(min(max(*s.Depth, 1), int64(depth)))
	}
	var found []*partial
	h := &pathHeap{{steps: []step{{uid: from}}}}
	for pops := 0; h.Len() > 0 && len(found) < k; pops++ {
		if pops >= x.cfg.NodesMax {
			return nil, fmt.Errorf("%w: shortest path search expanded %d paths", ErrLimit, pops)
		}
		p := heap.Pop(h).(*partial)
		last := p.steps[len(p.steps)-1].uid
		if last == to {
			if (s.MinWeight == nil || p.cost >= *s.MinWeight) && (s.MaxWeight == nil || p.cost <= *s.MaxWeight) {
				found = append(found, p)
			}
			continue
		}
		if len(p.steps) > depth {
			continue
		}
		next, err := x.neighbours(b, last)
		if err != nil {
			return nil, err
		}
		for _, nb := range next {
			if slices.ContainsFunc(p.steps, func(st step) bool { return st.uid == nb.step.uid }) {
				continue
			}
			heap.Push(h, &partial{cost: p.cost + nb.w, steps: append(slices.Clone(p.steps), nb.step)})
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	var out []*object
	var nodes []uint64
	for _, p := range found {
		o := pathObject(p.steps)
		o.add("_weight_", value.F64(p.cost), false)
		out = append(out, o)
		for _, st := range p.steps {
			nodes = append(nodes, st.uid)
		}
	}
	if b.Var != "" {
		x.uidVars[b.Var] = sortedUnion(nodes)
	}
	return &blockOut{key: "_path_", val: out}, nil
}

// pathObject renders a path as nested objects: {"uid": a, "pred": {"uid": b, ...}}.
func pathObject(steps []step) *object {
	o := &object{}
	o.add("uid", value.Str(dgraph.FormatUID(steps[0].uid)), false)
	if len(steps) > 1 {
		o.add(steps[1].pred, pathObject(steps[1:]), false)
	}
	return o
}

type neighbour struct {
	step step
	w    float64
}

// neighbours lists the edges of node u over the block's predicates, with
// their weights, keeping those whose target passes the predicate's filter.
func (x *run) neighbours(b *dql.Block, u uint64) ([]neighbour, error) {
	if err := x.fetch([]uint64{u}); err != nil {
		return nil, err
	}
	n := x.node(u)
	var out []neighbour
	for _, f := range b.Fields {
		if f.Kind != dql.FieldPred || f.Attr == "uid" {
			continue
		}
		weightKey := ""
		if f.Facets != nil && len(f.Facets.Keys) > 0 {
			weightKey = f.Facets.Keys[0].Key
		}
		var cand []uint64
		for _, e := range n.Edges[f.Attr] {
			cand = append(cand, e.UID)
		}
		kept, err := x.filter(f.Filter, cand)
		if err != nil {
			return nil, err
		}
		for _, e := range n.Edges[f.Attr] {
			if !slices.Contains(kept, e.UID) {
				continue
			}
			w := 1.0
			if wv, ok := e.Facets[weightKey]; ok && weightKey != "" {
				if fw, isNum := wv.Number(); isNum && fw >= 0 {
					w = fw
				}
			}
			out = append(out, neighbour{step: step{pred: f.Attr, uid: e.UID}, w: w})
		}
	}
	return out, nil
}

// refUID resolves shortest's from/to: a uid, or the first uid of a variable.
func (x *run) refUID(r dql.UIDRef) (uint64, bool) {
	if r.Var == "" {
		return r.UID, r.UID != 0
	}
	us := x.uidVars[r.Var]
	if len(us) == 0 {
		return 0, false
	}
	return us[0], true
}
