package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/weft-db/weft/internal/faultproxy"
)

// FaultKind names a nemesis.
type FaultKind string

// The fault kinds.
const (
	// FaultKill kills the server with SIGKILL, waits Hold, and restarts it
	// on the same data directory and address.
	FaultKill FaultKind = "kill"
	// FaultPause stops the server with SIGSTOP for Hold, then SIGCONT.
	FaultPause FaultKind = "pause"
	// FaultPartition holds the client traffic in Dir at the proxy for Hold;
	// with Reset the held connections are reset before healing (a partition
	// long enough for TCP to give up).
	FaultPartition FaultKind = "partition"
	// FaultClog holds every connection both ways for Hold, then delivers.
	FaultClog FaultKind = "clog"
)

// Fault is one planned fault: Quiet of calm before it, then Hold of fault.
type Fault struct {
	Kind  FaultKind
	Quiet time.Duration
	Hold  time.Duration
	// Dir is the partitioned direction (partition only).
	Dir faultproxy.Direction
	// Reset resets the held connections before healing (partition only).
	Reset bool
}

// String describes the fault for logs.
func (f Fault) String() string {
	s := fmt.Sprintf("%s for %v", f.Kind, f.Hold.Round(time.Millisecond))
	if f.Kind == FaultPartition {
		s = fmt.Sprintf("partition %v for %v (reset %v)", f.Dir, f.Hold.Round(time.Millisecond), f.Reset)
	}
	return s
}

// PlanFaults draws the fault plan for a fault phase of length phase: a
// sequence of faults, each preceded by a quiet gap, enough to fill the phase
// even if every fault and gap were as short as t allows. Kinds are taken in
// rounds, each round a random permutation of kinds, so every kind recurs.
// The plan depends only on rng's state and the arguments.
func PlanFaults(rng *rand.Rand, kinds []FaultKind, phase time.Duration, t Timing) []Fault {
	if len(kinds) == 0 {
		return nil
	}
	n := int(phase/(t.FaultMin+t.QuietMin)) + 1
	out := make([]Fault, 0, n)
	var round []FaultKind
	for len(out) < n {
		if len(round) == 0 {
			round = append(round, kinds...)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		f := Fault{Kind: round[0], Quiet: draw(rng, t.QuietMin, t.QuietMax), Hold: draw(rng, t.FaultMin, t.FaultMax)}
		round = round[1:]
		if f.Kind == FaultPartition {
			f.Dir = []faultproxy.Direction{faultproxy.Both, faultproxy.Upstream, faultproxy.Downstream}[rng.IntN(3)]
			f.Reset = rng.IntN(2) == 0
		}
		out = append(out, f)
	}
	return out
}

// draw is uniform in [lo, hi].
func draw(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// nemesis injects faults into one server and its proxy, and journals them.
type nemesis struct {
	srv     *proc
	proxy   *faultproxy.Proxy
	journal *journal
	counts  map[FaultKind]int // faults injected, by kind
}

// run executes plan until ctx ends or the next fault would not end before
// deadline; every fault is undone before it returns.
func (n *nemesis) run(ctx context.Context, plan []Fault, deadline time.Time) error {
	for _, f := range plan {
		if !sleep(ctx, f.Quiet) || time.Until(deadline) < f.Hold {
			return nil
		}
		if running, _ := n.srv.state(); !running {
			// It exited by itself (Report lists it): bring it back first.
			if err := n.restart(); err != nil {
				return err
			}
		}
		if err := n.inject(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// inject applies f, holds it (cut short when ctx ends) and undoes it.
func (n *nemesis) inject(ctx context.Context, f Fault) error {
	n.counts[f.Kind]++
	n.journal.note(string(f.Kind), f.String())
	switch f.Kind {
	case FaultKill:
		if err := n.srv.kill(); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		return n.restart()
	case FaultPause:
		if err := n.srv.pause(); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		n.journal.note("resume", "")
		return n.srv.resume()
	case FaultPartition:
		n.proxy.Partition(f.Dir)
		sleep(ctx, f.Hold)
		if f.Reset {
			n.journal.note("reset", fmt.Sprintf("%d connections", n.proxy.ResetAll()))
		}
		n.journal.note("heal", "")
		n.proxy.Heal()
	case FaultClog:
		n.proxy.Clog(f.Hold)
		sleep(ctx, f.Hold)
		n.journal.note("heal", "")
		n.proxy.Heal()
	default:
		return fmt.Errorf("faults: unknown fault kind %q", f.Kind)
	}
	return nil
}

// restart starts the server again on its data directory.
func (n *nemesis) restart() error {
	start := time.Now()
	if err := n.srv.start(); err != nil {
		return fmt.Errorf("faults: restart: %w", err)
	}
	n.journal.note("start", fmt.Sprintf("ready after %v", time.Since(start).Round(time.Millisecond)))
	return nil
}

// healAll undoes every fault: the proxy healed, the server resumed, or
// restarted if it is down (after an unexpected exit).
func (n *nemesis) healAll() error {
	n.proxy.Heal()
	running, paused := n.srv.state()
	if paused {
		if err := n.srv.resume(); err != nil {
			return err
		}
	}
	n.journal.note("heal-all", "")
	if !running {
		return n.restart()
	}
	return nil
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
