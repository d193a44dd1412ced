package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
)

// moveTablet calls GET /moveTablet on f's server.
func moveTablet(f *fixture, query, token string) (int, string) {
	req := httptest.NewRequest(http.MethodGet, "/moveTablet?"+query, nil)
	if token != "" {
		req.Header.Set("X-Dgraph-AccessToken", token)
	}
	rec := httptest.NewRecorder()
	f.s.httpMoveTablet(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// TestMoveTabletOnline: in the predicate placement, /moveTablet moves a
// predicate's data (values, edges, reverse edges, index) to another shard;
// queries answer the same before and after, and mutations go on.
func TestMoveTabletOnline(t *testing.T) {
	f := newFixtureWith(t, "name: string @index(exact) .\nfriend: [uid] @reverse .", nil,
		func(c *dgraph.Config) { c.Placement = dgraph.PlacementPredicate })
	ctx := context.Background()
	f.setJSON(ctx, t, `{"set": [{"uid": "_:a", "name": "Ann", "friend": [{"uid": "_:b", "name": "Bob"}]}]}`)
	const q = `{ q(func: eq(name, "Bob")) { name ~friend { name } } }`
	before, _ := json.Marshal(f.query(ctx, t, q, nil))
	db := f.g.Engine().(*engine.DB)
	for _, tablet := range []string{"name", "friend"} {
		u, err := dgraph.PredicateUnit(0, tablet)
		if err != nil {
			t.Fatal(err)
		}
		from := int(db.Directory().HomeOf(u).Shard)
		to := (from + 1) % 4
		code, msg := moveTablet(f, "tablet="+tablet+"&group="+string(rune('1'+to)), "")
		if code != http.StatusOK || !strings.Contains(msg, "moved from group") {
			t.Fatalf("move %s: %d %s", tablet, code, msg)
		}
		if got := int(db.Directory().HomeOf(u).Shard); got != to {
			t.Fatalf("%s on shard %d after a move to %d", tablet, got, to)
		}
	}
	after, _ := json.Marshal(f.query(ctx, t, q, nil))
	if string(before) != string(after) || !strings.Contains(string(after), "Ann") {
		t.Fatalf("before the moves %s, after %s", before, after)
	}
	f.setJSON(ctx, t, `{"set": [{"uid": "_:c", "name": "Cy", "friend": [{"uid": "_:d", "name": "Bob"}]}]}`)
	got, _ := json.Marshal(f.query(ctx, t, q, nil))
	if !strings.Contains(string(got), "Cy") || !strings.Contains(string(got), "Ann") {
		t.Fatalf("after a mutation on the moved tablets: %s", got)
	}
	for _, bad := range []string{"tablet=name&group=0", "tablet=name&group=x", "tablet=&group=1", "tablet=a|b&group=1", "tablet=name&group=9"} {
		if code, msg := moveTablet(f, bad, ""); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad, code, msg)
		}
	}
}

// TestMoveTabletRefused: the vertex placement has no tablets, and with ACL
// on only a guardian of the galaxy moves them.
func TestMoveTabletRefused(t *testing.T) {
	v := newFixture(t, "name: string .", nil)
	if code, msg := moveTablet(v, "tablet=name&group=2", ""); code != http.StatusBadRequest || !strings.Contains(msg, "predicate placement") {
		t.Errorf("vertex placement: %d %s", code, msg)
	}
	a := newFixtureWith(t, "", withACL, func(c *dgraph.Config) { c.Placement = dgraph.PlacementPredicate })
	if code, _ := moveTablet(a, "tablet=name&group=2", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
}
