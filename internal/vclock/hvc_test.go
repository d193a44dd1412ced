package vclock

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
)

var hvcSeed = flag.Uint64("vclock.seed", 0, "replay one HVC simulation seed (0: run the fixed seed range)")

// §III-A, the paper's example: n = 10, ε = 20, HVC_0 = [100,80,80,95,80,80,100,80,80,80]
// is kept as a bitmap and the three integers 100, 95, 100.
func TestHVCCompactRepresentationPaperExample(t *testing.T) {
	h := HVC{Self: 0, Epsilon: 20, Entries: []uint64{100, 80, 80, 95, 80, 80, 100, 80, 80, 80}}
	if got := h.ActiveSize(); got != 3 {
		t.Fatalf("ActiveSize = %d, want 3", got)
	}
	if got, want := h.String(), "p0 ε=20 [100,·,·,95,·,·,100,·,·,·]"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// version, n, self, ε, own, bitmap (bits 3 and 6), 95−80, 100−80.
	want := []byte{1, 10, 0, 20, 100, 0b0100_1000, 0, 15, 20}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding = %v, want %v", b, want)
	}
	d, err := DecodeHVC(b)
	if err != nil || CompareHVC(d, h) != Equal {
		t.Fatalf("decode = %s, %v", d, err)
	}
}

