package monitor

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

func hvc(self uint32, eps uint64, entries ...uint64) vclock.HVC {
	return vclock.HVC{Self: self, Epsilon: eps, Entries: entries}
}

// §V, Fig. 6: how two candidates' HVC intervals are ordered.
func TestPrecedesFigure6(t *testing.T) {
	const eps = 10
	c1 := Candidate{Server: 0, Start: hvc(0, eps, 100, 90), End: hvc(0, eps, 130, 120)}
	for _, tc := range []struct {
		name  string
		start vclock.HVC // candidate 2's start, on server 1
		eps   uint64
		want  bool
	}{
		{"common segment: start2 < end1", hvc(1, eps, 100, 110), eps, false},
		{"end1 < start2 and ε apart: happened before", hvc(1, eps, 130, 145), eps, true},
		{"end1 < start2 exactly ε apart", hvc(1, eps, 130, 140), eps, true},
		{"end1 < start2 but within ε: uncertain, concurrent", hvc(1, eps, 130, 135), eps, false},
		{"ε apart but HVC-concurrent", hvc(1, eps, 130, 150), eps, false},
		{"ε = ∞ orders nothing", hvc(1, vclock.EpsilonInfinite, 130, 1000), vclock.EpsilonInfinite, false},
	} {
		a := c1
		a.End.Epsilon = tc.eps
		if tc.name == "ε apart but HVC-concurrent" {
			a.End = hvc(0, eps, 130, 155) // server 0 heard of a later time of server 1
		}
		b := Candidate{Server: 1, Start: tc.start, End: hvc(1, tc.eps, 200, 210)}
		if got := Precedes(&a, &b, tc.eps); got != tc.want {
			t.Errorf("%s: Precedes = %v, want %v", tc.name, got, tc.want)
		}
		if Precedes(&b, &a, tc.eps) {
			t.Errorf("%s: candidate 2 precedes candidate 1", tc.name)
		}
	}
}

func twoServerSpec(typ Type) *Spec {
	return &Spec{Servers: 2, Predicates: []Predicate{{Name: "both", Type: typ, Clauses: []Clause{{Literals: []Literal{
		{Server: 0, Key: "x", Value: "1"}, {Server: 1, Key: "x", Value: "1"}}}}}}}
}

