package txkv

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
)

// Transfer is a transfer's intent, kept to replay it.
type Transfer struct {
	From, To Key
	Amount   int64
}

// Move transfers amount from one account to another in one transaction
// (read two balances, write two), moving nothing when from holds less than
// amount. It reports whether money moved.
func Move(ctx context.Context, s *Store, t Transfer) (Commit, bool, error) {
	c, err := s.Update(ctx, []Key{t.From, t.To}, func(v []int64) []int64 {
		if v[0] < t.Amount {
			return nil
		}
		return []int64{v[0] - t.Amount, v[1] + t.Amount}
	})
	return c, c.Wrote != nil, err
}

// Audit reads every account in one read-only transaction.
func Audit(ctx context.Context, s *Store) (Commit, error) {
	keys := make([]Key, s.Keys())
	for i := range keys {
		keys[i] = Key(i)
	}
	return s.View(ctx, keys)
}

// Sum adds up values.
func Sum(vs []int64) int64 {
	var t int64
	for _, v := range vs {
		t += v
	}
	return t
}

// BankConfig configures RunBank. Zero fields take the documented defaults.
type BankConfig struct {
	Clients   int    // concurrent transfer clients; default 8
	Transfers int    // transfers per client; default 25
	Auditors  int    // concurrent auditors; default 2
	Audits    int    // audits per auditor; default 5
	Seed      uint64 // seeds accounts and amounts
}

// BankResult is a bank run's committed history.
type BankResult struct {
	History   []Commit            // every committed transaction, the final audit last
	Transfers map[uint64]Transfer // each committed transfer's intent, by event
	Audits    []Commit            // every audit, the final one last
}

// RunBank runs concurrent transfer clients and auditors against s, then one
// final audit once they are all done. Amounts are drawn up to the initial
// balance, so some transfers find too little money and move nothing.
func RunBank(ctx context.Context, s *Store, cfg BankConfig) (*BankResult, error) {
	cfg.defaults()
	if s.Keys() < 2 {
		return nil, errors.New("txkv: a bank needs two accounts")
	}
	res := &BankResult{Transfers: map[uint64]Transfer{}}
	var mu sync.Mutex
	keep := func(c Commit, t *Transfer) {
		mu.Lock()
		defer mu.Unlock()
		res.History = append(res.History, c)
		if t != nil {
			res.Transfers[c.Event] = *t
		} else {
			res.Audits = append(res.Audits, c)
		}
	}
	errs := make([]error, cfg.Clients+cfg.Auditors)
	var wg sync.WaitGroup
	for i := range cfg.Clients + cfg.Auditors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
			if i >= cfg.Clients {
				errs[i] = audits(ctx, s, cfg.Audits, keep)
				return
			}
			errs[i] = transfers(ctx, s, cfg.Transfers, rng, keep)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c, err := Audit(ctx, s)
	if err != nil {
		return nil, err
	}
	keep(c, nil)
	return res, nil
}

func (c *BankConfig) defaults() {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Transfers == 0 {
		c.Transfers = 25
	}
	if c.Auditors == 0 {
		c.Auditors = 2
	}
	if c.Audits == 0 {
		c.Audits = 5
	}
}

func transfers(ctx context.Context, s *Store, n int, rng *rand.Rand, keep func(Commit, *Transfer)) error {
	for range n {
		t := Transfer{From: Key(rng.IntN(s.Keys())), Amount: 1 + rng.Int64N(max(s.Initial(), 1))}
		t.To = Key((int(t.From) + 1 + rng.IntN(s.Keys()-1)) % s.Keys())
		c, _, err := Move(ctx, s, t)
		if err != nil {
			return err
		}
		keep(c, &t)
	}
	return nil
}

func audits(ctx context.Context, s *Store, n int, keep func(Commit, *Transfer)) error {
	for range n {
		c, err := Audit(ctx, s)
		if err != nil {
			return err
		}
		keep(c, nil)
	}
	return nil
}
