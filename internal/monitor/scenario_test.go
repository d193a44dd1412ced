package monitor

import (
	"container/heap"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// graphParams shapes the paper's graph application (§VI-A): clients process
// their own vertices, marking each held (h<v> = 1 on the vertex's server)
// while they work on it, and no two neighbouring vertices of different
// clients may be held at once.
type graphParams struct {
	vertices, clients, servers int
	edgePct                    int
	rounds                     int // vertices each client processes
	coordinated                bool
	eps, skew                  uint64
	latMin, latMax, work       uint64
}

type graph struct {
	owner []int    // vertex → client
	edges [][2]int // u < v, owners differ
}

func genGraph(rng *rand.Rand, p graphParams) graph {
	g := graph{owner: make([]int, p.vertices)}
	for v := range g.owner {
		g.owner[v] = rng.IntN(p.clients)
	}
	for u := range p.vertices {
		for v := u + 1; v < p.vertices; v++ {
			if g.owner[u] != g.owner[v] && rng.IntN(100) < p.edgePct {
				g.edges = append(g.edges, [2]int{u, v})
			}
		}
	}
	return g
}

func heldKey(v int) string { return fmt.Sprintf("h%d", v) }

// mutexSpecs writes the local-mutual-exclusion predicate twice: as one
// semilinear predicate with a clause per edge, and as one conjunctive
// predicate per edge (the paper monitors one predicate per edge).
func mutexSpecs(g graph, servers int) (semi, conj *Spec) {
	semi = &Spec{Servers: servers, Predicates: []Predicate{{Name: "local-mutex", Type: Semilinear}}}
	conj = &Spec{Servers: servers}
	for _, e := range g.edges {
		c := Clause{ID: fmt.Sprintf("%d-%d", e[0], e[1]), Literals: []Literal{
			{Server: e[0] % servers, Key: heldKey(e[0]), Value: "1"},
			{Server: e[1] % servers, Key: heldKey(e[1]), Value: "1"},
		}}
		semi.Predicates[0].Clauses = append(semi.Predicates[0].Clauses, c)
		conj.Predicates = append(conj.Predicates, Predicate{Name: "edge-" + c.ID, Type: Conjunctive, Clauses: []Clause{c}})
	}
	return semi, conj
}

// timed is a message delivery in the graph simulation.
type timed struct {
	at, order uint64
	to        int
	msg       graphMsg
}

type graphMsg struct {
	hvc    vclock.HVC
	vc     []uint64
	key    string // a PUT request to a server, or "" for a reply or the token
	value  string
	vertex int
	client int  // who asked (for the reply)
	token  bool // the coordination token, client to client
}

type timedHeap []timed

func (h timedHeap) Len() int { return len(h) }
func (h timedHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].order < h[j].order
}
func (h timedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timedHeap) Push(x any)   { *h = append(*h, x.(timed)) }
func (h *timedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// graphSim is a discrete-event simulation of servers and clients exchanging
// PUT requests, replies and (when coordinated) a token, with HVC and
// ground-truth vector clocks on every process (servers first, then clients).
//
// A client acquires a vertex (PUT h<v>=1), works, releases it (PUT h<v>=0),
// and moves on. Uncoordinated ("eventual"), clients run at once and
// neighbouring holds overlap. Coordinated ("sequential"), only the token
// holder acquires, and it passes the token after its release is acknowledged,
// so every hold happens before the next and, with latMin·3 > ε + skew, the
// monitor can order them.
type graphSim struct {
	p      graphParams
	g      graph
	rng    *rand.Rand
	now    uint64
	order  uint64
	queue  timedHeap
	clocks []*vclock.HybridClock
	vcs    [][]uint64
	dets   [][]*Detector // per spec, per server
	runs   []*simRun     // per spec; the events are the same
	todo   [][]int       // per client: vertices still to process
}

func newGraphSim(rng *rand.Rand, p graphParams, g graph, specs ...*Spec) (*graphSim, error) {
	n := p.servers + p.clients
	s := &graphSim{p: p, g: g, rng: rng, clocks: make([]*vclock.HybridClock, n), vcs: make([][]uint64, n),
		todo: make([][]int, p.clients)}
	for i := range n {
		off := rng.Uint64N(p.skew + 1)
		c, err := vclock.NewHybridClock(n, i, p.eps, func() uint64 { return s.now + off })
		if err != nil {
			return nil, err
		}
		s.clocks[i], s.vcs[i] = c, make([]uint64, n)
	}
	for _, spec := range specs {
		run := &simRun{p: simParams{servers: p.servers, eps: p.eps, skew: p.skew},
			events: make([][]*simEvent, p.servers), out: make([][]Outbound, p.servers)}
		var dets []*Detector
		for i := range p.servers {
			d, err := NewDetector(spec, i, s.clocks[i].Current())
			if err != nil {
				return nil, err
			}
			dets = append(dets, d)
			run.events[i] = []*simEvent{{server: i, hvc: s.clocks[i].Current(), vc: make([]uint64, n)}}
		}
		s.dets, s.runs = append(s.dets, dets), append(s.runs, run)
	}
	for c := range p.clients {
		for v, o := range g.owner {
			if o == c {
				s.todo[c] = append(s.todo[c], v)
			}
		}
		rng.Shuffle(len(s.todo[c]), func(i, j int) { s.todo[c][i], s.todo[c][j] = s.todo[c][j], s.todo[c][i] })
		s.todo[c] = s.todo[c][:min(len(s.todo[c]), p.rounds)]
	}
	return s, nil
}

// event stamps a local/send event (recv nil) or a receive on process i.
func (s *graphSim) event(i int, recv *graphMsg) vclock.HVC {
	if recv != nil {
		for j := range s.vcs[i] {
			s.vcs[i][j] = max(s.vcs[i][j], recv.vc[j])
		}
	}
	s.vcs[i][i]++
	if recv == nil {
		return s.clocks[i].Tick()
	}
	h, err := s.clocks[i].Receive(recv.hvc)
	if err != nil {
		panic(err)
	}
	return h
}

// send stamps a send event on from and schedules the delivery; a release
// request leaves after the client's work time.
func (s *graphSim) send(from, to int, m graphMsg) {
	m.hvc, m.vc = s.event(from, nil), slices.Clone(s.vcs[from])
	s.order++
	lat := s.p.latMin + s.rng.Uint64N(s.p.latMax-s.p.latMin+1)
	if m.key != "" && m.value == "0" {
		lat += 1 + s.rng.Uint64N(s.p.work)
	}
	heap.Push(&s.queue, timed{at: s.now + lat, order: s.order, to: to, msg: m})
}

func (s *graphSim) put(c, v int, value string) {
	s.send(s.p.servers+c, v%s.p.servers, graphMsg{key: heldKey(v), value: value, vertex: v, client: c})
}

// onToken: the token holder processes its next vertex, or passes the token.
func (s *graphSim) onToken(c int) {
	if len(s.todo[c]) > 0 {
		s.acquire(c)
		return
	}
	s.pass(c)
}

// onReleased: a release was acknowledged; go on to the next vertex, or
// (coordinated) hand the token on first.
func (s *graphSim) onReleased(c int) {
	if s.p.coordinated {
		s.pass(c)
	} else if len(s.todo[c]) > 0 {
		s.acquire(c)
	}
}

func (s *graphSim) acquire(c int) {
	v := s.todo[c][0]
	s.todo[c] = s.todo[c][1:]
	s.put(c, v, "1")
}

func (s *graphSim) pass(c int) {
	for _, t := range s.todo {
		if len(t) > 0 {
			s.send(s.p.servers+c, s.p.servers+(c+1)%s.p.clients, graphMsg{token: true})
			return
		}
	}
}

func (s *graphSim) run() error {
	if s.p.coordinated {
		s.onToken(0)
	} else {
		for c := range s.p.clients {
			if len(s.todo[c]) > 0 {
				s.acquire(c)
			}
		}
	}
	for steps := 0; s.queue.Len() > 0; steps++ {
		if steps > 1_000_000 {
			return fmt.Errorf("graph simulation does not terminate")
		}
		t := heap.Pop(&s.queue).(timed)
		s.now = max(s.now+1, t.at)
		if err := s.deliver(t); err != nil {
			return err
		}
	}
	for i := range s.p.servers {
		s.now++
		h := s.event(i, nil)
		for k, run := range s.runs {
			run.events[i] = append(run.events[i], &simEvent{server: i, seq: len(run.events[i]), true: s.now, hvc: h,
				vc: slices.Clone(s.vcs[i]), flush: true})
			out, err := s.dets[k][i].Flush(h)
			if err != nil {
				return err
			}
			run.out[i] = append(run.out[i], out...)
		}
	}
	return nil
}

func (s *graphSim) deliver(t timed) error {
	m := t.msg
	if t.to < s.p.servers { // a PUT at a server: apply it, then acknowledge
		h := s.event(t.to, &m)
		for k, run := range s.runs {
			run.events[t.to] = append(run.events[t.to], &simEvent{server: t.to, seq: len(run.events[t.to]), true: s.now,
				hvc: h, vc: slices.Clone(s.vcs[t.to]), key: m.key, value: m.value})
			out, err := s.dets[k][t.to].Put(h, m.key, m.value)
			if err != nil {
				return err
			}
			run.out[t.to] = append(run.out[t.to], out...)
		}
		s.send(t.to, s.p.servers+m.client, graphMsg{value: m.value, vertex: m.vertex, client: m.client})
		return nil
	}
	c := t.to - s.p.servers
	s.event(t.to, &m)
	switch {
	case m.token:
		s.onToken(c)
	case m.value == "1": // acquired: work, then release
		s.put(c, m.vertex, "0")
	default:
		s.onReleased(c)
	}
	return nil
}

// §VI-A, graph application: local mutual exclusion over a random graph,
// monitored as one semilinear predicate (a clause per edge between different
// clients) and as one conjunctive predicate per edge, from the same
// execution. Asserted, per seed:
//   - uncoordinated clients: both forms flag exactly the same edges, each
//     form agrees with the brute-force oracle (TestMonitorMatchesOracle's
//     checks, including: every pair of neighbouring holds that overlapped in
//     real time is reported), and over all seeds some edges are violated;
//   - clients coordinated by a token, with message delays making each hold
//     happen before the next by more than ε + skew: no violation at all.
func TestLocalMutualExclusionGraph(t *testing.T) {
	violated := 0
	for _, seed := range simSeeds(25) {
		rng := rand.New(rand.NewPCG(seed, 0x6772))
		p := graphParams{vertices: 14, clients: 4, servers: 3, edgePct: 30, rounds: 4,
			eps: 10, skew: 2, latMin: 5, latMax: 12, work: 20}
		g := genGraph(rng, p)
		if len(g.edges) == 0 {
			continue
		}
		for _, coordinated := range []bool{false, true} {
			p.coordinated = coordinated
			semi, conj := mutexSpecs(g, p.servers)
			sim, err := newGraphSim(rng, p, g, semi, conj)
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.run(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			bySemi, byConj := map[int]bool{}, map[int]bool{}
			for k, spec := range []*Spec{semi, conj} {
				cfg := DefaultConfig()
				cfg.Epsilon = p.eps
				vs, _, err := deliver(rng, cfg, spec, sim.runs[k])
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				for _, gr := range groupsOf(spec, sim.runs[k]) {
					if _, err := checkGroup(spec, sim.runs[k], gr, gr.mine(vs), nil); err != nil {
						t.Fatalf("seed %d coordinated=%v %s: %v (replay with -monitor.seed=%d)", seed, coordinated, spec.Predicates[gr.pred].Name, err, seed)
					}
				}
				for _, v := range vs {
					if k == 0 {
						bySemi[v.Clause] = true
					} else {
						byConj[v.Predicate] = true
					}
				}
			}
			if !maps.Equal(bySemi, byConj) {
				t.Fatalf("seed %d coordinated=%v: semilinear flags edges %v, per-edge conjunctive %v", seed, coordinated, keys(bySemi), keys(byConj))
			}
			if coordinated && len(bySemi) > 0 {
				t.Fatalf("seed %d: coordinated clients, yet edges %v flagged", seed, keys(bySemi))
			}
			if !coordinated {
				violated += len(bySemi)
			}
		}
	}
	if *simSeed == 0 && violated == 0 {
		t.Fatalf("no uncoordinated run violated mutual exclusion: the scenario tests nothing")
	}
	t.Logf("edges violated over all uncoordinated runs: %d", violated)
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// §VI-A, the synthetic conjunctive workload: ¬P = x_0=1 ∧ … ∧ x_{n−1}=1, each
// PUT making its server's x true with probability β. Asserted, per β and seed:
// a detector sends exactly one candidate per state in which its x is 1 (the
// Fig. 5 rule, nothing more: none for β = 0), plus the state its final Flush
// ends (the heartbeat); the monitor agrees with
// the brute-force oracle; β = 0 never violates, and β = 1 does once every
// server has written its x.
func TestSyntheticConjunctiveBeta(t *testing.T) {
	const servers = 4
	spec := &Spec{Servers: servers, Predicates: []Predicate{{Name: "all-x", Type: Conjunctive, Clauses: []Clause{{}}}}}
	for i := range servers {
		spec.Predicates[0].Clauses[0].Literals = append(spec.Predicates[0].Clauses[0].Literals, Literal{Server: i, Key: "x", Value: "1"})
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, beta := range []float64{0, 0.05, 0.5, 1} {
		found := 0
		for _, seed := range simSeeds(30) {
			rng := rand.New(rand.NewPCG(seed, 0x62))
			p := simParams{servers: servers, events: 40, eps: 5, skew: 2, step: 4, putPct: 60, keys: []string{"x", "y"},
				value: func(rng *rand.Rand, _ int, _ string) string {
					if rng.Float64() < beta {
						return "1"
					}
					return "0"
				}}
			run, err := simulate(rng, spec, p)
			if err != nil {
				t.Fatal(err)
			}
			allWrote := true
			for i := range servers {
				want := 0
				states := oracleStates(run, spec.Predicates[0], i)
				allWrote = allWrote && len(states) > 1
				for k, st := range states {
					if st.values["x"] == "1" || k == len(states)-1 { // the last, ended by Flush, always goes
						want++
					}
				}
				if len(run.out[i]) != want {
					t.Fatalf("β=%v seed %d: server %d sent %d candidates for %d states with x=1", beta, seed, i, len(run.out[i]), want)
				}
			}
			cfg := DefaultConfig()
			cfg.Epsilon = p.eps
			vs, _, err := deliver(rng, cfg, spec, run)
			if err != nil {
				t.Fatal(err)
			}
			g := groupsOf(spec, run)[0]
			res, err := checkGroup(spec, run, g, vs, nil)
			if err != nil {
				t.Fatalf("β=%v seed %d: %v", beta, seed, err)
			}
			if res.found {
				found++
			}
			if beta == 0 && res.found || beta == 1 && allWrote && !res.found {
				t.Fatalf("β=%v seed %d: violation found = %v", beta, seed, res.found)
			}
		}
		t.Logf("β=%v: %d of %d runs violate", beta, found, len(simSeeds(30)))
	}
}
