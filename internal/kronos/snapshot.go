package kronos

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/vclock"
)

const snapshotMagic = "KRN1"

// restoreCheckMax bounds the graphs Restore fully checks (CheckInvariants
// builds a map of every event).
const restoreCheckMax = 1 << 20

// AppendSnapshot appends the graph's full state to dst in a deterministic
// binary form (replicas with equal state produce equal bytes). The answer
// cache is not included: it is only a cache. A chain lists its released
// entries too (first); they are told apart by their events, which hold no
// clockFlag, so the layout is the one older snapshots have (their chains
// hold no released entries).
func (g *Graph) AppendSnapshot(dst []byte) []byte {
	dst = append(dst, snapshotMagic...)
	dst = binary.AppendUvarint(dst, g.nextID)
	dst = binary.AppendUvarint(dst, g.stats.Created)
	dst = binary.AppendUvarint(dst, g.stats.Collected)
	dst = binary.AppendUvarint(dst, g.stats.Events)
	prev := EventID(0)
	g.forEach(func(id EventID, ch *chunk, s int) {
		dst = binary.AppendUvarint(dst, id-prev)
		prev = id
		dst = binary.AppendUvarint(dst, uint64(ch.refs[s]))
		edges := g.edges(id)
		dst = binary.AppendUvarint(dst, uint64(len(edges)))
		for _, e := range edges {
			dst = binary.AppendUvarint(dst, e)
		}
	})
	x := &g.clocks
	dst = binary.AppendUvarint(dst, uint64(len(x.keys)))
	for _, k := range x.keys {
		chain := x.chains[k].entries
		dst = binary.AppendUvarint(dst, k.epoch)
		dst = binary.AppendUvarint(dst, uint64(k.owner))
		dst = binary.AppendUvarint(dst, uint64(len(chain)))
		for _, e := range chain {
			dst = binary.AppendUvarint(dst, e.id)
			dst = appendCounters(dst, e.clock)
		}
	}
	gks := make([]uint32, 0, len(x.reports))
	for gk := range x.reports {
		gks = append(gks, gk)
	}
	slices.Sort(gks)
	dst = binary.AppendUvarint(dst, uint64(len(gks)))
	for _, gk := range gks {
		dst = binary.AppendUvarint(dst, uint64(gk))
		dst = appendClock(dst, x.reports[gk])
	}
	if x.watermark == nil {
		return append(dst, 0)
	}
	return appendClock(append(dst, 1), *x.watermark)
}

func appendCounters(dst []byte, cs []uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(cs)))
	for _, c := range cs {
		dst = binary.AppendUvarint(dst, c)
	}
	return dst
}

func appendClock(dst []byte, c vclock.Clock) []byte {
	return appendCounters(binary.AppendUvarint(dst, c.Epoch), c.Counters)
}

// forEach visits live events in id order.
func (g *Graph) forEach(f func(id EventID, ch *chunk, s int)) {
	for ci, ch := range g.tab.dir {
		if ch == nil {
			continue
		}
		base := (g.tab.base + uint64(ci)) << chunkBits
		for s := range chunkSize {
			if ch.refs[s] != 0 || ch.indeg[s] != 0 {
				f(base+uint64(s), ch, s)
			}
		}
	}
}

var errSnapshot = errors.New("kronos: corrupt snapshot")

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length and checks it against the bytes left, so a corrupt
// snapshot cannot make Restore allocate without bound.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errSnapshot
		return 0
	}
	return int(n)
}

func (r *reader) counters() []uint64 {
	n := r.count()
	cs := make([]uint64, n)
	for i := range cs {
		cs[i] = r.uvarint()
	}
	return cs
}

func (r *reader) clock() vclock.Clock {
	e := r.uvarint()
	return vclock.Clock{Epoch: e, Counters: r.counters()}
}

