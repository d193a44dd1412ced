package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/txn"
)

// placementOf builds a placement answer with moved units and their held
// lists.
func placementOf(base, shards uint32, moved map[string][]uint32) placementAnswer {
	p := placementAnswer{Base: base, Shards: shards}
	for u, held := range moved {
		p.Moved = append(p.Moved, struct {
			Unit  string   `json:"unit"`
			Shard uint32   `json:"shard"`
			Held  []uint32 `json:"held"`
		}{Unit: u, Shard: held[len(held)-1], Held: held})
	}
	return p
}

// heldOf is a unit's held list under p, as pickMove must read it.
func heldOf(t *testing.T, p placementAnswer, unit string) []uint32 {
	t.Helper()
	for _, m := range p.Moved {
		if m.Unit == unit {
			return m.Held
		}
	}
	u, err := txn.ParseUnit(unit, p.Base)
	if err != nil {
		t.Fatalf("pickMove chose %q: %v", unit, err)
	}
	return []uint32{u.BaseShard(p.Base)}
}

func TestPickMove(t *testing.T) {
	keys := []string{"la/0", "la/1", "bank/3", "rw/7"}
	rng := rand.New(rand.NewPCG(1, 2))

	// Nothing moved, two shards: a key's unit, to the shard that is not
	// its base.
	p := placementOf(2, 2, nil)
	for range 50 {
		c, ok := pickMove(rng, p, keys)
		if !ok || c.Key == "" {
			t.Fatalf("pickMove = %+v, %v; want a key's unit", c, ok)
		}
		u := txn.UnitOf(c.Key, 2)
		if c.Unit != u.String() || c.To != 1-u.BaseShard(2) {
			t.Fatalf("pickMove = %+v; want %s to shard %d", c, u, 1-u.BaseShard(2))
		}
	}

	// Every key's unit is held by both shards (moved, its old copy not
	// collected): a random slot instead, to a shard outside its held list.
	moved := map[string][]uint32{}
	for _, k := range keys {
		moved[txn.UnitOf(k, 2).String()] = []uint32{0, 1}
	}
	moved["s:5"] = []uint32{0, 1}
	p = placementOf(2, 2, moved)
	for range 200 {
		c, ok := pickMove(rng, p, keys)
		if !ok {
			continue // every try may hit a held slot: rare, allowed
		}
		if c.Key != "" || moved[c.Unit] != nil {
			t.Fatalf("pickMove = %+v: a unit held by every shard", c)
		}
		if h := heldOf(t, p, c.Unit); slices.Contains(h, c.To) || c.To >= 2 {
			t.Fatalf("pickMove = %+v: target in held %v", c, h)
		}
	}

	// A grown cluster (base 2, 3 shards) with one key's unit moved 0 → 2
	// and held by both: it may go to 1 only.
	u := txn.UnitOf("la/0", 2)
	from := u.BaseShard(2)
	other := map[uint32]uint32{0: 2, 1: 2}[from]
	p = placementOf(2, 3, map[string][]uint32{u.String(): {from, other}})
	want := uint32(3) - from - other
	for range 50 {
		c, ok := pickMove(rng, p, []string{"la/0"})
		if !ok || c.Unit != u.String() || c.To != want {
			t.Fatalf("pickMove = %+v, %v; want %s to shard %d", c, ok, u, want)
		}
	}

	// No keys: a random slot in range.
	p = placementOf(4, 4, nil)
	for range 100 {
		c, ok := pickMove(rng, p, nil)
		if !ok || c.Key != "" {
			t.Fatalf("pickMove(no keys) = %+v, %v", c, ok)
		}
		if h := heldOf(t, p, c.Unit); slices.Contains(h, c.To) || c.To >= 4 {
			t.Fatalf("pickMove = %+v: target in held %v or out of range", c, h)
		}
	}

	// One shard, or no placement: nothing can move.
	for _, p := range []placementAnswer{placementOf(1, 1, nil), {}, placementOf(3, 2, nil)} {
		if c, ok := pickMove(rng, p, keys); ok {
			t.Errorf("pickMove(base %d, %d shards) = %+v, want none", p.Base, p.Shards, c)
		}
	}

	// Deterministic per seed.
	p = placementOf(2, 3, map[string][]uint32{txn.UnitOf("bank/3", 2).String(): {0, 1, 2}})
	draw := func() []moveChoice {
		r := rand.New(rand.NewPCG(7, 7))
		var out []moveChoice
		for range 20 {
			c, _ := pickMove(r, p, keys)
			out = append(out, c)
		}
		return out
	}
	if a, b := draw(), draw(); !slices.Equal(a, b) {
		t.Errorf("pickMove is not deterministic:\n%v\n%v", a, b)
	}
}

