package kronos

import (
	"fmt"
	"slices"
	"sort"

	"github.com/weft-db/weft/internal/vclock"
)

// Clock events (dissertation §3.5.1): Weft's gatekeepers name events by the
// vector timestamps they stamp. Each gatekeeper's events form a chain sorted
// by its own counter. A new clock event v is linked to the last event below v
// and the first event above v (in vector-clock order) of every chain, both
// found by binary search — within one gatekeeper's chain these are its
// predecessor and successor — so every pair that vector clocks order is
// ordered the same way in the graph, and Kronos never answers against them.

type chainKey struct {
	epoch uint64
	owner uint32
}

type chainEntry struct {
	counter uint64 // the owner's own counter
	id      EventID
	clock   []uint64
}

type clockIndex struct {
	chains    map[chainKey][]chainEntry
	keys      []chainKey // sorted, for deterministic iteration
	width     map[uint64]int
	reports   map[uint32]vclock.Clock // latest cleanup clock per gatekeeper
	watermark *vclock.Clock
}

func (x *clockIndex) init() {
	x.chains = map[chainKey][]chainEntry{}
	x.width = map[uint64]int{}
	x.reports = map[uint32]vclock.Clock{}
}

func keyOf(c *Clock) chainKey { return chainKey{epoch: c.Epoch, owner: c.Owner} }

func cmpKey(a, b chainKey) int {
	if a.epoch != b.epoch {
		if a.epoch < b.epoch {
			return -1
		}
		return 1
	}
	return int(a.owner) - int(b.owner)
}

// find returns the position of counter in chain k, and whether it is there.
func (x *clockIndex) find(k chainKey, counter uint64) (int, bool) {
	ch := x.chains[k]
	i := sort.Search(len(ch), func(i int) bool { return ch[i].counter >= counter })
	return i, i < len(ch) && ch[i].counter == counter
}

func (x *clockIndex) insert(k chainKey, at int, e chainEntry) {
	ch, ok := x.chains[k]
	if !ok {
		i, _ := slices.BinarySearchFunc(x.keys, k, cmpKey)
		x.keys = slices.Insert(x.keys, i, k)
		if _, ok := x.width[k.epoch]; !ok {
			x.width[k.epoch] = len(e.clock)
		}
	}
	x.chains[k] = slices.Insert(ch, at, e)
}

func (x *clockIndex) remove(k chainKey, counter uint64) {
	i, ok := x.find(k, counter)
	assert(ok, "remove: counter %d not in chain %v", counter, k)
	ch := slices.Delete(x.chains[k], i, i+1)
	if len(ch) > 0 {
		x.chains[k] = ch
		return
	}
	x.dropChain(k)
}

func (x *clockIndex) dropChain(k chainKey) {
	delete(x.chains, k)
	i, _ := slices.BinarySearchFunc(x.keys, k, cmpKey)
	x.keys = slices.Delete(x.keys, i, i+1)
	for _, o := range x.keys {
		if o.epoch == k.epoch {
			return
		}
	}
	delete(x.width, k.epoch)
}

func (x *clockIndex) belowWatermark(r Ref) bool {
	if r.Clock == nil || x.watermark == nil {
		return false
	}
	return strictlyBelow(r.Clock.Clock, *x.watermark)
}

// strictlyBelow: an older epoch, or every counter strictly below m's.
func strictlyBelow(c vclock.Clock, m vclock.Clock) bool {
	if c.Epoch != m.Epoch {
		return c.Epoch < m.Epoch
	}
	for i, v := range c.Counters {
		if i >= len(m.Counters) || v >= m.Counters[i] {
			return false
		}
	}
	return true
}

func clockOrder(a, b Ref) (Order, bool) {
	if a.Clock == nil || b.Clock == nil {
		return 0, false
	}
	switch vclock.Compare(a.Clock.Clock, b.Clock.Clock) {
	case vclock.Before:
		return Before, true
	case vclock.After:
		return After, true
	}
	return 0, false
}

func sameClock(a, b *Clock) bool {
	return vclock.Compare(a.Clock, b.Clock) == vclock.Equal
}

// lookup finds the event a ref names. For an id it reports liveness; for a
// clock it reports whether the clock has an event, and an error if the
// clock is malformed or contradicts the event its gatekeeper stamped with
// the same counter.
func (g *Graph) lookup(r Ref) (EventID, bool, error) {
	if r.Clock == nil {
		if r.ID == 0 {
			return 0, false, fmt.Errorf("%w: event id 0", ErrMalformed)
		}
		return r.ID, g.tab.alive(r.ID), nil
	}
	c := r.Clock
	if int(c.Owner) >= len(c.Counters) {
		return 0, false, fmt.Errorf("%w: clock owner %d has no counter in %s", ErrMalformed, c.Owner, c.Clock)
	}
	if w, ok := g.clocks.width[c.Epoch]; ok && w != len(c.Counters) {
		return 0, false, fmt.Errorf("%w: %s has %d counters, epoch %d has %d", ErrClockInvalid, r, len(c.Counters), c.Epoch, w)
	}
	k := keyOf(c)
	i, ok := g.clocks.find(k, c.Counters[c.Owner])
	if !ok {
		return 0, false, nil
	}
	e := g.clocks.chains[k][i]
	if !slices.Equal(e.clock, c.Counters) {
		return 0, false, fmt.Errorf("%w: gatekeeper %d counter %d names %v, not %v", ErrClockInvalid, c.Owner, e.counter, e.clock, c.Counters)
	}
	return e.id, true, nil
}

