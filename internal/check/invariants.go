package check

import "fmt"

// assertf panics with a programmer error when cond is false.
func assertf(cond bool, format string, args ...any) {
	if !cond {
		panic(fmt.Sprintf("check: assertion failed: "+format, args...))
	}
}

// checkCycle asserts that c is a cycle of g whose every edge has the label
// that names it.
func (g *graph) checkCycle(c cycle) {
	assertf(len(c.nodes) >= 2 && len(c.labels) == len(c.nodes), "cycle of %d nodes, %d labels", len(c.nodes), len(c.labels))
	seen := make(map[int32]bool, len(c.nodes))
	for i, from := range c.nodes {
		assertf(!seen[from], "node %d repeats in cycle %v", from, c.nodes)
		seen[from] = true
		to := c.nodes[(i+1)%len(c.nodes)]
		l := c.labels[i]
		assertf(l != 0 && l&(l-1) == 0, "edge %d → %d named by %#x, not one kind", from, to, uint8(l))
		assertf(g.labels(from, to)&l != 0, "cycle edge %d → %d has no %s label", from, to, l.kind())
	}
}

// frontierCheckMax bounds the history size for the quadratic real-time
// reduction check.
const frontierCheckMax = 400

// checkFrontier asserts that every edge frontier emitted is a pair (i, j)
// with ends[i] < starts[j] and that every such pair is reachable. (When some
// interval ends before it starts, as a version read before its write was
// invoked can, reachability may exceed the relation; each edge is still
// sound, and so is its closure.)
func checkFrontier(starts, ends []int, edges [][2]int) {
	n := len(starts)
	if n > frontierCheckMax {
		return
	}
	for i := range n {
		assertf(ends[i] < 0 || starts[i] <= ends[i], "interval %d ends at %d before it starts at %d", i, ends[i], starts[i])
	}
	adj := make([][]int, n)
	for _, e := range edges {
		i, j := e[0], e[1]
		assertf(ends[i] >= 0 && ends[i] < starts[j], "frontier edge %d → %d is not real-time order", i, j)
		adj[i] = append(adj[i], j)
	}
	for i := range n {
		if ends[i] < 0 {
			continue
		}
		reach := make([]bool, n)
		stack := []int{i}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[v] {
				if !reach[w] {
					reach[w] = true
					stack = append(stack, w)
				}
			}
		}
		for j := range n {
			assertf(reach[j] || ends[i] >= starts[j], "frontier: %d precedes %d in real time but is not linked", i, j)
		}
	}
}
