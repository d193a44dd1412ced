package dgraph

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// UIDs are leased in ranges recorded in LeaseVertex (property "next": the
// first UID never leased). A lease is one serializable transaction that
// reads next and advances it, so two leases never overlap, whichever
// process takes them; the UIDs of a lease are then handed out locally
// without coordination. A crash loses the unused rest of a lease: UIDs are
// unique, not dense (as in Dgraph, whose Zero leases the same way).

// Lease reserves n UIDs and returns the range [start, end). It is Dgraph's
// AllocateIDs (whose answer is inclusive: end-1).
func (g *Graph) Lease(ctx context.Context, n uint64) (start, end uint64, err error) {
	if n == 0 || n > 1<<40 {
		return 0, 0, fmt.Errorf("%w: lease of %d uids (want 1..2^40)", ErrInvalid, n)
	}
	err = g.retry(ctx, func(int) error {
		snap, err := g.db.Begin(ctx)
		if err != nil {
			return err
		}
		v, next, err := g.leaseRecord(ctx, snap)
		if err != nil {
			return err
		}
		if next == 0 {
			return fmt.Errorf("%w: lease record %q", ErrCorrupt, LeaseVertex)
		}
		start = next
		if start > math.MaxInt64-n {
			return fmt.Errorf("%w: uid space exhausted", ErrLimit)
		}
		end = start + n
		_, err = g.db.Commit(ctx, []txn.Read{v.Read},
			[]txn.Op{{Kind: txn.SetVertexProp, Vertex: LeaseVertex, Key: leaseNextKey, Value: value.I64(int64(end))}})
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	g.noteLeased(end)
	return start, end, nil
}

// leaseRecord reads LeaseVertex at snap: the vertex and its "next" (0 when
// the record is missing or malformed).
func (g *Graph) leaseRecord(ctx context.Context, snap engineapi.Snapshot) (*engineapi.Vertex, uint64, error) {
	v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: LeaseVertex}, engineapi.ReadOptions{Props: true})
	if err != nil {
		return nil, 0, err
	}
	if next := v.Props[leaseNextKey]; v.Exists && next.Kind() == value.Int && next.Int() >= 1 {
		return v, uint64(next.Int()), nil
	}
	return v, 0, nil
}

func (g *Graph) noteLeased(next uint64) {
	for {
		cur := g.leased.Load()
		if next <= cur || g.leased.CompareAndSwap(cur, next) {
			return
		}
	}
}

// checkLeased fails unless uid was leased (by any process): Dgraph refuses
// explicit uids beyond the leased range, which would collide with later
// allocations.
func (g *Graph) checkLeased(ctx context.Context, snap engineapi.Snapshot, uid uint64) error {
	if uid < g.leased.Load() {
		return nil
	}
	_, next, err := g.leaseRecord(ctx, snap)
	if err != nil {
		return err
	}
	if next > 0 {
		g.noteLeased(next)
	}
	if uid >= g.leased.Load() {
		return fmt.Errorf("%w: uid %s was never allocated (the largest leased uid is %s)", ErrInvalid,
			FormatUID(uid), FormatUID(g.leased.Load()-1))
	}
	return nil
}

// Allocator hands out UIDs from leases of Config.LeaseSize. Give each
// parallel loader its own: its UIDs then come from its own blocks, which
// keeps its index writes apart from the other loaders'. Safe for
// concurrent use.
type Allocator struct {
	g         *Graph
	mu        sync.Mutex
	next, end uint64
}

// NewAllocator returns an allocator with no lease yet.
func (g *Graph) NewAllocator() *Allocator { return &Allocator{g: g} }

// Next returns a fresh UID, leasing a new range when the current one is
// used up.
func (a *Allocator) Next(ctx context.Context) (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next == a.end {
		start, end, err := a.g.Lease(ctx, a.g.cfg.LeaseSize)
		if err != nil {
			return 0, err
		}
		a.next, a.end = start, end
	}
	u := a.next
	a.next++
	return u, nil
}

// handedOut returns the allocator's next UID: with one allocator on a store
// that had no lease before (a direct load's), every UID below it was handed
// out.
func (a *Allocator) handedOut() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.next
}

// bucket is the bucket of the allocator's current lease (ok false before
// its first lease).
func (a *Allocator) bucket() (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end == 0 {
		return 0, false
	}
	return bucket(a.next), true
}
