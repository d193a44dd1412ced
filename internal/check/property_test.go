package check

import (
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

type txnChecker func(History) (Result, error)

func checkerFor(register bool) txnChecker {
	if register {
		return CheckRWRegister
	}
	return CheckListAppend
}

func smallConfig(c chooser, register bool) genConfig {
	return genConfig{procs: 2 + c.intn(3), keys: 1 + c.intn(3), txns: 2 + c.intn(7), mopsMax: 3,
		register: register, crashes: c.intn(2) == 0}
}

// oracleCase generates a strictly serializable history and a perturbed copy,
// and checks the checker against the brute-force oracle. It fails on any
// unsound verdict; it returns whether the perturbed history is invalid and
// whether the checker caught it.
func oracleCase(tb fataler, c chooser, register bool) (invalid, caught bool) {
	tb.Helper()
	check := checkerFor(register)
	h := genHistory(c, smallConfig(c, register))
	if res, err := check(h); err != nil || !res.Valid {
		tb.Fatalf("a serially executed history is rejected: %v\n%s\nhistory:\n%s", err, res, historyString(h))
	}
	if !oracle(tb, h, register) {
		tb.Fatalf("the oracle rejects a serially executed history:\n%s", historyString(h))
	}
	p := perturb(c, h, register)
	if c.intn(2) == 0 {
		p = perturb(c, p, register)
	}
	res, err := check(p)
	if err != nil {
		tb.Fatalf("perturbed history: %v\n%s", err, historyString(p))
	}
	if s := res.String(); !res.Valid && !strings.Contains(s, res.Anomalies[0].Type) {
		tb.Fatalf("report does not name its anomaly:\n%s", s)
	}
	valid := oracle(tb, p, register)
	if !res.Valid && valid {
		tb.Fatalf("unsound: the oracle finds a strictly serializable order, the checker reports\n%s\nhistory:\n%s",
			res, historyString(p))
	}
	return !valid, !res.Valid
}

func historyString(h History) string {
	var b []byte
	for _, op := range h {
		line, _ := op.MarshalJSON()
		b = append(append(b, line...), '\n')
	}
	return string(b)
}

// Soundness (must always hold) against the brute-force oracle, with rapid's
// shrinking for a minimal counterexample.
func TestListAppendOracleSoundness(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { oracleCase(rt, rapidChooser{rt}, false) })
}

func TestRWRegisterOracleSoundness(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { oracleCase(rt, rapidChooser{rt}, true) })
}

// Agreement over many seeded cases: always sound, and the checker catches
// most histories the oracle rejects (it is not complete: Elle-style
// inference misses some, rw-register more).
func TestListAppendOracleAgreement(t *testing.T) { oracleAgreement(t, false, 0.95) }

func TestRWRegisterOracleAgreement(t *testing.T) { oracleAgreement(t, true, 0.9) }

func oracleAgreement(t *testing.T, register bool, minCaught float64) {
	cases := 1500
	if testing.Short() || raceEnabled {
		cases = 300
	}
	invalid, caught := 0, 0
	for seed := range cases {
		c := randChooser{rand.New(rand.NewPCG(uint64(seed), 7))}
		inv, got := oracleCase(t, c, register)
		if inv {
			invalid++
			if got {
				caught++
			}
		}
	}
	ratio := float64(caught) / float64(max(invalid, 1))
	t.Logf("%d cases, %d invalid, %d caught (%.2f)", cases, invalid, caught, ratio)
	if invalid < cases/10 {
		t.Fatalf("only %d of %d perturbed histories are invalid: the perturbation is too weak", invalid, cases)
	}
	if ratio < minCaught {
		t.Fatalf("caught %.2f of invalid histories, want at least %.2f", ratio, minCaught)
	}
}
