package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

// Task is work that reads the graph at Stamp: a node-program batch or a read.
type Task struct {
	Stamp   vclock.Stamp
	Payload any
}

// NopRequest asks gatekeeper GK for a NOP after Clock.
type NopRequest struct {
	GK    uint32
	Clock vclock.Clock
}

// Config configures a shard core.
type Config struct {
	ID          uint32
	Gatekeepers int
	// ReorderMax bounds entries held while an earlier sequence number is missing.
	ReorderMax int
	// TasksMax bounds tasks waiting to run; Submit answers ErrOverloaded beyond it.
	TasksMax int
}

// Errors.
var (
	ErrOverloaded = errors.New("shard: too many waiting tasks")
	ErrReorder    = errors.New("shard: FIFO channel out of order beyond the reorder bound")
)

type queue struct {
	next    uint64 // next expected sequence number
	fifo    []gatekeeper.Entry
	held    map[uint64]gatekeeper.Entry // arrived ahead of a gap
	last    vclock.Stamp                // last executed or consumed entry
	lastNop bool
	asked   bool         // a NOP request is outstanding
	tail    vclock.Stamp // the newest entry received (FIFO stamps increase)
	// notes are Complete clocks: nothing still to come from this
	// gatekeeper is at or before any of them. Kept: up to notesMax, none
	// at or before another (a gatekeeper with transactions in flight notes
	// the clock it was asked about, which need not follow its last note).
	notes []vclock.Clock
}

// notesMax bounds the notes a queue keeps; the oldest goes first.
const notesMax = 8

// Core schedules writes and tasks for one shard.
type Core struct {
	cfg   Config
	q     []queue
	tasks []Task
	res   *order.Resolver
	reqs  []NopRequest

	// Apply executes a write entry (never a NOP) against the shard's graph.
	Apply func(e gatekeeper.Entry) error
	// Run executes a runnable task.
	Run func(t Task) error

	Executed, Consumed, Ran uint64
	// CompleteSkips counts queue checks that Complete answered without a NOP.
	CompleteSkips uint64
}

// New returns a core. Apply and Run must be set before Step.
func New(cfg Config, res *order.Resolver) *Core {
	c := &Core{cfg: cfg, q: make([]queue, cfg.Gatekeepers), res: res}
	for i := range c.q {
		c.q[i].next = 1
		c.q[i].held = map[uint64]gatekeeper.Entry{}
	}
	return c
}

// Resolver returns the shard's order resolver (tasks use it for visibility).
func (c *Core) Resolver() *order.Resolver { return c.res }

// Deliver enqueues an entry from a gatekeeper's FIFO channel. Duplicates are
// dropped; an entry ahead of a gap is held until the gap fills.
func (c *Core) Deliver(e gatekeeper.Entry) error {
	if int(e.GK) >= len(c.q) {
		return fmt.Errorf("shard: entry from unknown gatekeeper %d", e.GK)
	}
	q := &c.q[e.GK]
	switch {
	case e.Seq < q.next:
		return nil
	case e.Seq > q.next:
		if len(q.held) >= c.cfg.ReorderMax {
			return ErrReorder
		}
		q.held[e.Seq] = e
		return nil
	}
	// Only an entry that moves the queue answers an outstanding NOP
	// request; one held behind a gap does not (else every held NOP would
	// prompt another request: a storm while the gap lasts).
	q.asked = false
	if q.push(e) {
		c.Consumed++
	}
	for {
		h, ok := q.held[q.next]
		if !ok {
			break
		}
		delete(q.held, q.next)
		if q.push(h) {
			c.Consumed++
		}
	}
	return nil
}

// push appends the next entry. Any entry replaces a NOP at the tail: a NOP
// only says "nothing before me", and the entry behind it says the same about
// a later stamp. So NOPs never sit in front of writes (where they would hide
// them from the write search), and idle queues stay one entry long.
func (q *queue) push(e gatekeeper.Entry) (droppedNop bool) {
	q.next++
	if !q.tail.IsZero() && vclock.CompareStamps(q.tail, e.Stamp) != vclock.Before {
		panic(fmt.Sprintf("shard: gatekeeper %d sent %s after %s", e.GK, e.Stamp, q.tail))
	}
	q.tail = e.Stamp
	if n := len(q.fifo); n > 0 && q.fifo[n-1].Nop {
		q.fifo[n-1] = e
		return true
	}
	q.fifo = append(q.fifo, e)
	return false
}

