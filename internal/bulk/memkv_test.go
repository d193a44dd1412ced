package bulk

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/txn"
)

// TestMemKVAgainstMap runs random writes, rolled-back transactions, spills
// and scans against a plain map, the oracle.
func TestMemKVAgainstMap(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		opts := &pebble.Options{FS: vfs.NewMem(), DisableWAL: true, Logger: quietLogger{}}
		pdb, err := pebble.Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		m := newMemKV(pdb, opts, "db")
		oracle := map[string]string{}
		keyOf := func() []byte {
			h := fmt.Sprint("v", r.IntN(8))
			switch r.IntN(4) {
			case 0:
				return txn.VertexKey(h)
			case 1:
				return txn.PropKey(h, fmt.Sprint("p", r.IntN(6)))
			case 2:
				return txn.EdgeKey(h, fmt.Sprint("e", r.IntN(6)))
			}
			return txn.InKey(h, fmt.Sprint("v", r.IntN(3)), fmt.Sprint("e", r.IntN(3)))
		}
		for step := 0; step < 3000; step++ {
			switch op := r.IntN(20); {
			case op < 8: // a transaction of a few writes, kept or rolled back
				m.begin()
				next := maps.Clone(oracle)
				for range 1 + r.IntN(4) {
					k := keyOf()
					if r.IntN(3) == 0 {
						_ = m.Delete(k)
						delete(next, string(k))
					} else {
						v := fmt.Sprint("val", r.IntN(100))
						_ = m.Set(k, []byte(v))
						next[string(k)] = v
					}
				}
				if r.IntN(3) == 0 {
					m.rollback()
				} else {
					m.commit()
					oracle = next
				}
			case op < 9:
				if err := m.spill(); err != nil {
					t.Fatal(err)
				}
			case op < 15:
				k := keyOf()
				v, ok, err := m.Get(k)
				want, wantOK := oracle[string(k)]
				if err != nil || ok != wantOK || string(v) != want {
					t.Fatalf("seed %d step %d: Get %q = %q %v %v, want %q %v", seed, step, k, v, ok, err, want, wantOK)
				}
			default:
				h := fmt.Sprint("v", r.IntN(8))
				se := [][2][]byte{pair(txn.PropPrefix(h)), pair(txn.EdgePrefix(h)), pair(txn.InPrefix(h))}[r.IntN(3)]
				start, end := se[0], se[1]
				var got []string
				if err := m.Scan(start, end, 0, func(k, v []byte) error {
					got = append(got, string(k)+"="+string(v))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, k := range slices.Sorted(maps.Keys(oracle)) {
					if bytes.HasPrefix([]byte(k), start) {
						want = append(want, k+"="+oracle[k])
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: scan %q = %q, want %q", seed, step, start, got, want)
				}
			}
		}
		if err := m.Scan([]byte("V"), []byte("W"), 0, nil); err != errScanRange {
			t.Fatalf("a range scan: %v, want errScanRange", err)
		}
		pdb.Close()
	}
}

func pair(a, b []byte) [2][]byte { return [2][]byte{a, b} }
