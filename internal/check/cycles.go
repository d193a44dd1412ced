package check

import (
	"fmt"
	"strings"

	"github.com/weft-db/weft/internal/invariants"
)

// reportCycles adds one anomaly for each strongly connected component of the
// dependency graph; nodes[i] is node i's pair. Components are searched for
// the weakest cycle shape first (see specs), so each is named by the
// anomaly that needs the least to explain it.
func (g *graph) reportCycles(nodes []Pair, rep *report) {
	all := make([]int32, g.n)
	for i := range all {
		all[i] = int32(i)
	}
	for _, scc := range g.sccs(all, lAll) {
		c := g.searchSCC(scc)
		if invariants.On {
			g.checkCycle(c)
		}
		rep.add(g.cycleAnomaly(c, nodes))
	}
}

// searchSCC finds a cycle in a strongly connected component, trying specs in
// order. The last spec admits every edge, so it always succeeds; it runs
// without a budget.
func (g *graph) searchSCC(scc []int32) cycle {
	for i, s := range specs {
		budget := cycleSearchBudget
		if i == len(specs)-1 {
			budget = int(^uint(0) >> 1)
		}
		var c cycle
		if s.single {
			c = g.singleCycle(scc, s, &budget)
		} else {
			c = g.anyCycle(scc, s, &budget)
		}
		if c.nodes != nil {
			return c
		}
	}
	panic("check: a strongly connected component without a cycle")
}

// anyCycle finds a shortest cycle through the smallest node of the first
// component of the SCC's subgraph restricted to s.base.
func (g *graph) anyCycle(scc []int32, s spec, budget *int) cycle {
	subs := g.sccs(scc, s.base)
	if len(subs) == 0 {
		return cycle{}
	}
	g.markMembers(subs[0])
	nodes := g.bfs(subs[0][0], subs[0][0], s.base, budget)
	if nodes == nil {
		return cycle{}
	}
	return g.nameCycle(nodes, s, -1)
}

// singleCycle finds a cycle with exactly one edge meeting s.rw: for each such
// edge u → v, a shortest path v ⇝ u over s.base edges.
func (g *graph) singleCycle(scc []int32, s spec, budget *int) cycle {
	g.markMembers(scc)
	stamp := g.stamp
	for _, u := range scc {
		for _, e := range g.out[g.start[u]:g.start[u+1]] {
			if e.labels&s.rw == 0 || g.member[e.to] != stamp {
				continue
			}
			path := g.bfs(e.to, u, s.base, budget)
			if path == nil {
				if *budget < 0 {
					return cycle{}
				}
				continue
			}
			nodes := append([]int32{u}, path[:len(path)-1]...)
			return g.nameCycle(nodes, s, 0)
		}
	}
	return cycle{}
}

// nameCycle picks the label naming each edge: the edge at rwAt from s.rw,
// the others from s.base, by labelPriority.
func (g *graph) nameCycle(nodes []int32, s spec, rwAt int) cycle {
	c := cycle{nodes: nodes, labels: make([]label, len(nodes))}
	for i, from := range nodes {
		to := nodes[(i+1)%len(nodes)]
		allowed := s.base
		if i == rwAt {
			allowed = s.rw
		}
		c.labels[i] = pickLabel(g.labels(from, to) & allowed)
	}
	return c
}

func pickLabel(l label) label {
	for _, p := range labelPriority {
		if l&p != 0 {
			return p
		}
	}
	panic("check: cycle edge without an allowed label")
}

// classify names a cycle by its edges (Adya, Elle): no rw edge is G0 (ww
// only) or G1c; one is G-single; several are G2-item if two are adjacent,
// else G-nonadjacent. It is suffixed -realtime if it uses real-time order,
// else -process if it uses process order.
func classify(ls []label) string {
	rws, adjacent := 0, false
	var all label
	for i, l := range ls {
		all |= l
		if isRW(l) {
			rws++
			if len(ls) > 1 && isRW(ls[(i+1)%len(ls)]) {
				adjacent = true
			}
		}
	}
	var name string
	switch {
	case rws == 0 && all&lWR != 0:
		name = "G1c"
	case rws == 0:
		name = "G0"
	case rws == 1:
		name = "G-single"
	case adjacent:
		name = "G2-item"
	default:
		name = "G-nonadjacent"
	}
	switch {
	case all&(lRealtime|lWWRT|lRWRT) != 0:
		name += "-realtime"
	case all&lProcess != 0:
		name += "-process"
	}
	return name
}

