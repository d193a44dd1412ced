package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// update runs one interactive transaction with retries: body reads at the
// snapshot and returns the reads and writes to commit.
func update(ctx context.Context, db API, body func(snap Snapshot) ([]txn.Read, []txn.Op, error)) (retries int, err error) {
	for attempt := 0; attempt < 1000; attempt++ {
		snap, err := db.Begin(ctx)
		if err != nil {
			return attempt, err
		}
		reads, ops, err := body(snap)
		if err != nil {
			return attempt, err
		}
		if len(ops) == 0 {
			return attempt, nil
		}
		_, err = db.Commit(ctx, reads, ops)
		if !errors.Is(err, ErrAborted) {
			return attempt, err
		}
	}
	return 1000, errors.New("too many retries")
}

// TestBankIsolation: concurrent transfers between account vertices through
// different gatekeepers, while readers read every account at one snapshot
// (both with vertex reads and with a node program): every read sums to the
// total. Lost updates, dirty or non-repeatable reads, write skew or a
// non-atomic commit would show as a wrong sum.
func TestBankIsolation(t *testing.T) {
	db := openTest(t, memConfig())
	bankIsolation(t, []API{db})
}

// bankIsolation runs the bank workload; worker i goes through dbs[i%len].
func bankIsolation(t *testing.T, dbs []API) {
	ctx := context.Background()
	db := dbs[0]
	const accounts, initial = 8, 100
	var ops []txn.Op
	for i := 0; i < accounts; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: acct(i)},
			txn.Op{Kind: txn.SetVertexProp, Vertex: acct(i), Key: "balance", Value: value.I64(initial)})
	}
	if _, err := db.Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var transfers, checks atomic.Int64
	errs := make(chan error, 16)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			db := dbs[int(seed)%len(dbs)]
			rng := rand.New(rand.NewPCG(seed, 7))
			for time.Now().Before(deadline) {
				from, to := rng.IntN(accounts), rng.IntN(accounts)
				if from == to {
					continue
				}
				amount := int64(rng.IntN(20))
				_, err := update(ctx, db, func(snap Snapshot) ([]txn.Read, []txn.Op, error) {
					a, err := db.GetVertex(ctx, snap, VertexRef{Name: acct(from)}, DefaultReadOptions())
					if err != nil {
						return nil, nil, err
					}
					b, err := db.GetVertex(ctx, snap, VertexRef{Name: acct(to)}, DefaultReadOptions())
					if err != nil {
						return nil, nil, err
					}
					ba, bb := a.Props["balance"].Int(), b.Props["balance"].Int()
					if ba < amount {
						return nil, nil, nil
					}
					return []txn.Read{a.Read, b.Read}, []txn.Op{
						{Kind: txn.SetVertexProp, Vertex: acct(from), Key: "balance", Value: value.I64(ba - amount)},
						{Kind: txn.SetVertexProp, Vertex: acct(to), Key: "balance", Value: value.I64(bb + amount)},
					}, nil
				})
				if err != nil {
					errs <- err
					return
				}
				transfers.Add(1)
			}
		}(uint64(w))
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(prog bool) {
			defer wg.Done()
			db := dbs[(r+1)%len(dbs)]
			for readerBusy(deadline, &checks) {
				sum, err := readTotal(ctx, db, accounts, prog)
				if err != nil {
					errs <- err
					return
				}
				if sum != accounts*initial {
					errs <- fmt.Errorf("a reader (program=%v) saw total %d, want %d", prog, sum, accounts*initial)
					return
				}
				checks.Add(1)
			}
		}(r == 1)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if transfers.Load() < 10 || checks.Load() < 10 {
		t.Fatalf("too little work: %d transfers, %d checks", transfers.Load(), checks.Load())
	}
	t.Logf("%d transfers, %d consistent reads", transfers.Load(), checks.Load())
}

func acct(i int) string { return fmt.Sprintf("acct%d", i) }

