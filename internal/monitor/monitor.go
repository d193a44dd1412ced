package monitor

import (
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/vclock"
)

// Violation is a detected violation of a predicate: a set of candidates, one
// per server the satisfied clause names (every server the predicate names,
// for conjunctive and linear predicates), that are pairwise concurrent under
// Precedes and in which the clause holds.
type Violation struct {
	Predicate int    // index in the Spec
	Name      string // the predicate's name
	Clause    int    // index of a clause that holds in Cut
	Cut       []Candidate
	// Since is the earliest physical time at which the violating global state
	// could have begun: the latest start among the cut's candidates, less ε
	// (0 if that underflows). Every server's clock read at least Since when
	// the violation began, so a rollback to a snapshot before Since is safe
	// (§IV, T_violate).
	Since uint64
}

// Stats counts a monitor's work.
type Stats struct {
	Candidates uint64 // accepted by Step
	Skipped    uint64 // accepted but useless to every clause (never queued)
	Advances   uint64 // frontier advances past a forbidden or reported candidate
	Violations uint64 // reported
	Queued     int    // candidates buffered now, not yet passed by every frontier
}

// Monitor detects violations of one predicate from its candidates. It is a
// pure core (no goroutines, clocks or I/O) and not safe for concurrent use.
//
// Feed candidates with Step, in Seq order per server (any interleaving across
// servers); take violations with Ready and then Advance.
type Monitor struct {
	cfg     Config
	c       *compiled
	logs    []plog       // per slot: buffered candidates
	fronts  []*frontier  // one global state (per clause, for semilinear)
	frontOf [][]frontRef // per slot: the frontiers naming it
	pending []Violation
	stats   Stats
	scr     []uint64
}

// plog buffers one server's useful candidates; entries[i] has the absolute
// index base+i, which is what frontiers point at.
type plog struct {
	entries []entry
	base    int
	lastSeq uint64 // Seq of the last candidate accepted (useful or not)
	// mark is the End of the last candidate accepted, useful or not: every
	// later candidate of the server starts at or after it, so a head that
	// precedes mark precedes all of them (the watermark a heartbeat moves).
	mark vclock.HVC
	seen bool
}

// entry is a queued candidate with its truth bits: one per clause naming the
// slot, set if that clause's local part holds. The first 64 are kept inline
// so that the common case allocates nothing.
type entry struct {
	c     Candidate
	bits0 uint64
	bitsN []uint64
}

func newEntry(c Candidate, truth []uint64) entry {
	e := entry{c: c, bits0: truth[0]}
	if len(truth) > 1 {
		e.bitsN = slices.Clone(truth[1:])
	}
	return e
}

func (e *entry) has(b int) bool {
	if b < 64 {
		return e.bits0&(1<<b) != 0
	}
	return hasBit(e.bitsN, b-64)
}

func (e *entry) any() bool { return e.bits0 != 0 || anyBit(e.bitsN) }

// frontier is a global state GS: for each slot it names, the absolute index of
// its current candidate (the head). A head index equal to the log's end means
// the monitor waits for that server.
type frontier struct {
	clause int   // the clause it detects, or −1 for the whole predicate
	slots  []int // slots named, ascending
	bits   []int // clause ≥ 0: the clause's bit in each slot's truth
	pos    []int // absolute head index per slot
	work   []int // positions j whose heads must be (re)checked
	queued []bool
}

type frontRef struct {
	f int // index into Monitor.fronts
	j int // position of the slot in that frontier
}

// NewMonitor returns the monitor of predicate p (an index into spec).
func NewMonitor(cfg Config, spec *Spec, p int) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if p < 0 || p >= len(spec.compiled) {
		return nil, fmt.Errorf("%w: no predicate %d", ErrSpec, p)
	}
	c := spec.compiled[p]
	m := &Monitor{cfg: cfg, c: c, logs: make([]plog, len(c.servers)), frontOf: make([][]frontRef, len(c.servers))}
	if c.typ == Semilinear {
		for k, cl := range c.clauses {
			m.addFrontier(k, cl.slots, cl.bit)
		}
	} else {
		all := make([]int, len(c.servers))
		for s := range all {
			all[s] = s
		}
		m.addFrontier(-1, all, nil)
	}
	return m, nil
}

func (m *Monitor) addFrontier(clause int, slots, bits []int) {
	f := &frontier{clause: clause, slots: slots, bits: bits, pos: make([]int, len(slots)), queued: make([]bool, len(slots))}
	for j, s := range slots {
		m.frontOf[s] = append(m.frontOf[s], frontRef{f: len(m.fronts), j: j})
	}
	m.fronts = append(m.fronts, f)
}

// Name is the monitored predicate's name.
func (m *Monitor) Name() string { return m.c.name }

