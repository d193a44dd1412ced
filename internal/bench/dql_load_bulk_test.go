package bench

import (
	"context"
	"testing"
)

// TestCompareDQLLoads loads the first 2,000 film lines offline and online
// (weft bench dql --bulk-load): both commit every quad and leave the same
// number of engine edges.
func TestCompareDQLLoads(t *testing.T) {
	res, err := CompareDQLLoads(context.Background(), dqlFilm(t), "", 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, o := res.BulkMedian, res.OnlineMedian
	if b.Quads < 1900 || b.Quads != o.Quads || b.EngineEdges == 0 || b.EngineEdges != o.EngineEdges {
		t.Fatalf("bulk %+v, online %+v", b, o)
	}
	if len(res.Bulk) != 1 || len(res.Online) != 1 || b.QuadsPerSec <= 0 || res.Speedup <= 0 {
		t.Fatalf("result %+v", res)
	}
}
