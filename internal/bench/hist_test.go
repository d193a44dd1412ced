package bench

import (
	"math"
	"slices"
	"testing"
)

func TestHistBuckets(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 127, 128, 129, 255, 256, 257, 1000, 1 << 20, 1<<20 + 12345, 1 << 40, math.MaxInt64} {
		i := histBucket(v)
		lo, hi := histBounds(i)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d [%d, %d]", v, i, lo, hi)
		}
		if float64(hi-lo) > float64(lo)/(1<<histSubBits)+1 {
			t.Errorf("bucket %d [%d, %d] wider than 1/%d of its values", i, lo, hi, 1<<histSubBits)
		}
		if i < prev {
			t.Errorf("bucket of %d (%d) below the previous (%d)", v, i, prev)
		}
		prev = i
	}
	// Buckets tile the line: each starts right after the previous one ends.
	for i := 1; i < 40<<histSubBits; i++ {
		_, hi := histBounds(i - 1)
		lo, _ := histBounds(i)
		if lo != hi+1 {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, lo, i-1, hi)
		}
	}
}

// TestHistQuantiles compares the histogram's percentiles with the exact ones
// of the same sample: they agree to the bucket width.
func TestHistQuantiles(t *testing.T) {
	r := NewRand(5, 0)
	var h, a, b Hist
	var xs []float64
	for i := range 100_000 {
		v := int64(math.Exp(r.NormFloat64()*1.5 + 10)) // log-normal around 22 µs
		h.Record(v)
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
		xs = append(xs, float64(v))
	}
	slices.Sort(xs)
	a.Merge(&b)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := Percentile(xs, q)
		for name, hh := range map[string]*Hist{"one": &h, "merged": &a} {
			got := float64(hh.Quantile(q))
			if math.Abs(got-want) > want/(1<<histSubBits)+1 {
				t.Errorf("%s: quantile(%g) = %g, exact %g", name, q, got, want)
			}
		}
	}
	if h.Quantile(1) != int64(xs[len(xs)-1]) || h.Quantile(0) != int64(xs[0]) {
		t.Errorf("extremes %d %d, want %g %g", h.Quantile(0), h.Quantile(1), xs[0], xs[len(xs)-1])
	}
	s := h.SummaryUS()
	if s.Count != len(xs) || s.P50 > s.P99 || s.Max < s.P999 {
		t.Errorf("summary %+v", s)
	}
	cdf := h.CDFUS(50)
	if len(cdf) == 0 || len(cdf) > 51 || cdf[len(cdf)-1].Frac != 1 {
		t.Errorf("cdf of %d points ending at %v", len(cdf), cdf[len(cdf)-1])
	}
}
