package graph

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNameIndexAgainstMap runs random puts, deletes and lookups against a
// Go map, with small tables so runs wrap around the end and deletions shift
// long runs back.
func TestNameIndexAgainstMap(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		n := newNames()
		ref := map[string]uint32{}
		universe := 50 + r.IntN(2000)
		for step := range 20000 {
			s := fmt.Sprintf("h%d", r.IntN(universe))
			switch r.IntN(3) {
			case 0: // intern
				id := n.intern(s)
				if want, ok := ref[s]; ok && want != id {
					t.Fatalf("seed %d step %d: intern %q = %d, had %d", seed, step, s, id, want)
				}
				ref[s] = id
				n.ents[id].refs++
			case 1: // release
				id, ok := ref[s]
				if !ok {
					continue
				}
				n.ents[id].refs = 0
				n.release(id)
				delete(ref, s)
			}
			probe := fmt.Sprintf("h%d", r.IntN(universe))
			got, ok := n.lookup(probe)
			want, wok := ref[probe]
			if ok != wok || got != want {
				t.Fatalf("seed %d step %d: lookup %q = %d,%v; want %d,%v", seed, step, probe, got, ok, want, wok)
			}
		}
		if n.len() != len(ref) {
			t.Fatalf("seed %d: %d names, want %d", seed, n.len(), len(ref))
		}
		for s, id := range ref {
			if got, ok := n.lookup(s); !ok || got != id {
				t.Fatalf("seed %d: %q lost (%d, %v; want %d)", seed, s, got, ok, id)
			}
		}
		if err := checkNames("test", &n, refsOf(n)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func refsOf(n names) []uint32 {
	refs := make([]uint32, len(n.ents))
	for i := range n.ents {
		refs[i] = n.ents[i].refs
	}
	return refs
}

func BenchmarkNameLookup(b *testing.B) {
	n := newNames()
	const size = 1 << 20
	keys := make([]string, size)
	for i := range keys {
		keys[i] = fmt.Sprintf("v%d", i*7919)
		n.intern(keys[i])
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = r.IntN(size)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, ok := n.lookup(keys[order[i&(1<<16-1)]])
		if !ok || n.ents[id].refs != 0 {
			b.Fatal("lost")
		}
	}
}

// BenchmarkNameLookupGoMap is the same load on the map[string]uint32 the
// index replaced, for comparison.
func BenchmarkNameLookupGoMap(b *testing.B) {
	m := map[string]uint32{}
	const size = 1 << 20
	keys := make([]string, size)
	ents := make([]nameEntry, size+1)
	for i := range keys {
		keys[i] = fmt.Sprintf("v%d", i*7919)
		ents[i+1].name = strings.Clone(keys[i])
		m[ents[i+1].name] = uint32(i + 1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = r.IntN(size)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, ok := m[keys[order[i&(1<<16-1)]]]
		if !ok || ents[id].refs != 0 {
			b.Fatal("lost")
		}
	}
}
