package kronos

import (
	"fmt"

	"github.com/weft-db/weft/internal/vclock"
)

// CheckInvariants verifies the graph's structure: counts, in-degrees, no dead
// event reachable, acyclicity, and the clock chains. It costs time linear in
// the graph (plus a quadratic clock check below 4096 clock events); tests and
// Restore call it, the hot path never does.
func (g *Graph) CheckInvariants() error {
	var events, edges, clocks uint64
	indeg := map[EventID]uint32{}
	var err error
	g.forEach(func(id EventID, ch *chunk, s int) {
		events++
		if ch.refs[s]&clockFlag != 0 {
			clocks++
		}
		for _, d := range g.edges(id) {
			edges++
			indeg[d]++
			if !g.tab.alive(d) && err == nil {
				err = fmt.Errorf("edge %d→%d to a dead event", id, d)
			}
		}
	})
	if err != nil {
		return err
	}
	g.forEach(func(id EventID, ch *chunk, s int) {
		if ch.indeg[s] != indeg[id] && err == nil {
			err = fmt.Errorf("event %d: indeg %d, but %d in-edges", id, ch.indeg[s], indeg[id])
		}
	})
	if err != nil {
		return err
	}
	if events != g.stats.Events || edges != g.stats.Edges || clocks != g.stats.ClockEvents {
		return fmt.Errorf("stats say %d events, %d edges, %d clock events; found %d, %d, %d",
			g.stats.Events, g.stats.Edges, g.stats.ClockEvents, events, edges, clocks)
	}
	if g.stats.Created != g.stats.Collected+g.stats.Events {
		return fmt.Errorf("stats say %d created, %d collected, but %d live", g.stats.Created, g.stats.Collected, g.stats.Events)
	}
	if err := g.checkAcyclic(indeg); err != nil {
		return err
	}
	return g.checkChains(clocks)
}

// checkAcyclic runs Kahn's algorithm: every live event must be removable.
func (g *Graph) checkAcyclic(indeg map[EventID]uint32) error {
	var ready []EventID
	g.forEach(func(id EventID, _ *chunk, _ int) {
		if indeg[id] == 0 {
			ready = append(ready, id)
		}
	})
	seen := uint64(0)
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, d := range g.edges(v) {
			indeg[d]--
			if indeg[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	if seen != g.stats.Events {
		return fmt.Errorf("cycle: only %d of %d events sort topologically", seen, g.stats.Events)
	}
	return nil
}

// checkChains checks the clock index: every flagged event is held by exactly
// one chain; released entries (a prefix of their chain, strictly below the
// watermark, listed in x.released) name live events without the flag; an
// epoch's clocks have one width (lookup refuses others); and vector-clock
// order is graph order for every two chain entries, released or not.
func (g *Graph) checkChains(flagged uint64) error {
	x := &g.clocks
	var n, rel uint64
	type named struct {
		id EventID
		c  vclock.Clock
	}
	var all []named
	seen := map[EventID]bool{}
	if len(x.sweep) != 0 {
		return fmt.Errorf("%d chains left unswept", len(x.sweep))
	}
	for _, k := range x.keys {
		chain := x.chains[k].entries
		if len(chain) == 0 {
			return fmt.Errorf("chain %v is empty", k)
		}
		for i, e := range chain {
			if err := g.checkEntry(k, i, e); err != nil {
				return err
			}
			if i < x.chains[k].rel {
				rel++
			} else {
				n++
			}
			if seen[e.id] {
				return fmt.Errorf("chain %v entry %d: event %d is in two chains", k, i, e.id)
			}
			seen[e.id] = true
			if len(e.clock) != x.width[k.epoch] {
				return fmt.Errorf("chain %v entry %d: %d counters, epoch width %d", k, i, len(e.clock), x.width[k.epoch])
			}
			if e.clock[k.owner] != e.counter {
				return fmt.Errorf("chain %v entry %d: counter %d but clock %v", k, i, e.counter, e.clock)
			}
			if i > 0 && vclock.CompareCounters(chain[i-1].clock, e.clock) != vclock.Before {
				return fmt.Errorf("chain %v not increasing at %d", k, i)
			}
			all = append(all, named{e.id, entryClock(k, e)})
		}
	}
	if n != flagged {
		return fmt.Errorf("%d clock events flagged, %d held by chains", flagged, n)
	}
	if rel != uint64(len(x.released)) {
		return fmt.Errorf("%d released entries in chains, %d listed", rel, len(x.released))
	}
	if len(all) > 4096 {
		return nil
	}
	for _, a := range all {
		for _, b := range all {
			if vclock.Compare(a.c, b.c) == vclock.Before && g.order(a.id, b.id) != Before {
				return fmt.Errorf("clock %s < %s but graph holds %s", a.c, b.c, g.order(a.id, b.id))
			}
		}
	}
	return nil
}

// checkEntry checks that entry i of chain k names a live event, flagged iff
// the entry is held, and that a released one is listed and below the
// watermark.
func (g *Graph) checkEntry(k chainKey, i int, e chainEntry) error {
	x := &g.clocks
	ch, s := g.tab.slot(e.id)
	if ch == nil || !g.tab.alive(e.id) {
		return fmt.Errorf("chain %v entry %d: event %d is not live", k, i, e.id)
	}
	if i >= x.chains[k].rel {
		if ch.refs[s]&clockFlag == 0 {
			return fmt.Errorf("chain %v entry %d: event %d is not a clock event", k, i, e.id)
		}
		return nil
	}
	if ch.refs[s]&clockFlag != 0 {
		return fmt.Errorf("chain %v entry %d: released event %d is flagged", k, i, e.id)
	}
	if lk, ok := x.released[e.id]; !ok || lk != k {
		return fmt.Errorf("chain %v entry %d: released event %d not listed", k, i, e.id)
	}
	if x.watermark == nil || !strictlyBelow(entryClock(k, e), *x.watermark) {
		return fmt.Errorf("chain %v entry %d: released event %d is not below the watermark", k, i, e.id)
	}
	return nil
}
