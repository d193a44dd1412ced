package pebble

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

func TestReadSetHit(t *testing.T) {
	reads := func(points []string, spans ...span) *readSet {
		r := &readSet{}
		for _, p := range points {
			r.AddPoint([]byte(p))
		}
		for _, sp := range spans {
			r.AddSpan(sp)
		}
		return r
	}
	cases := []struct {
		name    string
		r       *readSet
		written []string
		hit     string
		ok      bool
	}{
		{"nothing read", reads(nil), []string{"a"}, "", false},
		{"point hit", reads([]string{"b"}), []string{"a", "b", "c"}, "b", true},
		{"point miss", reads([]string{"bb"}), []string{"a", "b", "c"}, "", false},
		{"many points, few writes", reads([]string{"a", "c", "e", "g"}), []string{"e"}, "e", true},
		{"few points, many writes", reads([]string{"f"}), []string{"a", "b", "c", "d", "f"}, "f", true},
		{"span start inclusive", reads(nil, span{Start: "b", End: "d"}), []string{"a", "b"}, "b", true},
		{"span end exclusive", reads(nil, span{Start: "b", End: "d"}), []string{"a", "d", "e"}, "", false},
		{"span inside", reads(nil, span{Start: "b", End: "d"}), []string{"a", "c\xff", "z"}, "c\xff", true},
		{"unbounded span", reads(nil, span{Start: "m", Inf: true}), []string{"a", "zzz"}, "zzz", true},
		{"empty span", reads(nil, span{Start: "b", End: "b"}), []string{"b"}, "", false},
		{"empty key is a key", reads([]string{""}), []string{"", "a"}, "", true},
	}
	for _, tc := range cases {
		if got, ok := tc.r.Hit(tc.written); ok != tc.ok || got != tc.hit {
			t.Errorf("%s: hit = %q,%v, want %q,%v", tc.name, got, ok, tc.hit, tc.ok)
		}
	}
}

func TestHistory(t *testing.T) {
	h := newHistory(4, 1<<20)
	push := func(v uint64, keys ...string) {
		e := entry{version: v, keys: keys}
		for _, k := range keys {
			e.bytes += len(k)
		}
		h.push(e)
	}
	readOf := func(keys ...string) *readSet {
		r := &readSet{}
		for _, k := range keys {
			r.AddPoint([]byte(k))
		}
		return r
	}
	push(1, "a")
	push(2, "b", "c")
	push(2, "d") // two Txns in one group share a version
	cases := []struct {
		snap uint64
		read string
		want error
	}{
		{0, "a", store.ErrConflict},
		{1, "a", nil}, // snapshot already has version 1
		{1, "d", store.ErrConflict},
		{2, "d", nil},
		{0, "z", nil},
	}
	for _, tc := range cases {
		if err := h.check(tc.snap, readOf(tc.read)); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("snap %d read %s: %v, want %v", tc.snap, tc.read, err, tc.want)
		}
	}
	push(3, "e") // 5 keys > 4: evicts version 1
	if h.floor != 1 || h.keys != 4 {
		t.Fatalf("floor %d keys %d, want 1 and 4", h.floor, h.keys)
	}
	if err := h.check(0, readOf("z")); !errors.Is(err, store.ErrTooOld) {
		t.Errorf("snapshot 0 after evicting version 1: %v, want ErrTooOld", err)
	}
	if err := h.check(1, readOf("e")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("snapshot 1 reading e: %v, want conflict", err)
	}
	if err := h.check(0, readOf()); err != nil {
		t.Errorf("empty read set: %v", err)
	}
	push(9, "f", "g", "h", "i", "j") // larger than the bound on its own
	if h.floor != 9 || h.keys != 0 {
		t.Fatalf("floor %d keys %d after an oversized entry, want 9 and 0", h.floor, h.keys)
	}
	if err := h.check(9, readOf("f")); err != nil {
		t.Errorf("snapshot 9: %v", err)
	}
	if len(h.ents)-h.head != 0 || cap(h.ents) > 16 {
		t.Errorf("history holds %d entries in a slice of cap %d", len(h.ents)-h.head, cap(h.ents))
	}
}

func TestHistoryBytesBound(t *testing.T) {
	h := newHistory(1<<20, 10)
	h.push(entry{version: 1, keys: []string{"aaaaaa"}, bytes: 6})
	h.push(entry{version: 2, keys: []string{"bbbbbb"}, bytes: 6})
	if h.floor != 1 || h.bytes != 6 {
		t.Fatalf("floor %d bytes %d, want 1 and 6", h.floor, h.bytes)
	}
}

func TestHistoryVersionOrder(t *testing.T) {
	h := newHistory(10, 100)
	h.push(entry{version: 5})
	defer func() {
		if recover() == nil {
			t.Fatal("pushing an older version did not panic")
		}
	}()
	h.push(entry{version: 4})
}
