package tao

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// The TAO benchmark's distributions follow LinkBench (Armstrong et al.,
// SIGMOD'13; facebookarchive/linkbench, config/FBWorkload.properties and
// config/Distribution.dat): out-degrees from Facebook's measured degree
// distribution, and Zipf-skewed access to vertices.

// DegreeCDF is an empirical out-degree distribution: Cum[i] is the percentage
// of vertices with out-degree at most Deg[i] (Deg strictly increasing, Cum
// non-decreasing, the last Cum 100), as in the nlinks section of LinkBench's
// Distribution.dat.
type DegreeCDF struct {
	Deg []int64
	Cum []float64
}

// parseNlinks reads the nlinks section of a LinkBench Distribution.dat: a line
// "nlinks", then "degree percentage" lines until the next section's name.
func parseNlinks(r io.Reader) (DegreeCDF, error) {
	var c DegreeCDF
	sc := bufio.NewScanner(r)
	in := false
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) == 1 {
			if in {
				break // the next section
			}
			in = f[0] == "nlinks"
			continue
		}
		if !in {
			continue
		}
		d, err1 := strconv.ParseInt(f[0], 10, 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if len(f) != 2 || err1 != nil || err2 != nil {
			return c, fmt.Errorf("bench: distribution line %d: want \"degree percentage\", got %q", line, sc.Text())
		}
		c.Deg = append(c.Deg, d)
		c.Cum = append(c.Cum, p)
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	return c, c.validate()
}

func (c DegreeCDF) validate() error {
	if len(c.Deg) == 0 || len(c.Deg) != len(c.Cum) {
		return fmt.Errorf("bench: degree distribution has no nlinks points")
	}
	for i := range c.Deg {
		if c.Deg[i] < 0 || c.Cum[i] < 0 || c.Cum[i] > 100 ||
			(i > 0 && (c.Deg[i] <= c.Deg[i-1] || c.Cum[i] < c.Cum[i-1])) {
			return fmt.Errorf("bench: degree distribution point %d (%d, %g) out of order", i, c.Deg[i], c.Cum[i])
		}
	}
	if last := c.Cum[len(c.Cum)-1]; last != 100 {
		return fmt.Errorf("bench: degree distribution ends at %g%%, not 100%%", last)
	}
	return nil
}

// quantile returns the smallest degree with at least q of the vertices at or
// below it (0 < q ≤ 1). Between consecutive degrees this is the step CDF of
// the data; across a gap (the file skips degrees past 4,800, and the thinned
// table more of them) it interpolates linearly.
func (c DegreeCDF) quantile(q float64) int64 {
	p := q * 100
	i := sort.SearchFloat64s(c.Cum, p) // first Cum[i] >= p
	if i >= len(c.Cum) {
		i = len(c.Cum) - 1
	}
	if i == 0 {
		return c.Deg[0]
	}
	d0, d1, c0, c1 := c.Deg[i-1], c.Deg[i], c.Cum[i-1], c.Cum[i]
	if d1 == d0+1 || c1 <= c0 {
		return d1
	}
	d := d0 + int64(math.Ceil((p-c0)/(c1-c0)*float64(d1-d0)))
	return min(max(d, d0+1), d1)
}

// thin keeps every point up to degree 1,000 (where nearly all vertices are)
// and above it only points at least 2% apart in degree, plus the last: the
// quantiles move by at most 2% there, and the table shrinks from ~20,000 to
// ~1,350 points. nlinks.go holds LinkBench's table thinned this way.
func (c DegreeCDF) thin() DegreeCDF {
	var out DegreeCDF
	for i := range c.Deg {
		last := i == len(c.Deg)-1
		if c.Deg[i] <= 1000 || last || float64(c.Deg[i]) >= 1.02*float64(out.Deg[len(out.Deg)-1]) {
			out.Deg = append(out.Deg, c.Deg[i])
			out.Cum = append(out.Cum, c.Cum[i])
		}
	}
	return out
}

// zipf draws ranks 1..n with P(k) ∝ k^-s for any s > 0, by rejection-inversion
// (Hörmann and Derflinger, "Rejection-inversion to generate variates from
// monotone discrete distributions", 1996; the algorithm of Apache Commons'
// RejectionInversionZipfSampler). math/rand's Zipf needs s > 1, and LinkBench's
// access shapes are 0.6–0.8. Sampling costs O(1) and a few logarithms.
type zipf struct {
	n, s          float64
	hx1, hn, skip float64
}

func newZipf(n int, s float64) *zipf {
	if n < 1 || !(s > 0) {
		panic(fmt.Sprintf("bench: zipf over %d ranks with shape %g", n, s))
	}
	z := &zipf{n: float64(n), s: s}
	z.hx1 = z.hIntegral(1.5) - 1
	z.hn = z.hIntegral(z.n + 0.5)
	z.skip = 2 - z.hIntegralInv(z.hIntegral(2.5)-z.h(2))
	return z
}

// rank returns a rank in [1, n].
func (z *zipf) rank(r *rand.Rand) int {
	for {
		u := z.hn + r.Float64()*(z.hx1-z.hn)
		x := z.hIntegralInv(u)
		k := math.Floor(x + 0.5)
		k = min(max(k, 1), z.n)
		if k-x <= z.skip || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int(k)
		}
	}
}

func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is ∫ h = (x^(1-s) - 1)/(1-s), written to stay exact near s = 1.
func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-z.s)*lx) * lx
}

func (z *zipf) hIntegralInv(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding can push it past the domain's edge
	}
	return math.Exp(log1pOverX(t) * x)
}

func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x/2*(1+x/3*(1+x/4))
}

func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(1.0/2-x*(1.0/3-x/4))
}

// accessDist picks vertices: a Zipf rank, then the vertex holding that rank in
// a fixed order (LinkBench's shuffler), so the hot vertices are spread over
// the id space and the shards.
type accessDist struct {
	z     *zipf
	order []int32 // order[rank-1] is the vertex of that rank
}

func (a accessDist) pick(r *rand.Rand) int32 { return a.order[a.z.rank(r)-1] }

// blendDist is LinkBench's blend of an access distribution uncorrelated with
// out-degree (most draws) and one correlated with it, where the rank-k vertex
// is the one with the k-th largest out-degree.
type blendDist struct {
	uncorr, corr accessDist
	pUncorr      float64
}

func (b blendDist) pick(r *rand.Rand) int32 {
	if r.Float64() < b.pUncorr {
		return b.uncorr.pick(r)
	}
	return b.corr.pick(r)
}

// permutation returns a uniformly random permutation of 0..n-1.
func permutation(r *rand.Rand, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}
