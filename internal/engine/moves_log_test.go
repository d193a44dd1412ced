package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/txn"
)

// TestMoveLogLines: an online move logs its start and its end (done, or
// failed with the error), with the unit and both shards.
func TestMoveLogLines(t *testing.T) {
	var buf bytes.Buffer
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	db := openTest(t, cfg)
	ctx := context.Background()
	u := txn.UnitOf("a", db.Directory().Base())
	from := int(db.Directory().HomeOf(u).Shard)
	to := (from + 1) % cfg.Shards
	if err := db.MoveUnit(ctx, u, to); err != nil {
		t.Fatal(err)
	}
	// Back to the shard still holding its old copy: refused.
	if err := db.MoveUnit(ctx, u, from); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("moving back: %v, want ErrBadRequest", err)
	}
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["unit"] == nil {
			continue // not a move's line
		}
		if m["unit"] != u.String() {
			t.Errorf("move line of unit %v, want %s: %s", m["unit"], u, line)
		}
		msgs = append(msgs, m["msg"].(string))
	}
	want := []string{"move started", "move done", "move started", "move failed"}
	if strings.Join(msgs, ",") != strings.Join(want, ",") {
		t.Fatalf("move lines %q, want %q:\n%s", msgs, want, buf.String())
	}
}
