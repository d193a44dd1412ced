package check

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/invariants"
)

// label is a set of dependency kinds between two transactions (bits).
type label uint8

const (
	lWW label = 1 << iota
	lWR
	lRW
	lProcess
	lRealtime
	lWWRT // ww from a version order inferred from real time (rw-register)
	lRWRT // rw from a version order inferred from real time (rw-register)

	lAll = lWW | lWR | lRW | lProcess | lRealtime | lWWRT | lRWRT
)

// labelPriority is the order in which a cycle's edge is named when it has
// several kinds: the strongest evidence first, so a cycle is named by the
// weakest anomaly that explains it (ww before realtime, rw last).
var labelPriority = []label{lWW, lWR, lProcess, lWWRT, lRealtime, lRW, lRWRT}

func (l label) kind() EdgeKind {
	switch l {
	case lWW:
		return EdgeWW
	case lWR:
		return EdgeWR
	case lRW:
		return EdgeRW
	case lProcess:
		return EdgeProcess
	case lRealtime:
		return EdgeRealtime
	case lWWRT:
		return EdgeWWRealtime
	case lRWRT:
		return EdgeRWRealtime
	}
	panic(fmt.Sprintf("check: label %#x is not a single kind", uint8(l)))
}

// why says which observation produced an edge, for explanations.
type why uint8

const (
	whyListNext       why = iota // ww: adjacent elements of the longest read
	whyListUnread                // ww: an append never read follows the last element read
	whyListRead                  // wr: a read ending in the writer's element
	whyListAnti                  // rw: a read ending just before the writer's element
	whyListAntiUnread            // rw: a longest read lacking a committed append
	whyRegRead                   // wr: a register read of the writer's value
	whyRegWFR                    // version order: a transaction read a, then wrote b
	whyRegInit                   // version order: the initial nil precedes every write
	whyRegRT                     // version order: a was visible before b's writer was invoked
	whyProcess                   // same process, one after the other
	whyRealtime                  // completed before the other was invoked
)

// nilVersion stands for the initial state or an empty list in rawEdge.a.
const nilVersion = -1 << 63

// rawEdge is one inferred dependency with its provenance.
type rawEdge struct {
	from, to int32
	label    label
	why      why
	key      int64
	a, b     int64 // the versions (values) involved; history indexes for process and realtime
}

type adjEdge struct {
	to     int32
	labels label
}

// graph is a transaction dependency graph: nodes are transactions, edges
// carry label sets. Add edges, then build, then search. Scratch arrays make
// repeated searches cost only the nodes they touch.
type graph struct {
	n     int
	raw   []rawEdge
	out   []adjEdge // grouped by source: out[start[v]:start[v+1]]
	start []int32

	stamp, bstamp      int32
	member, seen       []int32
	index, low, parent []int32
	onStack            []bool
}

// cycleSearchBudget bounds the edge visits of one cycle search (one SCC,
// one anomaly spec) so a huge, badly broken history still finishes; when it
// runs out, a more general spec names the cycle.
const cycleSearchBudget = 1 << 21

func newGraph(n int) *graph { return &graph{n: n} }

func (g *graph) add(e rawEdge) {
	if e.from != e.to {
		g.raw = append(g.raw, e)
	}
}

// build sorts the raw edges by (from, to), keeping insertion order among
// equal pairs (a counting sort by source, then a stable sort of each
// source's few edges), and merges them into adjacency lists.
func (g *graph) build() {
	g.start = make([]int32, g.n+1)
	for _, e := range g.raw {
		g.start[e.from+1]++
	}
	for v := 0; v < g.n; v++ {
		g.start[v+1] += g.start[v]
	}
	sorted := make([]rawEdge, len(g.raw))
	next := slices.Clone(g.start[:g.n])
	for _, e := range g.raw {
		sorted[next[e.from]] = e
		next[e.from]++
	}
	g.raw = sorted
	g.out = make([]adjEdge, 0, len(g.raw))
	for v := 0; v < g.n; v++ {
		es := g.raw[g.start[v]:g.start[v+1]]
		slices.SortStableFunc(es, func(a, b rawEdge) int { return cmp.Compare(a.to, b.to) })
		g.start[v] = int32(len(g.out))
		for i := 0; i < len(es); {
			var l label
			j := i
			for ; j < len(es) && es[j].to == es[i].to; j++ {
				l |= es[j].label
			}
			g.out = append(g.out, adjEdge{to: es[i].to, labels: l})
			i = j
		}
	}
	g.start[g.n] = int32(len(g.out))
	g.member = make([]int32, g.n)
	g.seen = make([]int32, g.n)
	g.index = make([]int32, g.n)
	g.low = make([]int32, g.n)
	g.parent = make([]int32, g.n)
	g.onStack = make([]bool, g.n)
}

