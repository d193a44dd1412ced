package nodeprog

import (
	"errors"
	"testing"
)

type prio float64

func (p prio) Priority() float64 { return float64(p) }

// TestQueues: FIFO, LIFO, and priority (ties in push order).
func TestQueues(t *testing.T) {
	hops := []Hop{{To: "a", Arg: prio(3)}, {To: "b", Arg: prio(1)}, {To: "c", Arg: prio(3)}, {To: "d", Arg: prio(-1)}, {To: "e"}}
	for o, want := range map[Order]string{BFS: "abcde", DFS: "edcba", Priority: "debac"} {
		q := newQueue(o)
		for _, h := range hops {
			q.push(h)
		}
		got := ""
		for q.len() > 0 {
			got += q.pop().To
		}
		if got != want {
			t.Errorf("order %d: %s, want %s", o, got, want)
		}
	}
}

// TestFIFOCompacts: a long-running FIFO does not keep every hop it saw.
func TestFIFOCompacts(t *testing.T) {
	q := &fifo{}
	for i := range 10000 {
		q.push(Hop{To: "x"})
		if i%2 == 1 {
			q.pop()
		}
	}
	if q.len() != 5000 || cap(q.hops) > 4*5000 {
		t.Fatalf("len %d, cap %d", q.len(), cap(q.hops))
	}
}

// TestWireErrorCodes: every sentinel survives the trip through a report.
func TestWireErrorCodes(t *testing.T) {
	for _, e := range []error{ErrOverloaded, ErrTooLarge, ErrFailed, ErrFinished, ErrBadParams, ErrUnknownProgram} {
		r := Report{Code: errCode(e), Err: e.Error()}
		if got := r.Failed(); got == nil || got.Error() != e.Error() || !errors.Is(got, e) {
			t.Errorf("%v came back as %v", e, got)
		}
	}
}
