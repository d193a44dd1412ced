package social

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/client/kronos"
)

// RenderMax bounds the posts one render orders (the most recent arrivals):
// query_order is asked about every pair, so the cost grows with its square.
const RenderMax = 256

// Render orders posts, given in arrival order, consistently with Kronos
// (Figure 5, render_timeline): one query_order over every pair, then a
// topological sort that keeps arrival order wherever Kronos leaves posts
// concurrent.
func Render(ctx context.Context, kc *kronos.Client, arrived []Post) ([]Post, error) {
	if len(arrived) > RenderMax {
		arrived = arrived[len(arrived)-RenderMax:]
	}
	n := len(arrived)
	if n < 2 {
		return append([]Post(nil), arrived...), nil
	}
	pairs := make([]kronos.Pair, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			pairs = append(pairs, kronos.Pair{A: kronos.ID(arrived[i].Event), B: kronos.ID(arrived[j].Event)})
		}
	}
	orders, err := kc.QueryOrder(ctx, pairs)
	if err != nil {
		return nil, err
	}
	idx, err := topoOrder(n, orders)
	if err != nil {
		return nil, err
	}
	out := make([]Post, n)
	for k, i := range idx {
		out[k] = arrived[i]
	}
	return out, nil
}

// topoOrder sorts 0..n-1 so that i comes before j whenever orders says so.
// orders holds the answer for every pair i < j in row-major order (Before:
// i ⇝ j, After: j ⇝ i; anything else leaves the pair free). Among the items
// free to go next it always picks the smallest index, so unconstrained items
// keep their given order. A cycle cannot come from Kronos (coherency) and is
// returned as an error.
func topoOrder(n int, orders []kronos.Order) ([]int, error) {
	if len(orders) != n*(n-1)/2 {
		return nil, fmt.Errorf("social: %d orders for %d items", len(orders), n)
	}
	succ := make([][]int, n)
	indeg := make([]int, n)
	k := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch orders[k] {
			case kronos.Before:
				succ[i] = append(succ[i], j)
				indeg[j]++
			case kronos.After:
				succ[j] = append(succ[j], i)
				indeg[i]++
			}
			k++
		}
	}
	done := make([]bool, n)
	out := make([]int, 0, n)
	for len(out) < n {
		next := -1
		for i := range n {
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, fmt.Errorf("social: the order of %d posts has a cycle", n-len(out))
		}
		done[next] = true
		out = append(out, next)
		for _, j := range succ[next] {
			indeg[j]--
		}
	}
	return out, nil
}

// Inversions counts the pairs in shown where a post appears before a post it
// transitively replies to. ancestry maps every known post's event to the post,
// so chains are followed through posts that are not shown.
func Inversions(shown []Post, ancestry map[uint64]Post) int {
	pos := make(map[uint64]int, len(shown))
	for i, p := range shown {
		pos[p.Event] = i
	}
	bad := 0
	for i, p := range shown {
		// Bounded by the depth of the reply chain; ancestry has no cycles
		// because a reply's event is created after its parent's.
		for a := p.ReplyTo; a != 0; a = ancestry[a].ReplyTo {
			if j, ok := pos[a]; ok && j > i {
				bad++
			}
		}
	}
	return bad
}
