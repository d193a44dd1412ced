package kronos

import (
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/invariants"
)

// Config tunes a Graph. The zero value is not valid; start from DefaultConfig.
type Config struct {
	// CacheSlots is the number of slots in the answered-order cache (a power
	// of two; 0 disables it). Each slot costs 24 bytes. Default 65536.
	CacheSlots int
	// PairsMax bounds the pairs in one QueryOrder or AssignOrder call and the
	// events in one reference call. Default 65536.
	PairsMax int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{CacheSlots: 1 << 16, PairsMax: 1 << 16}
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.CacheSlots < 0 || c.CacheSlots&(c.CacheSlots-1) != 0 {
		return fmt.Errorf("kronos: CacheSlots %d is not zero or a power of two", c.CacheSlots)
	}
	if c.PairsMax <= 0 {
		return fmt.Errorf("kronos: PairsMax %d must be positive", c.PairsMax)
	}
	return nil
}

// Stats counts the graph's contents and history.
type Stats struct {
	Events      uint64 // live events
	Edges       uint64 // live edges
	ClockEvents uint64 // live events named by a clock
	Created     uint64 // events ever created
	Collected   uint64 // events ever collected
	NextID      EventID
}

// Graph is the event dependency graph. See the package comment.
type Graph struct {
	checks uint64 // invariant checks requested (-tags invariants)
	cfg    Config
	nextID EventID
	tab    table
	arena  arena
	vis    visited
	cache  cache
	clocks clockIndex
	stats  Stats
	undo   []undoRec // AssignOrder's rollback log, reused
	work   []EventID // GC work list and sort scratch, reused
	runs   []refRun  // reference-call scratch, reused
}

// New returns an empty graph.
func New(cfg Config) (*Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Graph{cfg: cfg, nextID: 1}
	g.cache.init(cfg.CacheSlots)
	g.clocks.init()
	return g, nil
}

// Stats returns the current counters.
func (g *Graph) Stats() Stats {
	s := g.stats
	s.NextID = g.nextID
	return s
}

// Exists reports whether id names a live event.
func (g *Graph) Exists(id EventID) bool { return g.tab.alive(id) }

// CreateEvents creates n events, each holding one reference, and appends their
// ids to dst.
func (g *Graph) CreateEvents(dst []EventID, n int) ([]EventID, error) {
	if n <= 0 || n > g.cfg.PairsMax {
		return dst, fmt.Errorf("%w: create count %d not in [1, %d]", ErrMalformed, n, g.cfg.PairsMax)
	}
	for range n {
		dst = append(dst, g.newEvent(1))
	}
	return dst, nil
}

// CreateEvent creates one event holding one reference.
func (g *Graph) CreateEvent() EventID { return g.newEvent(1) }

func (g *Graph) newEvent(refs uint32) EventID {
	id := g.nextID
	g.nextID++
	ch, i := g.tab.add(id)
	ch.refs[i] = refs
	g.stats.Events++
	g.stats.Created++
	return id
}

// AcquireRefs adds one reference to each listed event (an id listed twice
// gains two). All or nothing.
func (g *Graph) AcquireRefs(ids []EventID) error {
	runs, err := g.refRuns(ids)
	if err != nil {
		return err
	}
	for _, r := range runs {
		ch, s := g.tab.slot(r.id)
		if uint64(ch.refs[s])+uint64(r.n) > uint64(refsMax) {
			return fmt.Errorf("%w: event %d has %d references", ErrOverflow, r.id, ch.refs[s])
		}
	}
	for _, r := range runs {
		ch, s := g.tab.slot(r.id)
		ch.refs[s] += r.n
	}
	return nil
}

// ReleaseRefs drops one reference from each listed event (an id listed twice
// loses two) and collects every event this leaves unreferenced and
// unreachable. All or nothing. It returns the number of events collected.
func (g *Graph) ReleaseRefs(ids []EventID) (int, error) {
	runs, err := g.refRuns(ids)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		ch, s := g.tab.slot(r.id)
		if ch.refs[s] < r.n {
			return 0, fmt.Errorf("%w: event %d has %d references, release of %d", ErrUnderflow, r.id, ch.refs[s], r.n)
		}
	}
	defer g.checkAfter("release_ref")
	before := g.stats.Collected
	// One distinct id at a time: a cascade only collects events with no
	// references, and every later id of the list still holds its own.
	for _, r := range runs {
		ch, s := g.tab.slot(r.id)
		ch.refs[s] -= r.n
		g.maybeCollect(r.id)
	}
	g.sweepChains()
	return int(g.stats.Collected - before), nil
}

type refRun struct {
	id EventID
	n  uint32
}

