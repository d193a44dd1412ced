package order_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

// The same assignments, given to an in-process Kronos and to a Kronos
// server through Remote, get the same answers: Remote translates faithfully
// (clock references, orders, strengths, reversals, contradictions).
func TestRemoteMatchesLocal(t *testing.T) {
	cfg := kronos.DefaultServerConfig()
	cfg.Addr, cfg.DataDir, cfg.Sync = "127.0.0.1:0", t.TempDir(), false
	srv, err := kronos.NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := kc.Dial([]string{srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	remote := order.Remote{C: c}
	local, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	const gks = 3
	// Stamps as gatekeepers take them: each ticks its own clock and now and
	// then merges a peer's, so every gatekeeper's chain is increasing.
	clocks := make([]vclock.Clock, gks)
	for g := range clocks {
		clocks[g] = vclock.New(1, gks)
	}
	var stamps []vclock.Stamp
	for range 40 {
		g := r.IntN(gks)
		if r.IntN(3) == 0 {
			clocks[g].Merge(clocks[r.IntN(gks)])
		}
		clocks[g].Tick(g)
		stamps = append(stamps, vclock.Stamp{Clock: clocks[g].Clone(), Owner: uint32(g)})
	}
	var concurrent, reversed, contradicted int
	for range 200 {
		var batch []kronos.Assignment
		for range 1 + r.IntN(4) {
			a, b := stamps[r.IntN(len(stamps))], stamps[r.IntN(len(stamps))]
			if vclock.CompareStamps(a, b) != vclock.Concurrent {
				continue
			}
			ord := kronos.Before
			if r.IntN(2) == 0 {
				ord = kronos.After
			}
			st := kronos.Prefer
			if r.IntN(4) == 0 {
				st = kronos.Must
			}
			batch = append(batch, kronos.Assignment{A: order.Ref(a), Order: ord, B: order.Ref(b), Strength: st})
		}
		if len(batch) == 0 {
			continue
		}
		concurrent += len(batch)
		want, werr := local.Assign(ctx, batch)
		got, gerr := remote.Assign(ctx, batch)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("batch %v: local error %v, remote error %v", batch, werr, gerr)
		}
		if werr != nil {
			// A contradicted must pair is the same error both ways, so
			// order.Must says ErrStale (retry with a fresh stamp) for a
			// remote Kronos too.
			var wce, gce *kronos.ConflictError
			if errors.As(werr, &wce) != errors.As(gerr, &gce) || (wce != nil && *wce != *gce) {
				t.Fatalf("batch %v: local error %v, remote error %v", batch, werr, gerr)
			}
			contradicted++
			continue
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("assignment %v: local %+v, remote %+v", batch[i], want[i], got[i])
			}
			if want[i].Reversed {
				reversed++
			}
		}
	}
	if concurrent == 0 || reversed == 0 || contradicted == 0 {
		t.Fatalf("the workload exercised too little: %d assignments, %d reversed", concurrent, reversed)
	}
	t.Logf("%d assignments, %d reversed preferences, %d contradicted batches", concurrent, reversed, contradicted)
	for g := range gks {
		if err := remote.Cleanup(ctx, uint32(g), clocks[g]); err != nil {
			t.Fatalf("cleanup: %v", err)
		}
	}
}

// Assign waits out a Kronos without a leader (here: not started yet, as in
// an election after the leader's loss) for up to its patience, and then
// answers; past the patience it fails with ErrUnavailable.
func TestRemoteWaitsForALeader(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := kc.Dial([]string{addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, b := vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{2, 1}}, Owner: 0},
		vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{1, 2}}, Owner: 1}
	as := []kronos.Assignment{{A: order.Ref(a), Order: kronos.Before, B: order.Ref(b), Strength: kronos.Must}}
	ctx := context.Background()
	if _, err := (order.Remote{C: c, Patience: 200 * time.Millisecond}).Assign(ctx, as); !errors.Is(err, kc.ErrUnavailable) {
		t.Fatalf("no Kronos, patience 200ms: %v, want ErrUnavailable", err)
	}
	done := make(chan error, 1)
	go func() {
		res, err := (order.Remote{C: c, Patience: 30 * time.Second}).Assign(ctx, as)
		if err == nil && (len(res) != 1 || res[0].Order != kronos.Before) {
			err = fmt.Errorf("answer %+v", res)
		}
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the call is retrying meanwhile
	cfg := kronos.DefaultServerConfig()
	cfg.Addr, cfg.DataDir, cfg.Sync = addr, t.TempDir(), false
	srv, err := kronos.NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := <-done; err != nil {
		t.Fatalf("Assign once Kronos came up: %v", err)
	}
}
