package monitor

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// §V, Fig. 5: a PUT sends the state it ends to a conjunctive monitor only if
// the local predicate held in that state, whatever it is after the PUT; a
// semilinear monitor gets every state ended by a relevant PUT; irrelevant
// PUTs end nothing; Flush ends the current state and sends it to every
// monitor, held or not (the heartbeat).
func TestDetectorFigure5(t *testing.T) {
	spec := &Spec{Servers: 2, Predicates: []Predicate{
		{Name: "M1", Type: Conjunctive, Clauses: []Clause{{Literals: []Literal{{Server: 0, Key: "v", Value: "9"}, {Server: 1, Key: "w", Value: "1"}}}}},
		{Name: "M2", Type: Conjunctive, Clauses: []Clause{{Literals: []Literal{{Server: 0, Key: "v", Value: "1"}, {Server: 1, Key: "w", Value: "1"}}}}},
		{Name: "M3", Type: Conjunctive, Clauses: []Clause{{Literals: []Literal{{Server: 0, Key: "v", Op: Ne, Value: ""}, {Server: 1, Key: "w", Value: "1"}}}}},
		{Name: "M4", Type: Semilinear, Clauses: []Clause{{Literals: []Literal{{Server: 0, Key: "v", Value: "1"}}}, {Literals: []Literal{{Server: 1, Key: "w", Value: "1"}}}}},
	}}
	pt := uint64(0)
	clk, _ := vclock.NewHybridClock(2, 0, 5, func() uint64 { return pt })
	h0 := clk.Current()
	d, err := NewDetector(spec, 0, h0)
	if err != nil {
		t.Fatal(err)
	}
	stamp := func() vclock.HVC { pt += 10; return clk.Tick() }
	type want struct {
		pred   int
		seq    uint64
		values string
	}
	check := func(step string, out []Outbound, err error, start, end vclock.HVC, ws ...want) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if len(out) != len(ws) {
			t.Fatalf("%s: sent %v, want %d candidates", step, out, len(ws))
		}
		for i, w := range ws {
			c := out[i].Candidate
			if out[i].Predicate != w.pred || c.Seq != w.seq || c.Values[0] != w.values || c.Server != 0 ||
				vclock.CompareHVC(c.Start, start) != vclock.Equal || vclock.CompareHVC(c.End, end) != vclock.Equal {
				t.Fatalf("%s: candidate %d = %+v to %d, want %+v over [%s, %s)", step, i, c, out[i].Predicate, w, start, end)
			}
		}
	}
	h1 := stamp()
	out, err := d.Put(h1, "v", "1") // before: v = "": no local predicate held
	check("PUT 1", out, err, h0, h1, want{3, 0, ""})
	h2 := stamp()
	out, err = d.Put(h2, "v", "2") // before: v = 1: M2 and M3 held, M1 did not
	check("PUT 2", out, err, h1, h2, want{1, 1, "1"}, want{2, 1, "1"}, want{3, 1, "1"})
	if out, err := d.Put(stamp(), "unrelated", "x"); out != nil || err != nil || d.Relevant("unrelated") {
		t.Fatalf("irrelevant PUT sent %v, %v", out, err)
	}
	h4 := stamp()
	out, err = d.Put(h4, "v", "2") // same value: still a new state; M3 held before and after
	check("PUT 4", out, err, h2, h4, want{2, 2, "2"}, want{3, 2, "2"})
	h5 := stamp()
	out, err = d.Flush(h5)
	check("Flush", out, err, h4, h5, want{0, 3, "2"}, want{1, 3, "2"}, want{2, 3, "2"}, want{3, 3, "2"})
	if _, err := d.Put(h4, "v", "3"); !errors.Is(err, ErrClockRegressed) {
		t.Fatalf("PUT stamped before the last: %v", err)
	}
	if _, err := NewDetector(spec, 2, h0); !errors.Is(err, ErrSpec) {
		t.Fatalf("detector for server 2 of 2: %v", err)
	}
}

// Load makes the first state carry the stored values (a restarted or
// restored server), without emitting anything.
func TestDetectorLoad(t *testing.T) {
	spec := &Spec{Servers: 1, Predicates: []Predicate{
		{Name: "P", Type: Conjunctive, Clauses: []Clause{{Literals: []Literal{{Server: 0, Key: "v", Value: "1"}}}}},
	}}
	pt := uint64(100)
	clk, _ := vclock.NewHybridClock(1, 0, 5, func() uint64 { return pt })
	d, err := NewDetector(spec, 0, clk.Tick())
	if err != nil {
		t.Fatal(err)
	}
	d.Load("v", "1")
	d.Load("unrelated", "1")
	pt += 10
	out, err := d.Put(clk.Tick(), "v", "0")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Candidate.Seq != 0 || out[0].Candidate.Values[0] != "1" {
		t.Fatalf("the loaded state should be sent as true: %+v", out)
	}
}
