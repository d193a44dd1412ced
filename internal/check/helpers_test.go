package check

import (
	"slices"
	"testing"
)

// hist numbers ops by position and gives them increasing times.
func hist(ops ...Op) History {
	h := make(History, len(ops))
	for i, op := range ops {
		op.Index, op.Time = i, int64(i)*1000
		h[i] = op
	}
	return h
}

func txnOp(p int, t Type, mops []Mop) Op {
	return Op{Process: p, Type: t, F: FTxn, Value: Txn(mops)}
}

func inv(p int, m ...Mop) Op  { return txnOp(p, Invoke, m) }
func ok(p int, m ...Mop) Op   { return txnOp(p, OK, m) }
func fail(p int, m ...Mop) Op { return txnOp(p, Fail, m) }
func info(p int, m ...Mop) Op { return txnOp(p, Info, m) }

func ap(k, v int64) Mop { return Append(k, v) }

// r is a read at invocation (value unknown).
func r(k int64) Mop { return ReadNil(k) }

// rl is a completed list read.
func rl(k int64, vs ...int64) Mop { return ReadList(k, append([]int64{}, vs...)) }

func w(k, v int64) Mop { return Write(k, v) }

// rr is a completed register read of v.
func rr(k, v int64) Mop { return ReadReg(k, v) }

// wantTypes asserts the result's anomaly types are exactly want.
func wantTypes(t *testing.T, res Result, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("error: %v", err)
	}
	got := res.Types()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("anomaly types %v, want %v\n%s", got, want, res)
	}
	if res.Valid != (len(want) == 0) {
		t.Fatalf("Valid = %v with anomalies %v", res.Valid, got)
	}
}
