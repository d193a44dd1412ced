package bulk

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTableSort: the Table's multikey quicksort orders random keys (short,
// long, with NUL bytes, sharing long prefixes, repeated) as bytes.Compare.
func TestTableSort(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		tb := &Table{memMax: 1 << 30}
		const alphabet = "\x00\x01ab|z\xff"
		prefixes := []string{"", "E_dg|i|3|term|name@en|0|", "I0x1\x00", "V0x", "P0x1f\x00name"}
		var want [][]byte
		for range r.IntN(300) {
			k := []byte(prefixes[r.IntN(len(prefixes))])
			for range r.IntN(12) {
				k = append(k, alphabet[r.IntN(len(alphabet))])
			}
			if err := tb.Set(k, []byte(fmt.Sprint(len(want)))); err != nil {
				t.Fatal(err)
			}
			want = append(want, k)
		}
		tb.sort()
		slices.SortFunc(want, bytes.Compare)
		for i := range tb.recs {
			if got := tb.key(&tb.recs[i]); !bytes.Equal(got, want[i]) {
				t.Fatalf("seed %d: key %d is %q, want %q", seed, i, got, want[i])
			}
		}
	}
}
