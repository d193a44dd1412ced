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
//
// Cleanup releases a prefix of each chain: a released event is no longer
// named by its clock, and is collected once nothing reaches it. Until then it
// keeps its place in its chain, so later clock events are still linked above
// it: a released event pinned by an edge from p (p → e) stays below every
// later clock, and a must ordering a later clock before p is refused. Each
// released entry that lives is listed in clockIndex.released; collecting its
// event queues its chain, and the call that collected it sweeps the chain
// before returning, so between calls every chain entry names a live event.

type chainKey struct {
	epoch uint64
	owner uint32
}

type chainEntry struct {
	counter uint64 // the owner's own counter
	id      EventID
	clock   []uint64
}

// chain is one gatekeeper's clock events of one epoch, increasing in vector
// clock order. entries[:rel] were released by Cleanup (a prefix: everything
// below a watermark is) and live on only while something reaches them; their
// events hold no clockFlag. entries[rel:] are held by the chain.
type chain struct {
	entries []chainEntry
	rel     int
	queued  bool // in clockIndex.sweep
}

type clockIndex struct {
	chains    map[chainKey]*chain
	keys      []chainKey // sorted, for deterministic iteration
	width     map[uint64]int
	reports   map[uint32]vclock.Clock // latest cleanup clock per gatekeeper
	watermark *vclock.Clock
	// released maps the event of every released entry to its chain, so
	// collecting the event can queue the chain for a sweep. It holds only
	// events that live, so it is bounded by the event table.
	released map[EventID]chainKey
	sweep    []chainKey // chains with collected entries; emptied by sweepChains
}

func (x *clockIndex) init() {
	x.chains = map[chainKey]*chain{}
	x.width = map[uint64]int{}
	x.reports = map[uint32]vclock.Clock{}
	x.released = map[EventID]chainKey{}
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

// entries returns chain k's entries and its released count (none if absent).
func (x *clockIndex) entries(k chainKey) ([]chainEntry, int) {
	if ch := x.chains[k]; ch != nil {
		return ch.entries, ch.rel
	}
	return nil, 0
}

// find returns the position of counter in chain k, and whether it is there.
func (x *clockIndex) find(k chainKey, counter uint64) (int, bool) {
	es, _ := x.entries(k)
	i := sort.Search(len(es), func(i int) bool { return es[i].counter >= counter })
	return i, i < len(es) && es[i].counter == counter
}

// insert adds an entry held by chain k at position at (never among the
// released prefix: a clock that fits there is below the watermark).
func (x *clockIndex) insert(k chainKey, at int, e chainEntry) {
	ch, ok := x.chains[k]
	if !ok {
		i, _ := slices.BinarySearchFunc(x.keys, k, cmpKey)
		x.keys = slices.Insert(x.keys, i, k)
		if _, ok := x.width[k.epoch]; !ok {
			x.width[k.epoch] = len(e.clock)
		}
		ch = &chain{}
		x.chains[k] = ch
	}
	assert(at >= ch.rel, "insert: position %d among the %d released entries of chain %v", at, ch.rel, k)
	ch.entries = slices.Insert(ch.entries, at, e)
}

// remove undoes insert.
func (x *clockIndex) remove(k chainKey, counter uint64) {
	i, ok := x.find(k, counter)
	ch := x.chains[k]
	assert(ok && i >= ch.rel, "remove: counter %d not held by chain %v", counter, k)
	ch.entries = slices.Delete(ch.entries, i, i+1)
	if len(ch.entries) == 0 {
		x.dropChain(k)
	}
}

// forget notes that event id was collected: if it was a released chain
// entry, its chain is queued for sweepChains.
func (x *clockIndex) forget(id EventID) {
	k, ok := x.released[id]
	if !ok {
		return
	}
	delete(x.released, id)
	x.queue(k)
}

func (x *clockIndex) queue(k chainKey) {
	if ch := x.chains[k]; !ch.queued {
		ch.queued = true
		x.sweep = append(x.sweep, k)
	}
}

// sweepChains removes the entries of collected events from the queued
// chains (only released entries can be collected) and drops emptied chains.
// Survivors of the released prefix move up to its end, so a sweep costs the
// chain's released entries, not the whole chain.
func (g *Graph) sweepChains() {
	x := &g.clocks
	for _, k := range x.sweep {
		ch := x.chains[k]
		ch.queued = false
		w := ch.rel
		for r := ch.rel - 1; r >= 0; r-- {
			if g.tab.alive(ch.entries[r].id) {
				w--
				ch.entries[w] = ch.entries[r]
			}
		}
		clear(ch.entries[:w]) // drop the clock slices of the collected
		ch.entries = ch.entries[w:]
		ch.rel -= w
		if len(ch.entries) == 0 {
			x.dropChain(k)
		}
	}
	x.sweep = x.sweep[:0]
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
	es, rel := g.clocks.entries(k)
	e := es[i]
	if !slices.Equal(e.clock, c.Counters) {
		return 0, false, fmt.Errorf("%w: gatekeeper %d counter %d names %v, not %v", ErrClockInvalid, c.Owner, e.counter, e.clock, c.Counters)
	}
	if i < rel {
		return 0, false, nil // released: below the watermark, it names no event
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
	chain, _ := g.clocks.entries(k)
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
// suffix of the chain because a gatekeeper's clocks only grow. Released
// entries count: they are below the watermark and v is not, so they can only
// be below v (or concurrent), and linking from them keeps v above them.
func (g *Graph) linkClock(v EventID, c vclock.Clock) error {
	for _, k := range g.clocks.keys {
		chain := g.clocks.chains[k].entries
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
// then collects as they become unreachable; until collected, a released event
// keeps its place in its chain (see above). It returns the events released
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
	for _, k := range x.keys {
		released += g.releaseBelow(k, m)
	}
	g.sweepChains()
	return released, int(g.stats.Collected - before), nil
}

// releaseBelow releases chain k's held entries strictly below m (a prefix of
// them, as the chain increases) and collects those nothing reaches. An entry
// is listed in x.released before anything can collect it, except when its
// own collection is certain, so every collection of a released entry queues
// its chain. It returns the number released.
func (g *Graph) releaseBelow(k chainKey, m vclock.Clock) int {
	x := &g.clocks
	ch := x.chains[k]
	start := ch.rel
	for ch.rel < len(ch.entries) && strictlyBelow(entryClock(k, ch.entries[ch.rel]), m) {
		ch.rel++
	}
	for _, e := range ch.entries[start:ch.rel] {
		tc, s := g.tab.slot(e.id)
		tc.refs[s] &^= clockFlag
		g.stats.ClockEvents--
		if tc.refs[s] != 0 || tc.indeg[s] != 0 {
			x.released[e.id] = k
			continue
		}
		x.queue(k)
		g.maybeCollect(e.id)
	}
	return ch.rel - start
}