// resolve returns the event a ref names, creating a clock event on first use.
// Creation and its links are logged for rollback.
func (g *Graph) resolve(r Ref) (EventID, error) {
	id, ok, err := g.lookup(r)
	if err != nil || ok {
		return id, err
	}
	if r.Clock == nil {
		return 0, fmt.Errorf("%w: %d", ErrUnknownEvent, r.ID)
	}
	c := r.Clock
	k := keyOf(c)
	at, _ := g.clocks.find(k, c.Counters[c.Owner])
	chain := g.clocks.chains[k]
	if at > 0 && vclock.CompareCounters(chain[at-1].clock, c.Counters) != vclock.Before {
		return 0, fmt.Errorf("%w: %s is not after its predecessor %v", ErrClockInvalid, r, chain[at-1].clock)
	}
	if at < len(chain) && vclock.CompareCounters(c.Counters, chain[at].clock) != vclock.Before {
		return 0, fmt.Errorf("%w: %s is not before its successor %v", ErrClockInvalid, r, chain[at].clock)
	}
	id = g.newEvent(clockFlag)
	g.stats.ClockEvents++
	counter := c.Counters[c.Owner]
	g.clocks.insert(k, at, chainEntry{counter: counter, id: id, clock: slices.Clone(c.Counters)})
	g.undo = append(g.undo, undoRec{dst: id, key: k, counter: counter})
	return id, g.linkClock(id, c.Clock)
}

// linkClock adds, for every chain, an edge from its last event below v and
// one to its first event above v. The first is a prefix and the second a
// suffix of the chain because a gatekeeper's clocks only grow.
func (g *Graph) linkClock(v EventID, c vclock.Clock) error {
	for _, k := range g.clocks.keys {
		chain := g.clocks.chains[k]
		below := sort.Search(len(chain), func(i int) bool {
			return vclock.Compare(entryClock(k, chain[i]), c) != vclock.Before
		})
		if below > 0 {
			if err := g.logEdge(chain[below-1].id, v); err != nil {
				return err
			}
		}
		above := sort.Search(len(chain), func(i int) bool {
			return vclock.Compare(c, entryClock(k, chain[i])) == vclock.Before
		})
		if above < len(chain) {
			if err := g.logEdge(v, chain[above].id); err != nil {
				return err
			}
		}
	}
	return nil
}

func entryClock(k chainKey, e chainEntry) vclock.Clock {
	return vclock.Clock{Epoch: k.epoch, Counters: e.clock}
}

func (g *Graph) logEdge(src, dst EventID) error {
	if err := g.addEdge(src, dst); err != nil {
		return err
	}
	g.undo = append(g.undo, undoRec{src: src, dst: dst})
	return nil
}

// Cleanup records gatekeeper gk's report that it no longer needs events at or
// below clock c (reports only move forward). Once every gatekeeper of c's
// epoch has reported, each chain releases the events strictly below the
// entry-wise minimum of the reports (all of an older epoch), which the GC
// then collects as they become unreachable. It returns the events released
// from chains and the events collected.
func (g *Graph) Cleanup(gk uint32, c vclock.Clock) (released, collected int, err error) {
	if int(gk) >= len(c.Counters) {
		return 0, 0, fmt.Errorf("%w: gatekeeper %d has no counter in %s", ErrMalformed, gk, c)
	}
	x := &g.clocks
	if old, ok := x.reports[gk]; !ok || vclock.LessEq(old, c) {
		x.reports[gk] = c.Clone()
	}
	reps := make([]vclock.Clock, 0, len(c.Counters))
	for i := range len(c.Counters) {
		r, ok := x.reports[uint32(i)]
		if !ok {
			return 0, 0, nil
		}
		reps = append(reps, r)
	}
	m, _ := vclock.Min(reps)
	if x.watermark != nil && !vclock.LessEq(*x.watermark, m) {
		return 0, 0, nil
	}
	x.watermark = &m
	defer g.checkAfter("cleanup")
	before := g.stats.Collected
	for _, k := range slices.Clone(x.keys) {
		chain := x.chains[k]
		n := 0
		for n < len(chain) && strictlyBelow(entryClock(k, chain[n]), m) {
			n++
		}
		if n == 0 {
			continue
		}
		drop := slices.Clone(chain[:n])
		if n == len(chain) {
			x.dropChain(k)
		} else {
			x.chains[k] = slices.Delete(chain, 0, n)
		}
		for _, e := range drop {
			ch, s := g.tab.slot(e.id)
			ch.refs[s] &^= clockFlag
			g.stats.ClockEvents--
			g.maybeCollect(e.id)
		}
		released += n
	}
	return released, int(g.stats.Collected - before), nil
}
