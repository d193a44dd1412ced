package monitor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// genSpec draws 1–3 predicates over keys a, b with values 0, 1: conjunctive
// (one clause), semilinear (1–3 clauses over any servers) and linear (every
// combination of 1–2 parts on each of 1–3 servers).
func genSpec(rng *rand.Rand, servers int) *Spec {
	for {
		s := &Spec{Servers: servers}
		for p := range 1 + rng.IntN(3) {
			pr := Predicate{Name: fmt.Sprintf("p%d", p), Type: Type(1 + rng.IntN(3))}
			switch pr.Type {
			case Conjunctive:
				pr.Clauses = []Clause{genClause(rng, servers)}
			case Semilinear:
				for range 1 + rng.IntN(3) {
					pr.Clauses = append(pr.Clauses, genClause(rng, servers))
				}
			case Linear:
				pr.Clauses = genProduct(rng, servers)
			}
			s.Predicates = append(s.Predicates, pr)
		}
		if s.Validate() == nil {
			return s
		}
	}
}

func genLiteral(rng *rand.Rand, server int) Literal {
	l := Literal{Server: server, Key: []string{"a", "b"}[rng.IntN(2)], Value: []string{"0", "1"}[rng.IntN(2)]}
	if rng.IntN(6) == 0 {
		l.Op = Ne
	}
	return l
}

func genClause(rng *rand.Rand, servers int) Clause {
	var c Clause
	for range 1 + rng.IntN(min(4, servers+1)) {
		c.Literals = append(c.Literals, genLiteral(rng, rng.IntN(servers)))
	}
	return c
}

// genProduct writes ∧_server ∨_part out in DNF.
func genProduct(rng *rand.Rand, servers int) []Clause {
	srvs := rng.Perm(servers)[:1+rng.IntN(min(3, servers))]
	clauses := []Clause{{}}
	for _, srv := range srvs {
		var parts [][]Literal
		for range 1 + rng.IntN(2) {
			part := []Literal{genLiteral(rng, srv)}
			if rng.IntN(3) == 0 {
				part = append(part, genLiteral(rng, srv))
			}
			parts = append(parts, part)
		}
		var next []Clause
		for _, c := range clauses {
			for _, part := range parts {
				next = append(next, Clause{Literals: append(slices.Clone(c.Literals), part...)})
			}
		}
		clauses = next
	}
	return clauses
}

// group is what one frontier detects: a whole conjunctive or linear predicate
// (clause −1, all its servers), or one clause of a semilinear one.
type group struct {
	pred    int
	clause  int
	servers []int
	states  [][]oState
}

func groupsOf(spec *Spec, run *simRun) []group {
	var gs []group
	for p, pr := range spec.Predicates {
		mk := func(clause int, servers []int) group {
			g := group{pred: p, clause: clause, servers: servers}
			for _, srv := range servers {
				g.states = append(g.states, oracleStates(run, pr, srv))
			}
			return g
		}
		if pr.Type != Semilinear {
			var all []int
			for _, c := range pr.Clauses {
				all = append(all, clauseServers(c)...)
			}
			slices.Sort(all)
			gs = append(gs, mk(-1, slices.Compact(all)))
			continue
		}
		for k, c := range pr.Clauses {
			gs = append(gs, mk(k, clauseServers(c)))
		}
	}
	return gs
}

