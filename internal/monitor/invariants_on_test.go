//go:build invariants

package monitor

import (
	"strings"
	"testing"
)

// Under -tags invariants a corrupted monitor is caught at the next Step.
func TestInvariantsCatchCorruption(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Epsilon = 5
	m, err := NewMonitor(cfg, twoServerSpec(Conjunctive), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := Candidate{Server: 0, Start: hvc(0, 5, 0, 0), End: hvc(0, 5, 10, 0), Values: []string{"1"}}
	if err := m.Step(c); err != nil {
		t.Fatal(err)
	}
	m.logs[0].entries[0].bits0 = 0 // a useless candidate in the queue
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "useless candidate") {
			t.Fatalf("corruption not caught: %v", r)
		}
	}()
	c.Seq, c.Start, c.End = 1, c.End, hvc(0, 5, 20, 0)
	_ = m.Step(c)
}
