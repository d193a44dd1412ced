package bench

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{
		1e7: "1e7", 2e5: "2e5", 1e-5: "1e-5", 5e-4: "5e-4", 0.001: "0.001", 1000: "1000", 0.5: "0.5", 1e4: "1e4",
	} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	// Three decades or more: only powers of ten are labelled.
	var labels []string
	for _, tk := range (logTicks{}).Ticks(math.Log10(300), math.Log10(2e7)) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"1000", "1e4", "1e5", "1e6", "1e7"}; !slices.Equal(labels, want) {
		t.Errorf("wide axis labels %v, want %v", labels, want)
	}
	// A narrow axis also labels 2 and 5.
	labels = nil
	for _, tk := range (logTicks{}).Ticks(math.Log10(15), math.Log10(120)) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"20", "50", "100"}; !slices.Equal(labels, want) {
		t.Errorf("narrow axis labels %v, want %v", labels, want)
	}
}

func TestChartSaveLogDropsNonPositive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	c := Chart{
		Title: "t", XLabel: "x", YLabel: "y", LogX: true, LogY: true,
		Series: []Series{{Name: "s", Points: plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: -1}, {X: 10, Y: 100}, {X: 100, Y: 1000}}}},
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)
	if got := logPoints(c.Series[0].Points, true, true); len(got) != 2 || got[0] != (plotter.XY{X: 1, Y: 2}) {
		t.Errorf("logPoints = %v", got)
	}
}

// checkPNG checks that path is a PNG of at least 400×250 pixels.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if cfg.Width < 400 || cfg.Height < 250 {
		t.Errorf("%s is %dx%d", path, cfg.Width, cfg.Height)
	}
}
