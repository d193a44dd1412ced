package faults

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/faultproxy"
)

func TestPlanFaults(t *testing.T) {
	timing := Timing{FaultMin: time.Second, FaultMax: 3 * time.Second, QuietMin: 2 * time.Second, QuietMax: 4 * time.Second}
	plan := func(seed uint64) []Fault {
		return PlanFaults(rand.New(rand.NewPCG(seed, 1)), AllNemeses, time.Minute, timing)
	}
	a, b := plan(7), plan(7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two plans")
	}
	if reflect.DeepEqual(a, plan(8)) {
		t.Fatal("two seeds gave the same plan")
	}
	// Enough faults to fill the phase at the shortest timings.
	if len(a) < int(time.Minute/(timing.FaultMin+timing.QuietMin)) {
		t.Fatalf("%d faults cannot fill a minute", len(a))
	}
	for i, f := range a {
		if f.Hold < timing.FaultMin || f.Hold > timing.FaultMax || f.Quiet < timing.QuietMin || f.Quiet > timing.QuietMax {
			t.Fatalf("fault %d (%v) out of the timing bounds", i, f)
		}
		if d := f.Dir; f.Kind == FaultPartition && d != faultproxy.Both && d != faultproxy.Upstream && d != faultproxy.Downstream {
			t.Fatalf("fault %d: partition without a direction", i)
		}
	}
	// Kinds come in rounds: every round of len(kinds) faults has each once.
	for r := 0; r+len(AllNemeses) <= len(a); r += len(AllNemeses) {
		seen := map[FaultKind]bool{}
		for _, f := range a[r : r+len(AllNemeses)] {
			seen[f.Kind] = true
		}
		if len(seen) != len(AllNemeses) {
			t.Fatalf("round at %d has kinds %v", r, seen)
		}
	}
	if PlanFaults(rand.New(rand.NewPCG(1, 1)), nil, time.Minute, timing) != nil {
		t.Fatal("a plan without kinds")
	}
}
