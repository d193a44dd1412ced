package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// GET /v1/placement and POST /v1/move on a real engine: a move is seen in
// the directory and reads still find the vertex; bad moves are refused
// with nothing changed; a fake engine (no moves) refuses clearly.
func TestHTTPPlacementAndMove(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.DataDir = t.TempDir()
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "v"}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewHTTPHandler(db, nil, api.HTTPOptions{}))
	defer srv.Close()
	call := func(method, path, body string, out any) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	type placement struct {
		Base, Shards uint32
		Slots        []int
		Moved        []struct {
			Unit        string
			Shard, From uint32
			Held        []uint32
		}
		Rebalance []json.RawMessage
	}
	var p placement
	if st := call("GET", "/v1/placement", "", &p); st != 200 || p.Base != uint32(cfg.Shards) || len(p.Slots) != cfg.Shards ||
		p.Slots[0] != txn.SlotsPerShard || len(p.Moved) != 0 || len(p.Rebalance) != 0 {
		t.Fatalf("placement: %d %+v", st, p)
	}
	u := txn.UnitOf("v", uint32(cfg.Shards))
	from := u.BaseShard(uint32(cfg.Shards))
	to := (from + 1) % uint32(cfg.Shards)
	var mv struct {
		Unit     string
		From, To uint32
	}
	if st := call("POST", "/v1/move", fmt.Sprintf(`{"unit": %q, "shard": %d}`, u, to), &mv); st != 200 || mv.Unit != u.String() || mv.From != from || mv.To != to {
		t.Fatalf("move: %d %+v", st, mv)
	}
	if st := call("GET", "/v1/placement", "", &p); st != 200 || len(p.Moved) != 1 || p.Moved[0].Unit != u.String() ||
		p.Moved[0].Shard != to || p.Slots[to] != txn.SlotsPerShard+1 || len(p.Rebalance) != 1 {
		t.Fatalf("placement after the move: %d %+v", st, p)
	}
	if v, err := db.GetVertex(ctx, engine.Snapshot{}, engine.VertexRef{Name: "v"}, engine.DefaultReadOptions()); err != nil || !v.Exists {
		t.Fatalf("v after the move: %+v %v", v, err)
	}
	for _, body := range []string{`{"unit": "s:99999", "shard": 0}`, `{"unit": "x", "shard": 0}`, fmt.Sprintf(`{"unit": %q}`, u),
		fmt.Sprintf(`{"unit": %q, "shard": 99}`, u), fmt.Sprintf(`{"unit": %q, "shard": %d}`, u, from), `{"unit": "s:1", "shard": 0, "x": 1}`} {
		var e struct{ Error struct{ Code string } }
		if st := call("POST", "/v1/move", body, &e); st != 400 || e.Error.Code != "INVALID_ARGUMENT" {
			t.Errorf("move %s: %d %+v, want 400 INVALID_ARGUMENT", body, st, e)
		}
	}
	if db.Directory().Moved() != 1 || db.Directory().HomeOf(u).Shard != to {
		t.Fatal("a refused move changed the directory")
	}
	e := newEnv(t)
	st, out, _ := e.do(t, "GET", "/v1/placement", "")
	if code, _, _ := errOf(t, out); st != 400 || code != "INVALID_ARGUMENT" {
		t.Fatalf("placement on an engine without moves: %d %v", st, out)
	}
}
