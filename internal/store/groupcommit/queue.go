package groupcommit

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/weft-db/weft/internal/store"
)

// Request states: a waiting Commit and the committer race to move a request
// out of queued; whoever wins decides whether it is written.
const (
	queued int32 = iota
	taken
	canceled
)

// Request is a Commit's place in the queue. A store's request embeds it,
// next to the Txn and its hook.
type Request struct {
	state atomic.Int32
	done  chan struct{} // closed once Err (or Panic) is set
	Err   error
	Panic any // a hook panic, re-raised on the Commit's goroutine
}

func (r *Request) request() *Request { return r }

// Take moves a queued request to the committer: false if its Commit gave up
// first (its ctx ended), and then nothing of it may be written.
func (r *Request) Take() bool { return r.state.CompareAndSwap(queued, taken) }

// Wake hands the outcome set in Err and Panic to the waiting Commit. Only
// the goroutine that took r calls it, once.
func (r *Request) Wake() { close(r.done) }

// Answer sets Err and wakes the Commit.
func (r *Request) Answer(err error) {
	r.Err = err
	r.Wake()
}

// Member is what the queue holds: a store's request (embedding Request).
type Member interface {
	request() *Request
	// Bytes is the size of the writes the member brings to a group.
	Bytes() int
}

// Queue is the bounded queue of Commits waiting for the committer.
type Queue[M Member] struct{ ch chan M }

// NewQueue returns a queue of at most n waiting Commits.
func NewQueue[M Member](n int) *Queue[M] { return &Queue[M]{ch: make(chan M, n)} }

// C is what the committer receives the first member of a group from.
func (q *Queue[M]) C() <-chan M { return q.ch }

// Len is the number of members waiting.
func (q *Queue[M]) Len() int { return len(q.ch) }

// Submit queues m and waits for its outcome. The store's gate is held while
// m is offered; ready, if not nil, runs inside it first (a store that has
// failed refuses there). A full queue answers store.ErrOverloaded. If ctx
// ends while m still waits in the queue, Submit returns ctx.Err() and m is
// never written; once taken, the commit completes either way. A hook panic
// is re-raised here.
func (q *Queue[M]) Submit(ctx context.Context, g *Gate, m M, ready func() error) error {
	r := m.request()
	r.done = make(chan struct{})
	if err := g.Enter(); err != nil {
		return err
	}
	if ready != nil {
		if err := ready(); err != nil {
			g.Exit()
			return err
		}
	}
	select {
	case q.ch <- m:
	default:
		g.Exit()
		return fmt.Errorf("%w: %d commits queued", store.ErrOverloaded, cap(q.ch))
	}
	g.Exit()
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, canceled) {
			return ctx.Err()
		}
		<-r.done // taken: the commit completes either way
	}
	if r.Panic != nil {
		panic(r.Panic)
	}
	return r.Err
}

// Collect appends first, and whatever else is already waiting, to group
// (taking each), up to groupMax members or bytesMax bytes of writes; members
// whose Commit gave up are dropped.
func (q *Queue[M]) Collect(group []M, first M, groupMax, bytesMax int) []M {
	bytes := 0
	m := first
	for {
		if m.request().Take() {
			group = append(group, m)
			bytes += m.Bytes()
		}
		if len(group) >= groupMax || bytes >= bytesMax {
			return group
		}
		select {
		case m = <-q.ch:
		default:
			return group
		}
	}
}

// Drain fails every queued Commit with store.ErrClosed; the store's Close
// has stopped new ones.
func (q *Queue[M]) Drain() {
	for {
		select {
		case m := <-q.ch:
			if r := m.request(); r.Take() {
				r.Answer(store.ErrClosed)
			}
		default:
			return
		}
	}
}