// Stats returns the monitor's counters.
func (m *Monitor) Stats() Stats {
	s := m.stats
	for i := range m.logs {
		l := &m.logs[i]
		low := l.base + len(l.entries)
		for _, r := range m.frontOf[i] {
			low = min(low, m.fronts[r.f].pos[r.j])
		}
		s.Queued += l.base + len(l.entries) - low
	}
	return s
}

// Ready returns the violations found and not yet taken, oldest first. The
// slice is valid until Advance.
func (m *Monitor) Ready() []Violation { return m.pending }

// Advance takes the violations Ready returned.
func (m *Monitor) Advance() {
	clear(m.pending)
	m.pending = m.pending[:0]
}

// Step gives the monitor one candidate. Errors: ErrCandidate (not for this
// predicate, or malformed), ErrOutOfOrder, and ErrOverloaded (the server's
// queue is at QueueMax, or ViolationsMax violations await Advance); after an
// error nothing has changed.
func (m *Monitor) Step(c Candidate) error {
	if len(m.pending) >= m.cfg.ViolationsMax {
		return fmt.Errorf("%w: %d violations await Advance", ErrOverloaded, len(m.pending))
	}
	s, err := m.check(&c)
	if err != nil {
		return err
	}
	m.scr = m.c.truth(s, c.Values, m.scr)
	useful := anyBit(m.scr)
	l := &m.logs[s]
	if useful && len(l.entries) >= m.cfg.QueueMax {
		m.trim(s)
		if len(l.entries) >= m.cfg.QueueMax {
			return fmt.Errorf("%w: %d candidates of server %d queued for %q", ErrOverloaded, len(l.entries), c.Server, m.c.name)
		}
	}
	l.lastSeq, l.mark, l.seen = c.Seq, c.End, true
	m.stats.Candidates++
	idx := l.base + len(l.entries)
	if useful {
		l.entries = append(l.entries, newEntry(c, m.scr))
	} else {
		m.stats.Skipped++
	}
	for _, r := range m.frontOf[s] {
		f := m.fronts[r.f]
		if f.pos[r.j] != idx {
			continue // f has a head there already, which this does not change
		}
		if useful {
			f.enqueue(r.j) // the new head
		} else {
			f.enqueueOthers(r.j) // the mark moved: recheck the heads against it
		}
		m.run(f)
	}
	if invariants.On {
		m.checkInvariants()
	}
	return nil
}

// check validates a candidate and returns its slot.
func (m *Monitor) check(c *Candidate) (int, error) {
	s := m.c.slot(c.Server)
	if s < 0 {
		return 0, fmt.Errorf("%w: predicate %q names no server %d", ErrCandidate, m.c.name, c.Server)
	}
	if len(c.Values) != len(m.c.keys[s]) {
		return 0, fmt.Errorf("%w: %d values from server %d, predicate %q names %d keys there",
			ErrCandidate, len(c.Values), c.Server, m.c.name, len(m.c.keys[s]))
	}
	if c.End.Epsilon != m.cfg.Epsilon {
		return 0, fmt.Errorf("%w: candidate clock has ε=%s, monitor ε=%s",
			ErrCandidate, epsilonLabel(c.End.Epsilon), epsilonLabel(m.cfg.Epsilon))
	}
	if c.Start.Own() > c.End.Own() {
		return 0, fmt.Errorf("%w: interval [%d, %d) ends before it starts", ErrCandidate, c.Start.Own(), c.End.Own())
	}
	if l := &m.logs[s]; l.seen && (c.Seq <= l.lastSeq || !startsAfter(l.mark, c.Start)) {
		return 0, fmt.Errorf("%w: server %d sent #%d starting at %d after #%d ending at %d",
			ErrOutOfOrder, c.Server, c.Seq, c.Start.Own(), l.lastSeq, l.mark.Own())
	}
	return s, nil
}

// startsAfter reports start ≥ mark as HVCs: a server's next candidate may not
// start before its previous one ended (the mark relies on it).
func startsAfter(mark, start vclock.HVC) bool {
	r := vclock.CompareHVC(mark, start)
	return r == vclock.Before || r == vclock.Equal
}

func (f *frontier) enqueue(j int) {
	if !f.queued[j] {
		f.queued[j] = true
		f.work = append(f.work, j)
	}
}

func (f *frontier) enqueueOthers(j int) {
	for q := range f.slots {
		if q != j {
			f.enqueue(q)
		}
	}
}

// head is the current candidate of position j, or nil while waiting.
func (m *Monitor) head(f *frontier, j int) *entry {
	l := &m.logs[f.slots[j]]
	i := f.pos[j] - l.base
	if i < len(l.entries) {
		return &l.entries[i]
	}
	return nil
}