func isRW(l label) bool { return l&(lRW|lRWRT) != 0 }

var cycleMeaning = map[string]string{
	"G0":            "write cycle: transactions overwrote one another's writes in a cycle",
	"G1c":           "circular information flow: a cycle of write and read dependencies",
	"G-single":      "read skew: a cycle with exactly one anti-dependency (rw)",
	"G-nonadjacent": "a cycle with several anti-dependencies (rw), none adjacent",
	"G2-item":       "anti-dependency cycle: several anti-dependencies (rw), some adjacent",
}

// cycleAnomaly turns a cycle into an Anomaly with one Step per transaction.
func (g *graph) cycleAnomaly(c cycle, nodes []Pair) Anomaly {
	name := classify(c.labels)
	base := strings.TrimSuffix(strings.TrimSuffix(name, "-realtime"), "-process")
	expl := fmt.Sprintf("%s (%d transactions)", cycleMeaning[base], len(c.nodes))
	switch {
	case strings.HasSuffix(name, "-realtime"):
		expl += "; it uses real-time order, so no serial order agrees with when transactions began and ended"
	case strings.HasSuffix(name, "-process"):
		expl += "; it uses the order of operations within a process"
	}
	a := Anomaly{Type: name, Explanation: expl}
	for i, from := range c.nodes {
		to := c.nodes[(i+1)%len(c.nodes)]
		e := g.provenance(from, to, c.labels[i])
		a.Cycle = append(a.Cycle, Step{Op: nodes[from], Edge: c.labels[i].kind(),
			Why: e.explain(fmt.Sprintf("T%d", i+1), fmt.Sprintf("T%d", (i+1)%len(c.nodes)+1))})
	}
	return a
}

func version(v int64) string {
	if v == nilVersion {
		return "nil"
	}
	return fmt.Sprint(v)
}

// explain says in words why the edge from → to exists.
func (e rawEdge) explain(from, to string) string {
	k, a, b := e.key, version(e.a), version(e.b)
	seen := "a list ending in " + a
	if e.a == nilVersion {
		seen = "the empty list"
	}
	did := from + " read " + a // the source's relation to version a
	if e.label == lWW || e.label == lWWRT {
		did = from + " wrote " + a
	}
	switch e.why {
	case whyListNext:
		return fmt.Sprintf("key %d: %s appended %s and %s appended %s right after it", k, from, a, to, b)
	case whyListUnread:
		return fmt.Sprintf("key %d: %s appended %s, the last element ever read; %s's committed append of %s was never read, so it comes later", k, from, a, to, b)
	case whyListRead:
		return fmt.Sprintf("key %d: %s read %s, appended by %s", k, to, seen, from)
	case whyListAnti:
		return fmt.Sprintf("key %d: %s read %s, without %s's later append of %s", k, from, seen, to, b)
	case whyListAntiUnread:
		return fmt.Sprintf("key %d: %s read %s, without %s's committed append of %s, which no read shows", k, from, seen, to, b)
	case whyRegRead:
		return fmt.Sprintf("key %d: %s read %s, written by %s", k, to, a, from)
	case whyRegWFR:
		return fmt.Sprintf("key %d: %s; %s read %s and then overwrote it with %s", k, did, to, a, b)
	case whyRegInit:
		return fmt.Sprintf("key %d: %s read the initial nil; %s wrote %s, which comes after it", k, from, to, b)
	case whyRegRT:
		return fmt.Sprintf("key %d: %s, which was visible before %s (writing %s) was invoked", k, did, to, b)
	case whyProcess:
		return fmt.Sprintf("%s completed (index %d) before %s was invoked (index %d) by the same process", from, e.a, to, e.b)
	case whyRealtime:
		return fmt.Sprintf("%s completed (index %d) before %s was invoked (index %d)", from, e.a, to, e.b)
	}
	panic(fmt.Sprintf("check: unknown edge reason %d", e.why))
}
