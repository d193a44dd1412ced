package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CheckRing checks a ring history, FoundationDB's cycle workload as graph
// edges: vertices 0..n-1 each have one out-edge, initially i → i+1 mod n,
// and transactions rewire three consecutive vertices a → b → c → d to
// a → c → b → d, which keeps one cycle through all n vertices. Every OK read
// (Op{F: FRead}, completion value map[int64]int64 of vertex to successor)
// must show exactly one cycle through all n vertices; any other operation is
// ignored. A broken read is reported as broken-ring with what is wrong.
func CheckRing(h History, n int) (Result, error) {
	assertf(n > 0, "ring of %d vertices", n)
	pairs, ops, err := selectPairs(h, FRead)
	if err != nil {
		return Result{}, err
	}
	rep := &report{}
	for _, p := range pairs {
		if p.Type() != OK {
			continue
		}
		m, ok := p.Value().(map[int64]int64)
		if !ok && p.Value() != nil {
			return Result{}, malformed("index %d: read value of type %T, want map[int64]int64", p.Invoke.Index, p.Value())
		}
		if problems := ringProblems(m, int64(n)); len(problems) > 0 {
			rep.add(Anomaly{Type: "broken-ring", Ops: []Pair{p},
				Explanation: fmt.Sprintf("read at time %d: %s", p.Invoke.Time, strings.Join(problems, "; "))})
		}
	}
	return rep.result(ops, pairs), nil
}

// ringProblems lists what keeps m from being one cycle through 0..n-1.
func ringProblems(m map[int64]int64, n int64) []string {
	var out []string
	into := make(map[int64][]int64)
	for _, v := range slices.Sorted(maps.Keys(m)) {
		s := m[v]
		switch {
		case v < 0 || v >= n:
			out = append(out, fmt.Sprintf("unexpected vertex %d", v))
		case s < 0 || s >= n:
			out = append(out, fmt.Sprintf("vertex %d points to %d, outside the ring", v, s))
		default:
			into[s] = append(into[s], v)
		}
	}
	for v := range n {
		if _, ok := m[v]; !ok {
			out = append(out, fmt.Sprintf("vertex %d is missing", v))
		}
		if len(into[v]) > 1 {
			out = append(out, fmt.Sprintf("vertex %d has %d predecessors %v", v, len(into[v]), into[v]))
		}
	}
	if len(out) > 0 {
		return out
	}
	// Every vertex has one successor and one predecessor: a union of
	// cycles. It is a ring iff the cycle through 0 is n long.
	length, v := int64(1), m[0]
	for ; v != 0; v = m[v] {
		length++
	}
	if length != n {
		out = append(out, fmt.Sprintf("the cycle through vertex 0 has %d vertices, not %d", length, n))
	}
	return out
}