// wants reports whether e can stand for its slot in f's clause: some clause's
// local part holds (whole predicate), or f's clause's does.
func (f *frontier) wants(j int, e *entry) bool {
	if f.clause < 0 {
		return e.any()
	}
	return e.has(f.bits[j])
}

// advance moves position j past its head (the head is forbidden, or was
// reported) and queues it for checking; if j now waits, the other heads are
// queued too, to be checked against j's mark.
func (m *Monitor) advance(f *frontier, j int) {
	f.pos[j]++
	m.stats.Advances++
	f.enqueue(j)
	if m.head(f, j) == nil {
		f.enqueueOthers(j) // now waiting for j: check the others against j's mark
	}
	if s := f.slots[j]; len(m.frontOf[s]) == 1 {
		m.trim(s)
	}
}

// trim drops a slot's candidates that every frontier has passed.
func (m *Monitor) trim(s int) {
	l := &m.logs[s]
	low := l.base + len(l.entries)
	for _, r := range m.frontOf[s] {
		low = min(low, m.fronts[r.f].pos[r.j])
	}
	if n := low - l.base; n > 0 {
		clear(l.entries[:n])
		l.entries = l.entries[n:]
		l.base = low
	}
}

// run is the detection loop for one frontier: settle it, and while it holds
// a violation, report it and restart past it.
func (m *Monitor) run(f *frontier) {
	for m.settle(f) {
		m.report(f)
		m.restart(f)
	}
}

// settle advances f along forbidden heads until none is left (Garg–Waldecker
// red heads; Chase–Garg forbidden states). A head is forbidden if it cannot
// stand for its slot (no local part holds), or if it precedes another head,
// or the mark of a server f waits for: then it precedes every later candidate
// of that server too, so no violation above f contains it. Only queued
// positions are checked: every other pair was found unordered already. It
// reports whether every head is present, so f is a violation.
func (m *Monitor) settle(f *frontier) bool {
	for len(f.work) > 0 {
		j := f.work[len(f.work)-1]
		f.work = f.work[:len(f.work)-1]
		f.queued[j] = false
		e := m.head(f, j)
		if e == nil {
			continue // waiting; Step queues j when its candidate arrives
		}
		if !f.wants(j, e) || m.forbidden(f, j, e) {
			m.advance(f, j)
		}
	}
	for j := range f.slots {
		if m.head(f, j) == nil {
			return false
		}
	}
	return true
}

// forbidden compares head e (position j) with every other position: it
// reports whether e precedes another head or a waited-for mark, and advances
// any other head that precedes e.
func (m *Monitor) forbidden(f *frontier, j int, e *entry) bool {
	for q := range f.slots {
		if q == j {
			continue
		}
		o := m.head(f, q)
		if o == nil {
			l := &m.logs[f.slots[q]]
			if l.seen && precedesStart(&e.c, l.mark, m.cfg.Epsilon) {
				return true
			}
			continue
		}
		if Precedes(&e.c, &o.c, m.cfg.Epsilon) {
			return true
		}
		if Precedes(&o.c, &e.c, m.cfg.Epsilon) {
			m.advance(f, q)
		}
	}
	return false
}

// report records the violation f's heads form.
func (m *Monitor) report(f *frontier) {
	v := Violation{Predicate: m.c.index, Name: m.c.name, Clause: f.clause, Cut: make([]Candidate, len(f.slots))}
	start := uint64(0)
	for j := range f.slots {
		e := m.head(f, j)
		v.Cut[j] = e.c
		start = max(start, e.c.Start.Own())
	}
	if v.Clause < 0 {
		v.Clause = m.holdingClause(f)
	}
	if start > m.cfg.Epsilon {
		v.Since = start - m.cfg.Epsilon
	}
	m.pending = append(m.pending, v)
	m.stats.Violations++
}

// holdingClause finds a clause that holds in a whole-predicate frontier. For
// a validated linear predicate (product form) one always does.
func (m *Monitor) holdingClause(f *frontier) int {
	for k, cl := range m.c.clauses {
		ok := true
		for i, s := range cl.slots {
			if !m.head(f, s).has(cl.bit[i]) {
				ok = false
				break
			}
		}
		if ok {
			return k
		}
	}
	assert(false, "predicate %q: no clause holds in a reported cut", m.c.name)
	return -1
}

// restart moves past a reported violation to look for the next: the head
// with the earliest start is advanced (as the paper's monitor does).
func (m *Monitor) restart(f *frontier) {
	best := 0
	for j := 1; j < len(f.slots); j++ {
		if m.head(f, j).c.Start.Own() < m.head(f, best).c.Start.Own() {
			best = j
		}
	}
	m.advance(f, best)
}
