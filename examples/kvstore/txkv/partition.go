package txkv

import (
	"context"
	"fmt"
	"sync"

	"github.com/weft-db/weft/client/kronos"
)

// entry is one transaction attempt's place in a key's chain.
type entry struct {
	ev     uint64
	writer bool  // the transaction may write this key
	done   bool  // it has read, and written or decided not to
	wrote  bool  // it wrote val
	val    int64 // the value written
}

// partition owns the keys [lo, hi): their chains of entries, in Kronos order.
type partition struct {
	lo, hi Key
	kc     *kronos.Client

	// orderMu makes "read each key's last event, assign_order, append" atomic
	// for the partition, so a chain is the order Kronos accepted. It also
	// keeps this client to one mutation in flight.
	orderMu sync.Mutex

	mu      sync.Mutex
	chains  [][]entry     // by key - lo; chains[i][0] is a finished write
	changed chan struct{} // closed and replaced when an entry finishes
}

func newPartition(lo, hi Key, initial int64, kc *kronos.Client) *partition {
	p := &partition{lo: lo, hi: hi, kc: kc, changed: make(chan struct{})}
	for range hi - lo {
		p.chains = append(p.chains, []entry{{writer: true, done: true, wrote: true, val: initial}})
	}
	return p
}

// order places ev after the last event of each key (phase one). It returns
// kronos.ErrMustConflict (wrapped) when Kronos already orders ev before one
// of them; the partition is then unchanged.
func (p *partition) order(ctx context.Context, ev uint64, keys []Key, writer bool) error {
	p.orderMu.Lock()
	defer p.orderMu.Unlock()
	var as []kronos.Assignment
	seen := map[uint64]bool{}
	p.mu.Lock()
	for _, k := range keys {
		c := p.chains[k-p.lo]
		if last := c[len(c)-1].ev; last != 0 && !seen[last] {
			seen[last] = true
			as = append(as, kronos.Assignment{A: kronos.ID(last), Order: kronos.Before, B: kronos.ID(ev), Strength: kronos.Must})
		}
	}
	p.mu.Unlock()
	if len(as) > 0 {
		if _, err := p.kc.AssignOrder(ctx, as); err != nil {
			return err
		}
	}
	p.mu.Lock()
	for _, k := range keys {
		p.chains[k-p.lo] = append(p.chains[k-p.lo], entry{ev: ev, writer: writer})
	}
	p.mu.Unlock()
	return nil
}

// read returns ev's view of keys (phase two): for each key, the value of the
// nearest write before ev's entry, once no entry before it may still write.
func (p *partition) read(ctx context.Context, ev uint64, keys []Key) ([]int64, error) {
	for {
		p.mu.Lock()
		vals, ok := p.tryRead(ev, keys)
		ch := p.changed
		p.mu.Unlock()
		if ok {
			return vals, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *partition) tryRead(ev uint64, keys []Key) ([]int64, bool) {
	vals := make([]int64, len(keys))
	for i, k := range keys {
		c := p.chains[k-p.lo]
		at := find(c, ev)
		var v int64
		for _, e := range c[:at] {
			if e.writer && !e.done {
				return nil, false
			}
			if e.wrote {
				v = e.val
			}
		}
		vals[i] = v
	}
	return vals, true
}

// finish ends ev's entries: writes (aligned with keys) or, when nil, none.
func (p *partition) finish(ev uint64, keys []Key, writes []int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, k := range keys {
		c := p.chains[k-p.lo]
		e := &c[find(c, ev)]
		if e.done {
			panic(fmt.Sprintf("txkv: event %d finished twice on key %d", ev, k))
		}
		e.done = true
		if writes != nil {
			if !e.writer {
				panic(fmt.Sprintf("txkv: read-only event %d wrote key %d", ev, k))
			}
			e.wrote, e.val = true, writes[i]
		}
		p.chains[k-p.lo] = compact(c)
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// compact drops the versions no entry can read any more: everything before
// the last write in the chain's finished prefix. Later entries read that
// write or newer; earlier entries have all finished.
func compact(c []entry) []entry {
	w := 0
	for i, e := range c {
		if !e.done {
			break
		}
		if e.wrote {
			w = i
		}
	}
	if w == 0 {
		return c
	}
	return append([]entry(nil), c[w:]...)
}

// find returns ev's index in c; ev must be there (it was ordered and not
// finished, or finished after compaction kept it).
func find(c []entry, ev uint64) int {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].ev == ev {
			return i
		}
	}
	panic(fmt.Sprintf("txkv: event %d is not on the chain", ev))
}
