package kronos

import (
	"errors"
	"maps"
	"slices"

	"github.com/weft-db/weft/internal/vclock"
)

// refModel is the brute-force reference the property tests run beside Graph.
// It shares no code with the core: events live in a map, relations in a set
// of edges, and every order is a fresh depth-first search of the transitive
// closure. Garbage collection is recomputed globally after every release:
// following the paper (§2.3: an event with no references is collected once
// every event with an edge into it is collected), an event lives iff it is
// referenced — by a client, or by its gatekeeper chain for a clock event — or
// is reachable from a referenced event. In a DAG the two definitions agree.
//
// Clock events (dissertation §3.5.1) are modelled by their meaning rather
// than by the core's linking rule: a new clock event is related to every
// live event named by a clock that its vector clock orders (epochs first),
// whether or not Cleanup has released that event — a released event that
// still lives keeps its place in vector-clock order. That relation has the
// same transitive closure as "link to the last event below and the first
// above in every chain", so answers must agree exactly.
type refModel struct {
	pairsMax  int
	nextID    EventID
	created   uint64
	collected uint64
	ev        map[EventID]*refEvent
	out       map[EventID]map[EventID]bool // relations between live events
	reports   map[uint32]vclock.Clock
	watermark *vclock.Clock
}

type refEvent struct {
	refs    uint64 // client references
	clock   *Clock // the clock that names a clock event (kept after release)
	inChain bool   // still named by its clock (not released by Cleanup)
}

// refRefsMax is the documented largest reference count, 2^31-1.
const refRefsMax = 1<<31 - 1

func newRefModel(pairsMax int) *refModel {
	return &refModel{
		pairsMax: pairsMax,
		nextID:   1,
		ev:       map[EventID]*refEvent{},
		out:      map[EventID]map[EventID]bool{},
		reports:  map[uint32]vclock.Clock{},
	}
}

func (m *refModel) clone() *refModel {
	c := *m
	c.ev = make(map[EventID]*refEvent, len(m.ev))
	for id, e := range m.ev {
		ec := *e
		c.ev[id] = &ec
	}
	c.out = make(map[EventID]map[EventID]bool, len(m.out))
	for id, s := range m.out {
		c.out[id] = maps.Clone(s)
	}
	c.reports = maps.Clone(m.reports)
	return &c
}

// liveIDs returns the live events in id order (draws must be deterministic).
func (m *refModel) liveIDs() []EventID {
	return slices.Sorted(maps.Keys(m.ev))
}

func (m *refModel) clockEvents() uint64 {
	n := uint64(0)
	for _, e := range m.ev {
		if e.inChain {
			n++
		}
	}
	return n
}

// relations counts the live relations: without clock events, exactly the
// graph's edges.
func (m *refModel) relations() uint64 {
	n := 0
	for _, s := range m.out {
		n += len(s)
	}
	return uint64(n)
}

func (m *refModel) addRelation(src, dst EventID) {
	if m.out[src] == nil {
		m.out[src] = map[EventID]bool{}
	}
	m.out[src][dst] = true
}