// holds reports whether g's clause (any clause, for clause −1) holds on the
// picked states.
func (g group) holds(spec *Spec, pick []int) bool {
	pr := spec.Predicates[g.pred]
	for k, c := range pr.Clauses {
		if g.clause >= 0 && k != g.clause {
			continue
		}
		ok := true
		for x, srv := range g.servers {
			if !holdsOn(c, srv, g.states[x][pick[x]].values) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// mine selects the violations a group's frontier reported.
func (g group) mine(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if v.Predicate == g.pred && (g.clause < 0 || v.Clause == g.clause) {
			out = append(out, v)
		}
	}
	return out
}

// TestMonitorMatchesOracle is the brute-force oracle for §V's monitors
// (Garg–Waldecker for conjunctive, Chase–Garg forbidden advancement for
// linear, per-clause semi-forbidden advancement for semilinear), on small
// random executions with random predicates, ε and clock skew. Per
// group (a conjunctive or linear predicate, or a clause of a semilinear one):
//
//	exact: the monitor reports a violation iff some tuple of the server's
//	  states (one per server the group names) satisfies the clause and is
//	  pairwise unordered under the paper's interval rule; the satisfying
//	  tuples are closed under componentwise min (checked), and the first
//	  violation reported is exactly that least tuple; every violation
//	  reported is such a tuple.
//	never miss (skew ≤ ε): if some satisfying tuple's states overlapped in
//	  real time, the monitor reports.
//	never miss (lattice): if some consistent cut (enumerating every cut of
//	  the execution, ground-truth vector clocks) satisfies the clause with
//	  its states pairwise less than ε apart in physical time, the monitor
//	  reports. With ε = ∞ that is Possibly(¬P) itself.
//	conservative only by ε: no reported cut contains two states ordered by
//	  a message chain and ε apart; with ε = 0 and no skew, every report is
//	  backed by a consistent cut (no phantoms).
//
// A failing seed is printed; -monitor.seed=N replays it.
func TestMonitorMatchesOracle(t *testing.T) {
	epsilons := []uint64{0, 3, 10, 40, vclock.EpsilonInfinite}
	var found, clean, overlaps int
	for _, seed := range simSeeds(1000) {
		rng := rand.New(rand.NewPCG(seed, 0x6d6f6e))
		p := simParams{
			servers: 2 + rng.IntN(3), events: 12 + rng.IntN(20), eps: epsilons[rng.IntN(len(epsilons))],
			step: 1 + rng.Uint64N(5), putPct: 40 + rng.IntN(40), keys: []string{"a", "b", "c"}, values: []string{"0", "1"},
		}
		p.skew = rng.Uint64N(min(p.eps, 8) + 1)
		if seed%5 == 0 {
			p.skew = 0
		}
		spec := genSpec(rng, p.servers)
		run, err := simulate(rng, spec, p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		cfg := DefaultConfig()
		cfg.Epsilon = p.eps
		vs, _, err := deliver(rng, cfg, spec, run)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		lat := newLattice(run)
		for _, g := range groupsOf(spec, run) {
			res, err := checkGroup(spec, run, g, g.mine(vs), lat)
			if err != nil {
				t.Fatalf("seed %d (servers=%d ε=%s skew=%d), predicate %d %s clause %d: %v\nreplay with -monitor.seed=%d",
					seed, p.servers, epsilonLabel(p.eps), p.skew, g.pred, spec.Predicates[g.pred].Type, g.clause, err, seed)
			}
			if res.found {
				found++
			} else {
				clean++
			}
			if res.overlap {
				overlaps++
			}
		}
	}
	t.Logf("groups with a violation: %d, without: %d, with a real-time overlap: %d", found, clean, overlaps)
	if *simSeed == 0 && (found < 100 || clean < 100 || overlaps < 50) {
		t.Fatalf("the random executions are too one-sided to test much (%d found, %d clean, %d overlaps)", found, clean, overlaps)
	}
}

type groupResult struct{ found, overlap bool }

func checkGroup(spec *Spec, run *simRun, g group, got []Violation, lat *lattice) (groupResult, error) {
	eps := run.p.eps
	var res groupResult
	var least []int
	tuples(g.states, func(pick []int) {
		if !g.holds(spec, pick) {
			return
		}
		if realTimeOverlap(g.states, pick) {
			res.overlap = true
		}
		if !pairwise(g.states, pick, func(a, b oState) bool { return oraclePrecedes(a, b, eps) }) {
			return
		}
		if least == nil {
			least = slices.Clone(pick)
		}
		for x := range pick {
			least[x] = min(least[x], pick[x])
		}
		res.found = true
	})
	if res.found != (len(got) > 0) {
		return res, fmt.Errorf("oracle finds a violation: %v; monitor reported %d", res.found, len(got))
	}
	if res.found {
		if !g.holds(spec, least) || !pairwise(g.states, least, func(a, b oState) bool { return oraclePrecedes(a, b, eps) }) {
			return res, fmt.Errorf("violations are not closed under meet: least tuple %v does not violate", least)
		}
		if first := seqsOf(got[0]); !slices.Equal(first, least) {
			return res, fmt.Errorf("first violation %v, least violating tuple %v", got[0].Cut, least)
		}
	}
	for _, v := range got {
		if err := checkReported(spec, g, v, eps); err != nil {
			return res, err
		}
	}
	if res.overlap && run.p.skew <= eps && !res.found {
		return res, fmt.Errorf("states overlapping in real time violate, but nothing reported (skew %d ≤ ε)", run.p.skew)
	}
	if lat != nil {
		if err := lat.check(spec, g, res.found, eps, run.p.skew); err != nil {
			return res, err
		}
	}
	return res, nil
}

func seqsOf(v Violation) []int {
	out := make([]int, len(v.Cut))
	for i, c := range v.Cut {
		out[i] = int(c.Seq)
	}
	return out
}

// checkReported checks one reported violation against ground truth.
func checkReported(spec *Spec, g group, v Violation, eps uint64) error {
	pick := seqsOf(v)
	if len(pick) != len(g.servers) {
		return fmt.Errorf("cut %v does not have one candidate per server %v", v.Cut, g.servers)
	}
	for x, c := range v.Cut {
		if c.Server != g.servers[x] || pick[x] >= len(g.states[x]) {
			return fmt.Errorf("cut %v names no state of server %d", v.Cut, g.servers[x])
		}
		st := g.states[x][pick[x]]
		if vclock.CompareHVC(c.Start, st.start.hvc) != vclock.Equal || vclock.CompareHVC(c.End, st.end.hvc) != vclock.Equal {
			return fmt.Errorf("candidate %s is not state %s", c, st)
		}
	}
	if !g.holds(spec, pick) {
		return fmt.Errorf("reported cut %v does not satisfy the clause", v.Cut)
	}
	if g.clause < 0 && !holdsClause(spec, g, v.Clause, pick) {
		return fmt.Errorf("reported clause %d does not hold on %v", v.Clause, v.Cut)
	}
	for x := range pick {
		for y := range pick {
			a, b := g.states[x][pick[x]], g.states[y][pick[y]]
			if x == y {
				continue
			}
			if oraclePrecedes(a, b, eps) {
				return fmt.Errorf("reported cut %v has %s before %s", v.Cut, a, b)
			}
			if happenedBefore(a.end, b.start) && eps != vclock.EpsilonInfinite && a.end.hvc.Own()+eps <= b.start.hvc.Own() {
				return fmt.Errorf("reported cut %v: %s → %s by messages and ε apart", v.Cut, a, b)
			}
		}
	}
	var since uint64
	for _, c := range v.Cut {
		since = max(since, c.Start.Own())
	}
	want := uint64(0)
	if eps != vclock.EpsilonInfinite && since > eps {
		want = since - eps
	}
	if v.Since != want {
		return fmt.Errorf("Since = %d, latest start %d, ε %s", v.Since, since, epsilonLabel(eps))
	}
	return nil
}

func holdsClause(spec *Spec, g group, k int, pick []int) bool {
	if k < 0 || k >= len(spec.Predicates[g.pred].Clauses) {
		return false
	}
	g.clause = k
	return g.holds(spec, pick)
}

// realTimeOverlap: the picked states share an instant of true time.
func realTimeOverlap(states [][]oState, pick []int) bool {
	lo, hi := uint64(0), ^uint64(0)
	for x := range pick {
		s := states[x][pick[x]]
		lo, hi = max(lo, s.start.true), min(hi, s.end.true)
	}
	return lo < hi
}

// lattice enumerates every consistent cut of an execution (ground truth: the
// state after event e of each server; a cut is consistent iff no state's end
// happened before another's start).
type lattice struct {
	run  *simRun
	cuts [][]int // each consistent cut, as the event index each server's state begins at
}

func newLattice(run *simRun) *lattice {
	l := &lattice{run: run}
	n := len(run.events)
	pick := make([]int, n)
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			l.cuts = append(l.cuts, slices.Clone(pick))
			return
		}
		for e := 0; e < len(run.events[i])-1; e++ { // the state after the final Flush is not watched
			pick[i] = e
			ok := true
			for j := 0; j < i && ok; j++ {
				ok = !happenedBefore(run.events[i][e+1], run.events[j][pick[j]]) &&
					!happenedBefore(run.events[j][pick[j]+1], run.events[i][e])
			}
			if ok {
				rec(i + 1)
			}
		}
	}
	rec(0)
	return l
}

// check compares the monitor's verdict for g with the consistent cuts:
// a cut satisfying g whose states are pairwise less than ε apart must have
// been reported; with ε = 0 and no skew, a report needs a satisfying cut.
func (l *lattice) check(spec *Spec, g group, reported bool, eps, skew uint64) error {
	// coarse[x][e]: index of g's state of server g.servers[x] that contains the state after event e.
	coarse := make([][]int, len(g.servers))
	for x, srv := range g.servers {
		coarse[x] = make([]int, len(l.run.events[srv]))
		for i, st := range g.states[x] {
			for e := st.start.seq; e < st.end.seq; e++ {
				coarse[x][e] = i
			}
		}
	}
	possibly := false
	pick := make([]int, len(g.servers))
	for _, cut := range l.cuts {
		for x, srv := range g.servers {
			pick[x] = coarse[x][cut[srv]]
		}
		if !g.holds(spec, pick) {
			continue
		}
		possibly = true
		near := pairwise(g.states, pick, func(a, b oState) bool {
			return eps != vclock.EpsilonInfinite && a.end.hvc.Own()+eps <= b.start.hvc.Own()
		})
		if near && !reported {
			return fmt.Errorf("consistent cut %v satisfies the clause with states within ε, but nothing reported", cut)
		}
	}
	if eps == 0 && skew == 0 && reported && !possibly {
		return fmt.Errorf("ε = 0, no skew: reported a violation no consistent cut has")
	}
	return nil
}
