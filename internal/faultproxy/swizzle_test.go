package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"
)

func TestPlanSwizzleReplaysSeed(t *testing.T) {
	ids := []ConnID{3, 1, 4, 15, 9, 2, 6}
	for seed := range uint64(50) {
		a := PlanSwizzle(ids, rand.New(rand.NewPCG(seed, 0)))
		shuffled := slices.Clone(ids)
		slices.Reverse(shuffled)
		b := PlanSwizzle(shuffled, rand.New(rand.NewPCG(seed, 0)))
		if !slices.Equal(a.Clog, b.Clog) || !slices.Equal(a.Unclog, b.Unclog) {
			t.Fatalf("seed %d: plans differ with id order: %v vs %v", seed, a, b)
		}
		if len(a.Clog) < 1 || len(a.Clog) > len(ids) {
			t.Fatalf("seed %d: clogs %d of %d connections", seed, len(a.Clog), len(ids))
		}
		sc, su := slices.Sorted(slices.Values(a.Clog)), slices.Sorted(slices.Values(a.Unclog))
		if !slices.Equal(sc, su) || len(slices.Compact(slices.Clone(sc))) != len(sc) {
			t.Fatalf("seed %d: unclog %v is not a permutation of clog %v", seed, a.Unclog, a.Clog)
		}
		for _, id := range a.Clog {
			if !slices.Contains(ids, id) {
				t.Fatalf("seed %d: plan names unknown connection %d", seed, id)
			}
		}
	}
	if p := PlanSwizzle(nil, rand.New(rand.NewPCG(1, 0))); len(p.Clog)+len(p.Unclog) != 0 {
		t.Fatalf("plan over no connections: %v", p)
	}
}

// TestSwizzleSteps drives a seeded swizzle a step at a time: once all its
// connections are clogged they carry nothing while the others still echo;
// each unclog step delivers what that connection held.
func TestSwizzleSteps(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	const n = 5
	clients := map[ConnID]net.Conn{}
	for i := range n {
		c := dial(t, p.Addr())
		roundTrip(t, c, []byte("hi")) // accept order = dial order: ids 1..n
		clients[ConnID(i+1)] = c
	}

	sw := p.NewSwizzle(rand.New(rand.NewPCG(7, 0)))
	plan := sw.Plan()
	t.Logf("plan %+v", plan)
	if again := p.NewSwizzle(rand.New(rand.NewPCG(7, 0))).Plan(); !slices.Equal(plan.Clog, again.Clog) ||
		!slices.Equal(plan.Unclog, again.Unclog) {
		t.Fatalf("seed 7 planned %+v, then %+v", plan, again)
	}
	for range plan.Clog {
		if !sw.Step() {
			t.Fatal("swizzle ended while clogging")
		}
	}
	for id, c := range clients {
		msg := fmt.Appendf(nil, "conn %d", id)
		if slices.Contains(plan.Clog, id) {
			send(t, c, msg)
			expectNothing(t, c, 60*time.Millisecond)
		} else {
			roundTrip(t, c, msg)
		}
	}
	for i, id := range plan.Unclog {
		if more := sw.Step(); more != (i < len(plan.Unclog)-1) {
			t.Fatalf("step %d reported more=%v", i, more)
		}
		expect(t, clients[id], fmt.Appendf(nil, "conn %d", id))
	}
	if !sw.Done() || sw.Step() {
		t.Fatal("swizzle not done after its plan")
	}
	for _, c := range clients {
		roundTrip(t, c, []byte("all flow"))
	}
	if got, want := p.Stats().Faults, uint64(2*len(plan.Clog)); got != want {
		t.Fatalf("%d faults counted, want %d", got, want)
	}
}

func TestSwizzleRun(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	var clients []net.Conn
	for range 4 {
		c := dial(t, p.Addr())
		roundTrip(t, c, []byte("hi"))
		clients = append(clients, c)
	}
	if err := p.NewSwizzle(rand.New(rand.NewPCG(1, 0))).Run(t.Context(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		roundTrip(t, c, []byte("after run"))
	}

	// Cancelled mid-way, Run unclogs what it clogged.
	ctx, cancel := context.WithCancel(t.Context())
	sw := p.NewSwizzle(rand.New(rand.NewPCG(2, 0)))
	sw.Step()
	cancel()
	if err := sw.Run(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	for _, c := range clients {
		roundTrip(t, c, []byte("after cancel"))
	}
}
