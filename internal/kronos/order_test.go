package kronos

import (
	"bytes"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// Kronos paper §2.2: a batch that fails has no effect at all — including on
// the id counter, although the clock events it created (and linked) before
// failing did take ids. Before the fix, rollback left NextID advanced: the
// snapshot bytes changed and the next CreateEvent skipped the ids.
func TestKronos2_2AbortedBatchConsumesNoIDs(t *testing.T) {
	ck := func(owner uint32, cs ...uint64) Ref { return ClockRef(owner, vclock.Clock{Counters: cs}) }
	for _, c := range []struct {
		name  string
		batch []Assignment
		want  error
	}{
		// gk0's [2,0] follows its [1,0]: both are created, then the must fails.
		{"must against clocks", []Assignment{{ck(0, 2, 0), Before, ck(0, 1, 0), Must}}, ErrMustConflict},
		// [1,1] is created, then [1,0] names the same gatekeeper counter.
		{"clock contradicts chain", []Assignment{{ck(0, 1, 1), Before, ck(0, 1, 0), Must}}, ErrClockInvalid},
		// Three creations, then the last must of the batch fails.
		{"late conflict", []Assignment{
			{ck(1, 0, 1), After, ck(0, 1, 0), Prefer}, {ck(0, 3, 0), Before, ck(1, 0, 4), Must},
			{ck(1, 0, 4), Before, ck(0, 3, 0), Must},
		}, ErrMustConflict},
	} {
		g := newGraph(t)
		a := g.CreateEvent()
		snap, st := g.AppendSnapshot(nil), g.Stats()
		if _, err := g.AssignOrder(nil, c.batch); !errors.Is(err, c.want) {
			t.Fatalf("%s: got %v, want %v", c.name, err, c.want)
		}
		if !bytes.Equal(snap, g.AppendSnapshot(nil)) || g.Stats() != st {
			t.Fatalf("%s: aborted batch changed the graph: %+v, was %+v", c.name, g.Stats(), st)
		}
		if b := g.CreateEvent(); b != a+1 {
			t.Fatalf("%s: next event %d after %d", c.name, b, a)
		}
		check(t, g)
	}
}
