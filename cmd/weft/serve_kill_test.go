package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/testproc"
)

// TestServeKill9KeepsAcknowledgedCommits runs a write load against a real
// `weft serve` process, kills it with SIGKILL mid-load, restarts it on the
// same data directory and checks that every acknowledged transaction is
// there, whole (issue: no acknowledged transaction is ever lost).
func TestServeKill9KeepsAcknowledgedCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := testproc.Start(t, testproc.Spec{
		Name: "serve", Path: bin, Ready: "weft serving",
		Args:    []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--grpc-addr", addrs[0], "--http-addr", ""},
		LogPath: filepath.Join(dir, "serve.log"),
	})
	var acked []string // "w<g>-<i>": vertex with an edge to w<g>-<i-1>
	for round := 0; round < 3; round++ {
		acked = append(acked, load(t, addrs[0], round, 300*time.Millisecond)...)
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("restart after kill -9: %v (log %s)", err, p.LogPath())
		}
		verify(t, addrs[0], acked)
	}
	if len(acked) < 30 {
		t.Fatalf("only %d transactions acknowledged: the load did not run", len(acked))
	}
	t.Logf("%d acknowledged transactions survived 3 kill -9 restarts", len(acked))
}

// load commits chains of vertices from 4 clients for d, then returns the
// handles whose commit was acknowledged; the kill comes while more are in
// flight (the clients keep going until the process dies).
func load(t *testing.T, addr string, round int, d time.Duration) []string {
	t.Helper()
	c, err := weft.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				h := fmt.Sprintf("r%d-w%d-%d", round, g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				tx, err := c.Begin(ctx)
				if err == nil {
					tx.CreateVertex(h)
					tx.SetVertexProp(weft.Handle(h), "i", int64(i))
					if i > 0 {
						tx.CreateEdge(weft.Handle(h), "prev", weft.Handle(fmt.Sprintf("r%d-w%d-%d", round, g, i-1)))
					}
					_, err = tx.Commit(ctx)
				}
				cancel()
				if err != nil {
					return
				}
				mu.Lock()
				acked = append(acked, h)
				mu.Unlock()
			}
		}(g)
	}
	time.Sleep(d)
	mu.Lock()
	out := append([]string(nil), acked...)
	mu.Unlock()
	// The caller kills the server under the clients' feet: they stop at their
	// first error. Commits acknowledged after this snapshot are not checked,
	// which is fine: only acknowledged ones must survive.
	go func() { wg.Wait(); c.Close() }()
	return out
}

func verify(t *testing.T, addr string, acked []string) {
	t.Helper()
	c, err := weft.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range acked {
		v, err := tx.GetVertex(ctx, weft.Handle(h))
		if err != nil {
			t.Fatal(err)
		}
		if !v.Exists {
			t.Fatalf("acknowledged vertex %s lost after kill -9", h)
		}
		if _, ok := v.Props["i"]; !ok {
			t.Fatalf("vertex %s lost its property: the transaction is not whole", h)
		}
	}
}
