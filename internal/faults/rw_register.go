package faults

import (
	"context"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// regProp is the integer property of rw-register keys.
const regProp = "v"

// rwRegister is Elle's rw-register workload over vertex properties: keys
// rw/0..n-1 exist from the start without the property (the initial nil).
type rwRegister struct {
	h    *harness
	rec  check.Recorder
	vals []counter // per key: written values are unique per key
}

func newRWRegister(h *harness) *rwRegister {
	return &rwRegister{h: h, vals: make([]counter, h.cfg.Sizes.RegisterKeys)}
}

func (r *rwRegister) name() string { return WorkloadRWRegister }
func (r *rwRegister) workers() int { return 1 }

func (r *rwRegister) setup(ctx context.Context, c *weft.Client) error {
	hs := make([]string, r.h.cfg.Sizes.RegisterKeys)
	for k := range hs {
		hs[k] = handle("rw", int64(k))
	}
	return createMissing(ctx, c, hs, nil)
}

func (r *rwRegister) gen(w *worker) check.Txn {
	n := 1 + w.rng.IntN(r.h.cfg.Sizes.TxnMopsMax)
	t := make(check.Txn, 0, n)
	for range n {
		k := w.rng.IntN(len(r.vals))
		if w.rng.IntN(2) == 0 {
			t = append(t, check.ReadNil(int64(k)))
		} else {
			t = append(t, check.Write(int64(k), r.vals[k].next()))
		}
	}
	return t
}

func (r *rwRegister) run(w *worker, _ int) {
	for !w.h.stopping() {
		t := r.gen(w)
		w.op(&r.rec, check.FTxn, t, nil, func(ctx context.Context) (any, check.Type, error) {
			return r.exec(ctx, w, t)
		})
	}
}

// exec runs t: a read of a key the transaction has not written reads the
// vertex at the snapshot (once; the commit validates it), a read after a
// write returns the write, writes are blind property sets.
func (r *rwRegister) exec(ctx context.Context, w *worker, t check.Txn) (any, check.Type, error) {
	var out check.Txn
	typ, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
		out = make(check.Txn, len(t))
		known := map[int64]check.Mop{} // the key's value as this transaction sees it
		for i, m := range t {
			if m.F == check.MopWrite {
				tx.SetVertexProp(weft.Handle(handle("rw", m.Key)), regProp, m.Value)
				known[m.Key], out[i] = check.ReadReg(m.Key, m.Value), m
				continue
			}
			if _, ok := known[m.Key]; !ok {
				v, err := tx.GetVertex(ctx, weft.Handle(handle("rw", m.Key)), weft.ReadOptions{NoEdges: true, NoAliases: true})
				if err != nil {
					return err
				}
				known[m.Key] = registerRead(m.Key, v.Props[regProp])
			}
			out[i] = known[m.Key]
		}
		return nil
	})
	return out, typ, err
}

// registerRead is the read of a register property (nil: the initial state).
func registerRead(k int64, v any) check.Mop {
	switch x := v.(type) {
	case nil:
		return check.ReadNil(k)
	case int64:
		return check.ReadReg(k, x)
	}
	return check.ReadReg(k, garbage)
}

func (r *rwRegister) final(w *worker) check.Type {
	t := make(check.Txn, len(r.vals))
	for k := range r.vals {
		t[k] = check.ReadNil(int64(k))
	}
	typ, _ := w.op(&r.rec, check.FTxn, t, nil, func(ctx context.Context) (any, check.Type, error) {
		return r.exec(ctx, w, t)
	})
	return typ
}

func (r *rwRegister) histories() []namedHistory {
	return []namedHistory{{WorkloadRWRegister + ".jsonl", r.rec.History()}}
}

func (r *rwRegister) check() workloadCheck {
	res, err := check.CheckRWRegister(r.rec.History())
	return workloadCheck{checks: []checkOutcome{{checker: "rw-register", history: WorkloadRWRegister + ".jsonl", res: res, err: err}},
		lostNA: true}
}

// keys are the registers' handles (the mover prefers their units).
func (r *rwRegister) keys() []string { return handles("rw", len(r.vals)) }
