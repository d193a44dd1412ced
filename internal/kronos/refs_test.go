package kronos

import (
	"errors"
	"testing"
)

// Kronos paper §2.3: reference counts stay within [0, 2^31-1]; a call that
// would leave the range changes nothing, counting an id listed twice twice.
func TestKronos2_3ReferenceCountBounds(t *testing.T) {
	g := newGraph(t)
	a, b := g.CreateEvent(), g.CreateEvent()
	ch, s := g.tab.slot(a)
	ch.refs[s] = refsMax - 1 // as if acquired 2^31-2 times
	before := g.AppendSnapshot(nil)
	if err := g.AcquireRefs([]EventID{b, a, a}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("acquire past 2^31-1: %v", err)
	}
	if string(before) != string(g.AppendSnapshot(nil)) {
		t.Fatal("refused acquire changed the graph")
	}
	if err := g.AcquireRefs([]EventID{a, b}); err != nil {
		t.Fatalf("acquire to exactly 2^31-1: %v", err)
	}
	if ch.refs[s] != refsMax || ch.refs[s]&clockFlag != 0 {
		t.Fatalf("refs %#x", ch.refs[s])
	}
	if _, err := g.ReleaseRefs([]EventID{b, b, b}); !errors.Is(err, ErrUnderflow) {
		t.Fatalf("release below 0: %v", err)
	}
	if n, err := g.ReleaseRefs([]EventID{b, b}); err != nil || n != 1 {
		t.Fatalf("release to 0 collected %d (%v)", n, err)
	}
	check(t, g)
}
