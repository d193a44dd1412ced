package dgraph

import (
	"context"
	"fmt"
	"sync"
)

// BlankMap maps blank nodes to UIDs across the mutations of one load, as
// Dgraph's live loader does: _:x in two batches is one node. A name gets
// its UID once, from the allocator of the first mutation that needs it;
// whichever mutation commits first creates the node (the others find it,
// or retry). Safe for concurrent use.
type BlankMap struct {
	mu  sync.Mutex
	max int
	m   map[string]uint64
}

// NewBlankMap returns an empty map holding at most max names.
func NewBlankMap(max int) *BlankMap { return &BlankMap{max: max, m: map[string]uint64{}} }

// Len is the number of names mapped.
func (b *BlankMap) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

func (b *BlankMap) get(ctx context.Context, name string, alloc *Allocator) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.m[name]; ok {
		return u, nil
	}
	if len(b.m) >= b.max {
		return 0, fmt.Errorf("%w: more than %d blank nodes in one load", ErrLimit, b.max)
	}
	u, err := alloc.Next(ctx)
	if err != nil {
		return 0, err
	}
	b.m[name] = u
	return u, nil
}

// XIDCache remembers committed XID → UID bindings, which never change (a
// node is never deleted, only emptied), so a loader reads an XID's alias
// once. Bounded: when full it stops remembering. Safe for concurrent use.
type XIDCache struct {
	mu  sync.RWMutex
	max int
	m   map[string]uint64
}

// NewXIDCache returns an empty cache of at most max entries.
func NewXIDCache(max int) *XIDCache { return &XIDCache{max: max, m: map[string]uint64{}} }

func (c *XIDCache) get(xid string) (uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	u, ok := c.m[xid]
	return u, ok
}

func (c *XIDCache) addAll(m map[string]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for x, u := range m {
		if len(c.m) >= c.max {
			return
		}
		c.m[x] = u
	}
}