// Complete tells the shard that everything gatekeeper gk will still send
// follows clock: it has delivered every entry it stamped so far, and its
// clock is at least clock, so its later stamps come after it. It is a NOP
// without a message, for a shell that sees its gatekeepers' state (one
// process): the gatekeeper was idle when it noted its clock. Deliveries made
// before the note must have been given to Deliver first. It also answers an
// outstanding NOP request to gk.
func (c *Core) Complete(gk uint32, clock vclock.Clock) {
	q := &c.q[gk]
	q.asked = false
	if clock.Counters == nil {
		return // says nothing
	}
	for _, n := range q.notes {
		if r := vclock.Compare(clock, n); r == vclock.Before || r == vclock.Equal {
			return // n says at least as much
		}
	}
	kept := q.notes[:0]
	for _, n := range q.notes {
		if vclock.Compare(n, clock) == vclock.Concurrent {
			kept = append(kept, n) // else clock says more than n
		}
	}
	if len(kept) == notesMax {
		copy(kept, kept[1:])
		kept = kept[:notesMax-1]
	}
	kept = append(kept, clock)
	for i := len(kept); i < len(q.notes); i++ {
		q.notes[i] = vclock.Clock{}
	}
	q.notes = kept
}

// noted reports that one of q's notes covers t: nothing still to come
// precedes t.
func (q *queue) noted(t vclock.Stamp) bool {
	for _, n := range q.notes {
		if r := vclock.Compare(t.Clock, n); r == vclock.Before || r == vclock.Equal {
			return true
		}
	}
	return false
}

// note is the newest of q's notes (zero: none).
func (q *queue) note() vclock.Clock {
	if len(q.notes) == 0 {
		return vclock.Clock{}
	}
	return q.notes[len(q.notes)-1]
}

// Positions writes, per gatekeeper queue, a stamp no later than any entry
// the queue will still execute: its head, else the newer of the last entry
// it took and its Complete note (zero when it has neither). A garbage-collection watermark must not pass them.
// out must have one slot per gatekeeper; the stamps share the entries' clocks
// (read-only).
func (c *Core) Positions(out []vclock.Stamp) []vclock.Stamp {
	for i := range c.q {
		q := &c.q[i]
		switch {
		case len(q.fifo) > 0:
			out[i] = q.fifo[0].Stamp
		case q.note().Counters != nil && (q.last.IsZero() || vclock.Compare(q.last.Clock, q.note()) == vclock.Before):
			out[i] = vclock.Stamp{Clock: q.note(), Owner: uint32(i)}
		default:
			out[i] = q.last
		}
	}
	return out
}

// Submit adds a task; it runs during a later Step.
func (c *Core) Submit(t Task) error {
	if len(c.tasks) >= c.cfg.TasksMax {
		return ErrOverloaded
	}
	c.tasks = append(c.tasks, t)
	return nil
}

// Waiting returns the number of tasks not yet run.
func (c *Core) Waiting() int { return len(c.tasks) }

// NopRequests returns (and forgets) the NOP requests produced by Step.
func (c *Core) NopRequests() []NopRequest {
	r := c.reqs
	c.reqs = nil
	return r
}

// Step runs everything that can run now.
func (c *Core) Step(ctx context.Context) error {
	for {
		ranTask, err := c.runTasks(ctx)
		if err != nil {
			return err
		}
		wrote, err := c.executeWrite(ctx)
		if err != nil {
			return err
		}
		if !ranTask && !wrote {
			return nil
		}
	}
}

// runTasks runs every runnable task, keeping the others in arrival order.
func (c *Core) runTasks(ctx context.Context) (bool, error) {
	ran := false
	kept := c.tasks[:0]
	for i, t := range c.tasks {
		ok, err := c.runnable(ctx, t)
		if err != nil {
			c.tasks = append(kept, c.tasks[i:]...)
			return ran, err
		}
		if !ok {
			kept = append(kept, t)
			continue
		}
		if err := c.Run(t); err != nil {
			c.tasks = append(kept, c.tasks[i+1:]...)
			return true, err
		}
		c.Ran++
		ran = true
	}
	for i := len(kept); i < len(c.tasks); i++ {
		c.tasks[i] = Task{}
	}
	c.tasks = kept
	return ran, nil
}

// runnable decides whether every queue has moved past t, consuming NOP heads
// that do not follow t and asking for NOPs where a queue says nothing yet.
func (c *Core) runnable(ctx context.Context, task Task) (bool, error) {
	t := task.Stamp
	ok := true
	for i := range c.q {
		q := &c.q[i]
		for len(q.fifo) > 0 && q.fifo[0].Nop && vclock.CompareStamps(q.fifo[0].Stamp, t) != vclock.After {
			c.consume(q)
		}
		if len(q.fifo) > 0 {
			h := q.fifo[0]
			if h.Nop {
				continue // after t by vector clock
			}
			if vclock.CompareStamps(h.Stamp, t) == vclock.Equal {
				ok = false // a read at a transaction's own stamp sees it
				continue
			}
			before, err := c.res.Prefer(ctx, h.Stamp, t) // writes before programs
			if err != nil {
				return false, err
			}
			if before {
				ok = false
			}
			continue
		}
		if q.noted(t) {
			c.CompleteSkips++
			continue // nothing still to come from this gatekeeper precedes t
		}
		if after, err := c.lastAfter(ctx, q, t); err != nil {
			return false, err
		} else if !after {
			c.ask(uint32(i), t.Clock)
			ok = false
		}
	}
	return ok, nil
}

