package graph

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// The brute-force model: the graph's state at R is the replay of every
// successful write with a stamp ≤ R (in the test's total order).

type opKind int

const (
	opCreateVertex opKind = iota
	opDeleteVertex
	opCreateEdge
	opDeleteEdge
	opSetVertexProp
	opDeleteVertexProp
	opSetEdgeProp
	opDeleteEdgeProp
	opAddAlias
	opRemoveAlias
	opLoad
	opKinds
)

type mOp struct {
	kind                  opKind
	h, e, dst, key, alias string
	val                   value.Value
	rec                   *VertexRecord
}

func (o mOp) String() string {
	return fmt.Sprintf("%d(%s %s %s %s %s %v)", o.kind, o.h, o.e, o.dst, o.key, o.alias, o.val)
}

type mEdge struct {
	h, dst string
	props  map[string]value.Value
}

type mVertex struct {
	props   map[string]value.Value
	aliases []string
	edges   []*mEdge
}

type mState struct {
	live    map[string]*mVertex
	deleted map[string]bool // ever deleted and not live now
}

func newState() *mState { return &mState{live: map[string]*mVertex{}, deleted: map[string]bool{}} }

func (s *mState) vertex(h string) (*mVertex, error) {
	if v := s.live[h]; v != nil {
		return v, nil
	}
	if s.deleted[h] {
		return nil, ErrVertexDeleted
	}
	return nil, ErrVertexMissing
}

func (v *mVertex) edge(h string) (*mEdge, error) {
	for _, e := range v.edges {
		if e.h == h {
			return e, nil
		}
	}
	return nil, ErrEdgeMissing
}

// apply runs op on the model, returning the sentinel the graph must return.
func (s *mState) apply(op mOp) error {
	switch op.kind {
	case opCreateVertex:
		if s.live[op.h] != nil {
			return ErrVertexExists
		}
		s.live[op.h] = &mVertex{props: map[string]value.Value{}}
		delete(s.deleted, op.h)
		return nil
	case opLoad:
		if s.live[op.h] != nil || s.deleted[op.h] {
			return ErrVertexExists
		}
		v := &mVertex{props: map[string]value.Value{}, aliases: slices.Clone(op.rec.Aliases)}
		for _, p := range op.rec.Props {
			v.props[p.Key] = p.Val
		}
		for _, er := range op.rec.Edges {
			e := &mEdge{h: er.Handle, dst: er.Dst, props: map[string]value.Value{}}
			for _, p := range er.Props {
				e.props[p.Key] = p.Val
			}
			v.edges = append(v.edges, e)
		}
		s.live[op.h] = v
		return nil
	}
	v, err := s.vertex(op.h)
	if err != nil {
		return err
	}
	switch op.kind {
	case opDeleteVertex:
		delete(s.live, op.h)
		s.deleted[op.h] = true
	case opCreateEdge:
		if _, err := v.edge(op.e); err == nil {
			return ErrEdgeExists
		}
		v.edges = append(v.edges, &mEdge{h: op.e, dst: op.dst, props: map[string]value.Value{}})
	case opDeleteEdge:
		if _, err := v.edge(op.e); err != nil {
			return err
		}
		v.edges = slices.DeleteFunc(v.edges, func(e *mEdge) bool { return e.h == op.e })
	case opSetVertexProp:
		v.props[op.key] = op.val
	case opDeleteVertexProp:
		if _, ok := v.props[op.key]; !ok {
			return ErrPropMissing
		}
		delete(v.props, op.key)
	case opSetEdgeProp, opDeleteEdgeProp:
		e, err := v.edge(op.e)
		if err != nil {
			return err
		}
		if op.kind == opSetEdgeProp {
			e.props[op.key] = op.val
		} else if _, ok := e.props[op.key]; !ok {
			return ErrPropMissing
		} else {
			delete(e.props, op.key)
		}
	case opAddAlias:
		if slices.Contains(v.aliases, op.alias) {
			return ErrAliasExists
		}
		v.aliases = append(v.aliases, op.alias)
	case opRemoveAlias:
		if !slices.Contains(v.aliases, op.alias) {
			return ErrAliasMissing
		}
		v.aliases = slices.DeleteFunc(v.aliases, func(a string) bool { return a == op.alias })
	}
	return nil
}

