package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/txn"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
)

// Online moves through kill -9: counters are incremented through every
// gatekeeper while their placement units move between three shard
// processes (POST /v1/move through either gatekeeper), and a shard and
// then a gatekeeper are killed with SIGKILL. The backups take over, the
// new epoch's shards rebuild by the placement directory, moves go on
// after the kills, every acknowledged increment is counted once, and
// every counter is on exactly one shard.
func TestClusterMovesThroughKills(t *testing.T) {
	u := clusterUp(t, "--gatekeepers", "2", "--shards", "3", "--kronos-replicas", "1", "--coord-replicas", "1",
		"--backup-gatekeepers", "1", "--backup-shards", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const counters = 12
	createCounters(ctx, t, u.gatekeepers(ctx)[0], counters)
	inc := u.increments(ctx, 4, counters)

	var httpAddrs []string
	for _, p := range u.procs {
		if p.Role == "gatekeeper" && p.HTTPAddr != "" {
			httpAddrs = append(httpAddrs, p.HTTPAddr)
		}
	}
	slices.Sort(httpAddrs)
	var moves atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(5, 7))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(10+rng.IntN(30)) * time.Millisecond):
			}
			addr := httpAddrs[rng.IntN(len(httpAddrs))] // a backup's answers fail until it is promoted
			var place struct {
				Moved []struct {
					Unit string   `json:"unit"`
					Held []uint32 `json:"held"`
				} `json:"moved"`
			}
			if getJSON(ctx, addr, "/v1/placement", &place) != nil {
				continue
			}
			u := txn.UnitOf(fmt.Sprintf("c%d", rng.IntN(counters)), 3)
			held := []uint32{u.BaseShard(3)}
			for _, m := range place.Moved {
				if m.Unit == u.String() {
					held = m.Held
				}
			}
			var to []uint32
			for s := range uint32(3) {
				if !slices.Contains(held, s) {
					to = append(to, s)
				}
			}
			if len(to) == 0 {
				continue
			}
			body, _ := json.Marshal(map[string]any{"unit": u.String(), "shard": to[rng.IntN(len(to))]})
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v1/move", bytes.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				moves.Add(1)
			}
		}
	}()
	waitMoves := func(n int64) {
		t.Helper()
		for moves.Load() < n {
			if ctx.Err() != nil {
				t.Fatalf("only %d moves committed (wanted %d)", moves.Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitMoves(3)
	u.killAndRecover(ctx, coordpb.Role_SHARD, &inc.ok)
	waitMoves(moves.Load() + 2)
	u.killAndRecover(ctx, coordpb.Role_GATEKEEPER, &inc.ok)
	waitMoves(moves.Load() + 2)
	close(stop)
	wg.Wait()
	inc.stop()
	inc.check(ctx)
	cl, err := weft.Dial(u.gatekeepers(ctx)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	st, err := cl.Status(ctx)
	if err != nil || st.Vertices != counters {
		t.Fatalf("status after the moves: %+v %v; want %d vertices, each on one shard", st, err, counters)
	}
	t.Logf("%d moves committed through two kills", moves.Load())
}