func TestMonitorErrors(t *testing.T) {
	spec := twoServerSpec(Conjunctive)
	cfg := DefaultConfig()
	cfg.Epsilon, cfg.QueueMax, cfg.ViolationsMax = 5, 2, 1
	m, err := NewMonitor(cfg, spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	cand := func(server int, seq, start, end uint64) Candidate {
		s, e := make([]uint64, 2), make([]uint64, 2)
		s[server], e[server] = start, end
		return Candidate{Server: server, Seq: seq, Start: hvc(uint32(server), 5, s...), End: hvc(uint32(server), 5, e...), Values: []string{"1"}}
	}
	for name, tc := range map[string]struct {
		c    Candidate
		want error
	}{
		"unknown server": {Candidate{Server: 7, Values: []string{"1"}}, ErrCandidate},
		"values":         {Candidate{Server: 0, Values: []string{"1", "2"}, End: hvc(0, 5, 1, 0)}, ErrCandidate},
		"epsilon":        {Candidate{Server: 0, Values: []string{"1"}, End: hvc(0, 6, 1, 0)}, ErrCandidate},
		"backwards":      {cand(0, 0, 9, 3), ErrCandidate},
	} {
		if err := m.Step(tc.c); !errors.Is(err, tc.want) {
			t.Errorf("%s: Step = %v, want %v", name, err, tc.want)
		}
	}
	// Server 1 stays silent: server 0's queue fills at QueueMax.
	for seq := range uint64(2) {
		if err := m.Step(cand(0, seq, 10*seq, 10*seq+10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Step(cand(0, 1, 20, 30)); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("repeated seq: %v", err)
	}
	if err := m.Step(cand(0, 2, 20, 30)); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("third queued candidate: %v", err)
	}
	if st := m.Stats(); st.Candidates != 2 || st.Queued != 2 {
		t.Fatalf("after refusals: %+v", st)
	}
	// Server 1's candidate overlaps server 0's first: a violation, then
	// (restarted past the earlier start) another with its second.
	if err := m.Step(cand(1, 0, 5, 40)); err != nil {
		t.Fatal(err)
	}
	if got := len(m.Ready()); got != 2 {
		t.Fatalf("%d violations, want 2", got)
	}
	if v := m.Ready()[0]; v.Since != 0 || v.Clause != 0 || v.Name != "both" || len(v.Cut) != 2 {
		t.Fatalf("violation %+v", v)
	}
	if v := m.Ready()[1]; v.Since != 10-5 {
		t.Fatalf("second violation: Since = %d, want latest start 10 − ε 5", v.Since)
	}
	if err := m.Step(cand(1, 1, 40, 50)); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("step with ViolationsMax pending: %v", err)
	}
	m.Advance()
	if err := m.Step(cand(1, 1, 40, 50)); err != nil || len(m.Ready()) != 0 {
		t.Fatalf("after Advance: %v, %d violations", err, len(m.Ready()))
	}
	set, _ := NewSet(cfg, spec)
	if err := set.Step(Outbound{Predicate: 1}); !errors.Is(err, ErrCandidate) {
		t.Fatalf("Set.Step to predicate 1 of 1: %v", err)
	}
	if err := (Config{QueueMax: 0, ViolationsMax: 1}).Validate(); err == nil {
		t.Fatal("QueueMax 0 accepted")
	}
}

// The classes nest (conjunctive ⊂ linear ⊂ semilinear, Chase–Garg): one
// clause typed all three ways yields the same violations; a linear predicate
// and the same clauses typed semilinear agree on whether there is a
// violation, and the linear monitor's first cut is the least of the
// semilinear monitor's per-clause first cuts.
func TestPredicateTypesAgree(t *testing.T) {
	ran, found := 0, 0
	for _, seed := range simSeeds(300) {
		rng := rand.New(rand.NewPCG(seed, 0x7479))
		servers := 2 + rng.IntN(3)
		clause := genClause(rng, servers)
		product := genProduct(rng, servers)
		spec := &Spec{Servers: servers, Predicates: []Predicate{
			{Name: "c", Type: Conjunctive, Clauses: []Clause{clause}},
			{Name: "l", Type: Linear, Clauses: []Clause{clause}},
			{Name: "s", Type: Semilinear, Clauses: []Clause{clause}},
			{Name: "L", Type: Linear, Clauses: product},
			{Name: "S", Type: Semilinear, Clauses: product},
		}}
		if spec.Validate() != nil {
			continue // a contradictory clause
		}
		p := simParams{servers: servers, events: 30, eps: []uint64{0, 5, 20}[rng.IntN(3)], step: 3, putPct: 60,
			keys: []string{"a", "b"}, values: []string{"0", "1"}}
		p.skew = rng.Uint64N(p.eps + 1)
		run, err := simulate(rng, spec, p)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Epsilon = p.eps
		vs, _, err := deliver(rng, cfg, spec, run)
		if err != nil {
			t.Fatal(err)
		}
		cuts := make([][][]int, len(spec.Predicates))
		for _, v := range vs {
			cuts[v.Predicate] = append(cuts[v.Predicate], seqsOf(v))
		}
		if !slices.EqualFunc(cuts[0], cuts[1], slices.Equal) || !slices.EqualFunc(cuts[0], cuts[2], slices.Equal) {
			t.Fatalf("seed %d: one clause, three types: %v / %v / %v", seed, cuts[0], cuts[1], cuts[2])
		}
		if (len(cuts[3]) > 0) != (len(cuts[4]) > 0) {
			t.Fatalf("seed %d: linear found %d violations, semilinear %d", seed, len(cuts[3]), len(cuts[4]))
		}
		if len(cuts[3]) > 0 && !leastOfClauseFirsts(cuts[3][0], vs) {
			t.Fatalf("seed %d: linear first cut %v is not the least per-clause first cut", seed, cuts[3][0])
		}
		ran++
		if len(cuts[0]) > 0 && len(cuts[3]) > 0 {
			found++
		}
	}
	t.Logf("%d executions, %d with violations of both", ran, found)
	if *simSeed == 0 && (ran < 150 || found < 30) {
		t.Fatalf("only %d executions, %d with violations: too few to test much", ran, found)
	}
}

func leastOfClauseFirsts(first []int, vs []Violation) bool {
	seen := map[int]bool{}
	isOne := false
	for _, v := range vs {
		if v.Predicate != 4 || seen[v.Clause] {
			continue
		}
		seen[v.Clause] = true
		c := seqsOf(v)
		isOne = isOne || slices.Equal(c, first)
		for i := range c {
			if first[i] > c[i] {
				return false
			}
		}
	}
	return isOne
}

// A server whose local predicate never holds sends nothing under Fig. 5, so
// a conjunctive monitor queues the other server's candidates until
// ErrOverloaded; its periodic Flush (the detector's heartbeat) moves that
// server's mark, and candidates preceding the mark are discarded instead.
func TestHeartbeatBoundsQueues(t *testing.T) {
	for _, heartbeat := range []bool{false, true} {
		spec := twoServerSpec(Conjunctive)
		cfg := DefaultConfig()
		cfg.Epsilon, cfg.QueueMax = 5, 8
		m, err := NewMonitor(cfg, spec, 0)
		if err != nil {
			t.Fatal(err)
		}
		var now uint64
		clocks := make([]*vclock.HybridClock, 2)
		dets := make([]*Detector, 2)
		for i := range clocks {
			clocks[i], _ = vclock.NewHybridClock(2, i, cfg.Epsilon, func() uint64 { return now })
			dets[i], _ = NewDetector(spec, i, clocks[i].Current())
		}
		var overloaded error
		for round := 0; round < 100 && overloaded == nil; round++ {
			now += 10
			out, _ := dets[0].Put(clocks[0].Tick(), "x", "1")
			if heartbeat && round%3 == 0 {
				now += 10
				hb, _ := dets[1].Flush(clocks[1].Tick())
				out = append(out, hb...)
			}
			for _, o := range out {
				if err := m.Step(o.Candidate); err != nil {
					overloaded = err
					break
				}
			}
		}
		switch {
		case heartbeat && overloaded != nil:
			t.Fatalf("with heartbeats: %v (stats %+v)", overloaded, m.Stats())
		case heartbeat && m.Stats().Queued > 4:
			t.Fatalf("with heartbeats %d candidates stay queued", m.Stats().Queued)
		case !heartbeat && !errors.Is(overloaded, ErrOverloaded):
			t.Fatalf("without heartbeats: %v, want ErrOverloaded", overloaded)
		}
		if len(m.Ready()) != 0 {
			t.Fatalf("server 1 never held, yet %d violations", len(m.Ready()))
		}
	}
}
