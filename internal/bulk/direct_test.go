package bulk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/bulk"
	"github.com/weft-db/weft/internal/dgraph"
)

// loadDirect loads data into a new bulk store in dir with a direct load
// (dgraph.LoadRDFDirect), as weft load --bulk does for RDF. memMax bounds
// the load's memory (0: the bulk default); tablesMin is the least number of
// sorted tables the load must have written (small memMax: several).
func loadDirect(dir, sch string, data []byte, memMax int, cfg dgraph.LoadConfig) (dgraph.LoadStats, error) {
	ctx := context.Background()
	bcfg := bulk.DefaultConfig(dir)
	if memMax == 0 {
		memMax = bcfg.MemBytesMax
	}
	db, err := bulk.Create(bcfg)
	if err != nil {
		return dgraph.LoadStats{}, err
	}
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), dgraph.BulkGraphConfig())
	if err == nil && sch != "" {
		_, err = g.Alter(ctx, sch)
	}
	var st dgraph.LoadStats
	if err == nil {
		st, err = g.LoadRDFDirect(ctx, bytes.NewReader(data), "data", cfg, db, memMax)
	}
	if err != nil {
		return st, errors.Join(err, db.Abort())
	}
	return st, db.Finish()
}

// TestFilmDirectEqualsOnline: the first 20,000 film lines (2,000 under the
// race detector) loaded directly give the same store as loaded online
// (stamps, UIDs and buckets normalised; token vertices the online load
// emptied left out), and the same query answers.
func TestFilmDirectEqualsOnline(t *testing.T) {
	lines, quadsMin := 20000, int64(19000)
	if raceEnabled {
		lines, quadsMin = 2000, 1900
	}
	data, sch := filmLines(t, lines)
	tmp := t.TempDir()
	onlineDir, directDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "direct")
	ost := loadOnline(t, onlineDir, dgraph.PlacementVertex, sch, data)
	dst, err := loadDirect(directDir, sch, data, 0, loadConfig())
	if err != nil {
		t.Fatal(err)
	}
	if ost.Quads != dst.Quads || ost.Nodes != dst.Nodes || ost.Edges != dst.Edges || ost.Values != dst.Values ||
		ost.Skipped != dst.Skipped || dst.Quads < quadsMin {
		t.Fatalf("online %+v, direct %+v", ost, dst)
	}
	od, on := storeDumpWith(t, onlineDir, shards, true)
	dd, dn := storeDumpWith(t, directDir, shards, true)
	diffDumps(t, collapseInternal(od), collapseInternal(dd))
	compareQueries(t, onlineDir, directDir, on, dn, filmQueries())
}

// TestRandomDirectEqualsOnline: small random RDF files (XIDs, languages,
// facets, @reverse, @count, list and single predicates set several times,
// term, exact, int and hash indexes) loaded directly and online.
func TestRandomDirectEqualsOnline(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			data := randomRDF(r, 40+r.IntN(200))
			tmp := t.TempDir()
			onlineDir, directDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "direct")
			ost := loadOnline(t, onlineDir, dgraph.PlacementVertex, randomSchema, data)
			cfg := loadConfig()
			cfg.BatchQuads = []int{1000, 7}[seed%2] // batches matter to the xid values' order only
			dst, err := loadDirect(directDir, randomSchema, data, 0, cfg)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, data)
			}
			if ost.Quads != dst.Quads || ost.Nodes != dst.Nodes || ost.Edges != dst.Edges || ost.Values != dst.Values {
				t.Fatalf("online %+v, direct %+v", ost, dst)
			}
			od, on := storeDumpWith(t, onlineDir, shards, true)
			dd, dn := storeDumpWith(t, directDir, shards, true)
			diffDumps(t, collapseInternal(od), collapseInternal(dd))
			compareQueries(t, onlineDir, directDir, on, dn, randomQueries)
		})
	}
}

// collapseInternal leaves out the UID lease record and keeps one of each normalised record of the index,
// has-set and directory vertices themselves (vertex records, access keys,
// directory edges and their in-edge entries): how many buckets a token's
// or a predicate's members are spread over follows from the UIDs a load
// handed out (a transactional load that splits a batch too large for one
// transaction hands out new UIDs for the retry), while every member's entry
// is still compared one for one.
func collapseInternal(lines []string) []string {
	seen := map[string]bool{}
	out := lines[:0]
	for _, l := range lines {
		internal := strings.HasPrefix(l, `V"_dg|`) || strings.HasPrefix(l, `L"_dg|`) ||
			strings.HasPrefix(l, `E"_dg|d|`) || (strings.HasPrefix(l, `I"_dg|i|`) && strings.Contains(l, `\x00_dg|d|`))
		if strings.HasPrefix(l, `P"_dg|uids\x00next"`) {
			continue // the split batches' retries lease more: TestServedAfterDirect checks the lease
		}
		if internal {
			if seen[l] {
				continue
			}
			seen[l] = true
		}
		out = append(out, l)
	}
	return out
}
