package bench

import (
	"math"
	"math/bits"
)

// Hist is a log-linear histogram of durations in nanoseconds, in the
// manner of HdrHistogram: values below 2^histSubBits ns are exact, larger
// ones fall in buckets 1/2^histSubBits of their power of two wide, so every
// recorded value is known to within 0.8%. Recording is O(1) and allocation
// free once the bucket array has grown to the largest value seen (a few
// thousand buckets for latencies below a minute). Not safe for concurrent
// use: each client keeps its own and they are merged at the end.
type Hist struct {
	counts   []uint64
	n        uint64
	sum      float64 // ns
	min, max int64
}

const histSubBits = 7

func histBucket(v int64) int {
	if v < 1<<histSubBits {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - histSubBits - 1
	return shift<<histSubBits + int(v>>shift)
}

// histBounds returns the smallest and largest value of bucket i.
func histBounds(i int) (lo, hi int64) {
	if i < 2<<histSubBits {
		return int64(i), int64(i)
	}
	shift := i>>histSubBits - 1
	mant := int64(i - shift<<histSubBits)
	return mant << shift, (mant+1)<<shift - 1
}

// Record adds one value, in nanoseconds.
func (h *Hist) Record(ns int64) {
	i := histBucket(ns)
	if i >= len(h.counts) {
		grown := make([]uint64, max(i+1, 2*len(h.counts), 256))
		copy(grown, h.counts)
		h.counts = grown
	}
	h.counts[i]++
	if h.n == 0 || ns < h.min {
		h.min = ns
	}
	h.max = max(h.max, ns)
	h.n++
	h.sum += float64(ns)
}

// Merge adds o's values to h.
func (h *Hist) Merge(o *Hist) {
	if o.n == 0 {
		return
	}
	if len(o.counts) > len(h.counts) {
		grown := make([]uint64, len(o.counts))
		copy(grown, h.counts)
		h.counts = grown
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of values recorded.
func (h *Hist) Count() uint64 { return h.n }

// Min and Max are the smallest and largest value recorded, 0 when there
// are none.
func (h *Hist) Min() int64 { return h.min }
func (h *Hist) Max() int64 { return h.max }

// Mean is the values' mean in nanoseconds, 0 when there are none.
func (h *Hist) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Quantile returns the q-quantile by nearest rank: the middle of the bucket
// holding the smallest value with at least q of the sample at or below it,
// clamped to the exact minimum and maximum.
func (h *Hist) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(max(math.Ceil(q*float64(h.n)-1e-9), 1))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histBounds(i)
			return min(max(lo+(hi-lo)/2, h.min), h.max)
		}
	}
	return h.max
}

// SummaryUS summarises the histogram in microseconds.
func (h *Hist) SummaryUS() Summary {
	if h.n == 0 {
		return Summary{}
	}
	us := func(ns int64) float64 { return Round(float64(ns)/1e3, 2) }
	return Summary{
		Count: int(h.n),
		Min:   us(h.min),
		Mean:  Round(h.sum/float64(h.n)/1e3, 2),
		P50:   us(h.Quantile(0.5)),
		P90:   us(h.Quantile(0.9)),
		P99:   us(h.Quantile(0.99)),
		P999:  us(h.Quantile(0.999)),
		Max:   us(h.max),
	}
}

// CDFUS returns the empirical CDF in microseconds, one point per non-empty
// bucket (its largest value), thinned to at most maxPoints.
func (h *Hist) CDFUS(maxPoints int) []CDFPoint {
	if h.n == 0 || maxPoints <= 0 {
		return nil
	}
	var all []CDFPoint
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		_, hi := histBounds(i)
		all = append(all, CDFPoint{X: float64(min(hi, h.max)) / 1e3, Frac: float64(seen) / float64(h.n)})
	}
	stride := max(1, (len(all)+maxPoints-1)/maxPoints)
	out := make([]CDFPoint, 0, len(all)/stride+2)
	for i := 0; i < len(all); i += stride {
		out = append(out, all[i])
	}
	if out[len(out)-1] != all[len(all)-1] {
		out = append(out, all[len(all)-1])
	}
	return out
}
