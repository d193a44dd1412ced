package faults

import (
	"context"
	"fmt"
	"maps"
	"slices"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// workload is one Jepsen workload mapped onto the graph.
//
//   - list-append: key k is vertex la/k with a list-valued property "l"; an
//     append reads the vertex at the transaction's snapshot (so the commit
//     validates that read) and sets the extended list. Transactions mix 1..4
//     appends and reads; keys retire after Sizes.ListAppendsMax appends.
//   - rw-register: key k is vertex rw/k with an integer property "v"; writes
//     are blind sets, reads read the vertex.
//   - bank: accounts bank/i with a "balance"; a transfer reads both accounts
//     and moves 1..5 when the source can pay; a read reads every account at
//     one snapshot.
//   - ring: vertices ring/0..n-1, each with one out-edge; a rewire reads
//     a → b → c → d and makes a → c → b → d (deleting three edges, creating
//     three); a read reads every vertex's out-edges at one snapshot.
//   - set-full: an add creates vertex sf/e and an edge to it from its
//     generation's root set/g (g = e / Sizes.SetGeneration) in one blind
//     transaction; a read is one vertex read of a root with its out-edges.
//     Each generation is its own set-full history (Jepsen's independent
//     keys), so reads stay small however long the run.
//   - sideband: a writer appends to sb/k as in list-append; once the commit
//     is acknowledged it hands the key to its reader through a Go channel,
//     and the reader's next transaction reads the key and must see the
//     append.
type workload interface {
	name() string
	// workers is the number of client goroutines per client (sideband: 2).
	workers() int
	// setup creates the workload's initial vertices; it may run again after
	// an indeterminate attempt, so it must be idempotent.
	setup(ctx context.Context, c *weft.Client) error
	// run is one client goroutine's loop (slot numbers them from 0); it
	// returns once the harness stops the clients.
	run(w *worker, slot int)
	// final reads everything the workload wrote, at one snapshot, recorded
	// in its history; it answers the read's outcome.
	final(w *worker) check.Type
	// histories returns the histories to save, by file name.
	histories() []namedHistory
	// check runs the checkers on the histories.
	check() workloadCheck
}

type namedHistory struct {
	file string
	h    check.History
}

// workloadCheck is what the checkers found in one workload.
type workloadCheck struct {
	checks []checkOutcome
	// lost lists acknowledged writes missing from the final read; nil with
	// lostNA when the workload cannot tell (rw-register, bank, ring).
	lost   []string
	lostNA bool
}

type checkOutcome struct {
	checker string
	history string
	res     check.Result
	err     error
}

func newWorkload(name string, h *harness) (workload, error) {
	switch name {
	case WorkloadListAppend:
		return newListAppend(h, "la", WorkloadListAppend), nil
	case WorkloadRWRegister:
		return newRWRegister(h), nil
	case WorkloadBank:
		return newBank(h), nil
	case WorkloadRing:
		return newRing(h), nil
	case WorkloadSetFull:
		return newSetFull(h), nil
	case WorkloadSideband:
		return newSideband(h), nil
	}
	return nil, fmt.Errorf("%w: unknown workload %q", ErrInvalid, name)
}

// createMissing creates, in one transaction, every vertex of handles that
// does not exist yet, then lets init add to each created vertex. It is
// idempotent: existing vertices are left alone.
func createMissing(ctx context.Context, c *weft.Client, handles []string, init func(tx *weft.Tx, i int)) error {
	return c.Update(ctx, func(tx *weft.Tx) error {
		for i, h := range handles {
			v, err := tx.GetVertex(ctx, weft.Handle(h), weft.ReadOptions{NoEdges: true, NoAliases: true, NoProps: true})
			if err != nil {
				return err
			}
			if !v.Exists {
				tx.CreateVertex(h)
				if init != nil {
					init(tx, i)
				}
			}
		}
		return nil
	})
}

// LostAppends lists the acknowledged appends of a list-append history that
// its last read of each key misses: for every key, the OK transaction whose
// read of the key was invoked last (the final read, in a harness history)
// must contain every append to the key acknowledged before that invocation.
func LostAppends(h check.History) ([]string, error) {
	pairs, err := check.Pairs(h)
	if err != nil {
		return nil, err
	}
	type lastRead struct {
		pos  int
		list []int64
	}
	last := map[int64]lastRead{}
	for _, p := range pairs {
		t, _ := p.Value().(check.Txn)
		if p.Type() != check.OK || p.Invoke.F != check.FTxn {
			continue
		}
		for _, m := range t {
			if m.F == check.MopRead && p.InvokePos >= last[m.Key].pos {
				last[m.Key] = lastRead{p.InvokePos, m.List}
			}
		}
	}
	var lost []string
	for _, p := range pairs {
		t, _ := p.Value().(check.Txn)
		if p.Type() != check.OK || p.Invoke.F != check.FTxn {
			continue
		}
		for _, m := range t {
			r, ok := last[m.Key]
			if m.F == check.MopAppend && ok && p.CompletePos < r.pos && !slices.Contains(r.list, m.Value) {
				lost = append(lost, fmt.Sprintf("key %d: append %d acknowledged at index %d is missing from the read invoked at index %d",
					m.Key, m.Value, p.Complete.Index, h[r.pos].Index))
			}
		}
	}
	return lost, nil
}

// lostElements lists the acknowledged adds of a set-full history missing
// from its last read.
func lostElements(h check.History) ([]string, error) {
	pairs, err := check.Pairs(h)
	if err != nil {
		return nil, err
	}
	lastPos, in := -1, map[int64]bool{}
	for _, p := range pairs {
		if p.Invoke.F == check.FRead && p.Type() == check.OK && p.InvokePos > lastPos {
			lastPos = p.InvokePos
			l, _ := p.Value().([]int64)
			in = make(map[int64]bool, len(l))
			for _, e := range l {
				in[e] = true
			}
		}
	}
	var lost []string
	for _, p := range pairs {
		if e, ok := p.Invoke.Value.(int64); ok && p.Invoke.F == check.FAdd && p.Type() == check.OK &&
			p.CompletePos < lastPos && !in[e] {
			lost = append(lost, fmt.Sprintf("element %d acknowledged at index %d is missing from the read invoked at index %d",
				e, p.Complete.Index, h[lastPos].Index))
		}
	}
	return lost, nil
}

func sortedKeys[V any](m map[int64]V) []int64 { return slices.Sorted(maps.Keys(m)) }
