package faultproxy

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"
)

// SwizzlePlan is the order in which a swizzle clogs connections and then
// unclogs them (FoundationDB's swizzle-clog).
type SwizzlePlan struct {
	// Clog lists the connections to clog, one per step, in order.
	Clog []ConnID
	// Unclog lists the same connections in the order they are unclogged,
	// one per step, after the last is clogged.
	Unclog []ConnID
}

// PlanSwizzle picks a random non-empty subset of ids (all of them at most)
// and a random clog order and an independent random unclog order. The plan
// depends only on the set of ids and rng's state, never on the order of ids,
// so a seed replays it. No ids gives an empty plan.
func PlanSwizzle(ids []ConnID, rng *rand.Rand) SwizzlePlan {
	if len(ids) == 0 {
		return SwizzlePlan{}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	k := 1 + rng.IntN(len(sorted))
	clog := make([]ConnID, k)
	for i, j := range rng.Perm(len(sorted))[:k] {
		clog[i] = sorted[j]
	}
	unclog := slices.Clone(clog)
	rng.Shuffle(len(unclog), func(i, j int) { unclog[i], unclog[j] = unclog[j], unclog[i] })
	return SwizzlePlan{Clog: clog, Unclog: unclog}
}

// Swizzle carries out one SwizzlePlan on a proxy, a step at a time. A
// clogged connection holds its bytes in both directions, as Partition(Both)
// does for one connection; unclogging delivers them in order. Heal unclogs
// every connection at once but does not end the swizzle: its later clog
// steps still apply. A Swizzle is driven by one goroutine; the proxy's
// methods stay safe to call alongside it.
type Swizzle struct {
	p    *Proxy
	plan SwizzlePlan
	next int // steps taken: clogs first, then unclogs
}

// NewSwizzle plans a swizzle over the connections open now, drawing from
// rng. Nothing is clogged until Step or Run.
func (p *Proxy) NewSwizzle(rng *rand.Rand) *Swizzle {
	return &Swizzle{p: p, plan: PlanSwizzle(p.openIDs(), rng)}
}

// Plan returns the swizzle's plan.
func (s *Swizzle) Plan() SwizzlePlan {
	return SwizzlePlan{Clog: slices.Clone(s.plan.Clog), Unclog: slices.Clone(s.plan.Unclog)}
}

// Done reports whether every step has been taken.
func (s *Swizzle) Done() bool { return s.next >= 2*len(s.plan.Clog) }

// Step takes the next step: it clogs or unclogs one connection (a no-op if
// that connection has closed). It reports whether steps remain.
func (s *Swizzle) Step() bool {
	if s.Done() {
		return false
	}
	k := len(s.plan.Clog)
	if s.next < k {
		s.p.setClogged(s.plan.Clog[s.next], true)
	} else {
		s.p.setClogged(s.plan.Unclog[s.next-k], false)
	}
	s.next++
	return !s.Done()
}

// Stop unclogs every connection the swizzle has clogged and not yet
// unclogged, and ends it.
func (s *Swizzle) Stop() {
	k := len(s.plan.Clog)
	clogged := s.plan.Clog[:min(s.next, k)]
	for _, id := range s.plan.Unclog[max(s.next-k, 0):] {
		if slices.Contains(clogged, id) {
			s.p.setClogged(id, false)
		}
	}
	s.next = 2 * k
}

// Run takes every remaining step, one each interval (the first at once),
// and returns nil when done. If ctx ends or the proxy closes first, it
// stops the swizzle (unclogging what it clogged) and returns ctx.Err() or
// ErrClosed.
func (s *Swizzle) Run(ctx context.Context, interval time.Duration) error {
	for !s.Done() {
		if s.next > 0 {
			t := time.NewTimer(interval)
			select {
			case <-t.C:
			case <-ctx.Done():
			case <-s.p.ctx.Done():
			}
			t.Stop()
		}
		if err := ctx.Err(); err != nil {
			s.Stop()
			return err
		}
		if s.p.ctx.Err() != nil {
			s.Stop()
			return ErrClosed
		}
		s.Step()
	}
	return nil
}
