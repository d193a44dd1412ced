package check

import (
	"errors"
	"testing"
)

// Planted anomalies for rw-register, one per kind.
func TestRWRegisterPlanted(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    History
		want []string
	}{
		{"valid/serial", hist(
			inv(0, w(1, 1)), ok(0, w(1, 1)),
			inv(1, r(1), w(1, 2)), ok(1, rr(1, 1), w(1, 2)),
			inv(0, r(1), r(2)), ok(0, rr(1, 2), ReadNil(2)),
		), nil},
		{"valid/concurrent-overwrite", hist(
			inv(0, w(1, 1)), inv(1, w(1, 2)), ok(0, w(1, 1)), ok(1, w(1, 2)),
			inv(2, r(1)), ok(2, rr(1, 1)),
		), nil},
		{"G0", hist(
			inv(0, w(1, 1), r(2), w(2, 3)), inv(1, w(2, 2), r(1), w(1, 4)),
			ok(0, w(1, 1), rr(2, 2), w(2, 3)), ok(1, w(2, 2), rr(1, 1), w(1, 4)),
		), []string{"G0"}},
		{"G1a", hist(
			inv(0, w(1, 1)), fail(0, w(1, 1)), inv(1, r(1)), ok(1, rr(1, 1)),
		), []string{"G1a"}},
		{"G1b", hist(
			inv(0, w(1, 1), w(1, 2)), inv(1, r(1)), ok(1, rr(1, 1)), ok(0, w(1, 1), w(1, 2)),
		), []string{"G1b"}},
		{"G1c", hist(
			inv(0, w(1, 1), r(2)), inv(1, w(2, 1), r(1)), ok(0, w(1, 1), rr(2, 1)), ok(1, w(2, 1), rr(1, 1)),
		), []string{"G1c"}},
		{"G-single", hist(
			inv(0, w(1, 1), w(2, 1)), inv(1, r(1), r(2)), ok(0, w(1, 1), w(2, 1)), ok(1, ReadNil(1), rr(2, 1)),
		), []string{"G-single"}},
		{"G2-item/write-skew", hist(
			inv(0, r(1), w(2, 1)), inv(1, r(2), w(1, 1)), ok(0, ReadNil(1), w(2, 1)), ok(1, ReadNil(2), w(1, 1)),
		), []string{"G2-item"}},
		{"G-single-realtime/stale-nil", hist(
			inv(0, w(1, 1)), ok(0, w(1, 1)), inv(1, r(1)), ok(1, ReadNil(1)),
		), []string{"G-single-realtime"}},
		{"G-single-realtime/stale-version", hist(
			inv(0, w(1, 1)), ok(0, w(1, 1)), inv(1, w(1, 2)), ok(1, w(1, 2)),
			inv(2, r(1)), ok(2, rr(1, 1)),
		), []string{"G-single-realtime"}},
		{"G-single-realtime/inferred-version-order", hist(
			inv(0, w(1, 1)), inv(2, r(1), r(2)), ok(0, w(1, 1)),
			inv(1, w(1, 2), w(2, 5)), ok(1, w(1, 2), w(2, 5)), ok(2, rr(1, 1), rr(2, 5)),
		), []string{"G-single-realtime"}},
		{"G1c-realtime/read-from-the-future", hist(
			inv(1, r(1)), ok(1, rr(1, 1)), inv(0, w(1, 1)), ok(0, w(1, 1)),
		), []string{"G1c-realtime"}},
		{"internal", hist(
			inv(0, w(1, 1), r(1)), ok(0, w(1, 1), ReadNil(1)),
		), []string{"internal"}},
		{"future-read", hist(
			inv(0, r(1), w(1, 1)), ok(0, rr(1, 1), w(1, 1)),
		), []string{"future-read"}},
		{"garbage-read", hist(
			inv(0, r(1)), ok(0, rr(1, 9)),
		), []string{"garbage-read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckRWRegister(tc.h)
			wantTypes(t, res, err, tc.want...)
		})
	}
}

// A version order inferred from real time makes a -realtime anomaly: the
// cycle names real-time evidence, and the same transactions, all
// concurrent, are valid.
func TestRWRegisterRealtimeInferenceIsLabelled(t *testing.T) {
	h := hist(
		inv(0, w(1, 1)), inv(2, r(1), r(2)), ok(0, w(1, 1)),
		inv(1, w(1, 2), w(2, 5)), ok(1, w(1, 2), w(2, 5)), ok(2, rr(1, 1), rr(2, 5)))
	res, err := CheckRWRegister(h)
	wantTypes(t, res, err, "G-single-realtime")
	var kinds []EdgeKind
	for _, s := range res.Anomalies[0].Cycle {
		kinds = append(kinds, s.Edge)
	}
	hasRT := false
	for _, k := range kinds {
		hasRT = hasRT || k == EdgeRWRealtime || k == EdgeRealtime || k == EdgeWWRealtime
	}
	if !hasRT {
		t.Fatalf("cycle edges %v use no real-time evidence", kinds)
	}
	if oracle(t, h, true) {
		t.Fatal("oracle accepts the history")
	}
	concurrent := hist(
		inv(0, w(1, 1)), inv(2, r(1), r(2)), inv(1, w(1, 2), w(2, 5)),
		ok(0, w(1, 1)), ok(1, w(1, 2), w(2, 5)), ok(2, rr(1, 1), rr(2, 5)))
	res, err = CheckRWRegister(concurrent)
	wantTypes(t, res, err)
	if !oracle(t, concurrent, true) {
		t.Fatal("oracle rejects the concurrent history")
	}
}

func TestTxnMalformed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		h        History
		register bool
	}{
		{"duplicate-append", hist(inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(0, ap(1, 1)), ok(0, ap(1, 1))), false},
		{"write-in-list-append", hist(inv(0, w(1, 1)), ok(0, w(1, 1))), false},
		{"append-in-register", hist(inv(0, ap(1, 1)), ok(0, ap(1, 1))), true},
		{"list-read-returns-number", hist(inv(0, r(1)), ok(0, rr(1, 3))), false},
		{"register-read-returns-list", hist(inv(0, r(1)), ok(0, rl(1, 3))), true},
		{"completion-without-invocation", hist(ok(0, ap(1, 1))), false},
		{"double-invocation", hist(inv(0, ap(1, 1)), inv(0, ap(1, 2))), false},
		{"not-a-txn", History{{Process: 0, Type: Invoke, F: FTxn, Value: int64(3)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkerFor(tc.register)(tc.h)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v, want ErrMalformed", err)
			}
		})
	}
}
