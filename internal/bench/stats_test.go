package bench

import (
	"math"
	"testing"
)

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(n - i) // descending, so Summarize must sort
	}
	return xs
}

func TestPercentileNearestRank(t *testing.T) {
	tests := []struct {
		n    int
		q    float64
		want float64
	}{
		{100, 0.50, 50}, {100, 0.90, 90}, {100, 0.99, 99}, {100, 0.999, 100}, {100, 1, 100}, {100, 0, 1},
		{1000, 0.999, 999}, {1000, 0.5, 500}, {10, 0.25, 3}, {1, 0.99, 1}, {3, 0.5, 2},
	}
	for _, tc := range tests {
		s := seq(tc.n)
		for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
			s[i], s[j] = s[j], s[i]
		}
		if got := Percentile(s, tc.q); got != tc.want {
			t.Errorf("Percentile(1..%d, %g) = %g, want %g", tc.n, tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 0.5)) {
		t.Error("Percentile of an empty sample is not NaN")
	}
}

func TestSummarize(t *testing.T) {
	xs := seq(1000)
	s := Summarize(xs)
	want := Summary{Count: 1000, Min: 1, Mean: 500.5, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000}
	if s != want {
		t.Errorf("Summarize(1..1000) = %+v, want %+v", s, want)
	}
	if xs[0] != 1000 {
		t.Error("Summarize modified its input")
	}
	if Summarize(nil) != (Summary{}) {
		t.Error("Summarize(nil) is not zero")
	}
}

func TestMedian(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("odd median %g", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("even median %g", got)
	}
}

func TestCDFThinning(t *testing.T) {
	s := seq(10_000)
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	c := CDF(s, 200)
	if len(c) > 201 || len(c) < 100 {
		t.Fatalf("CDF has %d points, want about 200", len(c))
	}
	if c[0].X != 1 || c[len(c)-1].X != 10_000 || c[len(c)-1].Frac != 1 {
		t.Errorf("CDF ends %+v … %+v", c[0], c[len(c)-1])
	}
	for i := 1; i < len(c); i++ {
		if c[i].X < c[i-1].X || c[i].Frac <= c[i-1].Frac {
			t.Fatalf("CDF not increasing at %d: %+v then %+v", i, c[i-1], c[i])
		}
		// Every step must be a true point of the empirical CDF of 1..n.
		if math.Abs(c[i].Frac-c[i].X/10_000) > 1e-12 {
			t.Fatalf("step %+v is off the CDF", c[i])
		}
	}
}

func TestLinearFit(t *testing.T) {
	xs := []float64{1, 2, 4, 8, 16}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3*x + 2
	}
	f := LinearFit(xs, ys)
	if math.Abs(f.Slope-3) > 1e-12 || math.Abs(f.Intercept-2) > 1e-12 || math.Abs(f.R2-1) > 1e-12 {
		t.Errorf("exact line fitted as %+v", f)
	}
	noisy := LinearFit([]float64{0, 1, 2, 3}, []float64{0, 2, 1, 3})
	if noisy.R2 >= 1 || noisy.R2 <= 0 {
		t.Errorf("noisy fit R² = %g, want in (0, 1)", noisy.R2)
	}
	if f := LinearFit([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(f.Slope) {
		t.Errorf("fit of equal xs = %+v, want NaN", f)
	}
	// y = 10x + 40 over 20 doublings, the largest point 1% high: ordinary
	// least squares trades the intercept for that point (≈ −1500); the
	// relative fit keeps it.
	var lx, ly []float64
	for i := range 20 {
		x := float64(int(1) << i)
		lx, ly = append(lx, x), append(ly, 10*x+40)
	}
	ly[19] *= 1.01
	if f := RelativeLinearFit(lx, ly); math.Abs(f.Slope-10) > 0.05 || math.Abs(f.Intercept-40) > 1 {
		t.Errorf("relative fit of 10x+40 = %+v", f)
	}
	if f := LinearFit(lx, ly); f.Intercept > -1000 {
		t.Errorf("ordinary fit of 10x+40 with a high last point = %+v, want intercept ≈ −1500", f)
	}
	if f := LogLogFit([]float64{1, 10, 100, 0}, []float64{5, 50, 500, 7}); math.Abs(f.Slope-1) > 1e-12 {
		t.Errorf("power law y = 5x fitted with exponent %g", f.Slope)
	}
}
