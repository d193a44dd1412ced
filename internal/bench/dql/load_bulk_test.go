package dql

import (
	"context"
	"testing"
)

// TestCompareDQLLoads loads the first 2,000 film lines in the three modes
// of weft bench dql --bulk-load: all commit every quad; the transactional
// ones leave the same number of engine edges, the direct one at most as
// many (no emptied index token vertex, nor one per bucket of the UIDs a
// split batch's retry wasted; internal/bulk's tests compare the stores).
func TestCompareDQLLoads(t *testing.T) {
	res, err := CompareLoads(context.Background(), dqlFilm(t), "", 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, o := res.BulkMedian, res.OnlineMedian
	if b.Quads < 1900 || b.Quads != o.Quads || b.EngineEdges == 0 || b.EngineEdges != o.EngineEdges {
		t.Fatalf("bulk %+v, online %+v", b, o)
	}
	if d := res.DirectMedian; d.Quads != o.Quads || d.EngineEdges == 0 || d.EngineEdges > o.EngineEdges || d.EngineEdges < o.EngineEdges*99/100 {
		t.Fatalf("direct %+v, online %+v", d, o)
	}
	if len(res.Bulk) != 1 || len(res.Online) != 1 || len(res.Direct) != 1 || b.QuadsPerSec <= 0 || res.Speedup <= 0 || res.DirectSpeedup <= 0 {
		t.Fatalf("result %+v", res)
	}
}
