package monitor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// interleave fixes one delivery order for a run's candidates (per-server FIFO).
func interleave(rng *rand.Rand, run *simRun) []Outbound {
	next := make([]int, len(run.out))
	var all []Outbound
	for {
		var live []int
		for i := range run.out {
			if next[i] < len(run.out[i]) {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return all
		}
		i := live[rng.IntN(len(live))]
		all = append(all, run.out[i][next[i]])
		next[i]++
	}
}

// benchSet feeds a fixed candidate stream to a fresh Set per iteration and
// reports candidates processed per second (a measurement, never asserted).
func benchSet(b *testing.B, cfg Config, spec *Spec, stream []Outbound) {
	b.ReportAllocs()
	violations := 0
	for b.Loop() {
		set, err := NewSet(cfg, spec)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range stream {
			if err := set.Step(o); err != nil {
				b.Fatal(err)
			}
			if vs := set.Ready(); len(vs) > 0 {
				violations += len(vs)
				set.Advance()
			}
		}
	}
	b.ReportMetric(float64(len(stream))*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
	b.ReportMetric(float64(violations)/float64(b.N), "violations/op")
}

// §VI-A synthetic conjunctive workload as in the paper's stress test: ten
// servers, ¬P = x_0=1 ∧ … ∧ x_9=1, each PUT making x true with probability β.
func BenchmarkConjunctiveBeta(b *testing.B) {
	const servers = 10
	spec := &Spec{Servers: servers, Predicates: []Predicate{{Name: "all-x", Type: Conjunctive, Clauses: []Clause{{}}}}}
	for i := range servers {
		spec.Predicates[0].Clauses[0].Literals = append(spec.Predicates[0].Clauses[0].Literals, Literal{Server: i, Key: "x", Value: "1"})
	}
	for _, beta := range []float64{0.01, 0.5} {
		b.Run(fmt.Sprintf("beta=%v", beta), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			p := simParams{servers: servers, events: 100_000, eps: 20, skew: 5, step: 3, putPct: 70, keys: []string{"x"},
				value: func(rng *rand.Rand, _ int, _ string) string {
					if rng.Float64() < beta {
						return "1"
					}
					return "0"
				}}
			run, err := simulate(rng, spec, p)
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.Epsilon = p.eps
			benchSet(b, cfg, spec, interleave(rng, run))
		})
	}
}

// §VI-A graph application: local mutual exclusion over 200 vertices, 8
// clients and 5 servers, as one semilinear predicate (a clause per edge).
func BenchmarkLocalMutexSemilinear(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := graphParams{vertices: 200, clients: 8, servers: 5, edgePct: 3, rounds: 25,
		eps: 10, skew: 2, latMin: 5, latMax: 12, work: 20}
	g := genGraph(rng, p)
	semi, _ := mutexSpecs(g, p.servers)
	sim, err := newGraphSim(rng, p, g, semi)
	if err != nil {
		b.Fatal(err)
	}
	if err := sim.run(); err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Epsilon = p.eps
	benchSet(b, cfg, semi, interleave(rng, sim.runs[0]))
}
