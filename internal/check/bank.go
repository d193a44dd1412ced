package check

import (
	"fmt"
	"maps"
	"slices"
)

// BankConfig describes a bank workload (Jepsen's bank test, Badger's bank
// tool): a fixed set of accounts whose balances always sum to Total.
type BankConfig struct {
	Accounts []int64 // every account a read must return
	Total    int64   // the sum of all balances, constant across transfers
	// NegativeOK allows negative balances (some workloads permit overdrafts).
	NegativeOK bool
}

// CheckBank checks the OK reads of a bank history: Op{F: FRead} whose
// completion value is a map[int64]int64 of account to balance (a nil value
// reads as no accounts). Transfers (Op{F: FTransfer, Value: Transfer}) need
// not be checked: a snapshot read of all accounts must always sum to Total
// whatever transfers did. It reports wrong-total, negative-value,
// missing-account and unexpected-key, each naming the read.
func CheckBank(h History, cfg BankConfig) (Result, error) {
	pairs, ops, err := selectPairs(h, FRead, FTransfer)
	if err != nil {
		return Result{}, err
	}
	want := make(map[int64]bool, len(cfg.Accounts))
	for _, a := range cfg.Accounts {
		want[a] = true
	}
	rep := &report{}
	for _, p := range pairs {
		if err := checkBankValue(p); err != nil {
			return Result{}, err
		}
		if p.Invoke.F == FRead && p.Type() == OK {
			m, _ := p.Value().(map[int64]int64)
			checkBankRead(rep, p, m, want, cfg)
		}
	}
	return rep.result(ops, pairs), nil
}

func checkBankValue(p Pair) error {
	v := p.Value()
	switch p.Invoke.F {
	case FTransfer:
		if _, ok := v.(Transfer); !ok {
			return malformed("index %d: transfer value of type %T", p.Invoke.Index, v)
		}
	case FRead:
		if _, ok := v.(map[int64]int64); !ok && v != nil {
			return malformed("index %d: read value of type %T, want map[int64]int64", p.Invoke.Index, v)
		}
	}
	return nil
}

func checkBankRead(rep *report, p Pair, m map[int64]int64, want map[int64]bool, cfg BankConfig) {
	add := func(typ, format string, args ...any) {
		rep.add(Anomaly{Type: typ, Ops: []Pair{p}, Explanation: fmt.Sprintf("read at time %d: ", p.Invoke.Time) +
			fmt.Sprintf(format, args...)})
	}
	var total int64
	for _, a := range slices.Sorted(maps.Keys(m)) {
		total += m[a]
		if !want[a] {
			add("unexpected-key", "account %d is not one of the %d accounts", a, len(want))
		}
		if m[a] < 0 && !cfg.NegativeOK {
			add("negative-value", "account %d has balance %d", a, m[a])
		}
	}
	for _, a := range cfg.Accounts {
		if _, ok := m[a]; !ok {
			add("missing-account", "account %d is missing", a)
		}
	}
	if total != cfg.Total {
		add("wrong-total", "balances sum to %d, want %d", total, cfg.Total)
	}
}
