package plant

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/examples/internal/exkronos"
)

func startKronos(t *testing.T) string {
	t.Helper()
	s, err := exkronos.Start(t.TempDir(), exkronos.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s.Addr()
}

// TestFireAlarmAndShopFloor (§3.4, after Cheriton and Skeen): observers
// receiving the plant's messages in different, randomly delayed orders —
// some with every fire alarm arriving after its fire out — agree on every
// zone's and machine's history and state, respect every causal order the
// issuers recorded, and never place a fire out before its fire. The same
// arrivals, trusted as they come, leave fires burning. With every link
// lagging, no observer sees a fire before its out, so only the issuers' must
// edges can keep the order.
func TestFireAlarmAndShopFloor(t *testing.T) {
	addr := startKronos(t)
	for _, tc := range []struct {
		name    string
		lagging int
	}{{"one lagging link", 1}, {"every link lagging", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			testPlant(t, addr, Config{Observers: 4, LaggingObservers: tc.lagging, Seed: 3})
		})
	}
}

func testPlant(t *testing.T, addr string, cfg Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.defaults()
	if len(res.Issued) != cfg.messages() {
		t.Fatalf("%d messages issued, want %d", len(res.Issued), cfg.messages())
	}
	objects := map[string]bool{}
	for _, m := range res.Issued {
		objects[m.Object] = true
	}

	ref := res.Observers[0]
	for _, o := range res.Observers {
		if len(o.Arrivals()) != len(res.Issued) {
			t.Fatalf("%s received %d of %d messages", o.Name, len(o.Arrivals()), len(res.Issued))
		}
		if o.OutBeforeFire != 0 {
			t.Fatalf("%s placed a fire out before its fire %d times", o.Name, o.OutBeforeFire)
		}
		for obj := range objects {
			if !slices.Equal(events(o.View(obj)), events(ref.View(obj))) {
				t.Fatalf("%s and %s order %s differently:\n%v\n%v", o.Name, ref.Name, obj, events(o.View(obj)), events(ref.View(obj)))
			}
		}
		if !maps.Equal(o.State(), ref.State()) {
			t.Fatalf("%s ends in %v, %s in %v", o.Name, o.State(), ref.Name, ref.State())
		}
		checkEdges(t, o, res)
	}
	for z := range cfg.Zones {
		if st := ref.State()[Zone(z)]; st != "safe" {
			t.Fatalf("%s ends %s; every fire was put out", Zone(z), st)
		}
	}

	// The control: the lagging observers' own arrivals, trusted as they came.
	for _, o := range res.Observers[:cfg.LaggingObservers] {
		if n := o.ArrivalOutsBeforeFires(); n != cfg.Zones*cfg.Fires {
			t.Fatalf("%s's lagging link delivered %d fire outs before their fires, want all %d", o.Name, n, cfg.Zones*cfg.Fires)
		}
		burning := 0
		for z := range cfg.Zones {
			if o.ArrivalState()[Zone(z)] == "burning" {
				burning++
			}
		}
		if burning != cfg.Zones {
			t.Fatalf("%s's arrival order leaves %d of %d zones burning; the control should lose every zone", o.Name, burning, cfg.Zones)
		}
		if o.Reversals == 0 {
			t.Fatalf("Kronos reversed none of %s's arrival order", o.Name)
		}
	}
	disagree := 0
	for _, o := range res.Observers[1:] {
		if !maps.Equal(o.ArrivalState(), ref.ArrivalState()) {
			disagree++
		}
	}
	t.Logf("%d messages, %d must edges; lagging observer: %d reversals; %d of %d observers' arrival states disagree with it",
		len(res.Issued), len(res.Edges), ref.Reversals, disagree, len(res.Observers)-1)
}

func events(v []Msg) []uint64 {
	out := make([]uint64, len(v))
	for i, m := range v {
		out[i] = m.Event
	}
	return out
}

// checkEdges asserts that o's views keep every recorded must edge between
// messages about the same object.
func checkEdges(t *testing.T, o *Observer, res *Result) {
	t.Helper()
	where := map[uint64]struct {
		obj string
		at  int
	}{}
	for _, m := range res.Issued {
		for i, v := range o.View(m.Object) {
			if v.Event == m.Event {
				where[m.Event] = struct {
					obj string
					at  int
				}{m.Object, i}
			}
		}
	}
	for _, e := range res.Edges {
		a, b := where[e.From], where[e.To]
		if a.obj == b.obj && a.at >= b.at {
			t.Fatalf("%s places %d at %d, not before %d at %d on %s, against a must edge", o.Name, e.From, a.at, e.To, b.at, a.obj)
		}
	}
}

// TestPosition: a new message goes after the prefix Kronos orders before
// it; any other shape is an error only a broken Kronos could produce.
func TestPosition(t *testing.T) {
	b := kronos.AssignResult{Order: kronos.Before}
	a := kronos.AssignResult{Order: kronos.After, Reversed: true}
	c := kronos.AssignResult{Order: kronos.Concurrent}
	for _, tc := range []struct {
		res  []kronos.AssignResult
		want int // -1: error
	}{
		{nil, 0}, {[]kronos.AssignResult{b, b}, 2}, {[]kronos.AssignResult{a, a}, 0},
		{[]kronos.AssignResult{b, a, a}, 1}, {[]kronos.AssignResult{b, a, b}, -1}, {[]kronos.AssignResult{b, c}, -1},
	} {
		got, err := position(tc.res)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("%v: accepted", tc.res)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: got %d %v, want %d", tc.res, got, err, tc.want)
		}
	}
}

// TestArrivalControl pins the control's bookkeeping on a fire, its out and a
// second fire delivered out of order.
func TestArrivalControl(t *testing.T) {
	f1 := Msg{Event: 1, Kind: Fire, Object: "z"}
	o1 := Msg{Event: 2, Kind: FireOut, Object: "z", Refers: 1}
	f2 := Msg{Event: 3, Kind: Fire, Object: "z"}
	o := &Observer{arrivals: []Msg{f1, f2, o1}}
	if got := o.ArrivalState()["z"]; got != "safe" {
		t.Fatalf("arrival state %q, want safe (the delayed out wrongly ends the second fire)", got)
	}
	if n := outsBeforeFires([]Msg{o1, f1, f2}); n != 1 {
		t.Fatalf("outsBeforeFires = %d, want 1", n)
	}
	if n := outsBeforeFires([]Msg{f1, o1, f2}); n != 0 {
		t.Fatalf("outsBeforeFires = %d, want 0", n)
	}
}
