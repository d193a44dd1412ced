package monitor

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/weft-db/weft/internal/vclock"
)

var simSeed = flag.Uint64("monitor.seed", 0, "replay one monitor simulation seed (0: run the fixed seed range)")

// simSeeds is the seed range a property test runs, or the one seed to replay.
func simSeeds(n int) []uint64 {
	if *simSeed != 0 {
		return []uint64{*simSeed}
	}
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

// simEvent is one event of a simulated execution, with ground truth: the
// simulator's true time and a Fidge–Mattern vector clock.
type simEvent struct {
	server int
	seq    int    // position among the server's events; 0 is the pseudo-event "start"
	true   uint64 // simulator time
	hvc    vclock.HVC
	vc     []uint64
	key    string // a PUT's key and value ("" for other events)
	value  string
	flush  bool
}

// happenedBefore is ground truth: a → b iff b's vector clock knows a.
func happenedBefore(a, b *simEvent) bool {
	if a == b || a.seq == 0 {
		return a != b && a.server == b.server // "start" precedes only its own server's events
	}
	return a.vc[a.server] <= b.vc[a.server]
}

type simParams struct {
	servers int
	events  int
	eps     uint64
	skew    uint64 // clock offsets drawn from [0, skew]
	step    uint64 // true time advances 1..step per event
	putPct  int    // percent of events that are PUTs
	keys    []string
	values  []string
	// value, if set, draws a PUT's value instead of a uniform pick from values.
	value func(rng *rand.Rand, server int, key string) string
}

// simRun is a finished execution: every server's events (starting with its
// "start" pseudo-event and ending with a Flush), and the candidates each
// server's detector produced, in order.
type simRun struct {
	p      simParams
	events [][]*simEvent
	out    [][]Outbound
}

type simMsg struct {
	to  int
	hvc vclock.HVC
	vc  []uint64
}

// simulate runs servers that PUT, send and receive at random, each with an
// HVC clock (physical time = true time + offset) and a detector for spec.
// It ends with a Flush on every server.
func simulate(rng *rand.Rand, spec *Spec, p simParams) (*simRun, error) {
	now := uint64(100)
	run := &simRun{p: p, events: make([][]*simEvent, p.servers), out: make([][]Outbound, p.servers)}
	clocks := make([]*vclock.HybridClock, p.servers)
	dets := make([]*Detector, p.servers)
	vcs := make([][]uint64, p.servers)
	for i := range p.servers {
		off := rng.Uint64N(p.skew + 1)
		c, err := vclock.NewHybridClock(p.servers, i, p.eps, func() uint64 { return now + off })
		if err != nil {
			return nil, err
		}
		clocks[i], vcs[i] = c, make([]uint64, p.servers)
		if dets[i], err = NewDetector(spec, i, c.Current()); err != nil {
			return nil, err
		}
		run.events[i] = []*simEvent{{server: i, hvc: c.Current(), vc: make([]uint64, p.servers)}}
	}
	var inflight []simMsg
	record := func(i int, h vclock.HVC) *simEvent {
		e := &simEvent{server: i, seq: len(run.events[i]), true: now, hvc: h, vc: slices.Clone(vcs[i])}
		run.events[i] = append(run.events[i], e)
		return e
	}
	for range p.events {
		now += 1 + rng.Uint64N(p.step)
		i := rng.IntN(p.servers)
		if k := inbox(inflight, i, rng); k >= 0 && rng.IntN(3) == 0 {
			m := inflight[k]
			inflight = slices.Delete(inflight, k, k+1)
			for j := range vcs[i] {
				vcs[i][j] = max(vcs[i][j], m.vc[j])
			}
			vcs[i][i]++
			h, err := clocks[i].Receive(m.hvc)
			if err != nil {
				return nil, err
			}
			record(i, h)
			continue
		}
		vcs[i][i]++
		e := record(i, clocks[i].Tick())
		if rng.IntN(100) < p.putPct {
			e.key = p.keys[rng.IntN(len(p.keys))]
			if p.value != nil {
				e.value = p.value(rng, i, e.key)
			} else {
				e.value = p.values[rng.IntN(len(p.values))]
			}
			out, err := dets[i].Put(e.hvc, e.key, e.value)
			if err != nil {
				return nil, err
			}
			run.out[i] = append(run.out[i], out...)
		} else if p.servers > 1 {
			to := (i + 1 + rng.IntN(p.servers-1)) % p.servers
			inflight = append(inflight, simMsg{to: to, hvc: e.hvc, vc: slices.Clone(vcs[i])})
		}
	}
	for i := range p.servers {
		now++
		vcs[i][i]++
		e := record(i, clocks[i].Tick())
		e.flush = true
		out, err := dets[i].Flush(e.hvc)
		if err != nil {
			return nil, err
		}
		run.out[i] = append(run.out[i], out...)
	}
	return run, nil
}

func inbox(msgs []simMsg, i int, rng *rand.Rand) int {
	var idx []int
	for k, m := range msgs {
		if m.to == i {
			idx = append(idx, k)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	return idx[rng.IntN(len(idx))]
}

// deliver feeds every candidate to a fresh Set, interleaving servers at
// random but keeping each server's order, and returns all violations.
func deliver(rng *rand.Rand, cfg Config, spec *Spec, run *simRun) ([]Violation, *Set, error) {
	set, err := NewSet(cfg, spec)
	if err != nil {
		return nil, nil, err
	}
	next := make([]int, len(run.out))
	var all []Violation
	for {
		var live []int
		for i := range run.out {
			if next[i] < len(run.out[i]) {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return all, set, nil
		}
		i := live[rng.IntN(len(live))]
		if err := set.Step(run.out[i][next[i]]); err != nil {
			return nil, nil, err
		}
		next[i]++
		all = append(all, slices.Clone(set.Ready())...)
		set.Advance()
	}
}

// oState is a ground-truth local state of one server for one predicate: the
// span between two relevant PUTs (or start, or the final Flush).
type oState struct {
	seq        int
	values     map[string]string
	start, end *simEvent
}

// oracleStates rebuilds, from the event log alone, the states of server i
// that predicate p distinguishes: a new state begins at every PUT of a key p
// names on i, and at the Flush.
func oracleStates(run *simRun, p Predicate, i int) []oState {
	named := map[string]bool{}
	for _, c := range p.Clauses {
		for _, l := range c.Literals {
			if l.Server == i {
				named[l.Key] = true
			}
		}
	}
	evs := run.events[i]
	cur := oState{values: map[string]string{}, start: evs[0]}
	var out []oState
	for _, e := range evs[1:] {
		if !e.flush && !named[e.key] {
			continue
		}
		cur.end = e
		out = append(out, cur)
		vals := map[string]string{}
		for k, v := range cur.values {
			vals[k] = v
		}
		if !e.flush {
			vals[e.key] = e.value
		}
		cur = oState{seq: cur.seq + 1, values: vals, start: e}
	}
	return out
}

// holdsOn evaluates the literals of clause c on server i against values.
func holdsOn(c Clause, i int, values map[string]string) bool {
	for _, l := range c.Literals {
		if l.Server == i && (values[l.Key] == l.Value) != (l.Op == Eq) {
			return false
		}
	}
	return true
}

// oraclePrecedes is the paper's interval rule (Fig. 6), written out from the
// text rather than shared with the monitor.
func oraclePrecedes(a, b oState, eps uint64) bool {
	if eps == vclock.EpsilonInfinite {
		return false
	}
	ae, bs := a.end.hvc, b.start.hvc
	return vclock.CompareHVC(ae, bs) == vclock.Before && ae.Own()+eps <= bs.Own()
}

// tuples calls fn with every combination of one state per server listed.
func tuples(states [][]oState, fn func(pick []int)) {
	pick := make([]int, len(states))
	for {
		fn(pick)
		i := len(pick) - 1
		for ; i >= 0; i-- {
			pick[i]++
			if pick[i] < len(states[i]) {
				break
			}
			pick[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

func pairwise(states [][]oState, pick []int, ordered func(a, b oState) bool) bool {
	for x := range pick {
		for y := range pick {
			if x != y && ordered(states[x][pick[x]], states[y][pick[y]]) {
				return false
			}
		}
	}
	return true
}

func (s oState) String() string {
	return fmt.Sprintf("s%d#%d[%d,%d)", s.start.server, s.seq, s.start.hvc.Own(), s.end.hvc.Own())
}
