package graph

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/weft-db/weft/internal/vclock"
)

func TestAliasIndexTable(t *testing.T) {
	setup := func() *AliasIndex {
		a := NewAliasIndex(DefaultConfig())
		for _, err := range []error{a.Bind("x", "v1", at(1)), a.Bind("y", "v2", at(1)), a.Unbind("y", "v2", at(2))} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	for _, tc := range []struct {
		name string
		op   func(a *AliasIndex) error
		want error
	}{
		{"bind", func(a *AliasIndex) error { return a.Bind("z", "v3", at(3)) }, nil},
		{"bind/rebind_unbound", func(a *AliasIndex) error { return a.Bind("y", "v3", at(3)) }, nil},
		{"bind/taken", func(a *AliasIndex) error { return a.Bind("x", "v3", at(3)) }, ErrAliasExists},
		{"bind/empty_alias", func(a *AliasIndex) error { return a.Bind("", "v3", at(3)) }, ErrInvalid},
		{"bind/empty_handle", func(a *AliasIndex) error { return a.Bind("z", "", at(3)) }, ErrInvalid},
		{"bind/zero_stamp", func(a *AliasIndex) error { return a.Bind("z", "v3", vclock.Stamp{}) }, ErrInvalid},
		{"bind/stale", func(a *AliasIndex) error { return a.Bind("y", "v3", at(1)) }, ErrStampOrder},
		{"unbind", func(a *AliasIndex) error { return a.Unbind("x", "v1", at(3)) }, nil},
		{"unbind/wrong_handle", func(a *AliasIndex) error { return a.Unbind("x", "v2", at(3)) }, ErrAliasMissing},
		{"unbind/unbound", func(a *AliasIndex) error { return a.Unbind("y", "v2", at(3)) }, ErrAliasMissing},
		{"unbind/unknown", func(a *AliasIndex) error { return a.Unbind("q", "v2", at(3)) }, ErrAliasMissing},
		{"load/exists", func(a *AliasIndex) error { return a.Load("y", "", at(1), at(3)) }, ErrAliasExists},
		{"load/last_write_after", func(a *AliasIndex) error { return a.Load("z", "v1", at(4), at(3)) }, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := setup()
			before := aliasDump(a)
			err := tc.op(a)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if err != nil && aliasDump(a) != before {
				t.Fatal("failed write changed the index")
			}
			if err := a.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// aliasDump renders the index's whole state, to check failed writes.
func aliasDump(a *AliasIndex) string {
	als := slices.Sorted(maps.Keys(a.recs))
	out := fmt.Sprintf("live=%d dirty=%v stamps=%v free=%v\n", a.live, a.dirty, a.stamps.ents, a.stamps.free)
	for _, al := range als {
		out += fmt.Sprintf("%s %+v\n", al, *a.recs[al])
	}
	return out
}

// The alias index against a model: bindings visible at R are those the
// replay up to R leaves, LastWrite is the newest Bind/Unbind ≤ R, and
// collection changes no read at or after the watermark.
func TestAliasIndexModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gks := rapid.IntRange(1, 3).Draw(t, "gks")
		stamps := genStamps(t, gks, rapid.IntRange(2, 30).Draw(t, "n"))
		var ord Orderer
		if gks > 1 {
			ord = sumOrder{}
		}
		a := NewAliasIndex(DefaultConfig())
		type write struct {
			idx      int
			alias, h string
			bind     bool
		}
		var hist []write
		cur := map[string]string{}
		check := func(r int) {
			state, last := map[string]string{}, map[string]int{}
			for _, w := range hist {
				if w.idx > r {
					break
				}
				if w.bind {
					state[w.alias] = w.h
				} else {
					delete(state, w.alias)
				}
				last[w.alias] = w.idx
			}
			for _, al := range poolA {
				got, ok := a.Resolve(al, stamps[r], ord)
				if want, wok := state[al]; ok != wok || got != want {
					t.Fatalf("Resolve(%s) at %s = %q %v, model %q %v", al, stamps[r], got, ok, want, wok)
				}
				lw := a.LastWrite(al, stamps[r], ord)
				if i, ok := last[al]; ok != !lw.IsZero() || ok && !sameStamp(lw, stamps[i]) {
					t.Fatalf("LastWrite(%s) at %s = %s", al, stamps[r], lw)
				}
			}
		}
		low := 0
		for i := range stamps {
			al, h := rapid.SampledFrom(poolA).Draw(t, "alias"), rapid.SampledFrom(poolV).Draw(t, "h")
			bind := rapid.Bool().Draw(t, "bind")
			var err, want error
			if bind {
				err = a.Bind(al, h, stamps[i])
				if _, taken := cur[al]; taken {
					want = ErrAliasExists
				}
			} else {
				err = a.Unbind(al, h, stamps[i])
				if cur[al] != h {
					want = ErrAliasMissing
				}
			}
			if !errors.Is(err, want) || (err == nil) != (want == nil) {
				t.Fatalf("bind=%v %s→%s: %v, want %v", bind, al, h, err, want)
			}
			if err == nil {
				hist = append(hist, write{i, al, h, bind})
				if bind {
					cur[al] = h
				} else {
					delete(cur, al)
				}
			}
			check(rapid.IntRange(low, i).Draw(t, "r"))
			if rapid.IntRange(0, 3).Draw(t, "collect") == 0 {
				low = rapid.IntRange(low, i).Draw(t, "w")
				a.Collect(stamps[low])
				for r := low; r <= i; r++ {
					check(r)
				}
			}
			if err := a.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		}
		if a.Len() != len(cur) {
			t.Fatalf("Len %d, model %d", a.Len(), len(cur))
		}
	})
}

func TestAliasIndexLoad(t *testing.T) {
	a := NewAliasIndex(DefaultConfig())
	if err := a.Load("x", "v1", at(2), at(5)); err != nil {
		t.Fatal(err)
	}
	if err := a.Load("gone", "", at(3), at(5)); err != nil {
		t.Fatal(err)
	}
	if h, ok := a.Resolve("x", at(5), nil); !ok || h != "v1" {
		t.Errorf("Resolve x = %q %v", h, ok)
	}
	if _, ok := a.Resolve("gone", at(5), nil); ok {
		t.Error("unbound alias resolves")
	}
	if lw := a.LastWrite("gone", at(5), nil); !sameStamp(lw, at(3)) {
		t.Errorf("LastWrite(gone) = %s", lw)
	}
	if err := a.Unbind("x", "v1", at(6)); err != nil {
		t.Fatal(err)
	}
	if n := a.Collect(at(7)); n != 1 || a.Stamps() != 2 {
		t.Errorf("Collect freed %d, %d stamps left (want the two last writes)", n, a.Stamps())
	}
	if lw := a.LastWrite("x", at(7), nil); !sameStamp(lw, at(6)) {
		t.Errorf("LastWrite(x) after collect = %s", lw)
	}
}
