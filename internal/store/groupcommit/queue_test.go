package groupcommit

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

type member struct {
	Request
	bytes int
}

func (m *member) Bytes() int { return m.bytes }

func waitLen(q *Queue[*member], n int) {
	for q.Len() < n {
		runtime.Gosched()
	}
}

// A full queue answers ErrOverloaded, a refusing ready its error, a closed
// gate ErrClosed.
func TestSubmitRefuses(t *testing.T) {
	var g Gate
	q := NewQueue[*member](0)
	if err := q.Submit(context.Background(), &g, &member{}, nil); !errors.Is(err, store.ErrOverloaded) {
		t.Fatalf("full queue: %v", err)
	}
	refused := errors.New("failed store")
	if err := q.Submit(context.Background(), &g, &member{}, func() error { return refused }); err != refused {
		t.Fatalf("ready refusing: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := q.Submit(context.Background(), &g, &member{}, nil); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("closed gate: %v", err)
	}
}

// A Commit whose ctx ends while it waits is never taken; the others are
// collected within the group bounds, and what is left is drained with
// ErrClosed. A hook panic is re-raised on the Commit's goroutine.
func TestCollectTakesWhatWaits(t *testing.T) {
	var g Gate
	q := NewQueue[*member](8)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 5)
	go func() { errs <- q.Submit(ctx, &g, &member{bytes: 1}, nil) }()
	waitLen(q, 1)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled while queued: %v", err)
	}
	for range 4 {
		go func() { errs <- q.Submit(context.Background(), &g, &member{bytes: 1}, nil) }()
	}
	waitLen(q, 5)
	group := q.Collect(nil, <-q.C(), 2, 100)
	if len(group) != 2 {
		t.Fatalf("group of %d, want 2 (the canceled one dropped, then the member bound)", len(group))
	}
	group = q.Collect(group, <-q.C(), 100, 1)
	if len(group) != 3 {
		t.Fatalf("group of %d, want 3 (the bytes bound)", len(group))
	}
	q.Drain()
	for _, m := range group {
		m.Answer(nil)
	}
	closed := 0
	for range 4 {
		switch err := <-errs; {
		case errors.Is(err, store.ErrClosed):
			closed++
		case err != nil:
			t.Fatalf("member: %v", err)
		}
	}
	if closed != 1 {
		t.Fatalf("%d drained, want 1", closed)
	}

	m := &member{}
	go func() {
		defer func() { errs <- errors.New(recover().(string)) }()
		_ = q.Submit(context.Background(), &g, m, nil)
	}()
	waitLen(q, 1)
	if r := <-q.C(); r.Take() {
		r.Panic = "hook panicked"
		r.Answer(errors.New("failed"))
	}
	if err := <-errs; err.Error() != "hook panicked" {
		t.Fatalf("re-raised %v", err)
	}
}

// Counters sort a Commit's outcome.
func TestCount(t *testing.T) {
	var c Counters
	c.Count(nil, true)
	c.Count(nil, false)
	c.Count(store.ErrTooOld, false)
	c.Count(store.ErrConflict, false)
	c.Count(store.ErrOverloaded, false)
	c.Count(context.Canceled, false)
	c.Grouped(3)
	c.Grouped(2)
	c.Applied(true)
	c.Applied(false)
	want := store.Stats{Commits: 2, ReadOnly: 1, Conflicts: 2, TooOld: 1, Overloaded: 1, Canceled: 1,
		Groups: 2, GroupedTxns: 5, GroupSizeMax: 3, Syncs: 1, Applies: 2}
	if got := c.Stats(); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
}