// labels returns the label set of edge from → to (0 if none).
func (g *graph) labels(from, to int32) label {
	for _, e := range g.out[g.start[from]:g.start[from+1]] {
		if e.to == to {
			return e.labels
		}
	}
	return 0
}

// provenance returns the first raw edge from → to with label l.
func (g *graph) provenance(from, to int32, l label) rawEdge {
	i, _ := slices.BinarySearchFunc(g.raw, rawEdge{from: from, to: to}, func(a, b rawEdge) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	for ; i < len(g.raw) && g.raw[i].from == from && g.raw[i].to == to; i++ {
		if g.raw[i].label == l {
			return g.raw[i]
		}
	}
	panic(fmt.Sprintf("check: no %s edge %d → %d", l.kind(), from, to))
}

// addOrderEdges adds process and real-time edges between the nodes; nodes[i]
// is node i's pair. Real-time edges are Elle's transitive reduction: each
// node is linked from the frontier of nodes that completed before its
// invocation and were not yet followed by another completed node, so edges
// number about n times the concurrency rather than n².
func (g *graph) addOrderEdges(nodes []Pair) {
	last := make(map[int]int32) // process → last node
	starts := make([]int, len(nodes))
	ends := make([]int, len(nodes))
	for i, p := range nodes {
		starts[i], ends[i] = p.InvokePos, -1
		if p.Type() == OK {
			ends[i] = p.CompletePos
		}
		proc := p.Invoke.Process
		if j, ok := last[proc]; ok && nodes[j].Before(p) {
			g.add(rawEdge{from: j, to: int32(i), label: lProcess, why: whyProcess,
				a: int64(nodes[j].Complete.Index), b: int64(p.Invoke.Index)})
		}
		last[proc] = int32(i)
	}
	frontier(starts, ends, func(i, j int) {
		g.add(rawEdge{from: int32(i), to: int32(j), label: lRealtime, why: whyRealtime,
			a: int64(nodes[i].Complete.Index), b: int64(nodes[j].Invoke.Index)})
	})
}

// frontier calls emit(i, j) for pairs with ends[i] < starts[j] whose
// transitive closure is all such pairs, for intervals [starts[i], ends[i]]
// with starts[i] <= ends[i] (ends[i] < 0: never ends). A start and an end
// of different intervals must not share a position. Each start is linked
// from the current frontier: intervals that have ended and are not yet
// superseded by a later-ended interval that started after them.
func frontier(starts, ends []int, emit func(i, j int)) {
	type event struct{ pos, end, i int }
	ev := make([]event, 0, 2*len(starts))
	for i := range starts {
		ev = append(ev, event{starts[i], 0, i})
		if ends[i] >= 0 {
			ev = append(ev, event{ends[i], 1, i})
		}
	}
	slices.SortFunc(ev, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.end, b.end), cmp.Compare(a.i, b.i))
	})
	if invariants.On {
		var edges [][2]int
		inner := emit
		emit = func(i, j int) { edges = append(edges, [2]int{i, j}); inner(i, j) }
		defer func() { checkFrontier(starts, ends, edges) }()
	}
	var front []int
	for _, e := range ev {
		if e.end == 0 {
			for _, i := range front {
				emit(i, e.i)
			}
			continue
		}
		// e.i ended: everything that ended before it started is now reached
		// through it.
		keep := front[:0]
		for _, i := range front {
			if ends[i] >= starts[e.i] {
				keep = append(keep, i)
			}
		}
		front = append(keep, e.i)
	}
}