func TestMoveJitter(t *testing.T) {
	a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		d := moveJitter(a, 100*time.Millisecond)
		if d < 50*time.Millisecond || d >= 150*time.Millisecond {
			t.Fatalf("moveJitter(100ms) = %v, want [50ms, 150ms)", d)
		}
		if e := moveJitter(b, 100*time.Millisecond); e != d {
			t.Fatalf("moveJitter is not deterministic: %v, %v", d, e)
		}
	}
}

func TestClassifyMove(t *testing.T) {
	errBody := func(code string) []byte {
		return fmt.Appendf(nil, `{"error": {"code": %q, "message": "m", "retryable": true}}`, code)
	}
	for _, c := range []struct {
		status int
		body   []byte
		err    error
		out    moveOutcome
		code   string
	}{
		{200, []byte(`{"unit":"s:1","from":1,"to":0}`), nil, moveCommitted, ""},
		{409, errBody("ABORTED"), nil, moveRefused, "ABORTED"},
		{400, errBody("INVALID_ARGUMENT"), nil, moveRefused, "INVALID_ARGUMENT"},
		{429, errBody("OVERLOADED"), nil, moveRefused, "OVERLOADED"},
		{404, []byte("not found"), nil, moveRefused, "HTTP 404"},
		{503, errBody("UNAVAILABLE"), nil, moveFailed, "UNAVAILABLE"},
		{500, nil, nil, moveFailed, "HTTP 500"},
		{0, nil, errors.New("connection refused"), moveFailed, "transport"},
		{0, nil, fmt.Errorf("post: %w", context.DeadlineExceeded), moveFailed, "timeout"},
	} {
		if out, code := classifyMove(c.status, c.body, c.err); out != c.out || code != c.code {
			t.Errorf("classifyMove(%d, %s, %v) = %v, %q; want %v, %q", c.status, c.body, c.err, out, code, c.out, c.code)
		}
	}
}

