package faults

import (
	"context"
	"errors"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

const balanceProp = "balance"

// errInsufficient ends a transfer whose source cannot pay: it commits
// nothing, so it is recorded as failed.
var errInsufficient = errors.New("faults: insufficient funds")

// bank is Jepsen's bank workload: accounts bank/0..n-1 whose balances
// always sum to n × BankBalance.
type bank struct {
	h   *harness
	rec check.Recorder
	n   int
}

func newBank(h *harness) *bank { return &bank{h: h, n: h.cfg.Sizes.BankAccounts} }

func (b *bank) name() string { return WorkloadBank }
func (b *bank) workers() int { return 1 }

func (b *bank) setup(ctx context.Context, c *weft.Client) error {
	hs := make([]string, b.n)
	for i := range hs {
		hs[i] = handle("bank", int64(i))
	}
	return createMissing(ctx, c, hs, func(tx *weft.Tx, i int) {
		tx.SetVertexProp(weft.Handle(hs[i]), balanceProp, b.h.cfg.Sizes.BankBalance)
	})
}

func (b *bank) run(w *worker, _ int) {
	for !w.h.stopping() {
		if w.rng.IntN(2) == 0 {
			b.read(w)
			continue
		}
		from := w.rng.IntN(b.n)
		to := (from + 1 + w.rng.IntN(b.n-1)) % b.n
		tr := check.Transfer{From: int64(from), To: int64(to), Amount: 1 + w.rng.Int64N(5)}
		w.op(&b.rec, check.FTransfer, tr, nil, func(ctx context.Context) (any, check.Type, error) {
			t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error { return b.transfer(ctx, tx, tr) })
			return tr, t, err
		})
	}
}

// transfer reads both accounts (the commit validates the reads) and moves
// the amount when the source can pay.
func (b *bank) transfer(ctx context.Context, tx *weft.Tx, tr check.Transfer) error {
	var bal [2]int64
	for i, a := range []int64{tr.From, tr.To} {
		v, err := tx.GetVertex(ctx, weft.Handle(handle("bank", a)), weft.ReadOptions{NoEdges: true, NoAliases: true})
		if err != nil {
			return err
		}
		n, ok := v.Props[balanceProp].(int64)
		if !ok {
			return errInsufficient // a missing account: reads report it
		}
		bal[i] = n
	}
	if bal[0] < tr.Amount {
		return errInsufficient
	}
	tx.SetVertexProp(weft.Handle(handle("bank", tr.From)), balanceProp, bal[0]-tr.Amount)
	tx.SetVertexProp(weft.Handle(handle("bank", tr.To)), balanceProp, bal[1]+tr.Amount)
	return nil
}

// read reads every account at one snapshot.
func (b *bank) read(w *worker) check.Type {
	t, _ := w.op(&b.rec, check.FRead, nil, nil, func(ctx context.Context) (any, check.Type, error) {
		m := map[int64]int64{}
		t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
			clear(m)
			for a := range int64(b.n) {
				v, err := tx.GetVertex(ctx, weft.Handle(handle("bank", a)), weft.ReadOptions{NoEdges: true, NoAliases: true})
				if err != nil {
					return err
				}
				if n, ok := v.Props[balanceProp].(int64); ok {
					m[a] = n
				} else if v.Exists {
					m[a] = garbage
				}
			}
			return nil
		})
		return m, t, err
	})
	return t
}

func (b *bank) final(w *worker) check.Type { return b.read(w) }

func (b *bank) histories() []namedHistory {
	return []namedHistory{{WorkloadBank + ".jsonl", b.rec.History()}}
}

func (b *bank) check() workloadCheck {
	cfg := check.BankConfig{Total: int64(b.n) * b.h.cfg.Sizes.BankBalance}
	for a := range int64(b.n) {
		cfg.Accounts = append(cfg.Accounts, a)
	}
	res, err := check.CheckBank(b.rec.History(), cfg)
	return workloadCheck{checks: []checkOutcome{{checker: "bank", history: WorkloadBank + ".jsonl", res: res, err: err}}, lostNA: true}
}

// keys are the accounts' handles (the mover prefers their units).
func (b *bank) keys() []string { return handles("bank", b.n) }