// reaches reports a path src ⇝ dst of one or more relations.
func (m *refModel) reaches(src, dst EventID) bool {
	seen := map[EventID]bool{src: true}
	stack := []EventID{src}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for w := range m.out[v] {
			if w == dst {
				return true
			}
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return false
}

// reachSet returns every event src reaches by one or more relations.
func (m *refModel) reachSet(src EventID) map[EventID]bool {
	seen := map[EventID]bool{}
	stack := []EventID{src}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for w := range m.out[v] {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return seen
}

func (m *refModel) order(a, b EventID) Order {
	switch {
	case m.reaches(a, b):
		return Before
	case m.reaches(b, a):
		return After
	}
	return Concurrent
}

// collect removes every event not reachable from a referenced one and
// returns how many it removed.
func (m *refModel) collect() int {
	live := map[EventID]bool{}
	var stack []EventID
	for id, e := range m.ev {
		if e.refs > 0 || e.inChain {
			live[id] = true
			stack = append(stack, id)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for w := range m.out[v] {
			if !live[w] {
				live[w] = true
				stack = append(stack, w)
			}
		}
	}
	n := 0
	for id := range m.ev {
		if !live[id] {
			delete(m.ev, id)
			delete(m.out, id)
			n++
		}
	}
	m.collected += uint64(n)
	return n
}

// pinned reports whether id lives only because a live event reaches it.
func (m *refModel) pinned(id EventID) bool {
	e := m.ev[id]
	return e != nil && e.refs == 0 && !e.inChain
}

func (m *refModel) create(n int) ([]EventID, error) {
	if n <= 0 || n > m.pairsMax {
		return nil, ErrMalformed
	}
	var ids []EventID
	for range n {
		ids = append(ids, m.nextID)
		m.ev[m.nextID] = &refEvent{refs: 1}
		m.nextID++
		m.created++
	}
	return ids, nil
}

// refCounts validates a reference call and counts each id's occurrences.
func (m *refModel) refCounts(ids []EventID) (map[EventID]uint64, error) {
	if len(ids) == 0 || len(ids) > m.pairsMax {
		return nil, ErrMalformed
	}
	counts := map[EventID]uint64{}
	for _, id := range ids {
		e, ok := m.ev[id]
		if !ok {
			return nil, ErrUnknownEvent
		}
		if e.inChain {
			return nil, ErrClockEvent
		}
		counts[id]++
	}
	return counts, nil
}

func (m *refModel) acquire(ids []EventID) error {
	counts, err := m.refCounts(ids)
	if err != nil {
		return err
	}
	for id, n := range counts {
		if m.ev[id].refs+n > refRefsMax {
			return ErrOverflow
		}
	}
	for id, n := range counts {
		m.ev[id].refs += n
	}
	return nil
}

func (m *refModel) release(ids []EventID) (int, error) {
	counts, err := m.refCounts(ids)
	if err != nil {
		return 0, err
	}
	for id, n := range counts {
		if m.ev[id].refs < n {
			return 0, ErrUnderflow
		}
	}
	for id, n := range counts {
		m.ev[id].refs -= n
	}
	return m.collect(), nil
}

// width is the counter count of epoch's clocks, if any live event has one.
func (m *refModel) width(epoch uint64) (int, bool) {
	for _, e := range m.ev {
		if e.clock != nil && e.clock.Epoch == epoch {
			return len(e.clock.Counters), true
		}
	}
	return 0, false
}

// lookup finds the event r names: for an id whether it lives, for a clock
// whether a live event was stamped by its gatekeeper with the clock's own
// counter (a different clock there is invalid) and is not yet released.
func (m *refModel) lookup(r Ref) (EventID, bool, error) {
	if r.Clock == nil {
		if r.ID == 0 {
			return 0, false, ErrMalformed
		}
		_, ok := m.ev[r.ID]
		return r.ID, ok, nil
	}
	c := r.Clock
	if int(c.Owner) >= len(c.Counters) {
		return 0, false, ErrMalformed
	}
	if w, ok := m.width(c.Epoch); ok && w != len(c.Counters) {
		return 0, false, ErrClockInvalid
	}
	for id, e := range m.ev {
		if e.clock != nil && e.clock.Owner == c.Owner && e.clock.Epoch == c.Epoch &&
			e.clock.Counters[c.Owner] == c.Counters[c.Owner] {
			if !slices.Equal(e.clock.Counters, c.Counters) {
				return 0, false, ErrClockInvalid
			}
			return id, e.inChain, nil
		}
	}
	return 0, false, nil
}

func (m *refModel) checkPair(a, b Ref) error {
	ida, oka, err := m.lookup(a)
	if err != nil {
		return err
	}
	idb, okb, err := m.lookup(b)
	if err != nil {
		return err
	}
	if a.Clock != nil && b.Clock != nil && vclock.Compare(a.Clock.Clock, b.Clock.Clock) == vclock.Equal {
		return ErrSelfOrder
	}
	if (a.Clock == nil && b.Clock == nil || oka && okb) && ida == idb {
		return ErrSelfOrder
	}
	return nil
}

// modelStrictlyBelow: an older epoch, or every counter strictly smaller.
func modelStrictlyBelow(c, w vclock.Clock) bool {
	if c.Epoch != w.Epoch {
		return c.Epoch < w.Epoch
	}
	for i, v := range c.Counters {
		if i >= len(w.Counters) || v >= w.Counters[i] {
			return false
		}
	}
	return true
}

func (m *refModel) belowWatermark(r Ref) bool {
	return r.Clock != nil && m.watermark != nil && modelStrictlyBelow(r.Clock.Clock, *m.watermark)
}

func (m *refModel) query(pairs []Pair) ([]Order, error) {
	if len(pairs) == 0 || len(pairs) > m.pairsMax {
		return nil, ErrMalformed
	}
	for _, p := range pairs {
		if err := m.checkPair(p.A, p.B); err != nil {
			return nil, err
		}
	}
	out := make([]Order, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, m.answer(p.A, p.B))
	}
	return out, nil
}

func (m *refModel) answer(a, b Ref) Order {
	if a.Clock != nil && b.Clock != nil {
		switch vclock.Compare(a.Clock.Clock, b.Clock.Clock) {
		case vclock.Before:
			return Before
		case vclock.After:
			return After
		}
	}
	ida, oka, _ := m.lookup(a)
	idb, okb, _ := m.lookup(b)
	if a.Clock != nil && !oka || b.Clock != nil && !okb {
		// A clock with no event is concurrent with everything its clock
		// does not order, unless it can never have one again.
		if m.belowWatermark(a) || m.belowWatermark(b) ||
			a.Clock == nil && !oka || b.Clock == nil && !okb {
			return Unknown
		}
		return Concurrent
	}
	if !oka || !okb {
		return Unknown
	}
	return m.order(ida, idb)
}

func (m *refModel) assign(as []Assignment) ([]AssignResult, error) {
	if len(as) == 0 || len(as) > m.pairsMax {
		return nil, ErrMalformed
	}
	for _, a := range as {
		if a.Order != Before && a.Order != After || a.Strength != Must && a.Strength != Prefer {
			return nil, ErrMalformed
		}
		if err := m.checkPair(a.A, a.B); err != nil {
			return nil, err
		}
		for _, r := range [2]Ref{a.A, a.B} {
			if r.Clock == nil {
				if _, ok := m.ev[r.ID]; !ok {
					return nil, ErrUnknownEvent
				}
			} else if m.belowWatermark(r) {
				return nil, ErrCollected
			}
		}
	}
	saved := m.clone()
	res := make([]AssignResult, len(as))
	for _, pass := range [2]Strength{Must, Prefer} {
		for i, a := range as {
			if a.Strength != pass {
				continue
			}
			r, err := m.assignOne(a)
			if err != nil {
				*m = *saved // all or nothing
				var ce *ConflictError
				if errors.As(err, &ce) {
					ce.Index = i
				}
				return nil, err
			}
			res[i] = r
		}
	}
	return res, nil
}

func (m *refModel) assignOne(a Assignment) (AssignResult, error) {
	ida, err := m.resolve(a.A)
	if err != nil {
		return AssignResult{}, err
	}
	idb, err := m.resolve(a.B)
	if err != nil {
		return AssignResult{}, err
	}
	if ida == idb {
		return AssignResult{}, ErrSelfOrder
	}
	cur := m.order(ida, idb)
	switch {
	case cur == a.Order:
		return AssignResult{Order: cur}, nil
	case cur == Concurrent:
		if a.Order == Before {
			m.addRelation(ida, idb)
		} else {
			m.addRelation(idb, ida)
		}
		return AssignResult{Order: a.Order}, nil
	case a.Strength == Must:
		return AssignResult{}, &ConflictError{Actual: cur}
	}
	return AssignResult{Order: cur, Reversed: true}, nil
}

// resolve returns the event r names, creating a clock event on first use:
// it must fit strictly between its neighbours among its gatekeeper's live
// clock events, and it is related to every live clock event (released or
// not) its vector clock orders.
func (m *refModel) resolve(r Ref) (EventID, error) {
	id, ok, err := m.lookup(r)
	if err != nil || ok {
		return id, err
	}
	if r.Clock == nil {
		return 0, ErrUnknownEvent
	}
	c := r.Clock
	own := c.Counters[c.Owner]
	var pred, succ *Clock
	for _, e := range m.ev {
		if e.clock == nil || e.clock.Owner != c.Owner || e.clock.Epoch != c.Epoch {
			continue
		}
		switch n := e.clock.Counters[c.Owner]; {
		case n < own && (pred == nil || n > pred.Counters[c.Owner]):
			pred = e.clock
		case n > own && (succ == nil || n < succ.Counters[c.Owner]):
			succ = e.clock
		}
	}
	if pred != nil && vclock.CompareCounters(pred.Counters, c.Counters) != vclock.Before ||
		succ != nil && vclock.CompareCounters(c.Counters, succ.Counters) != vclock.Before {
		return 0, ErrClockInvalid
	}
	id = m.nextID
	m.nextID++
	m.created++
	for x, e := range m.ev {
		if e.clock == nil {
			continue
		}
		switch vclock.Compare(e.clock.Clock, c.Clock) {
		case vclock.Before:
			m.addRelation(x, id)
		case vclock.After:
			m.addRelation(id, x)
		}
	}
	m.ev[id] = &refEvent{clock: &Clock{Clock: c.Clock.Clone(), Owner: c.Owner}, inChain: true}
	return id, nil
}

// cleanup records a gatekeeper's report; once every gatekeeper of the
// clock's width has reported, the watermark moves (forward only) to the
// entry-wise minimum, and chain events strictly below it are released.
func (m *refModel) cleanup(gk uint32, c vclock.Clock) (released, collected int, err error) {
	if int(gk) >= len(c.Counters) {
		return 0, 0, ErrMalformed
	}
	if old, ok := m.reports[gk]; !ok || vclock.LessEq(old, c) {
		m.reports[gk] = c.Clone()
	}
	var reps []vclock.Clock
	for i := range len(c.Counters) {
		r, ok := m.reports[uint32(i)]
		if !ok {
			return 0, 0, nil
		}
		reps = append(reps, r)
	}
	w, _ := vclock.Min(reps)
	if m.watermark != nil && !vclock.LessEq(*m.watermark, w) {
		return 0, 0, nil
	}
	m.watermark = &w
	for _, e := range m.ev {
		if e.inChain && modelStrictlyBelow(e.clock.Clock, w) {
			e.inChain = false
			released++
		}
	}
	return released, m.collect(), nil
}

// sentinels are the package's operating errors, in no particular order.
var sentinels = []error{
	ErrUnknownEvent, ErrSelfOrder, ErrMalformed, ErrUnderflow, ErrOverflow,
	ErrMustConflict, ErrCollected, ErrClockInvalid, ErrClockEvent,
}

// errKind maps an error to the sentinel it wraps (or itself if none).
func errKind(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}
