package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a Chart.
type Series struct {
	Name   string
	Points plotter.XYs
	// Line draws the points joined and without markers (for dense data and
	// fitted lines); otherwise each point is marked and joined.
	Line   bool
	Dashed bool
}

// Chart is a line chart saved as a PNG.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// YFrom0 starts a linear y axis at zero, so ratios read off the picture.
	YFrom0 bool
	// Headroom adds this fraction of the y range above the data, to keep the
	// legend off the lines.
	Headroom float64
	// LegendLeft and LegendBottom move the legend from the top right corner
	// to where the data leaves room.
	LegendLeft, LegendBottom bool
	Series                   []Series
}

// Save renders the chart to path (a .png), creating its directory.
func (c Chart) Save(path string) error {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Add(plotter.NewGrid())
	for i, s := range c.Series {
		// Log axes plot log10 of the values on a linear scale with ticks
		// labelled in the values' units: gonum's LogScale centres an axis
		// label at the arithmetic midpoint of the range, which on a log axis
		// pushes the plot down.
		pts := logPoints(s.Points, c.LogX, c.LogY)
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("bench: plot %s: %w", s.Name, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if !s.Line {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return fmt.Errorf("bench: plot %s: %w", s.Name, err)
			}
			sc.Color = plotutil.Color(i)
			sc.Shape = plotutil.Shape(i)
			sc.Radius = vg.Points(3)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, thumbs...)
		}
	}
	p.Legend.Top = !c.LegendBottom
	p.Legend.Left = c.LegendLeft
	p.Legend.XOffs = vg.Points(-8)
	if c.LegendLeft {
		p.Legend.XOffs = vg.Points(8)
	}
	p.Legend.YOffs = vg.Points(-6)
	if c.LegendBottom {
		p.Legend.YOffs = vg.Points(6)
	}
	p.Legend.Padding = vg.Points(4)
	if c.LogX {
		p.X.Tick.Marker = logTicks{}
	}
	if c.LogY {
		p.Y.Tick.Marker = logTicks{}
	} else if c.YFrom0 {
		p.Y.Min = 0
	}
	p.Y.Max += c.Headroom * (p.Y.Max - p.Y.Min)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// logPoints returns pts with log10 taken of the coordinates on log axes,
// dropping points a log axis cannot show.
func logPoints(pts plotter.XYs, x, y bool) plotter.XYs {
	out := make(plotter.XYs, 0, len(pts))
	for _, pt := range pts {
		if (x && pt.X <= 0) || (y && pt.Y <= 0) {
			continue
		}
		if x {
			pt.X = math.Log10(pt.X)
		}
		if y {
			pt.Y = math.Log10(pt.Y)
		}
		out = append(out, pt)
	}
	return out
}

// logTicks marks an axis that holds log10 of the values: labels at 1, 2 and
// 5 times each power of ten when it spans less than three decades, and at the
// powers of ten otherwise, with unlabelled ticks at the other multiples.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	first, last := math.Floor(lo), math.Ceil(hi)
	major := []float64{1}
	if last-first < 3 {
		major = []float64{1, 2, 5}
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		base := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			at := math.Log10(m * base)
			if at < lo-1e-9 || at > hi+1e-9 {
				continue
			}
			t := plot.Tick{Value: at}
			if slices.Contains(major, m) {
				t.Label = tickLabel(m * base)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

var _ plot.Ticker = logTicks{}

// tickLabel writes v plainly between 0.001 and 10000 and as 1e5 or 2e-4
// outside that range.
func tickLabel(v float64) string {
	if v >= 1e-3 && v < 1e4 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // "1e+07", "2e-05"
	mant, exp, _ := strings.Cut(s, "e")
	exp = strings.TrimPrefix(exp, "+")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
	if neg {
		exp = "-" + exp
	}
	return mant + "e" + exp
}