func applyGraph(g *Graph, op mOp, w vclock.Stamp) error {
	switch op.kind {
	case opCreateVertex:
		return g.CreateVertex(op.h, w)
	case opDeleteVertex:
		return g.DeleteVertex(op.h, w)
	case opCreateEdge:
		return g.CreateEdge(op.h, op.e, op.dst, w)
	case opDeleteEdge:
		return g.DeleteEdge(op.h, op.e, w)
	case opSetVertexProp:
		return g.SetVertexProp(op.h, op.key, op.val, w)
	case opDeleteVertexProp:
		return g.DeleteVertexProp(op.h, op.key, w)
	case opSetEdgeProp:
		return g.SetEdgeProp(op.h, op.e, op.key, op.val, w)
	case opDeleteEdgeProp:
		return g.DeleteEdgeProp(op.h, op.e, op.key, w)
	case opAddAlias:
		return g.AddAlias(op.h, op.alias, w)
	case opRemoveAlias:
		return g.RemoveAlias(op.h, op.alias, w)
	case opLoad:
		return g.Load(op.rec, w)
	}
	panic("unknown op")
}

var (
	poolV = []string{"v0", "v1", "v2", "v3"}
	poolE = []string{"e0", "e1", "e2", "e3", "e4"}
	poolD = []string{"v0", "v1", "r0", "r1"}
	poolK = []string{"k0", "k1", "k2"}
	poolA = []string{"a0", "a1", "a2"}
)

func genOp(t *rapid.T) mOp {
	pick := func(pool []string, label string) string { return rapid.SampledFrom(pool).Draw(t, label) }
	op := mOp{
		kind: opKind(rapid.IntRange(0, int(opKinds)-1).Draw(t, "kind")),
		h:    pick(poolV, "h"), e: pick(poolE, "e"), dst: pick(poolD, "dst"),
		key: pick(poolK, "key"), alias: pick(poolA, "alias"),
		val: value.I64(rapid.Int64Range(0, 2).Draw(t, "val")),
	}
	if op.kind == opLoad {
		op.rec = genRecord(t, op.h)
	}
	return op
}

func genRecord(t *rapid.T, h string) *VertexRecord {
	rec := &VertexRecord{Handle: h}
	sub := func(pool []string, label string) []string {
		var out []string
		for _, s := range pool {
			if rapid.Bool().Draw(t, label) {
				out = append(out, s)
			}
		}
		return out
	}
	props := func(label string) []Prop {
		var ps []Prop
		for _, k := range sub(poolK, label) {
			ps = append(ps, Prop{k, value.I64(rapid.Int64Range(0, 2).Draw(t, "v"))})
		}
		return ps
	}
	rec.Props, rec.Aliases = props("prop"), sub(poolA, "alias")
	for _, e := range sub(poolE, "edge") {
		rec.Edges = append(rec.Edges, EdgeRecord{Handle: e, Dst: rapid.SampledFrom(poolD).Draw(t, "dst"), Props: props("eprop")})
	}
	return rec
}

// genStamps simulates gatekeepers (ticking their own entry, sometimes merging
// a peer's announced clock, rarely moving to a new epoch together) and returns
// the stamps sorted by sumOrder's total order: the shard's execution order.
func genStamps(t *rapid.T, gks, n int) []vclock.Stamp {
	clocks := make([]vclock.Clock, gks)
	for i := range clocks {
		clocks[i] = vclock.New(0, gks)
	}
	var out []vclock.Stamp
	for range n {
		if rapid.IntRange(0, 30).Draw(t, "epoch") == 0 {
			for i := range clocks {
				clocks[i] = vclock.New(clocks[i].Epoch+1, gks)
			}
		}
		i := rapid.IntRange(0, gks-1).Draw(t, "gk")
		if gks > 1 && rapid.Bool().Draw(t, "announce") {
			clocks[i].Merge(clocks[rapid.IntRange(0, gks-1).Draw(t, "peer")])
		}
		clocks[i].Tick(i)
		out = append(out, vclock.Stamp{Clock: clocks[i].Clone(), Owner: uint32(i)})
	}
	slices.SortFunc(out, func(a, b vclock.Stamp) int {
		ka, kb := orderKey(a), orderKey(b)
		return slices.Compare(ka[:], kb[:])
	})
	return out
}

