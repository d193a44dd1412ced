package bench

import (
	"math"
	"slices"
)

// Summary is the distribution of a sample (in the sample's own unit).
type Summary struct {
	Count int     `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Summarize returns the distribution of xs (which it does not modify).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Summary{
		Count: len(s),
		Min:   s[0],
		Mean:  sum / float64(len(s)),
		P50:   Percentile(s, 0.50),
		P90:   Percentile(s, 0.90),
		P99:   Percentile(s, 0.99),
		P999:  Percentile(s, 0.999),
		Max:   s[len(s)-1],
	}
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted by the
// nearest-rank method: the smallest value with at least q of the sample at or
// below it. It never interpolates, so every answer is an observed value.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	// The epsilon keeps q·n that lands a hair above an integer in floating
	// point (0.999·1000) from taking the next rank.
	rank := int(math.Ceil(q*float64(len(sorted)) - 1e-9))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Median returns the median of xs (the mean of the middle two for an even
// count), without modifying xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// CDFPoint is one step of an empirical distribution function: a fraction
// Frac of the sample is at or below X.
type CDFPoint struct {
	X    float64 `json:"x"`
	Frac float64 `json:"frac"`
}

// CDF returns the empirical CDF of sorted, thinned to at most maxPoints steps
// (always keeping the first and last): step i is (sorted[i], (i+1)/n).
func CDF(sorted []float64, maxPoints int) []CDFPoint {
	n := len(sorted)
	if n == 0 || maxPoints <= 0 {
		return nil
	}
	stride := max(1, (n+maxPoints-1)/maxPoints)
	out := make([]CDFPoint, 0, n/stride+2)
	for i := 0; i < n; i += stride {
		out = append(out, CDFPoint{X: sorted[i], Frac: float64(i+1) / float64(n)})
	}
	if last := out[len(out)-1]; last.Frac < 1 {
		out = append(out, CDFPoint{X: sorted[n-1], Frac: 1})
	}
	return out
}

// Fit is a least-squares line y = Slope·x + Intercept, with R² its
// coefficient of determination.
type Fit struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	R2        float64 `json:"r2"`
}

// LinearFit fits a line to the points (xs[i], ys[i]) by ordinary least
// squares. It needs at least two distinct xs; otherwise the fit is NaN.
func LinearFit(xs, ys []float64) Fit {
	return WeightedLinearFit(xs, ys, nil)
}

// RelativeLinearFit fits a line minimising the squared relative error
// ((fit−y)/y)², that is weighted least squares with weights 1/y²: for data
// spanning decades (time against length) every point counts alike, where
// ordinary least squares would fit the largest points only.
func RelativeLinearFit(xs, ys []float64) Fit {
	ws := make([]float64, len(ys))
	for i, y := range ys {
		if y != 0 {
			ws[i] = 1 / (y * y)
		}
	}
	return WeightedLinearFit(xs, ys, ws)
}

// WeightedLinearFit fits a line by weighted least squares (nil weights: all
// 1); R² is the weighted coefficient of determination. It needs at least two
// distinct xs of positive weight; otherwise the fit is NaN.
func WeightedLinearFit(xs, ys, ws []float64) Fit {
	nan := Fit{Slope: math.NaN(), Intercept: math.NaN(), R2: math.NaN()}
	if len(xs) != len(ys) || len(xs) < 2 || (ws != nil && len(ws) != len(xs)) {
		return nan
	}
	w := func(i int) float64 {
		if ws == nil {
			return 1
		}
		return ws[i]
	}
	var sw, mx, my float64
	for i := range xs {
		sw += w(i)
		mx += w(i) * xs[i]
		my += w(i) * ys[i]
	}
	if sw <= 0 {
		return nan
	}
	mx /= sw
	my /= sw
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += w(i) * dx * dx
		sxy += w(i) * dx * dy
		syy += w(i) * dy * dy
	}
	if sxx == 0 {
		return nan
	}
	slope := sxy / sxx
	r2 := 1.0
	if syy > 0 {
		r2 = sxy * sxy / (sxx * syy)
	}
	return Fit{Slope: slope, Intercept: my - slope*mx, R2: r2}
}

// LogLogFit fits log10(y) = Slope·log10(x) + Intercept over the points with
// positive coordinates: Slope is the exponent of a power law y ∝ x^Slope
// (1 for linear growth).
func LogLogFit(xs, ys []float64) Fit {
	var lx, ly []float64
	for i := range xs {
		if i < len(ys) && xs[i] > 0 && ys[i] > 0 {
			lx = append(lx, math.Log10(xs[i]))
			ly = append(ly, math.Log10(ys[i]))
		}
	}
	return LinearFit(lx, ly)
}
