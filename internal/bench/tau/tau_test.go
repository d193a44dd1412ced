package tau

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A short run per τ counts operations, announces and Kronos calls, and
// writes its JSON and plots.
func TestRunTauQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Taus: []time.Duration{time.Millisecond, 100 * time.Millisecond},
		Gatekeepers: 2, Shards: 2, Vertices: 100, Clients: 4, Duration: 300 * time.Millisecond, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	pts := res.Results.([]Point)
	if len(pts) != 2 {
		t.Fatalf("points %+v", pts)
	}
	for _, p := range pts {
		if p.Ops == 0 || p.Commits == 0 || p.Programs == 0 || p.Announces == 0 || p.Errors != 0 {
			t.Fatalf("τ %vµs measured nothing worth the name: %+v", p.TauMicros, p)
		}
	}
	for _, f := range []string{"tau.json", "tau.png", "tau-latency.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