type applied struct {
	idx int
	op  mOp
}

type modelRun struct {
	t       *rapid.T
	g       *Graph
	ord     Orderer
	stamps  []vclock.Stamp
	cur     *mState
	history []applied
	writes  map[string][]int // stamp indexes of writes touching each handle, apply order
}

// stateAt replays the successful writes with stamp index ≤ r.
func (m *modelRun) stateAt(r int) *mState {
	s := newState()
	for _, a := range m.history {
		if a.idx > r {
			break
		}
		if err := s.apply(a.op); err != nil {
			m.t.Fatalf("replay of %s failed: %v", a.op, err)
		}
	}
	return s
}

func (m *modelRun) write(idx int, op mOp) {
	want := m.cur.apply(op)
	got := applyGraph(m.g, op, m.stamps[idx])
	if !errors.Is(got, want) || (got == nil) != (want == nil) {
		// A collected deleted vertex is a tombstone: no record, so "missing".
		if !(want == ErrVertexDeleted && errors.Is(got, ErrVertexMissing)) {
			m.t.Fatalf("%s at %s: graph error %v, model %v", op, m.stamps[idx], got, want)
		}
	}
	if want != nil {
		return
	}
	m.history = append(m.history, applied{idx, op})
	if ws := m.writes[op.h]; len(ws) == 0 || ws[len(ws)-1] != idx {
		m.writes[op.h] = append(ws, idx)
	}
}

// check compares every handle's view and last write at stamp index r.
func (m *modelRun) check(r int) {
	s, R := m.stateAt(r), m.stamps[r]
	for _, h := range poolV {
		m.checkVertex(h, s.live[h], R)
		want := vclock.Stamp{}
		for _, i := range m.writes[h] {
			if i <= r {
				want = m.stamps[i]
			}
		}
		if got := m.g.LastWrite(h, R, m.ord); !sameStamp(got, want) && !(got.IsZero() && want.IsZero()) {
			m.t.Fatalf("LastWrite(%s) at %s = %s, model %s", h, R, got, want)
		}
	}
}

func (m *modelRun) checkVertex(h string, mv *mVertex, R vclock.Stamp) {
	t := m.t
	vv, ok := m.g.View(h, R, m.ord)
	if ok != (mv != nil) {
		t.Fatalf("View(%s) at %s visible=%v, model %v", h, R, ok, mv != nil)
	}
	if !ok {
		return
	}
	if got := maps.Collect(vv.Props()); !maps.EqualFunc(got, mv.props, value.Equal) {
		t.Fatalf("%s at %s: props %v, model %v", h, R, got, mv.props)
	}
	for _, k := range poolK {
		got, ok := vv.Prop(k)
		want, wok := mv.props[k]
		if ok != wok || ok && !value.Equal(got, want) {
			t.Fatalf("%s.%s at %s = %v %v, model %v %v", h, k, R, got, ok, want, wok)
		}
	}
	if got := slices.Collect(vv.Aliases()); !slices.Equal(got, mv.aliases) {
		t.Fatalf("%s at %s: aliases %v, model %v", h, R, got, mv.aliases)
	}
	var want []string
	for _, e := range mv.edges {
		want = append(want, e.h+"→"+e.dst+propString(maps.All(e.props)))
	}
	if got := edgeList(vv); !slices.Equal(got, want) || vv.EdgeCount() != len(want) {
		t.Fatalf("%s at %s: edges %v (count %d), model %v", h, R, got, vv.EdgeCount(), want)
	}
	for _, eh := range poolE {
		ev, ok := vv.Edge(eh)
		me, err := mv.edge(eh)
		if ok != (err == nil) || ok && (ev.Dst() != me.dst || ev.Handle() != eh) {
			t.Fatalf("%s.Edge(%s) at %s = %v, model %v", h, eh, R, ok, err == nil)
		}
		if ok {
			for _, k := range poolK {
				got, ok := ev.Prop(k)
				want, wok := me.props[k]
				if ok != wok || ok && !value.Equal(got, want) {
					t.Fatalf("%s-%s.%s at %s = %v, model %v", h, eh, k, R, got, want)
				}
			}
		}
	}
}

