package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ikv "github.com/weft-db/weft/internal/kv"
)

// cluster starts n in-process servers on loopback ports, each with its own
// Pebble directory, and returns their addresses.
func cluster(t testing.TB, n int) ([]string, []*ikv.Server) {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = l.Addr().String()
		l.Close()
	}
	dir := t.TempDir()
	servers := make([]*ikv.Server, n)
	for i := range servers {
		cfg := ikv.DefaultServerConfig()
		cfg.Peers = addrs
		cfg.Replica.Self = i
		cfg.Replica.Dir = filepath.Join(dir, fmt.Sprint(i))
		s, err := ikv.NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		servers[i] = s
		t.Cleanup(func() { s.Stop() })
	}
	return addrs, servers
}

func TestClientQuorumRoundTrip(t *testing.T) {
	addrs, servers := cluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := Dial(ctx, addrs[2:], Options{RoundTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if q := a.Quorum(); q.N != 3 || q.R != 2 || q.W != 2 {
		t.Fatalf("quorum from metadata: %+v", q)
	}
	b, _ := Dial(ctx, addrs, Options{R: 3, W: 3})
	defer b.Close()

	// Two blind writers make siblings; a read-then-write resolves them.
	if _, err := a.Put(ctx, "k", []byte("from a"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", []byte("from b"), nil); err != nil {
		t.Fatal(err)
	}
	g, err := b.Get(ctx, "k")
	if err != nil || len(g.Siblings) != 2 {
		t.Fatalf("siblings: %v %v", g.Siblings, err)
	}
	if _, err := a.Put(ctx, "k", []byte("merged"), g.Context); err != nil {
		t.Fatal(err)
	}
	g, err = b.Get(ctx, "k")
	if err != nil || len(g.Siblings) != 1 || !bytes.Equal(g.Siblings[0].Value, []byte("merged")) {
		t.Fatalf("after resolving: %v %v", g.Siblings, err)
	}
	if g, _ := a.Get(ctx, "absent"); len(g.Siblings) != 0 {
		t.Fatalf("absent key: %v", g.Siblings)
	}

	// One server down: R=W=2 works, R=3 does not (after two rounds).
	servers[0].Stop()
	if _, err := a.Write(ctx, "k2", []byte("v")); err != nil {
		t.Fatalf("W=2 with one server down: %v", err)
	}
	if _, err := a.Get(ctx, "k2", WithQuorum(3, 0)); !errors.Is(err, ErrQuorum) {
		t.Fatalf("R=3 with one server down: %v", err)
	}
	if _, err := b.Put(ctx, "k3", []byte("v"), nil); !errors.Is(err, ErrQuorum) {
		t.Fatalf("W=3 with one server down: %v", err)
	}
}

func TestClientErrorsCrossTheWire(t *testing.T) {
	addrs, _ := cluster(t, 1)
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Meta().N != 1 {
		t.Fatalf("N=%d with one server", c.Meta().N)
	}
	if _, err := c.Put(ctx, strings.Repeat("k", 2000), []byte("v"), nil); !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("key too long: %v, want QUORUM wrapping INVALID", err)
	}
	if _, err := c.Candidates(ctx, 0, 0, 10); !errors.Is(err, ErrInvalid) {
		t.Fatalf("candidates without monitoring: %v", err)
	}
	if _, err := Dial(ctx, []string{"127.0.0.1:1"}, Options{}); err == nil {
		t.Fatal("dial to nothing succeeded")
	}
}

// BenchmarkClientWriteN3W2 measures quorum PUTs (N=3, W=2, fsync on) over
// loopback HTTP against three in-process servers.
func BenchmarkClientWriteN3W2(b *testing.B) {
	addrs, _ := cluster(b, 3)
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := c.Put(ctx, fmt.Sprintf("bench-%d", i%1000), []byte("value"), nil); err != nil && !errors.Is(err, ErrQuorum) {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkClientGetN3R2 measures quorum GETs (N=3, R=2).
func BenchmarkClientGetN3R2(b *testing.B) {
	addrs, _ := cluster(b, 3)
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i := range 100 {
		c.Write(ctx, fmt.Sprintf("bench-%d", i), []byte("value"))
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := c.Get(ctx, fmt.Sprintf("bench-%d", i%100)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestClientWorkersBoundedAndStopped checks the replica-call workers: many
// concurrent requests never start more than workersMax, they are reused,
// and Close stops them all.
func TestClientWorkersBoundedAndStopped(t *testing.T) {
	addrs, _ := cluster(t, 3)
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 40)
	for g := range 40 {
		go func() {
			var err error
			for i := range 10 {
				if _, err = c.Write(ctx, fmt.Sprintf("w-%d-%d", g, i), []byte("v")); err != nil {
					break
				}
				if n := c.workers.Load(); n > workersMax {
					err = fmt.Errorf("%d workers, at most %d allowed", n, workersMax)
					break
				}
			}
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := c.workers.Load(); n == 0 {
		t.Fatal("no worker kept for the next calls")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.workers.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still running after Close", c.workers.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil { // a second Close is harmless
		t.Fatal(err)
	}
}