func readTotal(ctx context.Context, db API, n int, prog bool) (int64, error) {
	snap, err := db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	var sum int64
	for i := 0; i < n; i++ {
		if prog {
			out, err := db.Run(ctx, "read_node_props", json.RawMessage(fmt.Sprintf(`{"node":%q,"keys":["balance"]}`, acct(i))), &snap)
			if err != nil {
				return 0, err
			}
			var res struct {
				Props map[string]value.Value `json:"props"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				return 0, fmt.Errorf("%s: %v", out, err)
			}
			sum += res.Props["balance"].Int()
			continue
		}
		v, err := db.GetVertex(ctx, snap, VertexRef{Name: acct(i)}, DefaultReadOptions())
		if err != nil {
			return 0, err
		}
		sum += v.Props["balance"].Int()
	}
	return sum, nil
}

// TestRingInvariant is FoundationDB's cycle workload on graph edges: N
// vertices in one ring; each transaction reads three hops a→b→c→d and
// rewires them to a→c→b→d. Readers walk the ring at one snapshot with bfs:
// every vertex must be reachable from 0, and each vertex has one out-edge.
func TestRingInvariant(t *testing.T) {
	ringInvariant(t, []API{openTest(t, memConfig())})
}

// ringInvariant runs the ring workload; writer i goes through dbs[i%len],
// the reader through the last.
func ringInvariant(t *testing.T, dbs []API) {
	ctx := context.Background()
	db := dbs[0]
	const n = 12
	var ops []txn.Op
	for i := 0; i < n; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: node(i)})
	}
	for i := 0; i < n; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: node(i), Dst: node((i + 1) % n)})
	}
	if _, err := db.Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var swaps, walks atomic.Int64
	errs := make(chan error, 16)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			db := dbs[int(seed)%len(dbs)]
			rng := rand.New(rand.NewPCG(seed, 9))
			for time.Now().Before(deadline) {
				start := node(rng.IntN(n))
				_, err := update(ctx, db, func(snap Snapshot) ([]txn.Read, []txn.Op, error) {
					var reads []txn.Read
					var hops []Edge
					cur := start
					for k := 0; k < 3; k++ {
						v, err := db.GetVertex(ctx, snap, VertexRef{Name: cur}, DefaultReadOptions())
						if err != nil {
							return nil, nil, err
						}
						if len(v.Edges) != 1 {
							return nil, nil, fmt.Errorf("vertex %s has %d out-edges at a snapshot", cur, len(v.Edges))
						}
						reads = append(reads, v.Read)
						hops = append(hops, v.Edges[0])
						cur = v.Edges[0].Dst
					}
					a, b, c, d := hops[0].Src, hops[1].Src, hops[2].Src, hops[2].Dst
					if d == a { // ring too short to rewire here
						return nil, nil, nil
					}
					return reads, []txn.Op{
						{Kind: txn.DeleteEdge, Vertex: a, Edge: hops[0].Handle},
						{Kind: txn.DeleteEdge, Vertex: b, Edge: hops[1].Handle},
						{Kind: txn.DeleteEdge, Vertex: c, Edge: hops[2].Handle},
						{Kind: txn.CreateEdge, Vertex: a, Dst: c},
						{Kind: txn.CreateEdge, Vertex: c, Dst: b},
						{Kind: txn.CreateEdge, Vertex: b, Dst: d},
					}, nil
				})
				if err != nil {
					errs <- err
					return
				}
				swaps.Add(1)
			}
		}(uint64(w))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		db := dbs[len(dbs)-1]
		for readerBusy(deadline, &walks) {
			out, err := db.Run(ctx, "bfs", json.RawMessage(`{"src":"n0"}`), nil)
			if err != nil {
				errs <- err
				return
			}
			var res struct {
				Depths map[string]int `json:"depths"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				errs <- err
				return
			}
			if len(res.Depths) != n {
				errs <- fmt.Errorf("walk from n0 reached %d of %d vertices: the ring broke (%v)", len(res.Depths), n, res.Depths)
				return
			}
			seen := map[int]bool{}
			for _, d := range res.Depths {
				seen[d] = true
			}
			if len(seen) != n {
				errs <- fmt.Errorf("depths %v are not 0..%d: a vertex has two out-edges", res.Depths, n-1)
				return
			}
			walks.Add(1)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if swaps.Load() < 10 || walks.Load() < 5 {
		t.Fatalf("too little work: %d swaps, %d walks", swaps.Load(), walks.Load())
	}
	t.Logf("%d rewirings, %d consistent walks", swaps.Load(), walks.Load())
}

func node(i int) string { return fmt.Sprintf("n%d", i) }

// TestParityReachability is the original Weaver transactions.py check:
// writers only ever connect same-parity vertices, and a transaction that
// adds a cross-parity edge removes it again; concurrent reachability
// programs must never find an odd vertex from an even one.
func TestParityReachability(t *testing.T) {
	parityReachability(t, []API{openTest(t, memConfig())})
}

// parityReachability runs the parity workload; writer i goes through
// dbs[i%len], reader r through dbs[(r+1)%len].
func parityReachability(t *testing.T, dbs []API) {
	ctx := context.Background()
	db := dbs[0]
	const n = 40
	var ops []txn.Op
	for i := 0; i < n; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: node(i)})
	}
	if _, err := db.Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var writes, reads atomic.Int64
	errs := make(chan error, 16)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			db := dbs[int(seed)%len(dbs)]
			rng := rand.New(rand.NewPCG(seed, 3))
			for time.Now().Before(deadline) {
				u := rng.IntN(n)
				v := (u + 2*(1+rng.IntN(n/2-1))) % n // same parity
				x := (u + 1 + 2*rng.IntN(n/2)) % n   // other parity
				cross := fmt.Sprintf("x%d-%d", u, rng.Uint64())
				_, err := db.Commit(ctx, nil, []txn.Op{
					{Kind: txn.CreateEdge, Vertex: node(u), Dst: node(v)},
					{Kind: txn.CreateEdge, Vertex: node(u), Dst: node(x), Edge: cross},
					{Kind: txn.DeleteEdge, Vertex: node(u), Edge: cross},
				})
				if err != nil && !errors.Is(err, ErrAborted) {
					errs <- err
					return
				}
				writes.Add(1)
			}
		}(uint64(w))
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			db := dbs[int(seed+1)%len(dbs)]
			rng := rand.New(rand.NewPCG(seed, 5))
			for readerBusy(deadline, &reads) {
				src := 2 * rng.IntN(n/2)
				dst := 2*rng.IntN(n/2) + 1
				out, err := db.Run(ctx, "pathless_reachability", json.RawMessage(fmt.Sprintf(`{"src":%q,"dest":%q}`, node(src), node(dst))), nil)
				if err != nil {
					errs <- err
					return
				}
				var res struct {
					Reachable bool `json:"reachable"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					errs <- err
					return
				}
				if res.Reachable {
					errs <- fmt.Errorf("odd vertex %d reachable from even vertex %d", dst, src)
					return
				}
				reads.Add(1)
			}
		}(uint64(r))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if writes.Load() < 10 || reads.Load() < 10 {
		t.Fatalf("too little work: %d writes, %d reads", writes.Load(), reads.Load())
	}
}

// readerBusy keeps a checker running until the writers' deadline has passed
// and it has checked at least readsMin times (slow builds, such as
// -tags invariants, would otherwise finish with a vacuous check), but never
// beyond a hard bound.
func readerBusy(deadline time.Time, done *atomic.Int64) bool {
	const readsMin = 10
	now := time.Now()
	if now.After(deadline.Add(30 * time.Second)) {
		return false
	}
	return now.Before(deadline) || done.Load() < readsMin
}
