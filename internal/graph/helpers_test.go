package graph

import (
	"fmt"
	"github.com/weft-db/weft/internal/value"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/vclock"
)

// at is a single-gatekeeper stamp: totally ordered by t, so reads need no Orderer.
func at(t uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Counters: []uint64{t}}}
}

// sumOrder is the tests' fake Kronos. It orders stamps by (epoch, sum of
// counters, owner). That is consistent: a clock before another has a smaller
// sum, and two stamps of one owner are never concurrent, so the key is a
// strict total order extending vector-clock order on well-formed stamps
// (a gatekeeper ticks its own entry before every stamp). A fake that merely
// tie-broke by owner would not be: it could contradict clocks transitively.
type sumOrder struct{ calls *int }

func orderKey(s vclock.Stamp) [3]uint64 {
	var sum uint64
	for _, c := range s.Clock.Counters {
		sum += c
	}
	return [3]uint64{s.Clock.Epoch, sum, uint64(s.Owner)}
}

func (o sumOrder) Before(a, b vclock.Stamp) bool {
	if vclock.CompareStamps(a, b) != vclock.Concurrent {
		panic(fmt.Sprintf("Orderer asked about non-concurrent stamps %s, %s", a, b))
	}
	if o.calls != nil {
		*o.calls++
	}
	ka, kb := orderKey(a), orderKey(b)
	return slices.Compare(ka[:], kb[:]) < 0
}

// dump renders a graph's whole internal state (contents, not capacities), to
// check that failed writes change nothing.
func dump(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%+v low=%v free=%v dirty=%v\n", g.n, g.low, g.free, g.dirty)
	for i := range g.verts.len() {
		v := *g.verts.at(uint32(i)) // a copy: dump must not change the graph
		x := v.x
		v.x = nil
		fmt.Fprintf(&b, "v%d %+v names=%q\n", i, v, v.names)
		if x != nil {
			fmt.Fprintf(&b, "  x %+v\n", *x)
		}
	}
	for _, n := range []*names{&g.handles, &g.keys} {
		fmt.Fprintf(&b, "names %+v free=%v\n", n.ents, n.free)
		var keys []string
		n.ids.ids(func(id uint32) { keys = append(keys, n.ents[id].name) })
		slices.Sort(keys)
		for _, k := range keys {
			id, _ := n.lookup(k)
			fmt.Fprintf(&b, " %q=%d", k, id)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "stamps %v free=%v live=%d\n", g.stamps.ents, g.stamps.free, g.stamps.live)
	hs := make([]uint64, 0, len(g.stamps.byHash))
	for h := range g.stamps.byHash {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	for _, h := range hs {
		fmt.Fprintf(&b, " %x=%d", h, g.stamps.byHash[h])
	}
	return b.String()
}

// edgeList renders a view's out-edges as "handle→dst{props}" in order.
func edgeList(vv VertexView) []string {
	var out []string
	for e := range vv.Edges() {
		out = append(out, e.Handle()+"→"+e.Dst()+propString(e.Props()))
	}
	return out
}

func propString(seq func(func(string, valueT) bool)) string {
	var parts []string
	for k, v := range seq {
		parts = append(parts, k+"="+v.String())
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

type valueT = value.Value
