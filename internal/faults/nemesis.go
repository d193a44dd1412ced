package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/launch"
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

// target is what the nemesis faults and the clients reach: one `weft serve`
// behind the fault proxy (serverTarget, below) or a cluster of processes
// (clusterTarget, cluster.go). Its methods are called from the nemesis's
// goroutine only, except describe, which the progress line calls.
type target interface {
	// addrs are the addresses the clients spread over and fail over between.
	addrs() *addrBook
	// ensure brings back, before the next fault, what exited by itself.
	ensure(j *journal) error
	// inject applies f, holds it (cut short when ctx ends) and undoes it.
	inject(ctx context.Context, f Fault, j *journal) error
	// healAll undoes every fault and waits until the target serves.
	healAll(j *journal) error
	// finalFault is the fault before the final reads (the server's final
	// kill -9); false when the target has none.
	finalFault(j *journal) (bool, error)
	// stop ends every process of the target (a clean exit where it can);
	// it may be called more than once.
	stop() error
	// describe is the target's state for a progress line.
	describe() string
	// starts counts the process starts, the first ones included.
	starts() int
	// unexpectedExits lists the exits nobody asked for.
	unexpectedExits() []string
	// recoveries lists the kills measured (cluster only).
	recoveries() []Recovery
}

// nemesis injects the planned faults into a target and journals them.
type nemesis struct {
	t       target
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
		if err := n.t.ensure(n.journal); err != nil {
			return err
		}
		n.counts[f.Kind]++
		n.journal.note(string(f.Kind), f.String())
		if err := n.t.inject(ctx, f, n.journal); err != nil {
			return err
		}
	}
	return nil
}

// healAll undoes every fault.
func (n *nemesis) healAll() error { return n.t.healAll(n.journal) }

// serverTarget is one `weft serve` process behind the fault proxy.
type serverTarget struct {
	srv     *launch.Child
	proxy   *faultproxy.Proxy
	book    *addrBook
	dataDir string
}

func (s *serverTarget) addrs() *addrBook { return s.book }

// ensure restarts a server that exited by itself (Report lists the exit).
func (s *serverTarget) ensure(j *journal) error {
	if !s.srv.Running() {
		return s.restart(j)
	}
	return nil
}

func (s *serverTarget) inject(ctx context.Context, f Fault, j *journal) error {
	switch f.Kind {
	case FaultKill:
		if err := s.srv.Kill(); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		return s.restart(j)
	case FaultPause:
		if err := s.srv.Pause(); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		j.note("resume", "")
		return s.srv.Resume()
	case FaultPartition:
		s.proxy.Partition(f.Dir)
		sleep(ctx, f.Hold)
		if f.Reset {
			j.note("reset", fmt.Sprintf("%d connections", s.proxy.ResetAll()))
		}
		j.note("heal", "")
		s.proxy.Heal()
	case FaultClog:
		s.proxy.Clog(f.Hold)
		sleep(ctx, f.Hold)
		j.note("heal", "")
		s.proxy.Heal()
	default:
		return fmt.Errorf("faults: fault kind %q needs a cluster target", f.Kind)
	}
	return nil
}

// restart starts the server again on its data directory.
func (s *serverTarget) restart(j *journal) error {
	start := time.Now()
	if err := s.srv.Start(); err != nil {
		return fmt.Errorf("faults: restart: %w", err)
	}
	j.note("start", fmt.Sprintf("ready after %v", time.Since(start).Round(time.Millisecond)))
	return nil
}

// healAll heals the proxy and resumes the server, or restarts it if it is
// down (after an unexpected exit).
func (s *serverTarget) healAll(j *journal) error {
	s.proxy.Heal()
	running, paused := s.srv.State()
	if paused {
		if err := s.srv.Resume(); err != nil {
			return err
		}
	}
	j.note("heal-all", "")
	if !running {
		return s.restart(j)
	}
	return nil
}

// finalFault kills the server with SIGKILL and restarts it: the final reads
// then see only what recovery kept.
func (s *serverTarget) finalFault(j *journal) (bool, error) {
	j.note("kill", "final kill -9 before the final reads")
	if err := s.srv.Kill(); err != nil {
		return true, fmt.Errorf("final kill: %w", err)
	}
	return true, s.restart(j)
}

func (s *serverTarget) stop() error {
	err := s.srv.Stop(stopTimeout)
	s.proxy.Close()
	return err
}

func (s *serverTarget) describe() string {
	running, paused := s.srv.State()
	switch {
	case paused:
		return "server=paused"
	case running:
		return "server=up"
	}
	return "server=down"
}

func (s *serverTarget) starts() int               { return s.srv.Starts() }
func (s *serverTarget) unexpectedExits() []string { return s.srv.UnexpectedExits() }
func (s *serverTarget) recoveries() []Recovery    { return nil }

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
