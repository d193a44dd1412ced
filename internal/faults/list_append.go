package faults

import (
	"context"
	"slices"
	"sync"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// listProp is the list-valued property of list-append keys.
const listProp = "l"

// listAppend is Elle's list-append workload over vertex properties.
type listAppend struct {
	h      *harness
	prefix string // vertex handles are prefix/key
	title  string
	rec    check.Recorder

	mu      sync.Mutex
	active  []int64         // keys in use
	appends map[int64]int64 // appends handed out per key (values are 1..n)
	nextKey int64
}

func newListAppend(h *harness, prefix, title string) *listAppend {
	l := &listAppend{h: h, prefix: prefix, title: title, appends: map[int64]int64{}}
	for range h.cfg.Sizes.ListKeys {
		l.active = append(l.active, l.fresh())
	}
	return l
}

// fresh returns a new key; l.mu is held or l is not shared yet.
func (l *listAppend) fresh() int64 {
	k := l.nextKey
	l.nextKey++
	l.appends[k] = 0
	return k
}

func (l *listAppend) name() string { return l.title }
func (l *listAppend) workers() int { return 1 }

func (l *listAppend) setup(context.Context, *weft.Client) error { return nil } // keys are created by their first append

// gen draws a transaction of 1..TxnMopsMax reads and appends on active keys.
func (l *listAppend) gen(w *worker) check.Txn {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 1 + w.rng.IntN(l.h.cfg.Sizes.TxnMopsMax)
	t := make(check.Txn, 0, n)
	for range n {
		i := w.rng.IntN(len(l.active))
		k := l.active[i]
		if w.rng.IntN(2) == 0 {
			t = append(t, check.ReadList(k, nil))
			continue
		}
		t = append(t, l.appendTo(k))
		if l.appends[k] >= int64(l.h.cfg.Sizes.ListAppendsMax) {
			l.active[i] = l.fresh()
		}
	}
	return t
}

// appendTo hands out the next value of k; l.mu is held.
func (l *listAppend) appendTo(k int64) check.Mop {
	l.appends[k]++
	return check.Append(k, l.appends[k])
}

func (l *listAppend) run(w *worker, _ int) {
	for !w.h.stopping() {
		t := l.gen(w)
		w.op(&l.rec, check.FTxn, t, nil, func(ctx context.Context) (any, check.Type, error) {
			return l.exec(ctx, w, t)
		})
	}
}

// exec runs t as one transaction and returns it with its reads filled in.
func (l *listAppend) exec(ctx context.Context, w *worker, t check.Txn) (any, check.Type, error) {
	var out check.Txn
	typ, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
		var err error
		out, err = execListTxn(ctx, tx, l.prefix, t)
		return err
	})
	return out, typ, err
}

// listKey is a key's state inside one transaction.
type listKey struct {
	exists, dirty bool
	list          []int64
}

// execListTxn executes a list-append transaction in tx: the first access
// to a key reads its vertex (recording the read, which the commit
// validates), appends extend the transaction's copy, reads return it, and
// the extended lists are written back at the end (creating the vertex of a
// key appended to for the first time).
func execListTxn(ctx context.Context, tx *weft.Tx, prefix string, t check.Txn) (check.Txn, error) {
	keys := map[int64]*listKey{}
	var order []int64
	out := make(check.Txn, len(t))
	for i, m := range t {
		s := keys[m.Key]
		if s == nil {
			v, err := tx.GetVertex(ctx, weft.Handle(handle(prefix, m.Key)), weft.ReadOptions{NoEdges: true, NoAliases: true})
			if err != nil {
				return nil, err
			}
			s = &listKey{exists: v.Exists, list: readInts(v.Props[listProp])}
			keys[m.Key] = s
			order = append(order, m.Key)
		}
		if m.F == check.MopAppend {
			s.list = append(slices.Clip(s.list), m.Value)
			s.dirty = true
			out[i] = m
		} else {
			out[i] = check.ReadList(m.Key, slices.Clone(s.list))
		}
	}
	for _, k := range order {
		if s := keys[k]; s.dirty {
			if !s.exists {
				tx.CreateVertex(handle(prefix, k))
			}
			tx.SetVertexProp(weft.Handle(handle(prefix, k)), listProp, s.list)
		}
	}
	return out, nil
}

// final reads every key ever used in one read-only transaction.
func (l *listAppend) final(w *worker) check.Type {
	l.mu.Lock()
	t := make(check.Txn, 0, l.nextKey)
	for k := range l.nextKey {
		t = append(t, check.ReadList(k, nil))
	}
	l.mu.Unlock()
	typ, _ := w.op(&l.rec, check.FTxn, t, nil, func(ctx context.Context) (any, check.Type, error) {
		return l.exec(ctx, w, t)
	})
	return typ
}

func (l *listAppend) histories() []namedHistory {
	return []namedHistory{{l.title + ".jsonl", l.rec.History()}}
}

func (l *listAppend) check() workloadCheck {
	h := l.rec.History()
	file := l.title + ".jsonl"
	res, err := check.CheckListAppend(h)
	wc := workloadCheck{checks: []checkOutcome{{checker: "list-append", history: file, res: res, err: err}}}
	lost, err := LostAppends(h)
	if err != nil {
		wc.checks = append(wc.checks, checkOutcome{checker: "lost-appends", history: file, err: err})
	}
	wc.lost = lost
	return wc
}

// keys are the handles of the keys in use (the mover prefers their units).
func (l *listAppend) keys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.active))
	for i, k := range l.active {
		out[i] = handle(l.prefix, k)
	}
	return out
}