// §III-A update rules: a send/local event sets the own entry to PT and raises
// the others to PT−ε; a receive takes the entry-wise max with the message first.
func TestHVCUpdateRules(t *testing.T) {
	var pt [2]uint64
	c0, _ := NewHybridClock(3, 0, 10, func() uint64 { return pt[0] })
	c1, _ := NewHybridClock(3, 1, 10, func() uint64 { return pt[1] })
	pt[0] = 100
	m := c0.Tick()
	if want := []uint64{100, 90, 90}; !equalU64(m.Entries, want) {
		t.Fatalf("send: %v, want %v", m.Entries, want)
	}
	pt[1] = 95
	r, err := c1.Receive(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{100, 95, 90}; !equalU64(r.Entries, want) {
		t.Fatalf("receive: %v, want %v", r.Entries, want)
	}
	if CompareHVC(m, r) != Before {
		t.Fatalf("send %s not before receive %s", m, r)
	}
	pt[1] = 130 // 30 later: every entry learned so far is older than PT−ε
	l := c1.Tick()
	if want := []uint64{120, 130, 120}; !equalU64(l.Entries, want) || l.ActiveSize() != 1 {
		t.Fatalf("local: %v (active %d), want %v (active 1)", l.Entries, l.ActiveSize(), want)
	}
	pt[1] = 130 // the clock did not advance: the own entry still must
	if l2 := c1.Tick(); l2.Own() != 131 || CompareHVC(l, l2) != Before {
		t.Fatalf("stalled clock: %s after %s", l2, l)
	}
	if _, err := c1.Receive(HVC{Self: 0, Entries: []uint64{1, 2}}); !errors.Is(err, ErrHVCShape) {
		t.Fatalf("receive of a 2-entry clock: %v", err)
	}
}

// The ε rule in comparison: entries older than Own−ε read as Own−ε.
func TestCompareHVCEpsilonRule(t *testing.T) {
	for _, tc := range []struct {
		a, b HVC
		want Relation
	}{
		// a's entry 1 (10) reads as 80, b knows 85 of p1: a < b.
		{HVC{0, 20, []uint64{100, 10}}, HVC{1, 20, []uint64{100, 85}}, Before},
		// The same vectors with ε = ∞: a[1] = 10, b[0] = 100 = a[0], so still a < b.
		{HVC{0, EpsilonInfinite, []uint64{100, 10}}, HVC{1, EpsilonInfinite, []uint64{100, 85}}, Before},
		// Concurrent with ε = ∞, ordered by time once ε is small: b's floor 130 ≥ a's entries.
		{HVC{0, EpsilonInfinite, []uint64{100, 0}}, HVC{1, EpsilonInfinite, []uint64{0, 150}}, Concurrent},
		{HVC{0, 20, []uint64{100, 0}}, HVC{1, 20, []uint64{0, 150}}, Before},
		{HVC{1, 20, []uint64{0, 150}}, HVC{0, 20, []uint64{100, 0}}, After},
		// Implicit and explicit spellings of one clock are equal.
		{HVC{0, 20, []uint64{100, 3}}, HVC{0, 20, []uint64{100, 80}}, Equal},
		{HVC{0, 20, []uint64{100}}, HVC{0, 20, []uint64{100, 80, 80}}, Equal},
	} {
		if got := CompareHVC(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareHVC(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

// hvcEvent is one simulated event with its ground truth.
type hvcEvent struct {
	proc int
	true uint64   // simulator time, the same for every process
	pt   uint64   // the process's physical clock reading
	vc   []uint64 // Fidge–Mattern vector clock: ground-truth happened-before
	hvc  HVC
}

// happenedBefore is ground truth: a → b iff b's vector clock knows a.
func happenedBefore(a, b *hvcEvent) bool {
	return a != b && a.vc[a.proc] <= b.vc[a.proc]
}

type hvcMsg struct {
	to  int
	hvc HVC
	vc  []uint64
}

// simulateHVC runs a random message-passing execution: n processes whose
// physical clocks are true time plus a fixed offset in [0, skew], time
// advancing 1..step per event, so each process's clock strictly increases.
func simulateHVC(rng *rand.Rand, n, events int, eps, skew, step uint64) []*hvcEvent {
	now := uint64(1000)
	offs := make([]uint64, n)
	clocks := make([]*HybridClock, n)
	vcs := make([][]uint64, n)
	for i := range n {
		offs[i] = rng.Uint64N(skew + 1)
		c, err := NewHybridClock(n, i, eps, func() uint64 { return now + offs[i] })
		if err != nil {
			panic(err)
		}
		clocks[i], vcs[i] = c, make([]uint64, n)
	}
	var inflight []hvcMsg
	var out []*hvcEvent
	for len(out) < events {
		now += 1 + rng.Uint64N(step)
		p := rng.IntN(n)
		e := &hvcEvent{proc: p, true: now, pt: now + offs[p]}
		if k := pendingFor(inflight, p, rng); k >= 0 && rng.IntN(3) == 0 {
			m := inflight[k]
			inflight = append(inflight[:k], inflight[k+1:]...)
			for j := range vcs[p] {
				vcs[p][j] = max(vcs[p][j], m.vc[j])
			}
			vcs[p][p]++
			h, err := clocks[p].Receive(m.hvc)
			if err != nil {
				panic(err)
			}
			e.hvc = h
		} else {
			vcs[p][p]++
			e.hvc = clocks[p].Tick()
			if n > 1 && rng.IntN(2) == 0 {
				to := (p + 1 + rng.IntN(n-1)) % n
				inflight = append(inflight, hvcMsg{to: to, hvc: e.hvc, vc: append([]uint64(nil), vcs[p]...)})
			}
		}
		e.vc = append([]uint64(nil), vcs[p]...)
		out = append(out, e)
	}
	return out
}

func pendingFor(msgs []hvcMsg, p int, rng *rand.Rand) int {
	var idx []int
	for k, m := range msgs {
		if m.to == p {
			idx = append(idx, k)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	return idx[rng.IntN(len(idx))]
}

func hvcSeeds() []uint64 {
	if *hvcSeed != 0 {
		return []uint64{*hvcSeed}
	}
	s := make([]uint64, 150)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

// §III-A, property: HVC order is consistent with happened-before on random
// executions, and the ε floor orders by time what messages do not:
//  1. a → b implies hvc(a) < hvc(b);
//  2. hvc(a) < hvc(b) without a → b implies some event c with c = b or c → b
//     has own(a) + ε ≤ own(c): only a floor can order concurrent events, and a
//     floor is ε behind the clock that set it;
//  3. concurrent a, b with true(b) − true(a) > ε + skew compare hvc(a) < hvc(b);
//  4. with ε = ∞ the HVC relation is exactly the vector clock relation;
//  5. the own entry is the physical time when skew ≤ ε (at least it otherwise),
//     no entry is below the floor, and the compact encoding round-trips.
//
// A failing seed is printed; -vclock.seed=N replays it.
func TestHVCHappenedBeforeProperty(t *testing.T) {
	epsilons := []uint64{0, 2, 10, 40, EpsilonInfinite}
	for _, seed := range hvcSeeds() {
		rng := rand.New(rand.NewPCG(seed, 0x4856))
		n := 2 + rng.IntN(4)
		eps := epsilons[rng.IntN(len(epsilons))]
		skew := rng.Uint64N(8)
		evs := simulateHVC(rng, n, 20+rng.IntN(60), eps, skew, 1+rng.Uint64N(6))
		if err := checkHVCExecution(evs, eps, skew); err != nil {
			t.Fatalf("seed %d (n=%d ε=%d skew=%d): %v; replay with -vclock.seed=%d", seed, n, eps, skew, err, seed)
		}
	}
}

func checkHVCExecution(evs []*hvcEvent, eps, skew uint64) error {
	for _, e := range evs {
		// With skew ≤ ε what others know of a process is in its past, so the
		// own entry is exactly PT; beyond that a floor may push it ahead.
		if e.hvc.Own() < e.pt || (skew <= eps && e.hvc.Own() != e.pt) {
			return fmt.Errorf("event at true %d: own entry %d, physical time %d", e.true, e.hvc.Own(), e.pt)
		}
		for k := range e.hvc.Entries {
			if e.hvc.Entries[k] < e.hvc.Floor() {
				return fmt.Errorf("%s: entry %d below the floor", e.hvc, k)
			}
		}
		b, err := e.hvc.MarshalBinary()
		if err != nil {
			return err
		}
		d, err := DecodeHVC(b)
		if err != nil || !equalU64(d.Entries, e.hvc.Entries) || d.Self != e.hvc.Self || d.Epsilon != eps {
			return fmt.Errorf("%s: round trip gave %s, %v", e.hvc, d, err)
		}
	}
	for _, a := range evs {
		for _, b := range evs {
			if err := checkHVCPair(a, b, eps, skew); err != nil {
				return err
			}
			if err := checkFloorOrder(evs, a, b, eps); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFloorOrder is property 2.
func checkFloorOrder(evs []*hvcEvent, a, b *hvcEvent, eps uint64) error {
	if CompareHVC(a.hvc, b.hvc) != Before || happenedBefore(a, b) {
		return nil
	}
	if eps != EpsilonInfinite {
		for _, c := range evs {
			if (c == b || happenedBefore(c, b)) && a.hvc.Own()+eps <= c.hvc.Own() {
				return nil
			}
		}
	}
	return fmt.Errorf("%s < %s without a message, and nothing b knows is ε after a", a.hvc, b.hvc)
}

func checkHVCPair(a, b *hvcEvent, eps, skew uint64) error {
	rel := CompareHVC(a.hvc, b.hvc)
	hb, hbRev := happenedBefore(a, b), happenedBefore(b, a)
	switch {
	case hb && rel != Before:
		return fmt.Errorf("%s → %s but CompareHVC = %s", a.hvc, b.hvc, rel)
	case eps != EpsilonInfinite && !hb && !hbRev && b.true > a.true+eps+skew && rel != Before:
		return fmt.Errorf("concurrent %s and %s are %d apart (ε+skew = %d) but compare %s",
			a.hvc, b.hvc, b.true-a.true, eps+skew, rel)
	case eps == EpsilonInfinite && (rel == Before) != hb:
		return fmt.Errorf("ε = ∞: CompareHVC(%s, %s) = %s, happened-before %v", a.hvc, b.hvc, rel, hb)
	case eps == EpsilonInfinite && a != b && (rel == Concurrent) != (!hb && !hbRev):
		return fmt.Errorf("ε = ∞: CompareHVC(%s, %s) = %s, but vector clocks say concurrent=%v", a.hvc, b.hvc, rel, !hb && !hbRev)
	}
	return nil
}

// Active size (the compact representation's length) follows the trend the HVC
// papers report: 1 when ε = 0 and clocks agree (every learned time is already
// in the past), the number of processes heard of when ε = ∞, and a mean that
// grows with ε in between.
func TestHVCActiveSizeTrend(t *testing.T) {
	epsilons := []uint64{0, 1, 4, 16, 64, 256, EpsilonInfinite}
	means := make([]float64, len(epsilons))
	for i, eps := range epsilons {
		rng := rand.New(rand.NewPCG(7, 7)) // the same schedule for every ε
		evs := simulateHVC(rng, 8, 4000, eps, 0, 3)
		total := 0
		for _, e := range evs {
			size := e.hvc.ActiveSize()
			total += size
			if eps == 0 && size != 1 {
				t.Fatalf("ε = 0 without skew: active size %d (%s), want 1", size, e.hvc)
			}
			if eps == EpsilonInfinite {
				heard := 0
				for _, v := range e.vc {
					if v > 0 {
						heard++
					}
				}
				if size != heard {
					t.Fatalf("ε = ∞: active size %d, heard of %d processes (%s)", size, heard, e.hvc)
				}
			}
		}
		means[i] = float64(total) / float64(len(evs))
	}
	if means[0] != 1 {
		t.Fatalf("ε = 0 without skew: mean active size %.2f, want 1", means[0])
	}
	for i := 1; i < len(means); i++ {
		if means[i] < means[i-1] {
			t.Fatalf("mean active size falls from %.2f (ε=%d) to %.2f (ε=%d)", means[i-1], epsilons[i-1], means[i], epsilons[i])
		}
	}
	t.Logf("mean active size by ε %v: %.2f", epsilons, means)
}

func TestDecodeHVCRejects(t *testing.T) {
	good := []byte{1, 10, 0, 20, 100, 0b0100_1000, 0, 15, 20}
	for name, b := range map[string][]byte{
		"empty":            {},
		"version":          {2, 1, 0, 0, 0, 0},
		"zero entries":     {1, 0, 0, 0, 0},
		"owner too big":    {1, 1, 1, 0, 0, 0},
		"short bitmap":     {1, 10, 0, 20, 100, 0},
		"owner bit":        {1, 1, 0, 0, 5, 1},
		"padding bit":      {1, 1, 0, 0, 5, 2},
		"zero offset":      {1, 2, 0, 0, 5, 2, 0},
		"missing entry":    {1, 2, 0, 0, 5, 2},
		"trailing":         append(append([]byte{}, good...), 0),
		"non-minimal":      {1, 0x81, 0x00, 0, 0, 0, 0},
		"overflow":         {1, 2, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 2, 1},
		"too many":         {1, 0x81, 0x80, 0x04, 0, 0, 0, 0},
		"truncated varint": {1, 0x80},
	} {
		if _, err := DecodeHVC(b); !errors.Is(err, ErrHVCDecode) {
			t.Errorf("%s: DecodeHVC(%v) = %v, want ErrHVCDecode", name, b, err)
		}
	}
	if _, err := (HVC{Self: 2, Entries: []uint64{1, 2}}).MarshalBinary(); !errors.Is(err, ErrHVCShape) {
		t.Errorf("marshal of owner 2 of 2: %v", err)
	}
}

// FuzzHVCDecode: DecodeHVC never panics, errors wrap ErrHVCDecode, and what it
// accepts is canonical (re-encodes to the same bytes) and clamped.
func FuzzHVCDecode(f *testing.F) {
	f.Add([]byte{1, 10, 0, 20, 100, 0b0100_1000, 0, 15, 20})
	f.Add([]byte{1, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHVC(b)
		if err != nil {
			if !errors.Is(err, ErrHVCDecode) {
				t.Fatalf("error %v does not wrap ErrHVCDecode", err)
			}
			return
		}
		again, err := h.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%x decoded to %s which encodes to %x, %v", b, h, again, err)
		}
		if CompareHVC(h, h) != Equal || h.ActiveSize() < 1 {
			t.Fatalf("%s: not equal to itself or empty", h)
		}
		for k, v := range h.Entries {
			if v < h.Floor() || h.At(k) != v {
				t.Fatalf("%s: entry %d not clamped", h, k)
			}
		}
	})
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
