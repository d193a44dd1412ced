package groupcommit

import (
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/store"
)

// Gate counts the calls that may touch a store's storage or queue, so Close
// can wait for them. Close sets closing before waiting for inflight to reach
// zero, and Enter checks closing after counting itself, so no call gets in
// once Close has moved on (sequentially consistent atomics make this a
// Dekker handshake).
type Gate struct {
	closing  atomic.Bool
	inflight atomic.Int64
}

// Enter counts a call in, or returns store.ErrClosed once Close was called.
// A nil error must be paired with Exit.
func (g *Gate) Enter() error {
	g.inflight.Add(1)
	if g.closing.Load() {
		g.inflight.Add(-1)
		return store.ErrClosed
	}
	return nil
}

// Exit counts a call out.
func (g *Gate) Exit() { g.inflight.Add(-1) }

// Close shuts the gate and waits for the calls inside to leave. A second
// Close returns store.ErrClosed at once.
func (g *Gate) Close() error {
	if !g.closing.CompareAndSwap(false, true) {
		return store.ErrClosed
	}
	for g.inflight.Load() > 0 {
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}
