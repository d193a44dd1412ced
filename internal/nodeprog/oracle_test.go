package nodeprog_test

import (
	"math"
	"slices"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// Brute-force oracles over small graphs: enumerate every simple path and
// pick by the documented orders. Slow and obviously right.

// simplePaths calls fn for every simple path from src to dest with at most
// maxLen edges (vertices and edges), edges filtered by keep.
func simplePaths(g *progtest.Graph, src, dest string, maxLen int, keep func(nodeprog.Edge) bool, fn func(vs []string, es []nodeprog.Edge)) {
	if _, ok := g.Lookup(src); !ok {
		return
	}
	var vs []string
	var es []nodeprog.Edge
	var walk func(h string)
	walk = func(h string) {
		if slices.Contains(vs, h) {
			return
		}
		v, ok := g.Lookup(h)
		if !ok {
			return
		}
		vs = append(vs, h)
		defer func() { vs = vs[:len(vs)-1] }()
		if h == dest {
			fn(slices.Clone(vs), slices.Clone(es))
			return
		}
		if len(es) >= maxLen {
			return
		}
		v.Edges(func(e nodeprog.Edge) bool {
			if keep == nil || keep(e) {
				es = append(es, e)
				walk(e.Dst())
				es = es[:len(es)-1]
			}
			return true
		})
	}
	walk(src)
}

func weightOf(e nodeprog.Edge, key string) (float64, bool) {
	w, ok := e.Prop(key)
	if !ok {
		return 0, false
	}
	return w.Number()
}

// bestPath is the oracle of reachability (weight == ""), shortest_path and
// widest_path with dest.
func bestPath(g *progtest.Graph, src, dest, weight string, widest bool, maxLen int) (found bool, cost float64, path []string) {
	keep := func(e nodeprog.Edge) bool {
		if weight == "" {
			return true
		}
		_, ok := weightOf(e, weight)
		return ok
	}
	simplePaths(g, src, dest, maxLen, keep, func(vs []string, es []nodeprog.Edge) {
		c := 0.0
		if widest {
			c = math.Inf(1)
		}
		for _, e := range es {
			w, _ := weightOf(e, weight)
			if widest {
				c = math.Min(c, w)
			} else {
				c += w
			}
		}
		better := !found
		if found {
			switch {
			case weight != "" && c != cost:
				better = (c < cost) != widest
			case len(vs) != len(path):
				better = len(vs) < len(path)
			default:
				better = slices.Compare(vs, path) < 0
			}
		}
		if better {
			found, cost, path = true, c, vs
		}
	})
	return found, cost, path
}
