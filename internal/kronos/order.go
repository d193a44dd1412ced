package kronos

import "fmt"

// visited is the Briggs–Torczon sparse set of the paper: membership is
// sparse[id] < n && dense[sparse[id]] == id, so clearing is n = 0 and a query
// allocates nothing once dense has grown to the largest traversal. dense also
// serves as the BFS queue: events are enqueued in the order they are visited.
type visited struct {
	dense []EventID
	n     int
}

func (g *Graph) visit(id EventID) bool {
	ch, s := g.tab.slot(id)
	if sp := int(ch.sparse[s]); sp < g.vis.n && g.vis.dense[sp] == id {
		return false
	}
	ch.sparse[s] = uint32(g.vis.n)
	if g.vis.n == len(g.vis.dense) {
		g.vis.dense = append(g.vis.dense, id)
	} else {
		g.vis.dense[g.vis.n] = id
	}
	g.vis.n++
	return true
}

// reaches runs a BFS from src looking for dst, skipping events already in the
// visited set. Time is proportional to the events and edges visited.
func (g *Graph) reaches(src, dst EventID) bool {
	head := g.vis.n
	if !g.visit(src) {
		return false
	}
	for head < g.vis.n {
		v := g.vis.dense[head]
		head++
		for _, w := range g.edges(v) {
			if w == dst {
				return true
			}
			g.visit(w)
		}
	}
	return false
}

// order computes the order of two distinct live events. The second search
// keeps the first one's visited set: every event reachable from a cannot
// reach a in a DAG, so skipping them is safe (as in the original).
func (g *Graph) order(a, b EventID) Order {
	if o, ok := g.cache.get(a, b); ok {
		return o
	}
	g.vis.n = 0
	if g.reaches(a, b) {
		return Before
	}
	if g.reaches(b, a) {
		return After
	}
	return Concurrent
}

// QueryOrder answers the order of each pair, appending to dst. A pair naming
// a missing event answers Unknown; clock pairs that vector clocks order are
// answered without the graph; a clock with no event yet is Concurrent with
// everything its clock does not order. Errors (malformed or self pairs)
// change nothing; QueryOrder never mutates the graph except its cache.
func (g *Graph) QueryOrder(dst []Order, pairs []Pair) ([]Order, error) {
	if len(pairs) == 0 || len(pairs) > g.cfg.PairsMax {
		return dst, fmt.Errorf("%w: %d pairs not in [1, %d]", ErrMalformed, len(pairs), g.cfg.PairsMax)
	}
	for i, p := range pairs {
		if err := g.checkPair(p.A, p.B); err != nil {
			return dst, fmt.Errorf("pair %d: %w", i, err)
		}
	}
	for _, p := range pairs {
		dst = append(dst, g.queryPair(p.A, p.B))
	}
	return dst, nil
}

func (g *Graph) queryPair(a, b Ref) Order {
	if o, ok := clockOrder(a, b); ok {
		return o
	}
	ida, oka, _ := g.lookup(a)
	idb, okb, _ := g.lookup(b)
	if a.Clock != nil && !oka || b.Clock != nil && !okb {
		if g.clocks.belowWatermark(a) || g.clocks.belowWatermark(b) {
			return Unknown
		}
		if (a.Clock == nil && !g.tab.alive(ida)) || (b.Clock == nil && !g.tab.alive(idb)) {
			return Unknown
		}
		return Concurrent
	}
	if !g.tab.alive(ida) || !g.tab.alive(idb) {
		return Unknown
	}
	o := g.order(ida, idb)
	if o == Before || o == After {
		g.cache.put(ida, idb, o)
	}
	return o
}

// checkPair rejects malformed refs, invalid clocks and self pairs.
func (g *Graph) checkPair(a, b Ref) error {
	ida, oka, err := g.lookup(a)
	if err != nil {
		return err
	}
	idb, okb, err := g.lookup(b)
	if err != nil {
		return err
	}
	if a.Clock != nil && b.Clock != nil && sameClock(a.Clock, b.Clock) {
		return fmt.Errorf("%w: %s", ErrSelfOrder, a)
	}
	if (a.Clock == nil && b.Clock == nil || oka && okb) && ida == idb {
		return fmt.Errorf("%w: %s and %s", ErrSelfOrder, a, b)
	}
	return nil
}

