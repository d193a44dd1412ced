package kvcore

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/weft-db/weft/internal/vclock"
)

func ver(pairs ...uint64) Version {
	var v Version
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Entries = append(v.Entries, Entry{Actor: pairs[i], Counter: pairs[i+1]})
	}
	return v
}

func TestCompareTable(t *testing.T) {
	for _, tc := range []struct {
		a, b Version
		want vclock.Relation
	}{
		{ver(), ver(), vclock.Equal},
		{ver(), ver(1, 1), vclock.Before},
		{ver(1, 1), ver(), vclock.After},
		{ver(1, 1), ver(1, 2), vclock.Before},
		{ver(1, 2), ver(1, 1), vclock.After},
		{ver(1, 1), ver(2, 1), vclock.Concurrent},
		{ver(1, 1, 2, 1), ver(2, 1), vclock.After},
		{ver(1, 1, 3, 5), ver(1, 1, 2, 1, 3, 5), vclock.Before},
		{ver(1, 2, 3, 5), ver(1, 1, 2, 1, 3, 5), vclock.Concurrent},
		{ver(1, 1, 2, 1), ver(1, 1, 2, 1), vclock.Equal},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestJoinAndDescend(t *testing.T) {
	a, b := ver(1, 3, 4, 1), ver(2, 2, 4, 5)
	if got, want := Join(a, b), ver(1, 3, 2, 2, 4, 5); Compare(got, want) != vclock.Equal {
		t.Fatalf("Join = %s, want %s", got, want)
	}
	d := Descend([]Version{a, b}, 3, 1, 0)
	if got, want := d, ver(1, 3, 2, 2, 3, 1, 4, 5); Compare(got, want) != vclock.Equal || len(got.Entries) != 4 {
		t.Fatalf("Descend = %s, want %s", got, want)
	}
	for _, c := range []Version{a, b} {
		if Compare(c, d) != vclock.Before {
			t.Fatalf("%s does not precede its descendant %s", c, d)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := NextCounter(7, []Version{ver(3, 9)}, 3); n != 10 {
		t.Fatalf("NextCounter = %d, want 10", n)
	}
}

func TestDescendPrunesSmallestCounters(t *testing.T) {
	ctx := []Version{ver(1, 1, 2, 9, 3, 2, 4, 7, 5, 1)}
	d := Descend(ctx, 9, 1, 3)
	// The own entry (9:1) stays although its counter is the smallest.
	if want := ver(2, 9, 4, 7, 9, 1); Compare(d, want) != vclock.Equal || len(d.Entries) != 3 {
		t.Fatalf("pruned = %s, want %s", d, want)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestVersionValidate(t *testing.T) {
	for _, bad := range []Version{ver(), ver(1, 0), ver(2, 1, 1, 1), ver(1, 1, 1, 2)} {
		if bad.Validate() == nil {
			t.Errorf("%s validated", bad)
		}
	}
	long := Version{}
	for i := range VersionEntriesMax + 1 {
		long.Entries = append(long.Entries, Entry{Actor: uint64(i + 1), Counter: 1})
	}
	if long.Validate() == nil {
		t.Error("too long a version validated")
	}
}

// TestVersionOrderIsCausalOrder (§II-A) checks the claim Version's comment
// makes, against an explicit causal-history oracle: sessions write one key,
// each write with a random subset of the existing versions as context.
//
//   - soundness (always, pruning or not): a < b implies a is in b's causal
//     past (reached through contexts or through b's own session's earlier
//     writes);
//   - completeness (no pruning): a in b's past through contexts implies a < b.
func TestVersionOrderIsCausalOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sessions := rapid.IntRange(1, 5).Draw(t, "sessions")
		entriesMax := rapid.SampledFrom([]int{2, 3, VersionEntriesMax}).Draw(t, "entriesMax")
		writes := rapid.IntRange(1, 30).Draw(t, "writes")
		type write struct {
			v       Version
			session int
			ctxPast map[int]bool // reached through contexts only (itself included)
			past    map[int]bool // also through session order
		}
		var ws []write
		counters := make([]uint64, sessions)
		for i := range writes {
			s := rapid.IntRange(0, sessions-1).Draw(t, "session")
			var ctx []Version
			w := write{session: s, ctxPast: map[int]bool{i: true}, past: map[int]bool{i: true}}
			for j := range ws {
				if rapid.Bool().Draw(t, "inContext") {
					ctx = append(ctx, ws[j].v)
					for k := range ws[j].ctxPast {
						w.ctxPast[k] = true
					}
					for k := range ws[j].past {
						w.past[k] = true
					}
				}
				if ws[j].session == s {
					for k := range ws[j].past {
						w.past[k] = true
					}
				}
			}
			actor := uint64(s + 1)
			counters[s] = NextCounter(counters[s], ctx, actor)
			w.v = Descend(ctx, actor, counters[s], entriesMax)
			if err := w.v.Validate(); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		for i, a := range ws {
			for j, b := range ws {
				if i == j {
					continue
				}
				r := Compare(a.v, b.v)
				if r == vclock.Equal {
					t.Fatalf("writes %d and %d share version %s", i, j, a.v)
				}
				if r == vclock.Before && !b.past[i] {
					t.Fatalf("%s < %s but write %d is not in write %d's past", a.v, b.v, i, j)
				}
				if entriesMax == VersionEntriesMax && b.ctxPast[i] && r != vclock.Before {
					t.Fatalf("write %d saw write %d but %s is %s %s", j, i, a.v, r, b.v)
				}
			}
		}
	})
}

func TestMergeHVC(t *testing.T) {
	a := vclock.HVC{Self: 0, Epsilon: vclock.EpsilonInfinite, Entries: []uint64{5, 1, 0}}
	b := vclock.HVC{Self: 2, Epsilon: vclock.EpsilonInfinite, Entries: []uint64{2, 3, 9}}
	m := MergeHVC(a, b)
	if !slices.Equal(m.Entries, []uint64{5, 3, 9}) || m.Self != 2 {
		t.Fatalf("MergeHVC = %v", m)
	}
	if MergeHVC(vclock.HVC{}, b).Self != 2 || !MergeHVC(a, vclock.HVC{}).IsZero() == a.IsZero() {
		t.Fatal("zero clocks are not ignored")
	}
	if vclock.CompareHVC(a, m) != vclock.Before || vclock.CompareHVC(b, m) != vclock.Before {
		t.Fatal("merge does not cover its inputs")
	}
}