// lastAfter reports whether the last entry taken from q is after t, so that
// everything q will still deliver is after t.
func (c *Core) lastAfter(ctx context.Context, q *queue, t vclock.Stamp) (bool, error) {
	if q.last.IsZero() {
		return false, nil
	}
	switch vclock.CompareStamps(q.last, t) {
	case vclock.After:
		return true, nil
	case vclock.Concurrent:
		if q.lastNop {
			return false, nil
		}
		before, err := c.res.Prefer(ctx, q.last, t)
		return !before, err
	}
	return false, nil
}

// ask requests a NOP from gatekeeper gk after clock. While the request is
// not yet taken by NopRequests, later asks merge into it, so that one NOP
// covers every task waiting in this Step, not only the first.
func (c *Core) ask(gk uint32, clock vclock.Clock) {
	q := &c.q[gk]
	if q.asked {
		return
	}
	q.asked = true
	c.reqs = append(c.reqs, NopRequest{GK: gk, Clock: clock.Clone()})
}

func (c *Core) consume(q *queue) {
	e := q.fifo[0]
	q.fifo[0] = gatekeeper.Entry{}
	q.fifo = q.fifo[1:]
	q.last, q.lastNop = e.Stamp, e.Nop
	if e.Nop {
		c.Consumed++
	}
}

// executeWrite executes the earliest write head if every queue has a head and
// no head precedes it; NOP heads that do not follow it are consumed. When
// consuming exposes a write the search did not see, the search runs again.
func (c *Core) executeWrite(ctx context.Context) (bool, error) {
	for {
		min, err := c.minWrite(ctx)
		if err != nil || min < 0 {
			return false, err
		}
		w := c.q[min].fifo[0]
		exposed, ready := false, true
		for i := range c.q {
			if i == min {
				continue
			}
			q := &c.q[i]
			for len(q.fifo) > 0 && q.fifo[0].Nop && vclock.CompareStamps(q.fifo[0].Stamp, w.Stamp) != vclock.After {
				c.consume(q)
				if len(q.fifo) > 0 && !q.fifo[0].Nop {
					exposed = true
				}
			}
			if len(q.fifo) > 0 {
				continue // a later NOP, or a write the search put after w
			}
			if q.noted(w.Stamp) {
				continue
			}
			if after, err := c.lastAfter(ctx, q, w.Stamp); err != nil {
				return false, err
			} else if !after {
				c.ask(uint32(i), w.Stamp.Clock)
				ready = false
			}
		}
		if exposed {
			continue
		}
		if !ready {
			return false, nil
		}
		if err := c.Apply(w); err != nil {
			return false, fmt.Errorf("shard %d: applying %s: %w", c.cfg.ID, w.Stamp, err)
		}
		c.consume(&c.q[min])
		c.Executed++
		return true, nil
	}
}

// minWrite returns the queue whose write head is earliest (-1: no write
// heads). Concurrent heads go to Kronos: the lower gatekeeper's write first
// unless Kronos already holds the opposite order.
func (c *Core) minWrite(ctx context.Context) (int, error) {
	min := -1
	for i := range c.q {
		if len(c.q[i].fifo) == 0 || c.q[i].fifo[0].Nop {
			continue
		}
		if min < 0 {
			min = i
			continue
		}
		before, err := c.res.Prefer(ctx, c.q[min].fifo[0].Stamp, c.q[i].fifo[0].Stamp)
		if err != nil {
			return -1, err
		}
		if !before {
			min = i
		}
	}
	return min, nil
}

// String summarizes the queues and waiting tasks, for diagnostics.
func (c *Core) String() string {
	s := fmt.Sprintf("shard %d: %d tasks waiting, %d executed, %d NOPs consumed", c.cfg.ID, len(c.tasks), c.Executed, c.Consumed)
	if len(c.tasks) > 0 {
		s += fmt.Sprintf(", first task at %s", c.tasks[0].Stamp)
	}
	for i, q := range c.q {
		s += fmt.Sprintf("\n  gk%d: next seq %d, %d queued, %d held, last %s (nop %v), asked %v", i, q.next, len(q.fifo), len(q.held), q.last, q.lastNop, q.asked)
		if len(q.fifo) > 0 {
			s += fmt.Sprintf(", head %s (nop %v)", q.fifo[0].Stamp, q.fifo[0].Nop)
		}
	}
	return s
}
