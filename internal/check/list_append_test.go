package check

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Planted anomalies, one per kind (Adya's G0–G2 and Elle's non-cycle checks):
// the checker must name exactly the planted kind.
func TestListAppendPlanted(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    History
		want []string
	}{
		{"valid/serial", hist(
			inv(0, ap(1, 1), r(2)), ok(0, ap(1, 1), rl(2)),
			inv(1, r(1), ap(2, 1)), ok(1, rl(1, 1), ap(2, 1)),
			inv(0, r(1), r(2)), ok(0, rl(1, 1), rl(2, 1)),
		), nil},
		{"valid/concurrent-info", hist(
			inv(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1, 1)), info(0, ap(1, 1)),
			inv(2, ap(1, 2)), ok(2, ap(1, 2)), inv(1, r(1)), ok(1, rl(1, 1, 2)),
		), nil},
		{"G0", hist(
			inv(0, ap(1, 1), ap(2, 1)), inv(1, ap(1, 2), ap(2, 2)), ok(0, ap(1, 1), ap(2, 1)), ok(1, ap(1, 2), ap(2, 2)),
			inv(2, r(1), r(2)), ok(2, rl(1, 1, 2), rl(2, 2, 1)),
		), []string{"G0"}},
		{"G1a", hist(
			inv(0, ap(1, 1)), fail(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1, 1)),
		), []string{"G1a"}},
		{"G1b", hist(
			inv(0, ap(1, 1), ap(1, 2)), inv(1, r(1)), ok(1, rl(1, 1)), ok(0, ap(1, 1), ap(1, 2)),
		), []string{"G1b"}},
		{"G1c", hist(
			inv(0, ap(1, 1), r(2)), inv(1, ap(2, 1), r(1)), ok(0, ap(1, 1), rl(2, 1)), ok(1, ap(2, 1), rl(1, 1)),
		), []string{"G1c"}},
		{"G-single", hist(
			inv(0, ap(1, 1), ap(2, 1)), inv(1, r(1), r(2)), ok(0, ap(1, 1), ap(2, 1)), ok(1, rl(1), rl(2, 1)),
		), []string{"G-single"}},
		{"G2-item/write-skew", hist(
			inv(0, r(1), ap(2, 1)), inv(1, r(2), ap(1, 1)), ok(0, rl(1), ap(2, 1)), ok(1, rl(2), ap(1, 1)),
		), []string{"G2-item"}},
		{"G-nonadjacent", hist(
			inv(0, r(1), r(4)), inv(1, ap(1, 1), ap(2, 1)), inv(2, r(2), r(3)), inv(3, ap(3, 1), ap(4, 1)),
			ok(0, rl(1), rl(4, 1)), ok(1, ap(1, 1), ap(2, 1)), ok(2, rl(2, 1), rl(3)), ok(3, ap(3, 1), ap(4, 1)),
		), []string{"G-nonadjacent"}},
		{"G-single-realtime/stale-read", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1)),
		), []string{"G-single-realtime"}},
		{"G-single-process", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(0, r(1)), ok(0, rl(1)),
		), []string{"G-single-process"}},
		{"G1c-realtime/read-from-the-future", hist(
			inv(1, r(1)), ok(1, rl(1, 1)), inv(0, ap(1, 1)), ok(0, ap(1, 1)),
		), []string{"G1c-realtime"}},
		{"G0-realtime", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(1, ap(1, 2)), ok(1, ap(1, 2)),
			inv(2, r(1)), ok(2, rl(1, 2, 1)),
		), []string{"G0-realtime"}},
		{"G2-item/sequential-write-skew", hist(
			inv(0, r(1), ap(2, 1)), ok(0, rl(1), ap(2, 1)),
			inv(1, r(2), ap(1, 1)), ok(1, rl(2), ap(1, 1)),
		), []string{"G2-item"}},
		{"G2-item-realtime", hist(
			inv(2, ap(2, 1)), inv(1, r(2), ap(1, 1)), ok(2, ap(2, 1)),
			inv(0, r(1)), ok(0, rl(1)), ok(1, rl(2), ap(1, 1)),
		), []string{"G2-item-realtime"}},
		{"internal/read-own-append", hist(
			inv(0, ap(1, 5), r(1)), ok(0, ap(1, 5), rl(1)),
		), []string{"internal"}},
		{"internal/reread", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)),
			inv(1, r(1), r(1)), ok(1, rl(1, 1), rl(1)),
		), []string{"internal"}},
		{"future-read", hist(
			inv(0, r(1), ap(1, 1)), ok(0, rl(1, 1), ap(1, 1)),
		), []string{"future-read"}},
		{"incompatible-order", hist(
			inv(0, ap(1, 1)), inv(1, ap(1, 2)), ok(0, ap(1, 1)), ok(1, ap(1, 2)),
			inv(2, r(1)), inv(3, r(1)), ok(2, rl(1, 1, 2)), ok(3, rl(1, 2, 1)),
		), []string{"incompatible-order"}},
		{"duplicate-elements", hist(
			inv(0, ap(1, 1)), inv(1, r(1)), ok(0, ap(1, 1)), ok(1, rl(1, 1, 1)),
		), []string{"duplicate-elements"}},
		{"garbage-read", hist(
			inv(1, r(1)), ok(1, rl(1, 9)),
		), []string{"garbage-read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckListAppend(tc.h)
			wantTypes(t, res, err, tc.want...)
			for _, a := range res.Anomalies {
				if a.Explanation == "" || (len(a.Cycle) == 0 && len(a.Ops) == 0) {
					t.Errorf("anomaly without evidence: %+v", a)
				}
			}
		})
	}
}