// undoRec is one step of AssignOrder's rollback log.
type undoRec struct {
	src, dst EventID // an edge added, or (0, id) for a clock event created
	key      chainKey
	counter  uint64
}

// AssignOrder applies a batch atomically: every Must pair first, in request
// order, then every Prefer pair in request order. A Must that contradicts the
// graph rejects the whole batch with no effect and a *ConflictError naming the
// pair and the order the graph holds; a contradicted Prefer is reversed and
// reported. Clock refs with no event yet are created (and linked into their
// gatekeeper chains) as part of the batch. Results are appended to dst in
// request order.
func (g *Graph) AssignOrder(dst []AssignResult, as []Assignment) ([]AssignResult, error) {
	if err := g.checkAssignments(as); err != nil {
		return dst, err
	}
	defer g.checkAfter("assign_order")
	g.undo = g.undo[:0]
	base := len(dst)
	for range as {
		dst = append(dst, AssignResult{})
	}
	res := dst[base:]
	for _, pass := range [2]Strength{Must, Prefer} {
		for i, a := range as {
			if a.Strength != pass {
				continue
			}
			r, err := g.assignOne(a)
			if err != nil {
				g.rollback()
				if ce, ok := err.(*ConflictError); ok {
					ce.Index = i
				}
				return dst[:base], err
			}
			res[i] = r
		}
	}
	return dst, nil
}

func (g *Graph) checkAssignments(as []Assignment) error {
	if len(as) == 0 || len(as) > g.cfg.PairsMax {
		return fmt.Errorf("%w: %d pairs not in [1, %d]", ErrMalformed, len(as), g.cfg.PairsMax)
	}
	for i, a := range as {
		if a.Order != Before && a.Order != After {
			return fmt.Errorf("pair %d: %w: order %s is not before or after", i, ErrMalformed, a.Order)
		}
		if a.Strength != Must && a.Strength != Prefer {
			return fmt.Errorf("pair %d: %w: strength %d is not must or prefer", i, ErrMalformed, a.Strength)
		}
		if err := g.checkPair(a.A, a.B); err != nil {
			return fmt.Errorf("pair %d: %w", i, err)
		}
		for _, r := range [2]Ref{a.A, a.B} {
			if r.Clock == nil && !g.tab.alive(r.ID) {
				return fmt.Errorf("pair %d: %w: %d", i, ErrUnknownEvent, r.ID)
			}
			if r.Clock != nil && g.clocks.belowWatermark(r) {
				return fmt.Errorf("pair %d: %w: %s", i, ErrCollected, r)
			}
		}
	}
	return nil
}

// assignOne applies one pair, logging every change for rollback.
func (g *Graph) assignOne(a Assignment) (AssignResult, error) {
	ida, err := g.resolve(a.A)
	if err != nil {
		return AssignResult{}, err
	}
	idb, err := g.resolve(a.B)
	if err != nil {
		return AssignResult{}, err
	}
	if ida == idb {
		return AssignResult{}, fmt.Errorf("%w: %s and %s", ErrSelfOrder, a.A, a.B)
	}
	cur := g.order(ida, idb)
	switch {
	case cur == a.Order:
		return AssignResult{Order: cur}, nil
	case cur == Concurrent:
		src, dst := ida, idb
		if a.Order == After {
			src, dst = idb, ida
		}
		if err := g.addEdge(src, dst); err != nil {
			return AssignResult{}, err
		}
		g.undo = append(g.undo, undoRec{src: src, dst: dst})
		return AssignResult{Order: a.Order}, nil
	case a.Strength == Must:
		return AssignResult{}, &ConflictError{Actual: cur}
	}
	return AssignResult{Order: cur, Reversed: true}, nil
}

// rollback undoes the current batch in reverse order.
func (g *Graph) rollback() {
	for i := len(g.undo) - 1; i >= 0; i-- {
		u := g.undo[i]
		if u.src != 0 {
			g.popEdge(u.src, u.dst)
			continue
		}
		g.clocks.remove(u.key, u.counter)
		ch, s := g.tab.slot(u.dst)
		ch.refs[s], ch.sparse[s] = 0, 0 // the batch's traversals may have visited it
		g.tab.remove(u.dst)
		g.stats.Events--
		g.stats.ClockEvents--
		g.stats.Created--
		// Undone newest first, so this ends at the batch's first id: an
		// aborted batch must not even consume ids (they were never seen).
		g.nextID = u.dst
	}
	g.undo = g.undo[:0]
}
