package kvcore

import (
	"bytes"
	"errors"
	"testing"
)

func sib(v Version, val string) Sibling { return Sibling{Version: v, Value: []byte(val)} }

func TestApplyTable(t *testing.T) {
	a1 := sib(ver(1, 1), "a1")
	b1 := sib(ver(2, 1), "b1")
	a2 := sib(ver(1, 2), "a2")             // a1's successor
	ab := sib(ver(1, 1, 2, 1, 3, 1), "ab") // saw a1 and b1
	for _, tc := range []struct {
		name    string
		stored  []Sibling
		in      Sibling
		max     int
		want    []Sibling
		outcome Outcome
		err     error
	}{
		{"first write", nil, a1, 8, []Sibling{a1}, Applied, nil},
		{"successor replaces", []Sibling{a1}, a2, 8, []Sibling{a2}, Applied, nil},
		{"concurrent kept as sibling", []Sibling{a1}, b1, 8, []Sibling{a1, b1}, Applied, nil},
		{"resolving write supersedes both", []Sibling{a1, b1}, ab, 8, []Sibling{ab}, Applied, nil},
		{"duplicate", []Sibling{a1, b1}, a1, 8, []Sibling{a1, b1}, Duplicate, nil},
		{"late predecessor is obsolete", []Sibling{a2}, a1, 8, []Sibling{a2}, Obsolete, nil},
		{"too many siblings", []Sibling{a1}, b1, 1, nil, 0, ErrTooManySiblings},
		{"resolving write always fits", []Sibling{a1, b1}, ab, 1, []Sibling{ab}, Applied, nil},
		{"reused dot", []Sibling{a1}, sib(ver(1, 1), "other"), 8, nil, 0, ErrVersionReused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, o, err := Apply(tc.stored, tc.in, tc.max)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if o != tc.outcome || !sameSiblings(got, tc.want) {
				t.Fatalf("Apply = %v %s, want %v %s", got, o, tc.want, tc.outcome)
			}
		})
	}
}

func TestMergeKeepsMaximalVersionsOnce(t *testing.T) {
	a1, a2, b1 := sib(ver(1, 1), "a1"), sib(ver(1, 2), "a2"), sib(ver(2, 1), "b1")
	got := Merge([]Sibling{a1}, []Sibling{a2, b1}, []Sibling{b1}, nil)
	if !sameSiblings(got, []Sibling{a2, b1}) {
		t.Fatalf("Merge = %v", got)
	}
	if !CoveredBy(a1.Version, got) || CoveredBy(ver(3, 1), got) {
		t.Fatal("CoveredBy wrong")
	}
	if len(Merge()) != 0 {
		t.Fatal("Merge of nothing is not empty")
	}
}

func sameSiblings(a, b []Sibling) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if cmpVersion(a[i].Version, b[i].Version) != 0 || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func TestSiblingsCodecRoundTrip(t *testing.T) {
	for _, sibs := range [][]Sibling{
		nil,
		{sib(ver(1, 1), "")},
		{sib(ver(1, 1, 1<<60, 300), "hello"), sib(ver(2, 7), string(make([]byte, 1000)))},
	} {
		b := AppendSiblings(nil, sibs)
		got, err := DecodeSiblings(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSiblings(got, sibs) {
			t.Fatalf("round trip: %v != %v", got, sibs)
		}
	}
	for _, bad := range [][]byte{
		nil, {0}, {2, 0}, {1}, {1, 1}, {1, 1, 0, 0}, // empty version
		{1, 1, 1, 1, 0, 0},          // counter 0
		{1, 0, 0},                   // trailing
		{1, 0x80, 0},                // non-minimal varint
		{1, 1, 1, 1, 1, 5, 'a'},     // short value
		{1, 1, 2, 2, 1, 1, 1, 0, 0}, // unsorted actors
	} {
		if _, err := DecodeSiblings(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeSiblings(%v) = %v, want ErrCorrupt", bad, err)
		}
	}
}

// FuzzDecodeSiblings: the decoder never panics, and what it accepts
// re-encodes to the same bytes (the form is canonical).
func FuzzDecodeSiblings(f *testing.F) {
	f.Add(AppendSiblings(nil, []Sibling{sib(ver(1, 1, 9, 4), "x"), sib(ver(2, 1), "")}))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		sibs, err := DecodeSiblings(b)
		if err != nil {
			return
		}
		if again := AppendSiblings(nil, sibs); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs: %x vs %x", again, b)
		}
	})
}