// A G-single's evidence names both transactions and the edges between them.
func TestListAppendCycleEvidence(t *testing.T) {
	h := hist(inv(0, ap(1, 1), ap(2, 1)), inv(1, r(1), r(2)), ok(0, ap(1, 1), ap(2, 1)), ok(1, rl(1), rl(2, 1)))
	res, err := CheckListAppend(h)
	wantTypes(t, res, err, "G-single")
	c := res.Anomalies[0].Cycle
	if len(c) != 2 {
		t.Fatalf("cycle of %d steps, want 2:\n%s", len(c), res)
	}
	kinds := map[EdgeKind]bool{c[0].Edge: true, c[1].Edge: true}
	if !kinds[EdgeWR] || !kinds[EdgeRW] {
		t.Fatalf("edges %s, %s; want wr and rw", c[0].Edge, c[1].Edge)
	}
	s := res.String()
	for _, want := range []string{"G-single", "T1 -", "key 1", "key 2", "process 0", "process 1"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}

// Reports do not depend on map iteration order: checking a badly broken
// history twice gives the same report.
func TestReportsDeterministic(t *testing.T) {
	for _, register := range []bool{false, true} {
		c := randChooser{rand.New(rand.NewPCG(3, 3))}
		h := genHistory(c, genConfig{procs: 6, keys: 8, txns: 400, mopsMax: 4, register: register,
			crashes: true, crashOneIn: 5})
		for range 40 {
			h = perturb(c, h, register)
		}
		check := checkerFor(register)
		first, err := check(h)
		if err != nil || first.Valid || len(first.Anomalies) < 5 {
			t.Fatalf("register=%v: perturbed history: %v, %d anomalies", register, err, len(first.Anomalies))
		}
		for range 5 {
			again, _ := check(h)
			if again.String() != first.String() {
				t.Fatalf("register=%v: reports differ:\n%s\n---\n%s", register, first, again)
			}
		}
	}
}

func TestAnomaliesMax(t *testing.T) {
	h := hist(inv(0, ap(1, 1)), fail(0, ap(1, 1)))
	for range AnomaliesMax + 200 {
		h = append(h, inv(1, r(1)), ok(1, rl(1, 1)))
	}
	res, err := CheckListAppend(h)
	if err != nil || res.Valid || len(res.Anomalies) != AnomaliesMax || res.Truncated != 200 {
		t.Fatalf("err %v valid %v: %d anomalies, %d truncated", err, res.Valid, len(res.Anomalies), res.Truncated)
	}
}