// runModel drives random writes, reads at random past stamps and collections
// against the model. With one gatekeeper the reads pass no Orderer at all.
func runModel(t *rapid.T, gks int) {
	cfg := DefaultConfig()
	cfg.EdgeIndexMin = rapid.SampledFrom([]int{1, 2, 3, 32}).Draw(t, "indexMin")
	cfg.KeepHistory = rapid.IntRange(0, 4).Draw(t, "keep") == 0
	calls := 0
	m := &modelRun{t: t, g: New(cfg), stamps: genStamps(t, gks, rapid.IntRange(4, 40).Draw(t, "stamps")),
		cur: newState(), writes: map[string][]int{}}
	if gks > 1 {
		m.ord = sumOrder{&calls}
	}
	low := 0 // reads at or after stamps[low] stay defined
	for i := range m.stamps {
		if rapid.IntRange(0, 3).Draw(t, "write") > 0 {
			for range rapid.IntRange(1, 4).Draw(t, "ops") {
				m.write(i, genOp(t))
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "reads") {
			m.check(rapid.IntRange(low, i).Draw(t, "r"))
		}
		if rapid.IntRange(0, 5).Draw(t, "collect") == 0 {
			w := rapid.IntRange(low, i).Draw(t, "watermark")
			versions := m.g.Stats().Versions
			freed := m.g.Collect(m.stamps[w])
			if got := versions - m.g.Stats().Versions; got != freed {
				t.Fatalf("Collect reported %d versions freed, Stats dropped by %d", freed, got)
			}
			if cfg.KeepHistory {
				if freed != 0 {
					t.Fatalf("KeepHistory: Collect freed %d", freed)
				}
			} else {
				low = w
			}
			for r := low; r <= i; r++ { // every allowed read is unchanged
				m.check(r)
			}
		}
		if err := m.g.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	if !cfg.KeepHistory {
		// Collecting at a stamp after everything leaves only live data.
		last := m.stamps[len(m.stamps)-1]
		after := vclock.Stamp{Clock: last.Clock.Clone(), Owner: last.Owner}
		for i := range after.Clock.Counters {
			after.Clock.Counters[i] += 100
		}
		m.stamps = append(m.stamps, after)
		m.g.Collect(after)
		m.check(len(m.stamps) - 1)
		checkSettled(t, m.g)
	}
}

// checkSettled: after a collection above every write, nothing dead remains
// and no creation stamp is held: only tombstones and write logs name stamps.
func checkSettled(t *rapid.T, g *Graph) {
	if len(g.dirty) != 0 {
		t.Fatalf("dirty vertices remain: %v", g.dirty)
	}
	for i := range g.verts.len() {
		v := g.verts.at(uint32(i))
		if v.hid == 0 {
			continue
		}
		if v.dead != 0 || v.deleted != 0 || v.created != 0 || hasStamps(v) || len(v.writes) != 1 {
			t.Fatalf("vertex %q not settled: %+v", g.handles.ents[v.hid].name, *v)
		}
	}
	if want := g.Stats().Vertices + g.Stats().Tombstones; g.stamps.live > want {
		t.Fatalf("%d stamps held by %d vertices and tombstones", g.stamps.live, want)
	}
}

// Dissertation §3.5.2 and §4.3: reads at R see exactly the writes ≤ R, and
// collection never changes a read at or after the watermark. One gatekeeper:
// vector clocks order everything, no Orderer.
func TestModelSingleGatekeeper(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { runModel(t, 1) })
}

// The same with concurrent clocks from 2–3 gatekeepers, a consistent fake
// Kronos deciding concurrent pairs, and epoch changes.
func TestModelConcurrentGatekeepers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { runModel(t, rapid.IntRange(2, 3).Draw(t, "gks")) })
}
