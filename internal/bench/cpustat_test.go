package bench

import (
	"math"
	"testing"
)

// TestCPUShares: /proc/stat's cpu line splits into busy (user, nice,
// system, irq, softirq), idle (idle, iowait) and steal; the shares over a
// run are the differences' fractions of the total.
func TestCPUShares(t *testing.T) {
	a, ok := parseCPUTimes("cpu  100 0 50 800 10 5 5 30 7 0\ncpu0 1 2 3 4\n")
	if !ok || a != (CPUTimes{Busy: 160, Idle: 810, Steal: 30}) {
		t.Fatalf("parse: %+v %v", a, ok)
	}
	b, _ := parseCPUTimes("cpu  700 0 150 1400 10 5 5 230 7 0")
	var e Env
	e.SetCPUShares(a, b, true) // +700 busy, +600 idle, +200 steal of 1500
	if math.Abs(e.CPUBusy-0.467) > 1e-9 || math.Abs(e.CPUSteal-0.133) > 1e-9 {
		t.Errorf("shares busy %v steal %v, want 0.467 0.133", e.CPUBusy, e.CPUSteal)
	}
	if old, ok := parseCPUTimes("cpu 1 2 3 4 5 6 7"); !ok || old.Steal != 0 || old.Busy != 1+2+3+6+7 {
		t.Errorf("a kernel without steal: %+v %v", old, ok)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 x 3 4 5"} {
		if _, ok := parseCPUTimes(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	var none Env
	if none.SetCPUShares(b, a, true); none.CPUBusy != 0 || none.CPUSteal != 0 {
		t.Errorf("time going backwards recorded: %+v", none)
	}
}
