package groupcommit

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/weft-db/weft/internal/store"
)

// Counters are the counts behind store.Stats that every store keeps.
type Counters struct {
	Begins, Commits, ReadOnly, Conflicts, TooOld, HookErrors atomic.Uint64
	Overloaded, Canceled, Groups, GroupedTxns, GroupSizeMax  atomic.Uint64
	Syncs, Applies                                           atomic.Uint64
}

// Count records the outcome of a Commit.
func (c *Counters) Count(err error, readOnly bool) {
	switch {
	case err == nil:
		c.Commits.Add(1)
		if readOnly {
			c.ReadOnly.Add(1)
		}
	case errors.Is(err, store.ErrTooOld):
		c.TooOld.Add(1)
		c.Conflicts.Add(1)
	case errors.Is(err, store.ErrConflict):
		c.Conflicts.Add(1)
	case errors.Is(err, store.ErrOverloaded):
		c.Overloaded.Add(1)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		c.Canceled.Add(1)
	}
}

// Grouped records a commit group of n members. Only the committer calls it.
func (c *Counters) Grouped(n int) {
	c.Groups.Add(1)
	c.GroupedTxns.Add(uint64(n))
	if n := uint64(n); n > c.GroupSizeMax.Load() {
		c.GroupSizeMax.Store(n) // only the committer writes it
	}
}

// Applied records a batch of writes applied, and whether it was synced.
func (c *Counters) Applied(synced bool) {
	c.Applies.Add(1)
	if synced {
		c.Syncs.Add(1)
	}
}

// Stats returns the counts; the history fields are the store's to fill.
func (c *Counters) Stats() store.Stats {
	return store.Stats{
		Begins:       c.Begins.Load(),
		Commits:      c.Commits.Load(),
		ReadOnly:     c.ReadOnly.Load(),
		Conflicts:    c.Conflicts.Load(),
		TooOld:       c.TooOld.Load(),
		HookErrors:   c.HookErrors.Load(),
		Overloaded:   c.Overloaded.Load(),
		Canceled:     c.Canceled.Load(),
		Groups:       c.Groups.Load(),
		GroupedTxns:  c.GroupedTxns.Load(),
		GroupSizeMax: c.GroupSizeMax.Load(),
		Syncs:        c.Syncs.Load(),
		Applies:      c.Applies.Load(),
	}
}
