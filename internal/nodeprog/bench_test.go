package nodeprog_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// Benchmarks on gnutella. They measure; they assert nothing about time.
// "runner" drives one Coordinator and one Runner directly (the engine's own
// cost per program); "cluster" goes through the harness with S shards.

// BenchmarkGetEdges is TAO's assoc_range: the first 50 out-edges of a
// vertex (most gnutella vertices have 0 or 10).
func BenchmarkGetEdges(b *testing.B) {
	g := gnutellaGraph(b)
	params := make([]json.RawMessage, 1024)
	for i := range params {
		params[i] = json.RawMessage(fmt.Sprintf(`{"node":"%d","limit":50}`, 1+i*61%62586))
	}
	b.Run("runner", func(b *testing.B) {
		r, _ := nodeprog.NewRunner(reg, 0, nodeprog.Config{})
		one := func(string) int { return 0 }
		var id nodeprog.ProgID
		for b.Loop() {
			id++
			c, bs, err := nodeprog.NewCoordinator(reg, id, "get_edges", params[int(id)%len(params)], one, nodeprog.CoordinatorConfig{})
			if err != nil {
				b.Fatal(err)
			}
			_, rep, err := r.Run(bs, g.Lookup, one)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Step(rep); err != nil || !c.Done() {
				b.Fatal(err)
			}
			if _, err := c.Result(); err != nil {
				b.Fatal(err)
			}
			r.Finish(id)
		}
	})
	for _, shards := range []int{1, 4} {
		b.Run("cluster/S="+strconv.Itoa(shards), func(b *testing.B) {
			c := progtest.NewCluster(g, reg, progtest.Options{Shards: shards})
			i := 0
			for b.Loop() {
				if _, _, err := c.Run("get_edges", params[i%len(params)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkReachability: random-pair reachability (Weaver's
// reachability_bench on gnutella), with path and pathless.
func BenchmarkReachability(b *testing.B) {
	g := gnutellaGraph(b)
	pairs := make([]json.RawMessage, 64)
	for i := range pairs {
		pairs[i] = json.RawMessage(fmt.Sprintf(`{"src":"%d","dest":"%d"}`, 1+i*977%62586, 1+i*7919%62586))
	}
	for _, prog := range []string{"reachability", "pathless_reachability"} {
		for _, shards := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/S=%d", prog, shards), func(b *testing.B) {
				c := progtest.NewCluster(g, reg, progtest.Options{Shards: shards})
				i, hops := 0, 0
				for b.Loop() {
					_, st, err := c.Run(prog, pairs[i%len(pairs)])
					if err != nil {
						b.Fatal(err)
					}
					i++
					hops += st.Hops
				}
				b.ReportMetric(float64(hops)/float64(i), "hops/op")
			})
		}
	}
}
