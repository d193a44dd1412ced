package engine

import (
	"context"
	"strings"
	"testing"
)

// TestShardsFromStore: Shards 0 takes the count a store was created with,
// or the machine's for a new store; Gatekeepers 0 the machine's; another
// explicit count than the store's is refused.
func TestShardsFromStore(t *testing.T) {
	dir := t.TempDir()
	open := func(shards, gks int) (*DB, error) {
		cfg := DefaultConfig()
		cfg.DataDir, cfg.Sync, cfg.Shards, cfg.Gatekeepers = dir, false, shards, gks
		return Open(cfg)
	}
	wantShards, wantGKs := MachineTopology()
	db, err := open(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Status(context.Background()); st.Shards != wantShards || st.Gatekeepers != wantGKs {
		t.Errorf("a new store with 0, 0: %d shards, %d gatekeepers; want the machine's %d, %d", st.Shards, st.Gatekeepers, wantShards, wantGKs)
	}
	db.Close()

	dir = t.TempDir()
	if db, err = open(3, 2); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = open(0, 1); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Status(context.Background()); st.Shards != 3 || st.Gatekeepers != 1 {
		t.Errorf("reopened with 0 shards: %d shards, %d gatekeepers; want the store's 3 and 1", st.Shards, st.Gatekeepers)
	}
	db.Close()
	if _, err := open(5, 1); err == nil || !strings.Contains(err.Error(), "created with 3 shards, not 5") {
		t.Fatalf("reopened with 5 shards: %v", err)
	}
}