// TestMoverCounts runs the mover against a fake gatekeeper that commits,
// refuses and fails moves, and an address nothing listens on: every
// request it sends must be valid under the placement it read, and every
// outcome counted.
func TestMoverCounts(t *testing.T) {
	var mu sync.Mutex
	moved := map[string][]uint32{}
	var requests, bad int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/placement":
			_ = json.NewEncoder(w).Encode(placementOf(2, 2, moved))
			return
		case "/v1/move":
		default:
			http.NotFound(w, r)
			return
		}
		var req struct {
			Unit  string `json:"unit"`
			Shard uint32 `json:"shard"`
		}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &req) != nil {
			bad++
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		u, err := txn.ParseUnit(req.Unit, 2)
		held, ok := moved[req.Unit]
		if !ok && err == nil {
			held = []uint32{u.BaseShard(2)}
		}
		if err != nil || slices.Contains(held, req.Shard) || req.Shard >= 2 {
			bad++
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"INVALID_ARGUMENT","message":"held","retryable":false}}`))
			return
		}
		requests++
		switch requests % 3 {
		case 0:
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":{"code":"ABORTED","message":"raced","retryable":true}}`))
		case 1:
			moved[req.Unit] = append(held, req.Shard)
			_, _ = fmt.Fprintf(w, `{"unit":%q,"from":%d,"to":%d}`, req.Unit, held[len(held)-1], req.Shard)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"UNAVAILABLE","message":"epoch","retryable":true}}`))
		}
	}))
	defer srv.Close()
	dead, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	live := strings.TrimPrefix(srv.URL, "http://")
	j := &journal{start: time.Now(), log: slog.New(slog.DiscardHandler)}
	m := newMover(2*time.Millisecond, 9, func() []string { return []string{live, live, live, dead} },
		func() []string { return []string{"la/0", "la/1", "bank/0"} }, j, j.log)
	stop := m.start(t.Context())
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if s := m.snapshot(); (s.Moves >= 3 && s.Refusals >= 2 && s.Failures >= 3) || time.Now().After(end) {
			break
		}
	}
	s := stop()
	mu.Lock()
	defer mu.Unlock()
	if bad > 0 {
		t.Errorf("%d invalid move requests (a unit to a shard holding it)", bad)
	}
	if s.Moves < 3 || s.Refusals < 2 || s.Failures < 3 || s.Errors["ABORTED"] != s.Refusals ||
		s.Errors["UNAVAILABLE"]+s.Errors["placement: transport"] != s.Failures {
		t.Errorf("counts %+v (%d move requests)", s, requests)
	}
	if s.Moves > len(moved)*2 || s.KeyMoves > s.Moves {
		t.Errorf("counts %+v, %d units moved", s, len(moved))
	}
	after := *s
	time.Sleep(20 * time.Millisecond)
	if again := m.snapshot(); again.Moves != after.Moves || again.Failures != after.Failures {
		t.Errorf("the mover ran on after its stop: %+v, then %+v", after, again)
	}
}

func TestMoveReport(t *testing.T) {
	if n := moveNotes(nil); n != nil {
		t.Errorf("moveNotes(no mover) = %v", n)
	}
	if n := moveNotes(&MoveStats{Every: "1s", Moves: 2}); n != nil {
		t.Errorf("moveNotes(2 moves) = %v", n)
	}
	none := &MoveStats{Every: "1s", Refusals: 1, Failures: 4, Errors: map[string]int{"ABORTED": 1, "timeout": 4}}
	if n := moveNotes(none); len(n) != 1 || !strings.Contains(n[0], "moved no unit") {
		t.Errorf("moveNotes(no move) = %v", n)
	}
	cc := DefaultClusterConfig()
	rep := &Report{Valid: true, Cluster: &cc, MoveStats: &MoveStats{Every: "100ms", Moves: 7, KeyMoves: 5, Refusals: 2,
		Failures: 1, Errors: map[string]int{"ABORTED": 2, "timeout": 1}}, Notes: moveNotes(none)}
	txt := rep.String()
	for _, want := range []string{"VALID", "moves (every 100ms): 7 committed (5 of a workload key's unit), 2 refused, 1 failed",
		"notes:\n  - the mover"} {
		if !strings.Contains(txt, want) {
			t.Errorf("report text lacks %q:\n%s", want, txt)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	if flat["moves"] != 7.0 || flat["move_refusals"] != 2.0 || flat["move_failures"] != 1.0 || flat["notes"] == nil {
		t.Errorf("report.json: %s", b)
	}
	b, _ = json.Marshal(&Report{})
	if strings.Contains(string(b), "move") {
		t.Errorf("report.json without a mover mentions moves: %s", b)
	}
}

func TestWorkloadKeys(t *testing.T) {
	cfg := DefaultConfig()
	h := &harness{cfg: cfg}
	var runs []*clientRun
	for _, name := range AllWorkloads {
		wl, err := newWorkload(name, h)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := wl.(keyed); !ok {
			t.Errorf("%s does not name its keys", name)
		}
		runs = append(runs, &clientRun{wl: wl})
	}
	keys := workloadKeys(runs)
	for _, want := range []string{"la/0", "rw/7", "bank/0", "ring/3", "set/0", "sf/0", "sb/0"} {
		if !slices.Contains(keys, want) {
			t.Errorf("workload keys %v lack %s", keys, want)
		}
	}
}
