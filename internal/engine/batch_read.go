package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
)

// BatchReader is engineapi.BatchReader: *DB implements it.
type BatchReader = engineapi.BatchReader

// BatchRefsMax bounds the refs of one GetVertices call (engineapi.BatchRefsMax).
const BatchRefsMax = engineapi.BatchRefsMax

// GetVertices is engineapi.GetVertices.
var GetVertices = engineapi.GetVertices

// eachConcurrently runs fn(0) … fn(n−1) concurrently and waits for them;
// a single call runs inline (a placement group's batch needs no
// goroutine).
func eachConcurrently(n int, fn func(j int)) {
	if n == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for j := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(j)
		}()
	}
	wg.Wait()
}

// GetVertices implements BatchReader: aliases are resolved first (one
// request per alias, on the alias's shard), then each shard that owns any
// of the vertices runs one read of all of them, the shards concurrently,
// all at one held snapshot.
func (db *DB) GetVertices(ctx context.Context, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	if len(refs) > BatchRefsMax {
		return nil, 0, fmt.Errorf("%w: %d vertices in one batched read (at most %d)", ErrBadRequest, len(refs), BatchRefsMax)
	}
	if err := db.check(); err != nil {
		return nil, 0, err
	}
	s, release, err := db.atSnapshot(&snap)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	max := opts.EdgesMax
	if max <= 0 {
		max = EdgesMaxDefault
	}
	out := make([]*Vertex, len(refs))
	requests := 0
	byShard := map[int][]int{} // shard → indexes of refs it owns
	for i, r := range refs {
		if r.Alias {
			requests++
		}
		h, aliasRead, err := db.resolveRef(ctx, s, r)
		if err != nil {
			return nil, requests, err
		}
		out[i] = &Vertex{Handle: h, AliasRead: aliasRead}
		if h != "" {
			sh := db.shardOf(h)
			byShard[sh] = append(byShard[sh], i)
		}
	}
	// Each shard reads the vertices it had at s; a vertex whose placement
	// unit was elsewhere at s (moves.go) goes, in the next round, to the
	// shard the first one names.
	for round := 0; len(byShard) > 0; round++ {
		if round > forwardsMax {
			return nil, requests, fmt.Errorf("engine: a batched read was forwarded %d times", round)
		}
		shards := make([]int, 0, len(byShard))
		for sh := range byShard {
			shards = append(shards, sh)
		}
		slices.Sort(shards)
		errs := make([]error, len(shards))
		moved := make([][]int, len(shards)) // per shard: [shard to ask, ref index] pairs
		readShard := func(j int) {
			sh := shards[j]
			errs[j] = db.read(ctx, sh, s, func(r *reader) {
				for _, i := range byShard[sh] {
					h := out[i].Handle
					if to := r.S.Locate(h, s, r.Ord); to != sh {
						moved[j] = append(moved[j], to, i)
						continue
					}
					read := txn.Read{Vertex: h, Version: txn.EncodeStamp(r.S.G.LastWrite(h, s, r.Ord))}
					view, ok := r.S.G.View(h, s, r.Ord)
					fillVertex(out[i], read, view, ok, opts, max)
				}
			})
		}
		eachConcurrently(len(shards), readShard)
		requests += len(shards)
		for _, err := range errs {
			if err != nil {
				return nil, requests, err
			}
		}
		byShard = map[int][]int{}
		for _, m := range moved {
			for k := 0; k < len(m); k += 2 {
				byShard[m[k]] = append(byShard[m[k]], m[k+1])
				db.forwards.Add(1)
			}
		}
	}
	return out, requests, nil
}

var _ BatchReader = (*DB)(nil)
