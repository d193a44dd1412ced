package twohop

import (
	"path/filepath"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
)

// plots draws queries per second and server CPU per query against the
// client count, one line per interface.
func plots(out, name string, r *Results) ([]string, error) {
	var qps, cpu []bench.Series
	index := map[string]int{}
	for _, c := range r.Cells {
		i, ok := index[c.Interface]
		if !ok {
			i = len(qps)
			index[c.Interface] = i
			qps = append(qps, bench.Series{Name: c.Interface})
			cpu = append(cpu, bench.Series{Name: c.Interface})
		}
		qps[i].Points = append(qps[i].Points, plotter.XY{X: float64(c.Clients), Y: c.QPS})
		cpu[i].Points = append(cpu[i].Points, plotter.XY{X: float64(c.Clients), Y: c.ServerCPUMS})
	}
	var files []string
	for _, ch := range []struct {
		file  string
		chart bench.Chart
	}{
		{name + "-qps.png", bench.Chart{Title: "Two-hop count: queries per second", XLabel: "clients", YLabel: "queries/s",
			YFrom0: true, Headroom: 0.3, LegendLeft: true, Series: qps}},
		{name + "-cpu.png", bench.Chart{Title: "Two-hop count: server CPU per query", XLabel: "clients", YLabel: "ms of CPU per query",
			YFrom0: true, Headroom: 0.3, Series: cpu}},
	} {
		if err := ch.chart.Save(filepath.Join(out, ch.file)); err != nil {
			return files, err
		}
		files = append(files, ch.file)
	}
	return files, nil
}
