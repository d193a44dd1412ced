package faults

import (
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/check"
)

// txnOp records one transaction as an invocation and a completion.
func txnOp(r *check.Recorder, proc int, typ check.Type, inv, done check.Txn) {
	r.Invoke(proc, check.FTxn, inv, 0)
	r.Complete(proc, typ, check.FTxn, done, 0)
}

// TestPlantedLostAppendIsCaught plants the bug the fault test exists to
// find: an acknowledged append missing from a later read. Both the
// lost-write count and the list-append checker must report it; an append
// whose outcome was unknown (info) may be missing.
func TestPlantedLostAppendIsCaught(t *testing.T) {
	var r check.Recorder
	txnOp(&r, 0, check.OK, check.Txn{check.Append(1, 1)}, check.Txn{check.Append(1, 1)})
	txnOp(&r, 1, check.OK, check.Txn{check.Append(1, 2)}, check.Txn{check.Append(1, 2)})
	txnOp(&r, 2, check.Info, check.Txn{check.Append(1, 3)}, check.Txn{check.Append(1, 3)})
	// The final read: 1 is there, the acknowledged 2 is not, info 3 is not.
	txnOp(&r, 3, check.OK, check.Txn{check.ReadList(1, nil)}, check.Txn{check.ReadList(1, []int64{1})})
	h := r.History()

	lost, err := LostAppends(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || !strings.Contains(lost[0], "append 2") {
		t.Fatalf("lost = %q, want the acknowledged append 2 alone", lost)
	}
	res, err := check.CheckListAppend(h)
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid {
		t.Fatalf("the list-append checker accepted a lost acknowledged append: %v", res)
	}

	// The same history with the append in the read is clean.
	var ok check.Recorder
	txnOp(&ok, 0, check.OK, check.Txn{check.Append(1, 1)}, check.Txn{check.Append(1, 1)})
	txnOp(&ok, 1, check.OK, check.Txn{check.ReadList(1, nil)}, check.Txn{check.ReadList(1, []int64{1})})
	if lost, err := LostAppends(ok.History()); err != nil || len(lost) != 0 {
		t.Fatalf("clean history: lost %q, %v", lost, err)
	}
}

func TestPlantedLostElementIsCaught(t *testing.T) {
	var r check.Recorder
	for e := range int64(3) {
		r.Invoke(int(e), check.FAdd, e, 0)
		r.Complete(int(e), check.OK, check.FAdd, e, 0)
	}
	r.Invoke(9, check.FRead, nil, 0)
	r.Complete(9, check.OK, check.FRead, []int64{0, 2}, 0)
	lost, err := lostElements(r.History())
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || !strings.HasPrefix(lost[0], "element 1 ") {
		t.Fatalf("lost = %q, want element 1", lost)
	}
	res, err := check.CheckSetFull(r.History())
	if err != nil || res.Valid {
		t.Fatalf("CheckSetFull = %v, %v: want the lost element reported", res, err)
	}
}