// Restore builds a graph from AppendSnapshot's bytes, checking them.
func Restore(cfg Config, b []byte) (*Graph, error) {
	g, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: bad magic", errSnapshot)
	}
	r := &reader{b: b[len(snapshotMagic):]}
	g.nextID = r.uvarint()
	if g.nextID == 0 {
		return nil, fmt.Errorf("%w: next id 0", errSnapshot) // ids start at 1
	}
	g.stats.Created = r.uvarint()
	g.stats.Collected = r.uvarint()
	n := r.count()
	id := EventID(0)
	type edge struct{ src, dst EventID }
	var edges []edge
	for range n {
		prev := id
		id += r.uvarint()
		refs := r.uvarint()
		// id > prev: ids increase, and a delta that wraps around would
		// send the table below its first chunk (an unbounded allocation).
		if r.err != nil || id <= prev || id >= g.nextID || refs > uint64(^uint32(0)) || g.listed(id) {
			return nil, fmt.Errorf("%w: event %d", errSnapshot, id)
		}
		ch, s := g.tab.add(id)
		ch.refs[s] = uint32(refs)
		ch.sparse[s] = 1 // "listed" until the edges are checked
		g.stats.Events++
		if ch.refs[s]&clockFlag != 0 {
			g.stats.ClockEvents++
		}
		for range r.count() {
			edges = append(edges, edge{id, r.uvarint()})
		}
	}
	for _, e := range edges {
		if !g.listed(e.dst) {
			return nil, fmt.Errorf("%w: edge %d→%d to a missing event", errSnapshot, e.src, e.dst)
		}
		if err := g.addEdge(e.src, e.dst); err != nil {
			return nil, err
		}
	}
	g.forEach(func(_ EventID, ch *chunk, s int) { ch.sparse[s] = 0 })
	x := &g.clocks
	for range r.count() {
		k := chainKey{epoch: r.uvarint(), owner: uint32(r.uvarint())}
		for range r.count() {
			eid := r.uvarint()
			cs := r.counters()
			if r.err != nil || int(k.owner) >= len(cs) || !g.tab.alive(eid) {
				return nil, fmt.Errorf("%w: chain %v", errSnapshot, k)
			}
			es, _ := x.entries(k)
			x.insert(k, len(es), chainEntry{counter: cs[k.owner], id: eid, clock: cs})
		}
	}
	g.restoreReleased()
	for range r.count() {
		gk := uint32(r.uvarint())
		x.reports[gk] = r.clock()
	}
	if flag := r.uvarint(); flag == 1 {
		m := r.clock()
		x.watermark = &m
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, fmt.Errorf("%w: trailing or truncated data", errSnapshot)
	}
	if g.stats.Events > restoreCheckMax {
		return g, nil
	}
	// Only AppendSnapshot's own encoding is accepted (minimal varints,
	// sorted and non-empty chains and reports, a 0/1 watermark flag), so a
	// restored replica re-snapshots to exactly the bytes it was given.
	if !bytes.Equal(g.AppendSnapshot(nil), b) {
		return nil, fmt.Errorf("%w: not in canonical form", errSnapshot)
	}
	if err := g.CheckInvariants(); err != nil {
		return nil, fmt.Errorf("%w: %v", errSnapshot, err)
	}
	return g, nil
}

// restoreReleased marks each chain's leading entries whose events hold no
// clockFlag as released; CheckInvariants refuses any such entry later on.
func (g *Graph) restoreReleased() {
	x := &g.clocks
	for _, k := range x.keys {
		ch := x.chains[k]
		for ch.rel < len(ch.entries) {
			tc, s := g.tab.slot(ch.entries[ch.rel].id)
			if tc.refs[s]&clockFlag != 0 {
				break
			}
			x.released[ch.entries[ch.rel].id] = k
			ch.rel++
		}
	}
}

// listed reports whether Restore has read id already (marked in sparse).
func (g *Graph) listed(id EventID) bool {
	ch, s := g.tab.slot(id)
	return ch != nil && ch.sparse[s] == 1
}