// refRuns validates a reference call's ids and returns them sorted and
// counted, so duplicates are checked as one change.
func (g *Graph) refRuns(ids []EventID) ([]refRun, error) {
	if len(ids) == 0 || len(ids) > g.cfg.PairsMax {
		return nil, fmt.Errorf("%w: %d events not in [1, %d]", ErrMalformed, len(ids), g.cfg.PairsMax)
	}
	for _, id := range ids {
		ch, s := g.tab.slot(id)
		if ch == nil || (ch.refs[s] == 0 && ch.indeg[s] == 0) {
			return nil, fmt.Errorf("%w: %d", ErrUnknownEvent, id)
		}
		if ch.refs[s]&clockFlag != 0 {
			return nil, fmt.Errorf("%w: event %d", ErrClockEvent, id)
		}
	}
	sorted := append(g.work[:0], ids...)
	slices.Sort(sorted)
	g.work = sorted
	runs := g.runs[:0]
	for _, id := range sorted {
		if n := len(runs); n > 0 && runs[n-1].id == id {
			runs[n-1].n++
			continue
		}
		runs = append(runs, refRun{id: id, n: 1})
	}
	g.runs = runs
	return runs, nil
}

// maybeCollect collects id if it holds no references and no in-edges, then
// cascades along its out-edges. The work is linear in the events and edges
// collected (Kronos paper §2.3, strict GC). A collected released clock event
// queues its chain; the caller runs sweepChains before returning.
func (g *Graph) maybeCollect(id EventID) {
	ch, s := g.tab.slot(id)
	if ch == nil || ch.refs[s] != 0 || ch.indeg[s] != 0 {
		return
	}
	work := append(g.work[:0], id)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		vc, vs := g.tab.slot(v)
		off, n := vc.edgeOff[vs], vc.edgeLen[vs]
		for _, dst := range g.arena.mem[off : off+n] {
			dc, ds := g.tab.slot(dst)
			dc.indeg[ds]--
			if dc.indeg[ds] == 0 && dc.refs[ds] == 0 {
				work = append(work, dst)
			}
		}
		g.arena.release(off, n)
		g.stats.Edges -= uint64(n)
		vc.edgeOff[vs], vc.edgeLen[vs], vc.sparse[vs] = 0, 0, 0
		g.tab.remove(v)
		g.stats.Events--
		g.stats.Collected++
		if len(g.clocks.released) > 0 {
			g.clocks.forget(v)
		}
	}
	g.work = work
}

// addEdge records src → dst. The caller has checked that dst does not reach src.
func (g *Graph) addEdge(src, dst EventID) error {
	dc, ds := g.tab.slot(dst)
	if dc.indeg[ds] == ^uint32(0) {
		return fmt.Errorf("%w: event %d has 2^32-1 in-edges", ErrOverflow, dst)
	}
	sc, ss := g.tab.slot(src)
	sc.edgeOff[ss] = g.arena.push(sc.edgeOff[ss], sc.edgeLen[ss], dst)
	sc.edgeLen[ss]++
	dc.indeg[ds]++
	g.stats.Edges++
	return nil
}

// popEdge removes src's most recent edge, which must point at dst.
func (g *Graph) popEdge(src, dst EventID) {
	sc, ss := g.tab.slot(src)
	n := sc.edgeLen[ss]
	assert(n > 0 && g.arena.mem[sc.edgeOff[ss]+n-1] == dst, "popEdge: last edge of %d is not %d", src, dst)
	sc.edgeOff[ss] = g.arena.pop(sc.edgeOff[ss], n)
	sc.edgeLen[ss]--
	dc, ds := g.tab.slot(dst)
	dc.indeg[ds]--
	g.stats.Edges--
}

// edges returns src's out-edges (valid until the next mutation).
func (g *Graph) edges(src EventID) []uint64 {
	ch, s := g.tab.slot(src)
	off, n := ch.edgeOff[s], ch.edgeLen[s]
	return g.arena.mem[off : off+n]
}

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("kronos: assertion failed: "+format, args...))
	}
}

// checkAfter verifies the graph after a mutation in invariants builds.
func (g *Graph) checkAfter(op string) {
	if !invariants.On {
		return
	}
	// A full check costs about the square of the graph's size: every
	// operation is checked while the graph is small (every test's case), then
	// one in size/16 so big workloads under -tags invariants stay tractable.
	g.checks++
	if n := int(g.Stats().Events) / 16; n > 1 && g.checks%uint64(n) != 0 {
		return
	}
	if err := g.CheckInvariants(); err != nil {
		panic("kronos: invariant broken after " + op + ": " + err.Error())
	}
}
