package storetest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

// BankConfig sizes the bank workload.
type BankConfig struct {
	Accounts  int   // accounts, each starting with Balance
	Balance   int64 // initial balance per account
	Workers   int   // concurrent transferring goroutines
	Transfers int   // committed transfers per worker
	RetryMax  int   // attempts per transfer before the worker gives up
	Seed      uint64
}

// DefaultBank is small enough for -race in a few seconds.
var DefaultBank = BankConfig{Accounts: 10, Balance: 100, Workers: 8, Transfers: 300, RetryMax: 1000, Seed: 1}

func testBank(t *testing.T, open Opener) {
	s := fresh(t, open)
	Bank(t, s, DefaultBank)
}

// Bank runs Badger-style bank transfers on s: Workers goroutines move random
// amounts between random accounts in read-modify-write Txns, retrying
// conflicts, while a checker repeatedly reads every account in one Txn (a
// Scan, so a phantom account would show) and fails the test if the total or
// the number of accounts ever differs from the start, or a balance goes
// negative. Lost updates, dirty or torn reads all break the total.
func Bank(t testing.TB, s store.Store, cfg BankConfig) {
	t.Helper()
	ctx := context.Background()
	tx := begin(t, s)
	for i := range cfg.Accounts {
		must(t, tx.Set(acct(i), enc(cfg.Balance)))
	}
	must(t, tx.Commit(ctx, nil))
	want := cfg.Balance * int64(cfg.Accounts)

	var stop atomic.Bool
	var checks atomic.Int64
	checkErr := make(chan error, 1)
	go func() {
		for !stop.Load() {
			if err := bankCheck(s, cfg.Accounts, want); err != nil {
				checkErr <- err
				return
			}
			checks.Add(1)
		}
		checkErr <- nil
	}()

	var wg sync.WaitGroup
	errs := make(chan error, cfg.Workers)
	var conflicts atomic.Int64
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(w)))
			for range cfg.Transfers {
				n, err := transfer(s, rng, cfg)
				conflicts.Add(int64(n))
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-checkErr; err != nil {
		t.Fatal(err)
	}
	if err := bankCheck(s, cfg.Accounts, want); err != nil {
		t.Fatalf("final: %v", err)
	}
	t.Logf("bank: %d transfers, %d conflicts retried, %d consistent checks",
		cfg.Workers*cfg.Transfers, conflicts.Load(), checks.Load())
}

// transfer commits one transfer, retrying retryable errors; it returns the
// number of retries.
func transfer(s store.Store, rng *rand.Rand, cfg BankConfig) (int, error) {
	from, to := rng.IntN(cfg.Accounts), rng.IntN(cfg.Accounts-1)
	if to >= from {
		to++
	}
	amount := rng.Int64N(cfg.Balance/2 + 1)
	for try := range cfg.RetryMax {
		err := transferOnce(s, from, to, amount)
		if err == nil || !store.IsRetryable(err) {
			return try, err
		}
	}
	return cfg.RetryMax, fmt.Errorf("transfer %d→%d: still conflicting after %d tries", from, to, cfg.RetryMax)
}

func transferOnce(s store.Store, from, to int, amount int64) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Discard()
	a, err := balance(tx, from)
	if err != nil {
		return err
	}
	b, err := balance(tx, to)
	if err != nil {
		return err
	}
	if a < amount {
		amount = a
	}
	if err := tx.Set(acct(from), enc(a-amount)); err != nil {
		return err
	}
	if err := tx.Set(acct(to), enc(b+amount)); err != nil {
		return err
	}
	return tx.Commit(context.Background(), nil)
}

func balance(tx store.Txn, i int) (int64, error) {
	v, ok, err := tx.Get(acct(i))
	if err != nil {
		return 0, err
	}
	if !ok || len(v) != 8 {
		return 0, fmt.Errorf("account %d: missing or corrupt (%q)", i, v)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// bankCheck reads every account in one Txn and checks the invariants, then
// commits the read-only Txn (a conflict there is fine: the snapshot was
// still consistent).
func bankCheck(s store.Store, accounts int, want int64) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Discard()
	var total int64
	n := 0
	err = tx.Scan([]byte("bank/"), []byte("bank0"), 0, func(k, v []byte) error {
		if !isAcct(k) || len(v) != 8 {
			return fmt.Errorf("bad account %q=%q", k, v)
		}
		b := int64(binary.BigEndian.Uint64(v))
		if b < 0 {
			return fmt.Errorf("account %q negative: %d", k, b)
		}
		total += b
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n != accounts || total != want {
		return fmt.Errorf("bank invariant broken: %d accounts totalling %d, want %d totalling %d", n, total, accounts, want)
	}
	if err := tx.Commit(context.Background(), nil); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	return nil
}

func enc(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
