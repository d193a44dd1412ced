package check

import (
	"math/rand/v2"
	"testing"
)

// bankHistory runs random transfers serially among 5 accounts of 20 each,
// with reads and transfers overlapping in the recorded history.
func bankHistory(seed uint64, n int) History {
	rng := rand.New(rand.NewPCG(seed, 1))
	bal := map[int64]int64{0: 20, 1: 20, 2: 20, 3: 20, 4: 20}
	var rec Recorder
	for i := range n {
		p := i % 3
		if rng.IntN(2) == 0 {
			rec.Invoke(p, FRead, nil, int64(i))
			snap := make(map[int64]int64, len(bal))
			for a, b := range bal {
				snap[a] = b
			}
			rec.Complete(p, OK, FRead, snap, int64(i))
			continue
		}
		t := Transfer{From: int64(rng.IntN(5)), To: int64(rng.IntN(5)), Amount: int64(1 + rng.IntN(5))}
		rec.Invoke(p, FTransfer, t, int64(i))
		if bal[t.From] >= t.Amount {
			bal[t.From] -= t.Amount
			bal[t.To] += t.Amount
			rec.Complete(p, OK, FTransfer, t, int64(i))
		} else {
			rec.Complete(p, Fail, FTransfer, t, int64(i))
		}
	}
	return rec.History()
}

var bankConfig = BankConfig{Accounts: []int64{0, 1, 2, 3, 4}, Total: 100}

func TestBank(t *testing.T) {
	res, err := CheckBank(bankHistory(1, 400), bankConfig)
	wantTypes(t, res, err)
	if res.OK < 100 {
		t.Fatalf("only %d OK operations checked", res.OK)
	}
	read := func(m map[int64]int64) History {
		return append(bankHistory(2, 50), Op{Process: 9, Type: Invoke, F: FRead},
			Op{Process: 9, Type: OK, F: FRead, Value: m})
	}
	for _, tc := range []struct {
		name string
		m    map[int64]int64
		want []string
	}{
		{"wrong-total", map[int64]int64{0: 20, 1: 20, 2: 20, 3: 20, 4: 19}, []string{"wrong-total"}},
		{"negative-value", map[int64]int64{0: 25, 1: 20, 2: 20, 3: 40, 4: -5}, []string{"negative-value"}},
		{"missing-account", map[int64]int64{0: 40, 1: 20, 2: 20, 3: 20}, []string{"missing-account"}},
		{"unexpected-key", map[int64]int64{0: 20, 1: 20, 2: 20, 3: 20, 4: 10, 7: 10}, []string{"unexpected-key"}},
		{"nil-read", nil, []string{"missing-account", "wrong-total"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckBank(read(tc.m), bankConfig)
			wantTypes(t, res, err, tc.want...)
		})
	}
	neg := read(map[int64]int64{0: 25, 1: 20, 2: 20, 3: 40, 4: -5})
	res, err = CheckBank(neg, BankConfig{Accounts: bankConfig.Accounts, Total: 100, NegativeOK: true})
	wantTypes(t, res, err)
}