// sccs returns the strongly connected components with at least two nodes of
// the subgraph induced by nodes using only edges whose labels meet mask,
// each sorted, ordered by smallest node (Tarjan, iterative).
func (g *graph) sccs(nodes []int32, mask label) [][]int32 {
	g.stamp++
	for _, v := range nodes {
		g.member[v], g.index[v] = g.stamp, -1
	}
	type frame struct{ v, e int32 }
	var comps [][]int32
	var stack []int32
	var call []frame
	next := int32(0)
	visit := func(v int32) {
		g.index[v], g.low[v] = next, next
		next++
		stack = append(stack, v)
		g.onStack[v] = true
		call = append(call, frame{v, g.start[v]})
	}
	for _, s := range nodes {
		if g.index[s] >= 0 {
			continue
		}
		visit(s)
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < g.start[v+1] {
				e := g.out[f.e]
				f.e++
				if e.labels&mask == 0 || g.member[e.to] != g.stamp {
					continue
				}
				if g.index[e.to] < 0 {
					visit(e.to)
				} else if g.onStack[e.to] {
					g.low[v] = min(g.low[v], g.index[e.to])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				g.low[u] = min(g.low[u], g.low[v])
			}
			if g.low[v] != g.index[v] {
				continue
			}
			i := len(stack) - 1
			for stack[i] != v {
				i--
			}
			comp := slices.Clone(stack[i:])
			stack = stack[:i]
			for _, w := range comp {
				g.onStack[w] = false
			}
			if len(comp) > 1 {
				slices.Sort(comp)
				comps = append(comps, comp)
			}
		}
	}
	slices.SortFunc(comps, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return comps
}

// markMembers makes nodes the member set for bfs.
func (g *graph) markMembers(nodes []int32) {
	g.stamp++
	for _, v := range nodes {
		g.member[v] = g.stamp
	}
}

// bfs returns a shortest path src ⇝ dst over edges meeting mask within the
// member set: [src, …, dst]; for src == dst, a shortest cycle through src
// without repeating it: [src, …, x] with an edge x → src. It returns nil if
// there is none or the search budget runs out.
func (g *graph) bfs(src, dst int32, mask label, budget *int) []int32 {
	g.bstamp++
	g.seen[src], g.parent[src] = g.bstamp, -1
	queue := []int32{src}
	for qi := 0; qi < len(queue); qi++ {
		v := queue[qi]
		for _, e := range g.out[g.start[v]:g.start[v+1]] {
			if *budget--; *budget < 0 {
				return nil
			}
			if e.labels&mask == 0 || g.member[e.to] != g.stamp {
				continue
			}
			if e.to == dst {
				return g.pathTo(v, dst, src != dst)
			}
			if g.seen[e.to] != g.bstamp {
				g.seen[e.to], g.parent[e.to] = g.bstamp, v
				queue = append(queue, e.to)
			}
		}
	}
	return nil
}

func (g *graph) pathTo(v, dst int32, withDst bool) []int32 {
	var p []int32
	if withDst {
		p = append(p, dst)
	}
	for ; v >= 0; v = g.parent[v] {
		p = append(p, v)
	}
	slices.Reverse(p)
	return p
}

// spec is one cycle shape to look for: edges meeting base, and if single,
// exactly one edge meeting rw.
type spec struct {
	base, rw label
	single   bool
}

// specs lists cycle shapes in Elle's order: G0, G1c, G-single, G2 without
// session or real-time edges, then with process edges, then with real time.
var specs = func() []spec {
	var out []spec
	for _, extra := range []label{0, lProcess, lProcess | lRealtime | lWWRT} {
		rw := lRW
		if extra&lRealtime != 0 {
			rw |= lRWRT
		}
		out = append(out,
			spec{base: lWW | extra},
			spec{base: lWW | lWR | extra},
			spec{base: lWW | lWR | extra, rw: rw, single: true},
			spec{base: lWW | lWR | rw | extra})
	}
	return out
}()

// cycle is a found cycle: nodes in order and the label naming each edge
// nodes[i] → nodes[(i+1)%len].
type cycle struct {
	nodes  []int32
	labels []label
}
