package vclock

import (
	"testing"

	"pgregory.net/rapid"
)

// Dissertation §3.3.3: epochs first, then entry-wise comparison.
func TestCompareTable(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want Relation
	}{
		{"e0:[1,2]", "e0:[1,2]", Equal},
		{"e0:[1,2]", "e0:[1,3]", Before},
		{"e0:[2,2]", "e0:[1,3]", Concurrent},
		{"e0:[2,3]", "e0:[1,3]", After},
		{"e1:[0,0]", "e0:[9,9]", After},
		{"e0:[9,9]", "e1:[0,0]", Before},
		{"e0:[1]", "e0:[1,0]", Equal},
		{"e0:[1]", "e0:[1,1]", Before},
		{"e0:[]", "e0:[]", Equal},
	} {
		a, err := Parse(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Parse(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := Compare(a, b); got != tc.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func genClock(n int) *rapid.Generator[Clock] {
	return rapid.Custom(func(t *rapid.T) Clock {
		return Clock{
			Epoch:    rapid.Uint64Range(0, 2).Draw(t, "epoch"),
			Counters: rapid.SliceOfN(rapid.Uint64Range(0, 4), n, n).Draw(t, "counters"),
		}
	})
}

// Comparison is a partial order: antisymmetric and transitive; Merge is an upper bound.
func TestComparePartialOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "n")
		a, b, c := genClock(n).Draw(t, "a"), genClock(n).Draw(t, "b"), genClock(n).Draw(t, "c")
		ab, ba := Compare(a, b), Compare(b, a)
		want := map[Relation]Relation{Equal: Equal, Before: After, After: Before, Concurrent: Concurrent}[ab]
		if ba != want {
			t.Fatalf("Compare(a,b)=%s but Compare(b,a)=%s", ab, ba)
		}
		if LessEq(a, b) && LessEq(b, c) && !LessEq(a, c) {
			t.Fatalf("not transitive: %s ≤ %s ≤ %s", a, b, c)
		}
		m := a.Clone()
		m.Merge(b)
		if !LessEq(a, m) || !LessEq(b, m) {
			t.Fatalf("merge %s of %s and %s is not an upper bound", m, a, b)
		}
		lo, _ := Min([]Clock{a, b})
		if !LessEq(lo, a) || !LessEq(lo, b) {
			t.Fatalf("min %s of %s and %s is not a lower bound", lo, a, b)
		}
	})
}

func TestParseRoundTripAndErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genClock(rapid.IntRange(0, 5).Draw(t, "n")).Draw(t, "c")
		got, err := Parse(c.String())
		if err != nil || Compare(got, c) != Equal || len(got.Counters) != len(c.Counters) {
			t.Fatalf("round trip %s -> %v, %v", c, got, err)
		}
	})
	for _, bad := range []string{"", "e", "1:[1]", "e1[1]", "e1:[1", "ex:[1]", "e1:[1,,2]", "e1:[-1]"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted bad input", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"e0:[]", "e1:[1,2,3]", "e18446744073709551615:[0]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(c.String())
		if err != nil || Compare(again, c) != Equal {
			t.Fatalf("%q parsed to %s which does not round-trip", s, c)
		}
	})
}
