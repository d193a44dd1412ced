package postgres

import (
	"bytes"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

func TestReadSetHit(t *testing.T) {
	var r readSet
	r.AddPoint([]byte("p"))
	r.AddPoint([]byte("")) // the empty key is a key
	r.AddSpan(span{Start: "m", End: "n"})
	r.AddSpan(span{Start: "x", Inf: true})
	cases := []struct {
		written []string
		hit     string
		ok      bool
	}{
		{nil, "", false},
		{[]string{"a", "o", "q"}, "", false},
		{[]string{"a", "p"}, "p", true},
		{[]string{""}, "", true},
		{[]string{"l", "m"}, "m", true},            // a span's start is in it
		{[]string{"n", "w"}, "", false},            // its end is not
		{[]string{"mzzz"}, "mzzz", true},           // inside
		{[]string{"x\xff\xff"}, "x\xff\xff", true}, // unbounded span
		{[]string{"b", "c", "zz"}, "zz", true},
	}
	for _, tc := range cases {
		got, ok := r.Hit(tc.written)
		if ok != tc.ok || got != tc.hit {
			t.Errorf("hit(%q) = %q, %v; want %q, %v", tc.written, got, ok, tc.hit, tc.ok)
		}
	}
}

func TestReadSetArrays(t *testing.T) {
	var r readSet
	for _, k := range []string{"c", "a", "b"} {
		r.AddPoint([]byte(k))
	}
	r.AddSpan(span{Start: "", End: "k"})
	r.AddSpan(span{Start: "q", Inf: true})
	points, los, his := readArrays(&r)
	if !slices.EqualFunc(points, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, bytes.Equal) {
		t.Errorf("points %q, want sorted a b c", points)
	}
	// The empty start travels as an empty bytea, not NULL; an unbounded
	// end as a bound above every valid key.
	if los[0] == nil || len(los[0]) != 0 || string(his[0]) != "k" || string(los[1]) != "q" {
		t.Errorf("spans %q %q", los, his)
	}
	maxKey := bytes.Repeat([]byte{0xff}, store.KeyLenMax)
	if bytes.Compare(his[1], maxKey) <= 0 {
		t.Errorf("infinity %d bytes is not above the largest key", len(his[1]))
	}
}

func TestWriteSet(t *testing.T) {
	var w writeSet
	w.Put([]byte("b"), []byte("1"), false)
	w.Put([]byte("a"), nil, true)
	w.Put([]byte("c"), []byte{}, false)
	w.Put([]byte("b"), []byte("22"), false)
	if got := w.Between("a", "c", false); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("between a c = %q", got)
	}
	if got := w.Between("b", "", true); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("between b ∞ = %q", got)
	}
	keys, vals := writeArrays(&w)
	if len(keys) != 3 || vals[0] != nil || string(vals[1]) != "22" || vals[2] == nil || len(vals[2]) != 0 {
		t.Errorf("arrays %q %q: want a deletion as nil and an empty value as empty, not nil", keys, vals)
	}
	if w.Bytes != 1+1+2+1 {
		t.Errorf("bytes %d, want 5 (keys a b c, value 22)", w.Bytes)
	}
	c := w.Clone()
	w.Put([]byte("d"), []byte("4"), false)
	if _, ok := c.Get([]byte("d")); ok || len(c.Keys()) != 3 {
		t.Errorf("clone changed with the original: %q", c.Keys())
	}
}
