package kronos_test

import (
	"context"
	"sync"
	"testing"
	"time"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
)

// One client used by many goroutines: every mutation succeeds exactly once
// (each in-flight call has its own session lane).
func TestConcurrentMutationsOnOneClient(t *testing.T) {
	cfg := kronos.DefaultServerConfig()
	cfg.Addr, cfg.DataDir, cfg.Sync = "127.0.0.1:0", t.TempDir(), false
	s, err := kronos.NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c, err := kc.Dial([]string{s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const workers, each = 16, 20
	ids := make(chan uint64, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				id, err := c.CreateEvent(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d returned twice", id)
		}
		seen[id] = true
	}
	// Stats are published after the Ready whose replies were sent, so the
	// last create may show a moment later.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		st, err := c.Stats(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) == workers*each && st.Created == workers*each {
			break
		}
		if len(seen) != workers*each || st.Created > workers*each || time.Now().After(deadline) {
			t.Fatalf("%d ids returned, %d created; want %d", len(seen), st.Created, workers*each)
		}
	}
}
